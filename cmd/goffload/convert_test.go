package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// convProgram is a program of testdata/convert: a main source and a source
// of the static library lib<name>.a that the program links with -l<name>.
type convProgram struct {
	name      string
	main, lib string
	cxx       bool // C++ (.cpp): linked by clang++
}

// convPrograms: the C++ program has declare-target globals built by
// constructors, a `link` global, a requires clause (unified_address) and,
// from clang 18, a call through a pointer to an `indirect` function; the C
// program requires unified_shared_memory, which it shows in what it prints
// (the device's write to memory mapped `to` reaches the host), with a
// declare-target and a `link` global. (Under unified_shared_memory clang
// makes declare-target globals references to the host's, and builds no
// device constructors: hence two programs.)
var convPrograms = []convProgram{
	{name: "cxx", main: "cxx_main.cpp", lib: "cxx_lib.cpp", cxx: true},
	{name: "usm", main: "usm_main.c", lib: "usm_lib.c"},
}

// convBuild is a program's objects: the main object and the folder of its
// library.
type convBuild struct {
	main, libdir string
}

// library returns the archive of b.
func (b convBuild) library(p convProgram) string {
	return filepath.Join(b.libdir, "lib"+p.name+".a")
}

// convRun is what a program printed with LIBOMPTARGET_INFO=1.
type convRun struct {
	stdout, stderr string
	kernels        int   // kernels that entered device 0
	err            error // how it failed, if it did
}

// runOffloaded runs exe with the runtime in lib and LIBOMPTARGET_INFO=1.
func runOffloaded(exe, lib string) convRun {
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib, "LIBOMPTARGET_INFO=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return convRun{stdout.String(), stderr.String(), strings.Count(stderr.String(), "device 0 info: Entering OpenMP kernel"), err}
}

// troubles returns the lines of a run's standard error that tell of a
// problem: omptarget's messages and fatal errors.
func troubles(stderr string) []string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "omptarget message") || strings.Contains(strings.ToLower(line), "fatal") {
			out = append(out, line)
		}
	}
	return out
}

// convLab builds the programs of the convert tests with the real tools.
type convLab struct {
	*mixLab
	builds map[string]convBuild // by program and release
}

// build compiles p with clang major (each source once) and puts the
// library's object in lib<name>.a with ar rcs.
func (l *convLab) build(major int, p convProgram) convBuild {
	l.t.Helper()
	key := fmt.Sprintf("%s-%d", p.name, major)
	if b, ok := l.builds[key]; ok {
		return b
	}
	src := filepath.Join("testdata", "convert")
	b := convBuild{main: l.object(major, filepath.Join(src, p.main)), libdir: filepath.Join(l.dir, "lib-"+key)}
	if err := os.MkdirAll(b.libdir, 0o755); err != nil {
		l.t.Fatal(err)
	}
	if msg, err := exec.Command("ar", tooltest.ArArgs("rcs", b.library(p), l.object(major, filepath.Join(src, p.lib)))...).CombinedOutput(); err != nil {
		l.t.Fatalf("ar: %v\n%s", err, msg)
	}
	l.builds[key] = b
	return b
}

// link links the program of b with clang (clang++ for C++) of release
// major, against libomptarget major, with its library given as -L DIR -lX;
// it returns the program and the runtime's folder, or the driver's error.
func (l *convLab) link(major int, p convProgram, b convBuild, name string) (string, string, error) {
	l.t.Helper()
	driver := "clang"
	if p.cxx {
		driver = "clang++"
	}
	clang := tooltest.Tool(l.t, driver, major)
	lib := l.runtime(major)
	exe := filepath.Join(l.dir, name)
	args := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-o", exe, "-L" + lib, "-Wl,-rpath," + lib, tooltest.AllowShlibUndefined,
		b.main, "-L" + b.libdir, "-l" + p.name}
	if msg, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("%s-%d %q: %v\n%s", driver, major, args, err, msg)
	}
	return exe, lib, nil
}

// convert runs goffload convert with args and fails the test unless it
// succeeds.
func convert(t *testing.T, args ...string) {
	t.Helper()
	stdout, stderr, code := cli(t, append([]string{"convert"}, args...)...)
	if code != 0 {
		t.Fatalf("goffload convert %q: exit %d\n%s%s", args, code, stdout, stderr)
	}
}

