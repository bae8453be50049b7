package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// checkResult is one object of `goffload check --json`.
type checkResult struct {
	File     string `json:"file"`
	Runtime  string `json:"runtime"`
	Findings []struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
		Other   string `json:"other"`
	} `json:"findings"`
	Registrations []struct {
		Section  string `json:"section"`
		Releases []int  `json:"releases"`
	} `json:"registrations"`
}

// kinds returns the kinds of r's findings, but missing-symbol.
func (r checkResult) kinds() []string {
	var out []string
	for _, f := range r.Findings {
		if f.Kind != "missing-symbol" && !slices.Contains(out, f.Kind) {
			out = append(out, f.Kind)
		}
	}
	return out
}

// checkJSON runs goffload check --json on paths and returns its objects and
// exit status; a failure names the files in one line.
func checkJSON(t *testing.T, paths ...string) ([]checkResult, int) {
	t.Helper()
	stdout, stderr, code := cli(t, append([]string{"check", "--json"}, paths...)...)
	var out []checkResult
	dec := json.NewDecoder(strings.NewReader(stdout))
	for {
		var r checkResult
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("check --json: %v\n%s", err, stdout)
		}
		out = append(out, r)
	}
	if code != 0 && (strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "problem")) {
		t.Errorf("check: exit %d with %q", code, stderr)
	}
	return out, code
}

// assertCheckPasses runs goffload check on a program or object that works:
// it must find nothing.
func assertCheckPasses(t *testing.T, paths ...string) {
	t.Helper()
	stdout, stderr, code := cli(t, append([]string{"check"}, paths...)...)
	if code != 0 {
		t.Errorf("check %v: exit %d (a false alarm)\n%s%s", paths, code, stdout, stderr)
	}
}

// assertCheckFinds checks that check --json exits 1 and finds exactly the
// kinds want (missing-symbol aside) in the last file given.
func assertCheckFinds(t *testing.T, want []string, paths ...string) checkResult {
	t.Helper()
	res, code := checkJSON(t, paths...)
	if code != 1 || len(res) == 0 {
		t.Fatalf("check %v: exit %d, %d results", paths, code, len(res))
	}
	last := res[len(res)-1]
	if got := last.kinds(); !slices.Equal(got, want) {
		t.Errorf("check %v: %s: found %q, want %q\n%+v", paths, last.File, got, want, last.Findings)
	}
	return last
}

// runFailure runs exe with the runtime in lib and returns how it failed:
// its exit status or signal and its standard error; it fails the test if
// the program succeeds.
func runFailure(t *testing.T, exe, lib string, env ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), "LD_LIBRARY_PATH="+lib), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("%s ran (%v): %s", filepath.Base(exe), err, out)
	}
	how := fmt.Sprintf("exit %d", ee.ExitCode())
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		how = ws.Signal().String()
	}
	return how, stderr.String()
}

// mixLab compiles and links the programs of the mixing tests, each once.
type mixLab struct {
	t    *testing.T
	dir  string
	objs map[string]string
}

func newMixLab(t *testing.T) *mixLab {
	return &mixLab{t: t, dir: t.TempDir(), objs: map[string]string{}}
}

