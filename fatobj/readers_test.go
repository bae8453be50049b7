package fatobj

import (
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

func writeTo(o *elfobj.Object) func(io.Writer) error {
	return func(w io.Writer) error { _, err := elfobj.Write(w, o); return err }
}

// TestEmbeddedObjectWritesAgainAndAtOnce: an object with binaries embedded
// from readers writes the same bytes twice and from several goroutines at
// once.
func TestEmbeddedObjectWritesAgainAndAtOnce(t *testing.T) {
	o, _ := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	o.AddSection(&elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Data: []byte{0xc3}}, true)
	x86, amd := binary(t, "x86_64-pc-linux-gnu", ""), binary(t, "amdgcn-amd-amdhsa", "gfx90a")
	if err := Embed(o, io.NewSectionReader(bytes.NewReader(x86), 0, int64(len(x86)))); err != nil {
		t.Fatal(err)
	}
	if err := Embed(o, io.NewSectionReader(bytes.NewReader(amd), 0, int64(len(amd)))); err != nil {
		t.Fatal(err)
	}
	tooltest.SameBytes(t, writeTo(o))
	if got := triples(section(t, o)); len(got) != 2 {
		t.Errorf("embedded %v", got)
	}
}

// TestLoadedFileEmbeddedWritesAgainAndAtOnce: an object loaded from a file,
// its binaries still in the file, with another binary embedded, writes the
// same bytes twice and from several goroutines at once.
func TestLoadedFileEmbeddedWritesAgainAndAtOnce(t *testing.T) {
	loaded := loadedFatObject(t)
	nv := binary(t, "nvptx64-nvidia-cuda", "sm_70")
	if err := Embed(loaded, io.NewSectionReader(bytes.NewReader(nv), 0, int64(len(nv)))); err != nil {
		t.Fatal(err)
	}
	tooltest.SameBytes(t, writeTo(loaded))
	if got := triples(section(t, loaded)); len(got) != 3 || got[2] != "nvptx64-nvidia-cuda:sm_70" {
		t.Errorf("after embedding %v", got)
	}
}

// TestStrippedFileWritesAgainAndAtOnce: an object loaded from a file and
// stripped, the binaries it keeps still in the file, writes the same bytes
// twice and from several goroutines at once.
func TestStrippedFileWritesAgainAndAtOnce(t *testing.T) {
	loaded := loadedFatObject(t)
	st, err := Strip(loaded, release.Default(), []Target{{"amdgcn-amd-amdhsa", "gfx90a"}})
	if err != nil || st.Kept != 1 {
		t.Fatalf("%+v, %v", st, err)
	}
	tooltest.SameBytes(t, writeTo(loaded))
	if got := triples(section(t, loaded)); len(got) != 1 || got[0] != "amdgcn-amd-amdhsa:gfx90a" {
		t.Errorf("after strip %v", got)
	}
}

// loadedFatObject returns an object loaded from a file that holds an x86-64
// and a gfx90a binary; the file stays open for the test.
func loadedFatObject(t *testing.T) *elfobj.Object {
	t.Helper()
	o, _ := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	x86, amd := binary(t, "x86_64-pc-linux-gnu", ""), binary(t, "amdgcn-amd-amdhsa", "gfx90a")
	if err := Embed(o, io.NewSectionReader(bytes.NewReader(x86), 0, int64(len(x86))), io.NewSectionReader(bytes.NewReader(amd), 0, int64(len(amd)))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fat.o")
	if err := os.WriteFile(path, tooltest.SameBytes(t, writeTo(o)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	ef, err := elfobj.Read(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := ef.Object()
	if err != nil {
		t.Fatal(err)
	}
	return loaded
}

// TestEmbedRefusesWhatIsNoBinary: no reader, nothing, a cut binary or bytes
// that are no OffloadBinary are refused as wrap refuses them, and the
// object is left as it was.
func TestEmbedRefusesWhatIsNoBinary(t *testing.T) {
	x86 := binary(t, "x86_64-pc-linux-gnu", "")
	for name, b := range map[string]*io.SectionReader{
		"nil":      nil,
		"empty":    io.NewSectionReader(bytes.NewReader(nil), 0, 0),
		"cut":      io.NewSectionReader(bytes.NewReader(x86), 0, int64(len(x86))-8),
		"not one":  io.NewSectionReader(bytes.NewReader(make([]byte, 64)), 0, 64),
		"trailing": io.NewSectionReader(bytes.NewReader(append(append([]byte{}, x86...), 1, 2, 3)), 0, int64(len(x86))+3),
	} {
		o, _ := elfobj.ForTriple("x86_64-unknown-linux-gnu")
		if err := Embed(o, b); err == nil {
			t.Errorf("%s: Embed succeeded", name)
		} else if name != "nil" && !errors.Is(err, goffload.ErrInvalid) {
			t.Errorf("%s: %v does not match goffload.ErrInvalid", name, err)
		}
		if o.Section(Section) != nil {
			t.Errorf("%s: the object has %s after a refused Embed", name, Section)
		}
	}
}
