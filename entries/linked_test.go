package entries

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
)

func entryNames(ents []FileEntry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name)
	}
	sort.Strings(out)
	return out
}

// TestReadLinked reads the entries of a PIE, a non-PIE executable and a shared
// object that clang-19 links from its object of omp_plain.c (compiled -fPIC,
// once for the package) and testdata/main.c (which holds no OpenMP: compiled
// once, without it): the names are those of the object's entries. The
// three links run in parallel.
func TestReadLinked(t *testing.T) {
	if testing.Short() {
		t.Skip("links programs")
	}
	t.Parallel()
	clang := tooltest.Tool(t, "clang", linkedRelease)
	dir := t.TempDir()
	r := lookupRelease(t, linkedRelease)
	obj := sharedCell(t, x86Cell(linkedRelease, "omp_plain.c"))
	want := entryNames(readEntries(t, obj, r))
	main := filepath.Join(dir, "main.o")
	run(t, clang, "-c", filepath.Join("testdata", "main.c"), "-o", main)
	for name, args := range map[string][]string{
		"pie":    {"-pie", obj, main},
		"nopie":  {"-no-pie", obj, main},
		"shared": {"-shared", obj},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(dir, name)
			// --allow-shlib-undefined: ld.bfd does not check that the
			// libraries that libomptarget needs (libLLVM, 100,000
			// symbols: half the link's time) define what it uses; it
			// checks the objects as before.
			run(t, clang, append([]string{"-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-Wl,--allow-shlib-undefined", "-o", out}, args...)...)
			ents := readEntries(t, out, r)
			if got := entryNames(ents); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s: entries %q, want %q", name, got, want)
			}
			for _, e := range ents {
				if e.Address.Symbol == "" && e.Flags&uint32(offload.OMPEntryRequires) == 0 {
					t.Errorf("%s: entry %q: address %v names no symbol", name, e.Name, e.Address)
				}
			}
			o, err := Mixing(readFile(t, out), r)
			if err != nil {
				t.Fatal(err)
			}
			if len(o.Findings) != 0 || o.Wrapper().String() != "LLVM 19-20" {
				t.Errorf("%s: mixing: wrapper of %v, findings %v", name, o.Wrapper(), o.Findings)
			}
		})
	}
}

// run runs a tool, holding a tooltest.Slot, and fails t if it fails.
func run(t *testing.T, tool string, args ...string) {
	t.Helper()
	release := tooltest.Slot()
	msg, err := exec.Command(tool, args...).CombinedOutput()
	release()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", tool, args, err, msg)
	}
}
