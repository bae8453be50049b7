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
		o, err := Mixing(readFile(t, out), r)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Findings) != 0 || o.Wrapper().String() != "LLVM 19-20" {
			t.Errorf("%s: mixing: wrapper of %v, findings %v", name, o.Wrapper(), o.Findings)
		}
	}
}