// object returns src (in testdata, or a source written to the lab)
// compiled by clang major.
func (l *mixLab) object(major int, src string) string {
	l.t.Helper()
	key := fmt.Sprintf("%s-%d", strings.TrimSuffix(filepath.Base(src), ".c"), major)
	if o, ok := l.objs[key]; ok {
		return o
	}
	out := filepath.Join(l.dir, key+".o")
	if major >= 15 && filepath.Base(src) == "prog.c" {
		compileOpenMP(l.t, major, src, out) // OpenMP 5.2's features from 18
	} else {
		clang := tooltest.Tool(l.t, "clang", major)
		args := []string{"-O1", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", src}
		if major >= 15 {
			args = append(args, "-fopenmp-version=51") // `declare target to`
		}
		// A source of testdata is compiled once for all the tests; one the
		// lab wrote is its own.
		key := fmt.Sprint("mixLab ", clang, args)
		if !strings.HasPrefix(src, l.dir) {
			obj := builtOnce(l.t, key, func(obj string) error {
				compiled(l.t, "clang", major, "", append(args, "-o", obj), obj)
				return nil
			})
			copyTo(l.t, obj, out)
		} else {
			// Compiled in the lab's folder, by the source's name there.
			args[slices.Index(args, src)] = filepath.Base(src)
			compiled(l.t, "clang", major, l.dir, append(args, "-o", filepath.Base(out)), filepath.Base(out))
		}
	}
	l.objs[key] = out
	return out
}

// runtime returns a folder of libomptarget major, made for the running
// (sub)test: it goes when the test ends.
func (l *mixLab) runtime(major int) string {
	l.t.Helper()
	lib := tooltest.OpenMPRuntime(l.t, major)
	if major == 16 {
		// clang-16 links the device runtime even for the host device.
		if err := os.WriteFile(filepath.Join(lib, "libomptarget.devicertl.a"), []byte("!<arch>\n"), 0o644); err != nil {
			l.t.Fatal(err)
		}
	}
	return lib
}

// clangLink links inputs with clang major against runtime rt and returns
// the program and the runtime's folder. (The folder is the test's: a test
// name with a comma would break -Wl,-rpath,DIR.)
func (l *mixLab) clangLink(major, rt int, name string, inputs ...string) (string, string) {
	l.t.Helper()
	clang := tooltest.Tool(l.t, "clang", major)
	lib := l.runtime(rt)
	exe := filepath.Join(l.dir, name)
	args := append([]string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-o", exe, "-L" + lib, "-Wl,-rpath," + lib, tooltest.AllowShlibUndefined}, inputs...)
	if msg, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		l.t.Fatalf("clang-%d %v: %v\n%s", major, args, err, msg)
	}
	return exe, lib
}

// goffloadLink links inputs with goffload link --llvm major (clang major
// for the device) against runtime rt.
func (l *mixLab) goffloadLink(major, rt int, name string, inputs ...string) (string, string) {
	l.t.Helper()
	clang := tooltest.Tool(l.t, "clang", major)
	lib := l.runtime(rt)
	exe := filepath.Join(l.dir, name)
	args := append([]string{"link", "--llvm", fmt.Sprint(major), "--clang", clang, "--libdir", lib, tooltest.AllowShlibUndefined, "-o", exe}, inputs...)
	if _, stderr, code := cli(l.t, args...); code != 0 {
		l.t.Fatalf("goffload %v: %s", args, stderr)
	}
	return exe, lib
}

// usmSource writes a program that requires unified_shared_memory, which
// libomptarget shows with LIBOMPTARGET_INFO (mapping returns the host
// pointer "for unified shared memory").
func (l *mixLab) usmSource() string {
	src := filepath.Join(l.dir, "usm.c")
	const prog = "#include <stdio.h>\n#pragma omp requires unified_shared_memory\nint main(void) {\n  int a = 0;\n#pragma omp target map(tofrom: a)\n  { a = 1; }\n  printf(\"a=%d\\n\", a);\n  return 0;\n}\n"
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		l.t.Fatal(err)
	}
	return src
}

const noTargetPointer = "does not have a matching target pointer"