// TestConvertRuntimePairs: programs of two objects, one of them in a static
// library, compiled by clang M, converted with `goffload convert --llvm N`
// (the object, and the library as a whole archive) and linked by clang N's
// own driver, run on libomptarget N and print what the same programs
// compiled and linked by clang N print, with as many kernels offloaded; and
// no runtime message or fatal error that clang N's programs do not show.
// Unconverted, clang M's objects linked by clang N fail or print otherwise.
// Converting clang N's own objects to N gives the input's bytes.
func TestConvertRuntimePairs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	if _, err := exec.LookPath("ar"); err != nil {
		tooltest.Missing(t, "no archiver ar")
	}
	l := &convLab{mixLab: newMixLab(t), builds: map[string]convBuild{}}
	pairs := [][2]int{{19, 22}, {22, 19}, {14, 19}, {14, 22}, {15, 19}, {16, 22}}

	// The programs of clang N, for each N of the pairs.
	want := map[string]convRun{}
	for _, n := range []int{19, 22} {
		t.Run(fmt.Sprintf("clang-%d", n), func(t *testing.T) {
			l.t = t
			for _, p := range convPrograms {
				b := l.build(n, p)
				exe, lib, err := l.link(n, p, b, fmt.Sprintf("%s-clang%d", p.name, n))
				if err != nil {
					t.Fatal(err)
				}
				r := runOffloaded(exe, lib)
				if r.err != nil || r.kernels == 0 {
					t.Fatalf("%s of clang-%d: %v, %d kernels offloaded\n%s%s", p.name, n, r.err, r.kernels, r.stdout, r.stderr)
				}
				t.Logf("%s of clang-%d prints %q (%d kernels)", p.name, n, r.stdout, r.kernels)
				want[fmt.Sprintf("%s-%d", p.name, n)] = r

				// To its own release, convert writes the input's bytes.
				same := filepath.Join(t.TempDir(), "same")
				for _, in := range []string{b.main, b.library(p)} {
					convert(t, "--llvm", fmt.Sprint(n), "-o", same, in)
					a, _ := os.ReadFile(in)
					if c, err := os.ReadFile(same); err != nil || !bytes.Equal(a, c) {
						t.Errorf("convert --llvm %d of clang-%d's %s: not the input's bytes (%v)", n, n, filepath.Base(in), err)
					}
				}
			}
		})
	}

	for k, pair := range pairs {
		m, n := pair[0], pair[1]
		t.Run(fmt.Sprintf("%d-to-%d", m, n), func(t *testing.T) {
			l.t = t
			for i, p := range convPrograms {
				if !tooltest.Sampled(k, i, len(pairs), len(convPrograms)) {
					t.Logf("%s: not in the default sample (%s=1 runs it)", p.name, tooltest.ExhaustiveEnv)
					continue
				}
				base, ok := want[fmt.Sprintf("%s-%d", p.name, n)]
				if !ok {
					t.Fatalf("no program of clang-%d to compare with", n)
				}
				b := l.build(m, p)
				conv := convBuild{main: filepath.Join(l.dir, fmt.Sprintf("%s-%dto%d.o", p.name, m, n)), libdir: filepath.Join(l.dir, fmt.Sprintf("lib-%s-%dto%d", p.name, m, n))}
				if err := os.MkdirAll(conv.libdir, 0o755); err != nil {
					t.Fatal(err)
				}
				// The release told from the file, or given with --from;
				// flags before and after the operand.
				if i%2 == 0 {
					convert(t, "--llvm", fmt.Sprint(n), "-o", conv.main, b.main)
					convert(t, b.library(p), "--llvm", fmt.Sprint(n), "-o", conv.library(p))
				} else {
					convert(t, "--llvm", fmt.Sprint(n), "--from", fmt.Sprint(m), "-o", conv.main, b.main)
					convert(t, b.library(p), "-o", conv.library(p), "--from", fmt.Sprint(m), "--llvm", fmt.Sprint(n))
				}
				exe, lib, err := l.link(n, p, conv, fmt.Sprintf("%s-%dto%d", p.name, m, n))
				if err != nil {
					t.Fatalf("clang-%d does not link the converted objects: %v", n, err)
				}
				r := runOffloaded(exe, lib)
				switch {
				case r.err != nil:
					t.Errorf("%s: clang-%d objects converted to %d: %v\n%s%s", p.name, m, n, r.err, r.stdout, r.stderr)
				case r.stdout != base.stdout || r.kernels != base.kernels:
					t.Errorf("%s: clang-%d objects converted to %d print %q (%d kernels), clang-%d's %q (%d kernels)\n%s",
						p.name, m, n, r.stdout, r.kernels, n, base.stdout, base.kernels, r.stderr)
				default:
					t.Logf("%s: clang-%d objects converted to %d print %q (%d kernels)", p.name, m, n, r.stdout, r.kernels)
				}
				for _, line := range troubles(r.stderr) {
					if !slices.Contains(troubles(base.stderr), line) {
						t.Errorf("%s: clang-%d objects converted to %d: %s", p.name, m, n, line)
					}
				}

				// Unconverted, the objects of clang M fail with clang N:
				// logged, not checked, and so run only in the exhaustive run.
				if !tooltest.Exhaustive() {
					continue
				}
				exe, lib, err = l.link(n, p, b, fmt.Sprintf("%s-%dby%d", p.name, m, n))
				if err != nil {
					t.Logf("%s: unconverted, clang-%d does not link clang-%d's objects: %v", p.name, n, m, err)
					continue
				}
				u := runOffloaded(exe, lib)
				switch {
				case u.err != nil:
					t.Logf("%s: unconverted, clang-%d's objects linked by clang-%d: %v\n%s", p.name, m, n, u.err, strings.Join(troubles(u.stderr), "\n"))
				case u.stdout != base.stdout || u.kernels != base.kernels:
					t.Logf("%s: unconverted, clang-%d's objects linked by clang-%d print %q (%d kernels)", p.name, m, n, u.stdout, u.kernels)
				default:
					t.Logf("%s: unconverted, clang-%d's objects linked by clang-%d work as well", p.name, m, n)
				}
			}
		})
	}
}

