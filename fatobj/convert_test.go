package fatobj

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

func lookupRelease(t *testing.T, major int) *release.Release {
	t.Helper()
	r, err := release.Lookup(major)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// loadObject reads the object file path for editing.
func loadObject(t *testing.T, path string) *elfobj.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return objectOf(t, data)
}

func objectOf(t *testing.T, data []byte) *elfobj.Object {
	t.Helper()
	f, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.Object()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// converted converts data from one release to another and returns the
// bytes of the result.
func converted(t *testing.T, data []byte, from, to int) []byte {
	t.Helper()
	o := objectOf(t, data)
	if _, err := Convert(o, lookupRelease(t, from), lookupRelease(t, to)); err != nil {
		t.Fatalf("%d -> %d: %v", from, to, err)
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tableOf is an entries section as its bytes and its relocations (a
// section symbol by its section's name).
type tableOf struct {
	Name   string
	Bytes  []byte
	Align  uint64
	Relocs []string
}

func entriesTable(t *testing.T, data []byte) tableOf {
	t.Helper()
	o := objectOf(t, data)
	for _, s := range o.Sections {
		if !isEntriesSection(s.Name) {
			continue
		}
		b, err := contents(s)
		if err != nil {
			t.Fatal(err)
		}
		tab := tableOf{Name: s.Name, Bytes: b, Align: s.Addralign}
		for _, r := range s.Relocs {
			name := r.Symbol.Name
			if name == "" && r.Symbol.Section != nil {
				name = "section " + r.Symbol.Section.Name
			}
			tab.Relocs = append(tab.Relocs, fmt.Sprintf("%#x %v %s%+d", r.Offset, r.Type, name, r.Addend))
		}
		return tab
	}
	t.Fatal("no entries section")
	return tableOf{}
}

// readEntries returns the entries of an object file's bytes, their symbol
// names made release-free.
func readEntries(t *testing.T, data []byte, r *release.Release) []offload.Entry {
	t.Helper()
	f, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := entries.Read(f, r)
	if err != nil {
		t.Fatal(err)
	}
	var out []offload.Entry
	for _, e := range ents {
		out = append(out, e.Entry)
	}
	return out
}

// TestConvertToOwnRelease: an object converted to the release that made it
// is not changed.
func TestConvertToOwnRelease(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		major int
		src   string
	}{{14, "omp.c"}, {15, "omp.c"}, {16, "omp.c"}, {19, "omp.c"}, {22, "omp.c"}, {19, "k.hip"}, {22, "k.hip"}} {
		t.Run(fmt.Sprint(c.src, c.major), func(t *testing.T) {
			t.Parallel()
			path := compiled(t, c.major, c.src)
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, _ := f.Stat()
			ff, err := NewFile(path, f, st.Size(), nil)
			if err != nil {
				t.Fatal(err)
			}
			from, made, err := ff.Objects[0].MadeBy()
			if err != nil || from == nil || !made.Has(c.major) {
				t.Fatalf("MadeBy: %v %v %v, want a set with %d", from, made, err, c.major)
			}
			if c.major >= 15 {
				conv, err := Convert(loadObject(t, path), lookupRelease(t, c.major), lookupRelease(t, c.major))
				if err != nil || conv.Changed() {
					t.Fatalf("Convert to its own release: %v, %v", conv, err)
				}
			}
		})
	}
}

// TestConvertRoundTrip: M -> N -> M gives back the entries section of the
// object clang-M made, bytes, alignment and relocations, and N's entries
// have the meaning of those clang-N makes of the same source.
func TestConvertRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		src      string
		from, to int
	}{{"omp.c", 19, 22}, {"omp.c", 22, 19}, {"k.hip", 19, 22}, {"k.hip", 22, 19},
		{"plain.c", 15, 19}, {"plain.c", 16, 22}, {"plain.c", 19, 22}} {
		t.Run(fmt.Sprintf("%s/%d-%d", c.src, c.from, c.to), func(t *testing.T) {
			t.Parallel()
			orig, err := os.ReadFile(compiled(t, c.from, c.src))
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := os.ReadFile(compiled(t, c.to, c.src))
			if err != nil {
				t.Fatal(err)
			}
			there := converted(t, orig, c.from, c.to)
			back := converted(t, there, c.to, c.from)
			if diff := cmp.Diff(entriesTable(t, orig), entriesTable(t, back)); diff != "" {
				t.Errorf("%d -> %d -> %d: entries section (-original +round trip):\n%s", c.from, c.to, c.from, diff)
			}
			want, got := entriesTable(t, theirs), entriesTable(t, there)
			if got.Name != want.Name || got.Align != want.Align || len(got.Bytes) != len(want.Bytes) {
				t.Errorf("converted: section %s align %d size %d; clang-%d: %s align %d size %d",
					got.Name, got.Align, len(got.Bytes), c.to, want.Name, want.Align, len(want.Bytes))
			}
			r := lookupRelease(t, c.to)
			if diff := cmp.Diff(readEntries(t, theirs, r), readEntries(t, there, r)); diff != "" {
				t.Errorf("entries (-clang-%d +converted):\n%s", c.to, diff)
			}
			if !bytes.Equal(got.Bytes, want.Bytes) {
				t.Errorf("entries bytes differ from clang-%d's", c.to)
			}
		})
	}
}

// TestConvertOldObjectsAsNewOnes: the OpenMP objects of clang 14, 15 and 16
// converted to 19 and 22 hold entries with the meaning of clang-19's and
// 22's (the requires entry from the constructor), and the binary made of a
// 14 bundle has the metadata clang-N's packager writes.
func TestConvertOldObjectsAsNewOnes(t *testing.T) {
	t.Parallel()
	for _, c := range [][2]int{{14, 19}, {14, 22}, {15, 19}, {16, 22}} {
		t.Run(fmt.Sprintf("%d-%d", c[0], c[1]), func(t *testing.T) {
			t.Parallel()
			orig, err := os.ReadFile(compiled(t, c[0], "omp.c"))
			if err != nil {
				t.Fatal(err)
			}
			theirs, err := os.ReadFile(compiled(t, c[1], "omp.c"))
			if err != nil {
				t.Fatal(err)
			}
			there := converted(t, orig, c[0], c[1])
			r := lookupRelease(t, c[1])
			if diff := cmp.Diff(readEntries(t, theirs, r), readEntries(t, there, r)); diff != "" {
				t.Errorf("entries (-clang-%d +converted):\n%s", c[1], diff)
			}
			if o := objectOf(t, there); o.Section(".init_array.0") != nil {
				t.Errorf("the requires constructor still runs")
			}
			meta := func(data []byte) []offloadbinary.Image {
				var out []offloadbinary.Image
				for _, b := range offloadBinaries(t, data) {
					for _, im := range b.Images {
						out = append(out, im.Image)
					}
				}
				return out
			}
			if c[0] == 14 {
				if diff := cmp.Diff(meta(theirs), meta(there)); diff != "" {
					t.Errorf("binary metadata (-clang-%d +converted):\n%s", c[1], diff)
				}
			}
		})
	}
}

// TestConvertRefuses: what a target release has no place for is refused,
// naming the entry.
func TestConvertRefuses(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(compiled(t, 19, "omp.c"))
	if err != nil {
		t.Fatal(err)
	}
	o := objectOf(t, data)
	_, err = Convert(o, lookupRelease(t, 19), lookupRelease(t, 16))
	if !errors.Is(err, ErrConvert) || !strings.Contains(err.Error(), "requires") {
		t.Errorf("19 -> 16 with a requires entry: %v", err)
	}
	_, err = Convert(objectOf(t, data), lookupRelease(t, 19), lookupRelease(t, 14))
	if !errors.Is(err, ErrConvert) {
		t.Errorf("to 14: %v", err)
	}
}

// TestConvertBinaryVersions: clang-22's OpenMP object converted to 23 and 24
// holds the OffloadBinary version each writes (2, 3) and 24's SHF_GNU_RETAIN
// on its entries sections, so that each is made by the release converted to
// (24's was "mixed" with the flag missing); converted back to 22 it is made
// by 22 again (22 reads version 1 only), with the entries and binaries it
// had.
func TestConvertBinaryVersions(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm22.o"))
	if err != nil {
		t.Fatal(err)
	}
	made := func(data []byte) release.Set {
		t.Helper()
		f, err := NewFile("o", bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, set, err := f.Objects[0].MadeBy()
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	images := func(data []byte) [][]byte {
		t.Helper()
		var out [][]byte
		for _, b := range offloadBinaries(t, data) {
			for i := range b.Images {
				sr, err := b.Open(i)
				if err != nil {
					t.Fatal(err)
				}
				img, err := io.ReadAll(sr)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, img)
			}
		}
		return out
	}
	for _, to := range []int{23, 24} {
		there := converted(t, orig, 22, to)
		if m := made(there); m != release.SetOf(lookupRelease(t, to)) {
			t.Errorf("22 -> %d: made by %v", to, m)
		}
		for _, b := range offloadBinaries(t, there) {
			if want := lookupRelease(t, to).BinaryVersion; b.Version != want {
				t.Errorf("22 -> %d: binary of version %d, want %d", to, b.Version, want)
			}
		}
		sec := objectOf(t, there).Section("llvm_offload_entries")
		if retain := sec.Flags&elfobj.SHF_GNU_RETAIN != 0; retain != (to == 24) {
			t.Errorf("22 -> %d: SHF_GNU_RETAIN %v on the entries", to, retain)
		}
		back := converted(t, there, to, 22)
		if m := made(back); !m.Has(22) {
			t.Errorf("22 -> %d -> 22: made by %v", to, m)
		}
		if diff := cmp.Diff(entriesTable(t, orig), entriesTable(t, back)); diff != "" {
			t.Errorf("22 -> %d -> 22: entries section (-original +round trip):\n%s", to, diff)
		}
		if got := offloadBinaries(t, back); len(got) != 1 || got[0].Version != 1 {
			t.Errorf("22 -> %d -> 22: %d binaries, want one of version 1", to, len(got))
		}
		if to == 23 && !slices.EqualFunc(images(orig), images(back), bytes.Equal) {
			t.Errorf("22 -> 23 -> 22: the device image changed")
		}
		if n := len(images(back)); n != 1 {
			t.Errorf("22 -> %d -> 22: %d images", to, n)
		}
	}
}

// offloadBinaries returns the OffloadBinaries of the .llvm.offloading
// section of an object file's bytes.
func offloadBinaries(t *testing.T, data []byte) []*offloadbinary.Binary {
	t.Helper()
	s := objectOf(t, data).Section(".llvm.offloading")
	if s == nil {
		t.Fatal("no .llvm.offloading")
	}
	r, size := sectionReader(s)
	bins, err := offloadbinary.ReadAll(r, size, nil)
	if err != nil {
		t.Fatal(err)
	}
	return bins
}
