package fatobj

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
)

// clangOpenMP runs clang-19 -fopenmp for x86-64 offloading with args.
func clangOpenMP(t *testing.T, args ...string) {
	t.Helper()
	clang := tooltest.Tool(t, "clang", 19)
	argv := append([]string{"-O0", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-fopenmp-version=52", "-DUSE_ENTER"}, args...)
	var err error
	if o := slices.Index(argv, "-o"); slices.Contains(argv, "-c") && o > 0 && o+1 < len(argv) {
		// A compile: through the store.
		err = compileStore.Compile(t, "clang-19", clang, "", argv, argv[o+1])
	} else {
		err = runTool("", clang, argv...)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, path string) *Report {
	t.Helper()
	f := openFile(t, path, nil)
	reps, err := Check(f.Objects)
	if err != nil || len(reps) != 1 {
		t.Fatalf("%s: %d reports, %v", path, len(reps), err)
	}
	return reps[0]
}

// TestCheckFindsMissingDeviceSymbol renames a kernel in the device image of
// clang-19's fat object: Check names its entry, in the object and in the
// programs linked from it (PIE, not, shared), which LLVM would only find
// when the program runs; the object and programs linked from it as they
// are have every symbol. The programs are a matrix of the three links ×
// the two objects, of which the default run links a sample
// ([tooltest.Sample]: each link once, each object at least once; each of
// the six when exhaustive).
func TestCheckFindsMissingDeviceSymbol(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join("..", "entries", "testdata", "omp_plain.c")
	main := filepath.Join("..", "entries", "testdata", "main.c")
	obj := filepath.Join(dir, "plain.o")
	clangOpenMP(t, "-fPIC", "-c", src, "-o", obj)
	rep := check(t, obj)
	if len(rep.Missing) != 0 || len(rep.Findings) != 0 || len(rep.Images) != 1 || rep.Images[0].Symbols == nil {
		t.Fatalf("the compiler's object: missing %v, findings %v, images %+v", rep.Missing, rep.Findings, rep.Images)
	}
	var kernel string
	for _, e := range rep.Object.Entries {
		if strings.Contains(e.Name, "_k1_") {
			kernel = e.Name
		}
	}
	bad := filepath.Join(dir, "bad.o")
	renameDeviceSymbol(t, obj, bad, kernel, "renamed_kernel")
	rep = check(t, bad)
	if len(rep.Missing) != 1 || rep.Missing[0].Entry.Name != kernel || !strings.Contains(rep.Missing[0].String(), kernel) ||
		len(rep.Findings) != 1 || rep.Findings[0].Kind != "missing-symbol" {
		t.Fatalf("missing %v, findings %v, want only %s", rep.Missing, rep.Findings, kernel)
	}
	if testing.Short() {
		return
	}
	// main.c, which has no OpenMP, compiled once for the programs.
	mainObj := filepath.Join(dir, "main.o")
	if err := runTool("", tooltest.Tool(t, "clang", 19), "-O0", "-fPIC", "-c", main, "-o", mainObj); err != nil {
		t.Fatal(err)
	}
	links := []struct {
		name string
		args []string // before the objects
		main bool     // a program: main.o is linked too
	}{{"nopie", []string{"-no-pie"}, true}, {"pie", []string{"-pie"}, true}, {"shared", []string{"-shared"}, false}}
	objects := []struct {
		name, path string
		missing    string // the entry whose symbol is missing, or ""
	}{{"as-is", obj, ""}, {"renamed", bad, kernel}}
	for i, l := range links {
		for j, o := range objects {
			t.Run(l.name+"/"+o.name, func(t *testing.T) {
				tooltest.Sample(t, i, j, len(links), len(objects))
				t.Parallel()
				out := filepath.Join(t.TempDir(), l.name)
				args := append(append([]string{}, l.args...), o.path)
				if l.main {
					args = append(args, mainObj)
				}
				clangOpenMP(t, append(args, "-o", out)...)
				rep := check(t, out)
				if o.missing == "" {
					if len(rep.Missing) != 0 || len(rep.Images) == 0 || rep.Images[0].Symbols == nil {
						t.Errorf("%d images (%+v), missing %v", len(rep.Images), rep.Images, rep.Missing)
					}
				} else if len(rep.Missing) != 1 || rep.Missing[0].Entry.Name != o.missing {
					t.Errorf("missing %v, want only %s", rep.Missing, o.missing)
				}
			})
		}
	}
}

// renameDeviceSymbol writes to out the fat object in with symbol old of its
// device image renamed to name.
func renameDeviceSymbol(t *testing.T, in, out, old, name string) {
	t.Helper()
	f := openFile(t, in, nil)
	o := f.Objects[0]
	host, err := o.ELF.Object()
	if err != nil {
		t.Fatal(err)
	}
	img, err := o.Images[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	dev, err := elfobj.Read(img, img.Size())
	if err != nil {
		t.Fatal(err)
	}
	devObj, err := dev.Object()
	if err != nil {
		t.Fatal(err)
	}
	if n := devObj.RenameSymbols(old, name); n != 1 {
		t.Fatalf("%d device symbols named %s", n, old)
	}
	var devBuf bytes.Buffer
	if _, err := elfobj.Write(&devBuf, devObj); err != nil {
		t.Fatal(err)
	}
	bin, err := offloadbinary.MarshalBinary(o.Release, &o.Images[0].Image, devBuf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	sec := host.Section(Section)
	sec.Reader, sec.Data = nil, bin
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, host); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMissingSymbolsBounded compares the bounded listing of missing symbols
// with every (entry, image) pair: the count is exact, the list is the start
// of all pairs in order, and it stops at the budget's number of records.
func TestMissingSymbolsBounded(t *testing.T) {
	img := func(kind offload.OffloadKind, names ...string) CheckedImage {
		im := CheckedImage{Image: &Image{}}
		im.OffloadKind = kind
		if names != nil {
			im.Symbols = map[string]bool{}
			for _, n := range names {
				im.Symbols[n] = true
			}
		}
		return im
	}
	ent := func(kind offload.OffloadKind, name string, flags uint32) entries.FileEntry {
		var e entries.FileEntry
		e.Kind, e.Name, e.Flags = kind, name, flags
		return e
	}
	images := []CheckedImage{
		img(offload.OffloadOpenMP, "a", "b"),
		img(offload.OffloadOpenMP, "a"),
		img(offload.OffloadOpenMP), // symbols not read: not checked
		img(offload.OffloadHIP, "h"),
		img(offload.OffloadOpenMP, "b", "c"),
	}
	ents := []entries.FileEntry{
		ent(offload.OffloadOpenMP, "a", 0),
		ent(offload.OffloadOpenMP, "b", 0),
		ent(offload.OffloadOpenMP, "x", uint32(offload.OMPEntryRequires)), // names no symbol
		ent(offload.OffloadCUDA, "k", 0),                                  // no image of its kind
		ent(offload.OffloadHIP, "h", 0),
		ent(offload.OffloadOpenMP, "c", 0),
		ent(offload.OffloadOpenMP, "b", 0),
	}
	type pair struct {
		entry string
		image int // -1: no image of its kind
	}
	// Every pair, as check listed them before the bound.
	var all []pair
	for _, e := range ents {
		if e.Name == "x" {
			continue
		}
		found := false
		for j := range images {
			if images[j].OffloadKind != e.Kind {
				continue
			}
			found = true
			if images[j].Symbols != nil && !images[j].Symbols[e.Name] {
				all = append(all, pair{e.Name, j})
			}
		}
		if !found {
			all = append(all, pair{e.Name, -1})
		}
	}
	if len(all) != 6 {
		t.Fatalf("the test's own count: %d pairs %v", len(all), all)
	}
	for records := 0; records <= len(all)+1; records++ {
		rep := &Report{Images: append([]CheckedImage(nil), images...)}
		missingSymbols(rep, ents, uint64(records)*missingCost)
		var got []pair
		for _, m := range rep.Missing {
			p := pair{m.Entry.Name, -1}
			for j := range rep.Images {
				if m.Image == &rep.Images[j] {
					p.image = j
				}
			}
			got = append(got, p)
		}
		if len(got)+rep.Unlisted != len(all) {
			t.Errorf("limit of %d records: %d listed + %d unlisted, want %d in all", records, len(got), rep.Unlisted, len(all))
		}
		if len(got) > records || len(got) > len(all) {
			t.Fatalf("limit of %d records: %d listed", records, len(got))
		}
		for i := range got {
			if got[i] != all[i] {
				t.Errorf("limit of %d records: listed %v, want the start of %v", records, got, all)
				break
			}
		}
	}
}
