package fatobj

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// shared holds what the tests of the package share: the objects that clang
// compiles once for all of them ([compiled]).
var shared tooltest.Shared

// compileStore holds what clang compiled for the package's tests, which
// the default run takes instead of compiling (tooltest.Store).
var compileStore = tooltest.Store{Dir: filepath.Join("testdata", "compiled")}

// TestStoredCompilesAreCurrent: every compile in the store was made of the
// sources as they are.
func TestStoredCompilesAreCurrent(t *testing.T) {
	compileStore.CheckCurrent(t)
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Remove()
	os.Exit(code)
}

// once returns the file named name made by build(path) the first time it
// is asked for (build runs at most once a name, the other callers waiting
// for it); the caller must not change the file. A failure of build ends
// every test that asks for the file.
func once(t testing.TB, name string, build func(path string) error) string {
	t.Helper()
	path, err := shared.File(name, build)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// runTool runs the program prog with args in the folder dir (the current
// one if ""), holding a [tooltest.Slot] the while.
func runTool(dir, prog string, args ...string) error {
	defer tooltest.Slot()()
	cmd := exec.Command(prog, args...)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %q: %v\n%s", prog, args, err, msg)
	}
	return nil
}

// compiled compiles testdata/convert/src with clang major (OpenMP for the
// host, or HIP with the new driver), once for the package: the tests share
// the object and must not change it.
func compiled(t *testing.T, major int, src string) string {
	t.Helper()
	clang := tooltest.Tool(t, "clang", major)
	name := fmt.Sprintf("%s-%d.o", strings.TrimSuffix(src, filepath.Ext(src)), major)
	return once(t, name, func(out string) error {
		args := []string{"-O1", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"}
		if filepath.Ext(src) == ".hip" {
			args = []string{"-x", "hip", "--offload-new-driver", "-fgpu-rdc", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc"}
		}
		return compileStore.Compile(t, fmt.Sprintf("clang-%d", major), clang, "", append(args, "-c", filepath.Join("testdata", "convert", src), "-o", out), out)
	})
}
