package tooltest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStore(t *testing.T) {
	t.Setenv(ExhaustiveEnv, "")
	root := t.TempDir()
	t.Chdir(root)
	os.Mkdir("src", 0o755)
	os.WriteFile(filepath.Join("src", "a.c"), []byte("int a;\n"), 0o644)
	s := Store{Dir: "store"}
	builds := 0
	build := func(data string) func(string) error {
		return func(dir string) error {
			builds++
			os.MkdirAll(dir, 0o755)
			return os.WriteFile(filepath.Join(dir, "a.o"), []byte(data), 0o644)
		}
	}
	inputs := []string{filepath.Join("src", "a.c")}
	files := func(data string) string {
		t.Helper()
		dir, err := s.Files(t, t.TempDir(), "cc -c src/a.c -o a.o", inputs, []string{"a.o"}, build(data))
		if err != nil {
			t.Fatal(err)
		}
		return dir
	}

	// Not recording: built each time, nothing kept.
	t.Setenv(RecordEnv, "")
	files("object")
	files("object")
	if _, err := os.Stat("store"); builds != 2 || !os.IsNotExist(err) {
		t.Fatalf("%d builds, store %v", builds, err)
	}
	// Recording: built once, then taken from the store.
	t.Setenv(RecordEnv, "1")
	files("object")
	t.Setenv(RecordEnv, "")
	dir := files("object")
	if b, err := os.ReadFile(filepath.Join(dir, "a.o")); builds != 3 || err != nil || string(b) != "object" || filepath.Dir(dir) != "store" {
		t.Fatalf("%d builds, %s: %q %v", builds, dir, b, err)
	}
	s.CheckCurrent(t)
	// The exhaustive run builds.
	t.Setenv(ExhaustiveEnv, "1")
	if files("object"); builds != 4 {
		t.Fatalf("exhaustive: %d builds", builds)
	}
	t.Setenv(ExhaustiveEnv, "")
	// Another input: another entry.
	os.WriteFile(filepath.Join("src", "a.c"), []byte("int a = 1;\n"), 0o644)
	if files("object"); builds != 5 {
		t.Fatalf("changed input: %d builds", builds)
	}
	// The old entry is found out of date.
	var ft fakeT
	s.CheckCurrent(&ft)
	if len(ft.errs) != 1 {
		t.Fatalf("CheckCurrent: %q", ft.errs)
	}
	// A file holding this machine's folder is not recorded.
	t.Setenv(RecordEnv, "1")
	if _, err := s.Files(t, t.TempDir(), "cc", inputs, []string{"a.o"}, build("from "+root)); err == nil {
		t.Fatal("recorded a file holding the working folder")
	}
}

// fakeT collects the errors of CheckCurrent.
type fakeT struct {
	testing.TB
	errs []string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.errs = append(f.errs, format)
}