// TestCheckFindsMixedReleases builds the broken programs of mixed releases
// (docs/releases.md#mixing-releases) with the real tools: check names what is
// wrong with each in one line, and each fails when it runs, as check predicts.
func TestCheckFindsMixedReleases(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	l := newMixLab(t)
	prog := filepath.Join("testdata", "prog.c")

	t.Run("clang-19 objects linked by clang-22", func(t *testing.T) {
		l.t = t
		exe, lib := l.clangLink(22, 22, "m19by22", l.object(19, prog))
		r := assertCheckFinds(t, []string{"unregistered-entries"}, exe)
		if r.Runtime != "libomptarget.so.22.1" || len(r.Registrations) != 1 || r.Registrations[0].Section != "llvm_offload_entries" {
			t.Errorf("runtime %q, registrations %+v", r.Runtime, r.Registrations)
		}
		if how, stderr := runFailure(t, exe, lib); !strings.Contains(stderr, noTargetPointer) {
			t.Errorf("%s: %s", how, stderr)
		}
	})
	t.Run("clang-22 objects linked by clang-19", func(t *testing.T) {
		l.t = t
		exe, lib := l.clangLink(19, 19, "m22by19", l.object(22, prog))
		assertCheckFinds(t, []string{"unregistered-entries"}, exe)
		if how, stderr := runFailure(t, exe, lib); !strings.Contains(stderr, noTargetPointer) {
			t.Errorf("%s: %s", how, stderr)
		}
	})
	for _, linker := range []int{19, 22} {
		t.Run(fmt.Sprintf("clang-14 object linked by clang-%d", linker), func(t *testing.T) {
			l.t = t
			exe, lib := l.clangLink(linker, linker, fmt.Sprintf("m14by%d", linker), l.object(14, prog))
			// clang-14's constructor registers OMP_REQ_NONE (it records
			// no unified_address): no requirement is lost, and the
			// runtime's note that the call was removed is no problem.
			assertCheckFinds(t, []string{"unregistered-entries"}, exe)
			if how, stderr := runFailure(t, exe, lib); how != "segmentation fault" || !strings.Contains(stderr, "__tgt_register_requires(int64_t) function has been removed") {
				t.Errorf("%s: %s", how, stderr)
			}
		})
	}
	t.Run("LLVM 22 wrapper on libomptarget 19", func(t *testing.T) {
		l.t = t
		exe, lib := l.goffloadLink(22, 19, "p22w22rt19", l.object(22, prog))
		r := assertCheckFinds(t, []string{"runtime-entry-layout"}, exe)
		if r.Runtime != "libomptarget.so.19.1" {
			t.Errorf("runtime %q", r.Runtime)
		}
		if how, _ := runFailure(t, exe, lib); how != "segmentation fault" {
			t.Errorf("%s", how)
		}
	})
	t.Run("archive of clang-19 and clang-22 objects", func(t *testing.T) {
		l.t = t
		lib := filepath.Join(l.dir, "libmixed.a")
		f19, foo22 := l.object(19, filepath.Join("testdata", "slib_f.c")), l.object(22, filepath.Join("testdata", "foo.c"))
		if msg, err := exec.Command("ar", tooltest.ArArgs("rcs", lib, f19, foo22)...).CombinedOutput(); err != nil {
			t.Fatalf("ar: %v\n%s", err, msg)
		}
		r := assertCheckFinds(t, []string{"mixed-entry-layouts"}, lib)
		if want := lib + "(" + filepath.Base(f19) + ")"; r.File != lib+"("+filepath.Base(foo22)+")" || r.Findings[0].Other != want {
			t.Errorf("%s: against %q, want %q", r.File, r.Findings[0].Other, want)
		}
		// The same objects given one by one are flagged alike.
		assertCheckFinds(t, []string{"mixed-entry-layouts"}, f19, foo22)
		// And the program a clang-22 application makes with the library
		// fails in the library's function.
		exe, rt := l.clangLink(22, 22, "appmixed", l.object(22, filepath.Join("testdata", "slib_main.c")), "-L"+l.dir, "-lmixed")
		assertCheckFinds(t, []string{"unregistered-entries", "mixed-entry-layouts"}, exe)
		if how, stderr := runFailure(t, exe, rt); !strings.Contains(stderr, noTargetPointer) {
			t.Errorf("%s: %s", how, stderr)
		}
	})
	t.Run("clang-14 and clang-19 objects", func(t *testing.T) {
		l.t = t
		assertCheckFinds(t, []string{"device-code-form"}, l.object(14, prog), l.object(19, prog))
	})
	// Issue 33, B5: clang 15 to 18 register OMP_REQ_NONE by a constructor
	// in every object; on libomptarget 19 nothing is lost (check used to
	// say the requirements were ignored).
	t.Run("clang-16 object without requires with clang-19", func(t *testing.T) {
		l.t = t
		src := filepath.Join(l.dir, "norequires.c")
		os.WriteFile(src, []byte("int main(void) { int x = 0;\n#pragma omp target map(tofrom: x)\nx = 1;\nreturn x != 1; }\n"), 0o644)
		o16, o19 := l.object(16, src), l.object(19, src)
		exe, _ := l.clangLink(19, 19, "noreq16by19", o16)
		assertCheckPasses(t, exe)
		// B2: what clang-19 links, goffload link plans too, and check of
		// the pair finds nothing. B1: converted to 19, the object is
		// 19's alone (its constructor, left in place, registers nothing).
		conv := filepath.Join(l.dir, "noreq16to19.o")
		for _, args := range [][]string{
			{"link", "--llvm", "19", "--dry-run", "-o", filepath.Join(l.dir, "pair"), o19, o16},
			{"check", o19, o16},
			{"convert", "--llvm", "19", "-o", conv, o16},
			{"link", "--llvm", "19", "--dry-run", "-o", filepath.Join(l.dir, "pair"), o19, conv},
		} {
			if out, stderr, code := cli(t, args...); code != 0 {
				t.Errorf("goffload %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
			}
		}
		if out, _, _ := cli(t, "check", conv); !strings.Contains(out, "made by LLVM 19-20") {
			t.Errorf("the converted object is not 19's alone:\n%s", out)
		}
	})
	t.Run("requires of clang-16 and clang-19", func(t *testing.T) {
		l.t = t
		usm := l.usmSource()
		u16, u19 := l.object(16, usm), l.object(19, usm)
		assertCheckFinds(t, []string{"requires-encoding"}, u16, u19)
		// clang-16's constructor on libomptarget 19: the program runs, but
		// without unified shared memory.
		exe, lib := l.clangLink(19, 19, "usm16by19", u16)
		assertCheckFinds(t, []string{"requires-encoding"}, exe)
		same, _ := l.clangLink(19, 19, "usm19", u19)
		assertCheckPasses(t, same)
		for name, want := range map[string]bool{exe: false, same: true} {
			cmd := exec.Command(name)
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib, "LIBOMPTARGET_INFO=-1")
			out, err := cmd.CombinedOutput()
			if err != nil || strings.Contains(string(out), "for unified shared memory") != want {
				t.Errorf("%s: unified shared memory %v, want %v (%v)\n%s", filepath.Base(name), !want, want, err, out)
			}
		}
		// clang-19's requires entry on libomptarget 16 fails.
		exe, lib = l.clangLink(16, 16, "usm19by16", u19)
		assertCheckFinds(t, []string{"requires-encoding"}, exe)
		if how, stderr := runFailure(t, exe, lib); !strings.Contains(stderr, "Unable to generate entries table") {
			t.Errorf("%s: %s", how, stderr)
		}
	})
	t.Run("HIP objects of clang-19 and clang-22", func(t *testing.T) {
		l.t = t
		var objs []string
		for _, major := range []int{19, 22} {
			obj := filepath.Join(l.dir, fmt.Sprintf("hip%d.o", major))
			args := []string{"-x", "hip", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-fgpu-rdc", "--offload-new-driver", "-c", filepath.Join("..", "..", "wrap", "testdata", "gpu", "k.hip"), "-o", obj}
			compiled(t, "clang", major, "", args, obj)
			objs = append(objs, obj)
		}
		assertCheckFinds(t, []string{"hip-kind-numbering"}, objs...)
	})
}

// TestCheckPassesSameRelease: the programs that clang of one release links
// from its own objects, and that run, pass check, stripped too; so does a
// clang-19 program that goffload links with the LLVM 19 wrapper against
// libomptarget 22, which reads 32-byte entries.
func TestCheckPassesSameRelease(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	l := newMixLab(t)
	prog := filepath.Join("testdata", "prog.c")
	for _, major := range []int{14, 15, 16, 19, 22} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			l.t = t
			exe, lib := l.clangLink(major, major, fmt.Sprintf("same%d", major), l.object(major, prog))
			stripped := exe + ".stripped"
			if msg, err := exec.Command("strip", "-o", stripped, exe).CombinedOutput(); err != nil {
				t.Fatalf("strip: %v\n%s", err, msg)
			}
			assertCheckPasses(t, exe, stripped, l.object(major, prog))
			if out, kernels := runProgram(t, exe, lib); kernels == 0 || !strings.HasPrefix(out, "a=6 ") {
				t.Errorf("%q, %d kernels", out, kernels)
			}
		})
	}
	t.Run("clang-19 objects with the LLVM 19 wrapper on libomptarget 22", func(t *testing.T) {
		l.t = t
		exe, lib := l.goffloadLink(19, 22, "p19w19rt22", l.object(19, prog))
		assertCheckPasses(t, exe)
		if out, kernels := runProgram(t, exe, lib); kernels != 3 || out != "a=6 b=5 c=21\n" {
			t.Errorf("%q, %d kernels", out, kernels)
		}
	})
}
