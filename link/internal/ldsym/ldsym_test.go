package ldsym

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
)

// TestResolveAsLd compares the members the resolver pulls with those GNU ld
// loads (its --trace) for links of objects and archives in several orders:
// a chain of references, a weak reference, an unused member, an archive
// before the object that needs it, and --whole-archive.
func TestResolveAsLd(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		tooltest.Missing(t, "cc not found")
	}
	ld, err := exec.LookPath("ld.bfd")
	if err != nil {
		tooltest.Missing(t, "ld.bfd not found")
	}
	dir := t.TempDir()
	srcs := map[string]string{
		"main.o": "extern int a(void); extern int w(void) __attribute__((weak)); int main(void) { return a() + (w ? w() : 0); }",
		"a.o":    "extern int b(void); int a(void) { return b(); }",
		"b.o":    "int b(void) { return 2; }",
		"c.o":    "int c(void) { return 3; }",
		"w.o":    "int w(void) { return 4; }",
		"d.o":    "extern int e(void); int d(void) { return e(); }",
		"e.o":    "extern int d(void); int e(void) { return 5; }",
	}
	for name, src := range srcs {
		c := filepath.Join(dir, name+".c")
		os.WriteFile(c, []byte(src), 0o644)
		if out, err := exec.Command(cc, "-c", "-o", filepath.Join(dir, name), c).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	mkar := func(name string, members ...string) {
		cmd := exec.Command("ar", tooltest.ArArgs(append([]string{"rcs", name}, members...)...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	mkar("libx.a", "c.o", "a.o", "w.o", "b.o")
	mkar("liby.a", "d.o", "e.o")
	for _, link := range [][]string{
		{"main.o", "libx.a"},
		{"libx.a", "main.o"},
		{"main.o", "liby.a", "libx.a"},
		{"main.o", "--whole-archive", "liby.a", "--no-whole-archive", "libx.a"},
	} {
		t.Run(strings.Join(link, " "), func(t *testing.T) {
			// The link map's first part lists the archive members ld loads.
			args := append([]string{"-M", "-e", "main", "--unresolved-symbols=ignore-all", "-o", filepath.Join(dir, "out")}, link...)
			cmd := exec.Command(ld, args...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			included, _, _ := strings.Cut(string(out), "Discarded input sections")
			want := regexp.MustCompile(`(?m)^lib\w+\.a\((\w+\.o)\)`).FindAllStringSubmatch(included, -1)
			var wantNames []string
			for _, m := range want {
				wantNames = append(wantNames, m[1])
			}
			r := New()
			var got []string
			whole := false
			for _, in := range link {
				switch in {
				case "--whole-archive":
					whole = true
					continue
				case "--no-whole-archive":
					whole = false
					continue
				}
				data, _ := os.ReadFile(filepath.Join(dir, in))
				if strings.HasSuffix(in, ".o") {
					f, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
					if err != nil {
						t.Fatal(err)
					}
					r.Add(Input{Object: f})
					continue
				}
				a, err := ar.Open(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				syms, _ := a.Symbols()
				members := make([]Member, len(a.Members()))
				for i, m := range a.Members() {
					for _, s := range syms {
						if s.Member == i {
							members[i].Defines = append(members[i].Defines, s.Name)
						}
					}
					sr, _ := a.Open(m)
					members[i].Load = func() (*elfobj.File, error) { return elfobj.Read(sr, sr.Size()) }
				}
				pulled, err := r.Add(Input{Members: members, WholeArchive: whole})
				if err != nil {
					t.Fatal(err)
				}
				for _, i := range pulled {
					got = append(got, a.Members()[i].Name)
				}
			}
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(wantNames))) {
				t.Errorf("ld loads %v, the resolver pulls %v", wantNames, got)
			}
		})
	}
}
