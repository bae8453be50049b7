package entries

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestMain removes the objects that the tests share (see compileShared).
func TestMain(m *testing.M) {
	code := m.Run()
	shared.Remove()
	os.Exit(code)
}

const x86 = "x86_64-unknown-linux-gnu"

// crossHosts are the other host machines, compiled for an amdgcn target
// without the device side (clang has no riscv64 OpenMP offload target).
var crossHosts = []string{"aarch64-linux-gnu", "powerpc64le-linux-gnu", "riscv64-linux-gnu"}

// linkedRelease is the release whose x86-64 objects TestReadLinked links,
// into programs and a shared library: they are compiled -fPIC.
const linkedRelease = 19

// objectCell is an object that clang compiles from a source in testdata for
// the tests: the release, the host triple and the flags; row, col, rows and
// cols place it in its matrix for tooltest.Sampled.
type objectCell struct {
	major                int
	src                  string
	triple               string
	name                 string // of the object file
	args                 []string
	row, col, rows, cols int
}

func (c objectCell) sampled() bool { return tooltest.Sampled(c.row, c.col, c.rows, c.cols) }

// x86Cell is the object of src compiled by clang-major for x86-64 with its
// OpenMP offload target x86-64.
func x86Cell(major int, src string) objectCell {
	args := openMPFlags(major)
	if major == linkedRelease {
		args = append(args, "-fPIC")
	}
	return objectCell{major: major, src: src, triple: x86, args: args,
		name: fmt.Sprintf("%s-%d.o", strings.TrimSuffix(src, ".c"), major)}
}

// testCells lists the objects of three matrices:
//
//   - x86-64 OpenMP: every release with a clang × both OpenMP sources;
//   - the other hosts (15 and later: no --offload-host-only before) ×
//     the six pairs of host and source, in the order k → (host k mod 3,
//     source k mod 2), so that the default sample gives each host two
//     releases and both sources;
//   - HIP for x86-64: 19 and 22 (the default sample has both).
//
// The default run compiles the cells that tooltest.Sampled picks (one of
// every row and of every column), OFFLOAD_TEST_EXHAUSTIVE=1 all of them.
func testCells() []objectCell {
	srcs := []string{"omp_plain.c", "omp_usm.c"}
	var cells []objectCell
	for i, major := range releasesWithClang {
		for j, src := range srcs {
			c := x86Cell(major, src)
			c.row, c.col, c.rows, c.cols = i, j, len(releasesWithClang), len(srcs)
			cells = append(cells, c)
		}
	}
	cross := []int{15, 16, 19, 22}
	cols := len(crossHosts) * len(srcs)
	for i, major := range cross {
		for k := range cols {
			host, src := crossHosts[k%len(crossHosts)], srcs[k%len(srcs)]
			args := append(openMPFlags(major)[:2:2], "-target", host, "-fopenmp-targets=amdgcn-amd-amdhsa", "--offload-host-only")
			args = append(args, openMPFlags(major)[3:]...)
			cells = append(cells, objectCell{major: major, src: src, triple: host, args: args,
				name: fmt.Sprintf("%s-%s-%d.o", strings.TrimSuffix(src, ".c"), host, major),
				row:  i, col: k, rows: len(cross), cols: cols})
		}
	}
	hip := []int{19, 22}
	for i, major := range hip {
		cells = append(cells, objectCell{major: major, src: "k.hip", triple: x86, args: hipFlags,
			name: fmt.Sprintf("hip-%d.o", major), row: i, col: 0, rows: len(hip), cols: 1})
	}
	return cells
}

// shared holds the objects compiled once for all the tests of the package.
var shared tooltest.Shared

// compileStore holds what clang compiled for the package's tests, which
// the default run takes instead of compiling (tooltest.Store).
var compileStore = tooltest.Store{Dir: filepath.Join("testdata", "compiled")}

// TestStoredCompilesAreCurrent: every compile in the store was made of the
// sources as they are.
func TestStoredCompilesAreCurrent(t *testing.T) {
	compileStore.CheckCurrent(t)
}

// compileShared compiles the object of c with clang, once for all the tests
// (the same name is the same cell), holding a tooltest.Slot while clang runs.
func compileShared(t testing.TB, clang string, c objectCell) (string, error) {
	return shared.File(c.name, func(path string) error {
		args := append(append([]string{}, c.args...), "-c", filepath.Join("testdata", c.src), "-o", path)
		return compileStore.Compile(t, fmt.Sprintf("clang-%d", c.major), clang, "", args, path)
	})
}

// sharedCell returns the object of c, compiled once for the package.
func sharedCell(t *testing.T, c objectCell) string {
	t.Helper()
	path, err := compileShared(t, tooltest.Tool(t, "clang", c.major), c)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// testObject is an object with entries, the clang release that made it, and
// its host triple.
type testObject struct {
	name   string
	path   string
	major  int
	triple string
}

// testObjects returns the fixture objects in
// offload/testdata/llvm/host-objects, which need no tool, and the sampled
// cells of testCells, compiled (in parallel, once for the package) with the
// clang of their release.
func testObjects(t *testing.T) []testObject {
	t.Helper()
	var objs []testObject
	for _, major := range []int{15, 16, 19, 22} {
		name := fmt.Sprintf("openmp-x86-llvm%d.o", major)
		objs = append(objs, testObject{name, llvmTestdata("host-objects", name), major, x86})
	}
	var cells []objectCell
	clangs := map[int]string{}
	for _, c := range testCells() {
		if c.sampled() {
			cells = append(cells, c)
			clangs[c.major] = tooltest.Tool(t, "clang", c.major)
		}
	}
	paths, errs := make([]string, len(cells)), make([]error, len(cells))
	var wg sync.WaitGroup
	for i, c := range cells {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = compileShared(t, clangs[c.major], c)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i, c := range cells {
		objs = append(objs, testObject{c.name, paths[i], c.major, c.triple})
	}
	return objs
}

// skipUnsampled runs a subtest, which skips with the reason, for each cell
// of testCells outside the default sample.
func skipUnsampled(t *testing.T) {
	t.Helper()
	for _, c := range testCells() {
		if !c.sampled() {
			t.Run(c.name, func(t *testing.T) { tooltest.Sample(t, c.row, c.col, c.rows, c.cols) })
		}
	}
}

// readelfFiles runs llvm-readelf once with args on all paths, and returns
// what it printed of each (it heads each file's part with "File: path" when
// there are several). What it prints on stderr (a section that one file
// lacks) is ignored; its exit status is not.
func readelfFiles(t *testing.T, tool string, args, paths []string) map[string]string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	argv := append(append([]string{}, args...), paths...)
	cmd := exec.Command(tool, argv...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	release := tooltest.Slot()
	err := cmd.Run()
	release()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", tool, argv, err, stderr.String())
	}
	out := map[string]string{}
	if len(paths) == 1 {
		out[paths[0]] = stdout.String()
		return out
	}
	cur, ok := "", false
	var b strings.Builder
	for _, line := range strings.SplitAfter(stdout.String(), "\n") {
		if p, is := strings.CutPrefix(strings.TrimRight(line, "\n"), "File: "); is {
			if ok {
				out[cur] = b.String()
			}
			cur, ok = p, true
			b.Reset()
			continue
		}
		b.WriteString(line)
	}
	if ok {
		out[cur] = b.String()
	}
	for _, p := range paths {
		if _, ok := out[p]; !ok {
			t.Fatalf("%s %q printed nothing for %s:\n%s", tool, argv, p, stdout.String())
		}
	}
	return out
}
