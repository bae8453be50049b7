package entries

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
)

func entryNames(ents []Entry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name)
	}
	sort.Strings(out)
	return out
}

// link runs clang-19 -fopenmp on objs with extra arguments.
func link(t *testing.T, out string, args ...string) string {
	t.Helper()
	clang := tooltest.Tool(t, "clang", 19)
	argv := append([]string{"-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-o", out}, args...)
	if msg, err := exec.Command(clang, argv...).CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", clang, argv, err, msg)
	}
	return out
}

// TestReadLinked reads the entries of a PIE, a non-PIE executable and a shared
// object that clang-19 links: the names are those of the object's entries.
func TestReadLinked(t *testing.T) {
	if testing.Short() {
		t.Skip("links programs")
	}
	dir := t.TempDir()
	r := release(t, 19)
	obj := compile(t, 19, filepath.Join("testdata", "omp_plain.c"), filepath.Join(dir, "plain.o"), append(openMPFlags(19), "-fPIC")...)
	want := entryNames(readEntries(t, obj, r))
	main := filepath.Join("testdata", "main.c")
	for name, args := range map[string][]string{
		"pie":    {"-pie", obj, main},
		"nopie":  {"-no-pie", obj, main},
		"shared": {"-shared", obj},
	} {
		out := link(t, filepath.Join(dir, name), args...)
		ents := readEntries(t, out, r)
		if got := entryNames(ents); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: entries %q, want %q", name, got, want)
		}
		for _, e := range ents {
			if e.Address.Symbol == "" && e.Flags&uint32(offload.OMPEntryRequires) == 0 {
				t.Errorf("%s: entry %q: address %v names no symbol", name, e.Name, e.Address)
			}
		}
		rep, err := Check(readFile(t, out), r)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Missing) != 0 || len(rep.Images) == 0 || rep.Images[0].Symbols == nil {
			t.Errorf("%s: check: %d images (%+v), missing %v", name, len(rep.Images), rep.Images, rep.Missing)
		}
		o, err := Mixing(readFile(t, out), r)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Findings) != 0 || o.Wrapper().String() != "LLVM 19-20" {
			t.Errorf("%s: mixing: wrapper of %v, findings %v", name, o.Wrapper(), o.Findings)
		}
	}
}

// TestCheckFindsMissingDeviceSymbol renames a kernel in the device image of a
// fat object: Check names its entry, in the object and in the program linked
// from it, which LLVM would only find when the program runs.
func TestCheckFindsMissingDeviceSymbol(t *testing.T) {
	dir := t.TempDir()
	r := release(t, 19)
	obj := compile(t, 19, filepath.Join("testdata", "omp_plain.c"), filepath.Join(dir, "plain.o"), openMPFlags(19)...)
	rep, err := Check(readFile(t, obj), r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Missing) != 0 {
		t.Fatalf("the compiler's object: missing %v", rep.Missing)
	}
	var kernel string
	for _, e := range rep.Entries {
		if strings.Contains(e.Name, "_k1_") {
			kernel = e.Name
		}
	}
	bad := filepath.Join(dir, "bad.o")
	renameDeviceSymbol(t, obj, bad, kernel, "renamed_kernel", r)
	rep, err = Check(readFile(t, bad), r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Missing) != 1 || rep.Missing[0].Entry.Name != kernel || !strings.Contains(rep.Missing[0].String(), kernel) {
		t.Fatalf("missing %v, want only %s", rep.Missing, kernel)
	}
	if testing.Short() {
		return
	}
	prog := link(t, filepath.Join(dir, "bad"), bad, filepath.Join("testdata", "main.c"))
	rep, err = Check(readFile(t, prog), r)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Missing) != 1 || rep.Missing[0].Entry.Name != kernel {
		t.Fatalf("linked program: missing %v, want only %s", rep.Missing, kernel)
	}
}

// renameDeviceSymbol writes to out the fat object in with symbol old of its
// device image renamed to name.
func renameDeviceSymbol(t *testing.T, in, out, old, name string, r *offload.Release) {
	t.Helper()
	host := loadObject(t, in)
	sec := host.Section(".llvm.offloading")
	sr, ok := sec.Reader.(*io.SectionReader)
	if !ok {
		t.Fatal(".llvm.offloading is not streamed from the file")
	}
	bins, err := offload.ReadAll(sr, sr.Size(), &offload.ReadOptions{Release: r})
	if err != nil || len(bins) != 1 {
		t.Fatalf("%d binaries: %v", len(bins), err)
	}
	img, err := bins[0].Open(0)
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
	bin, err := offload.MarshalBinary(r, &bins[0].Images[0].Image, devBuf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	sec.Reader, sec.Data = nil, bin
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, host); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func loadObject(t *testing.T, path string) *elfobj.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
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