// fatbinLine is the log's line of the fatbin, whose image (the device code
// that clang N compiled from the object's bitcode) differs with the release
// that made the bitcode.
var fatbinLine = regexp.MustCompile(`image: \d+ bytes fnv=[0-9a-f]+`)

// linkHIP links the HIP object obj with clang major (-fgpu-rdc
// --offload-new-driver for gfx90a) and src's main.c and runtime.c (the
// logging stand-in of the registration API) into dir/name, as
// [tooltest.BuildGPUProgram] links the object it compiles; it returns the
// driver's error.
func linkHIP(t *testing.T, major int, obj, src, dir, name string) (string, error) {
	t.Helper()
	clang := tooltest.Tool(t, "clang", major)
	exe := filepath.Join(dir, name)
	cmd := exec.Command(clang, "-fgpu-rdc", "--offload-arch=gfx90a", "-nogpulib", "--offload-new-driver", obj,
		filepath.Join(src, "main.c"), filepath.Join(src, "runtime.c"), "-rdynamic", "-ldl", "-Wl,--save-temps", "-o", exe)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", cmd, err, out)
	}
	return exe, nil
}

// bundleEntries returns the entries that goffload list shows in the HIP
// fatbin fb, without their offsets and sizes.
func bundleEntries(t *testing.T, fb string) string {
	t.Helper()
	stdout, stderr, code := cli(t, "list", "--all", "--llvm", "22", fb)
	if code != 0 {
		t.Fatalf("list %s: exit %d: %s", fb, code, stderr)
	}
	var ids []string
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[0], "[") {
			ids = append(ids, f[1])
		}
	}
	return strings.Join(ids, " ")
}

// TestConvertHIPRegistration: a HIP object of clang-19 (a kernel, a
// __device__, a __constant__ and a __managed__ variable, a texture and a
// surface) converted with `goffload convert --llvm 22` and linked by
// clang-22 registers with the runtime what the same source compiled by
// clang-22 registers: the logging stand-in of the registration API prints
// the same calls (the fatbin's image aside, which LLVM 22 compiles from
// clang-19's bitcode), and the fatbin holds the same bundle entries.
// Unconverted, clang-22 does not link the object (its offload kind 3 is
// CUDA's for LLVM 22), or its program logs otherwise (logged).
func TestConvertHIPRegistration(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "wrap", "testdata", "gpu"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := tooltest.BuildGPUProgram(t, 22, "hip", src, dir)
	want := runLog(t, p.Program)
	for _, call := range []string{"__hipRegisterFunction(<handle>, _Z4kernPi", "__hipRegisterVar(<handle>, dvar", "__hipRegisterVar(<handle>, cvar", "__hipRegisterManagedVar(<handle>, mvar"} {
		if !strings.Contains(want, call) {
			t.Fatalf("clang-22's program does not log %s:\n%s", call, want)
		}
	}

	obj19, conv := filepath.Join(dir, "k19.o"), filepath.Join(dir, "k19to22.o")
	compiled(t, "clang", 19, "", []string{"-x", "hip", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-fgpu-rdc", "--offload-new-driver",
		"-c", filepath.Join("..", "..", "wrap", "testdata", "gpu", "k.hip"), "-o", obj19}, obj19)
	convert(t, "--llvm", "22", "-o", conv, obj19)
	exe, err := linkHIP(t, 22, conv, src, dir, "conv")
	if err != nil {
		t.Fatalf("clang-22 does not link the converted object: %v", err)
	}
	got := runLog(t, exe)
	if fatbinLine.ReplaceAllString(got, "image: <fatbin>") != fatbinLine.ReplaceAllString(want, "image: <fatbin>") {
		t.Errorf("the converted clang-19 object registers\n%s\nclang-22's object\n%s", got, want)
	}
	if a, b := bundleEntries(t, exe+".hipfb"), bundleEntries(t, p.Fatbin); a != b || !strings.Contains(a, "hip-amdgcn-amd-amdhsa--gfx90a") {
		t.Errorf("the converted object's fatbin holds %q, clang-22's %q", a, b)
	}

	// Unconverted.
	exe, err = linkHIP(t, 22, obj19, src, dir, "unconv")
	if err != nil {
		t.Logf("unconverted, clang-22 does not link clang-19's object: %v", err)
		return
	}
	cmd := exec.Command(exe)
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		t.Logf("unconverted, clang-19's object linked by clang-22 fails: %v", err)
	case err != nil:
		t.Fatal(err)
	case fatbinLine.ReplaceAllString(string(out), "") == fatbinLine.ReplaceAllString(want, ""):
		t.Logf("unconverted, clang-19's object linked by clang-22 registers as well")
	default:
		t.Logf("unconverted, clang-19's object linked by clang-22 registers\n%s", out)
	}
}
