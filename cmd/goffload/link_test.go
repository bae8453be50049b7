package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// compileOpenMP compiles src with clang of release major for the x86-64
// host-device target, -c.
func compileOpenMP(t *testing.T, major int, src, out string) string {
	t.Helper()
	clang := tooltest.Tool(t, "clang", major)
	args := []string{"-O1", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", src}
	if major >= 18 {
		args = append(args, "-fopenmp-version=52", "-DNEW_OPENMP")
	} else {
		args = append(args, "-fopenmp-version=51")
	}
	// Compiled once for all the tests of the package.
	obj := builtOnce(t, fmt.Sprint("compileOpenMP ", clang, args), func(obj string) error {
		compiled(t, "clang", major, "", append(args, "-o", obj), obj)
		return nil
	})
	return copyTo(t, obj, out)
}

// runProgram runs exe with the runtime in lib and LIBOMPTARGET_INFO=1 and
// returns the program's standard output and how many kernels entered device 0.
func runProgram(t *testing.T, exe, lib string) (string, int) {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib, "LIBOMPTARGET_INFO=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", exe, err, out, stderr.String())
	}
	return string(out), strings.Count(stderr.String(), "device 0 info: Entering OpenMP kernel")
}

// TestLinkRunsOffloadedProgram links objects of clang 15, 16 and 19 with
// goffload link (clang only links the device code, cc the host program, no
// clang-linker-wrapper) and runs them under the runtime of the same release:
// the output is the clang-linked program's, and every kernel enters device 0.
func TestLinkRunsOffloadedProgram(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	for _, major := range []int{15, 16, 19} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			lib := tooltest.OpenMPRuntime(t, major)
			clang := tooltest.Tool(t, "clang", major)
			dir := t.TempDir()
			obj := compileOpenMP(t, major, filepath.Join("testdata", "prog.c"), filepath.Join(dir, "prog.o"))
			// Linked over a file that `touch ours` made: the program is
			// executable, as cc and ld make it.
			ours := filepath.Join(dir, "ours")
			if err := os.WriteFile(ours, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := cli(t, "link", "--llvm", fmt.Sprint(major), "--clang", clang, "--libdir", lib, tooltest.AllowShlibUndefined, "-o", ours, obj); code != 0 {
				t.Fatalf("goffload link: exit %d: %s", code, stderr)
			}
			if major == 16 {
				// clang-16 links the device runtime even for the host device;
				// only libomp-16-dev has it, and an empty one will do.
				if err := os.WriteFile(filepath.Join(lib, "libomptarget.devicertl.a"), []byte("!<arch>\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			theirs := filepath.Join(dir, "theirs")
			cmd := exec.Command(clang, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", obj, "-o", theirs, "-L"+lib, "-Wl,-rpath,"+lib, tooltest.AllowShlibUndefined)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("clang link: %v\n%s", err, msg)
			}
			assertCheckPasses(t, obj, ours, theirs)
			got, kernels := runProgram(t, ours, lib)
			want, _ := runProgram(t, theirs, lib)
			if got != want || !strings.HasPrefix(got, "a=6 ") {
				t.Errorf("goffload-linked program printed %q, clang-linked %q", got, want)
			}
			if kernels != 3 {
				t.Errorf("%d kernels entered device 0, want 3", kernels)
			}
		})
	}
}

func TestLinkDryRunRunsNothing(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "prog")
	stdout, stderr, code := cli(t, "link", "--dry-run", "--llvm", "19", "-o", out, testdata("host-objects", "openmp-x86-llvm19.o"), "-lm")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"clang\" --no-default-config", "--target=x86_64-unknown-linux-gnu", "-shared", "\"cc\" -o " + out, "-lomptarget", "-lm"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run does not print %q:\n%s", want, stdout)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the dry run wrote %s", out)
	}
}

// TestRelocatableLinkMakesStaticLibrary: `goffload link -r` merges an
// offloading object with its wrapper into merged.o; in a static library, a
// plain cc link of an application runs the library's kernel. For 19 the
// entries section is renamed as LLVM 19's wrapper renames it. 16's wrapper
// takes -r as any linker option, and so does goffload for it: through
// clang-16 -B, the -r object is the one clang-16's own wrapper makes, byte
// for byte, and the application linked with goffload link's crashes under
// libomptarget 16 as the one linked with clang-16's does.
func TestRelocatableLinkMakesStaticLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	arPath, err := exec.LookPath("ar")
	if err != nil {
		tooltest.Missing(t, "ar not found")
	}
	for _, major := range []int{19, 16} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			lib := tooltest.OpenMPRuntime(t, major)
			dir := t.TempDir()
			obj := compileOpenMP(t, major, filepath.Join("testdata", "foo.c"), filepath.Join(dir, "foo.o"))
			// The application of a static library holding merged.
			app := func(merged, name string) string {
				t.Helper()
				libDir := filepath.Join(dir, name)
				if err := os.Mkdir(libDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if msg, err := exec.Command(arPath, "rcs", filepath.Join(libDir, "libfoo.a"), merged).CombinedOutput(); err != nil {
					t.Fatalf("ar: %v\n%s", err, msg)
				}
				app := filepath.Join(libDir, "app")
				cmd := exec.Command("cc", filepath.Join("testdata", "app.c"), "-L"+libDir, "-lfoo", "-L"+lib, "-lomptarget", "-Wl,-rpath,"+lib, tooltest.AllowShlibUndefined, "-o", app)
				if msg, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("cc: %v\n%s", err, msg)
				}
				return app
			}
			merged := filepath.Join(dir, "merged.o")
			if _, stderr, code := cli(t, "link", "-r", "--llvm", fmt.Sprint(major), "--libdir", lib, "-o", merged, obj); code != 0 {
				t.Fatalf("goffload link -r: exit %d: %s", code, stderr)
			}
			stdout, _, code := cli(t, "list", "--json", merged)
			renamed := strings.Contains(stdout, `"section": "omp_offloading_entries_`)
			if code != 0 || renamed != (major >= 19) {
				t.Errorf("merged.o: entries section renamed: %v, want %v:\n%s", renamed, major >= 19, stdout)
			}
			ours := app(merged, "ours")
			if major >= 19 {
				assertCheckPasses(t, obj, merged, ours)
				got, kernels := runProgram(t, ours, lib)
				if got != "foo(1)=44\n" || kernels != 1 {
					t.Errorf("app printed %q with %d kernels on device 0", got, kernels)
				}
				return
			}
			// clang-16 -r, with its own wrapper and with goffload as its
			// wrapper: the same object.
			clang := tooltest.Tool(t, "clang", major)
			wrapperBins(t, dir, tooltest.Tool(t, "clang-linker-wrapper", major), goffloadExe(t))
			for _, who := range []string{"theirs", "ours"} {
				cmd := exec.Command(clang, "-B", filepath.Join(dir, who+"-bin"), "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-r", obj, "-o", filepath.Join(dir, who+"-merged.o"), "-L"+lib)
				if msg, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("clang-%d -r (%s): %v\n%s", major, who, err, msg)
				}
			}
			theirsObj := filepath.Join(dir, "theirs-merged.o")
			tooltest.SameFile(t, theirsObj, filepath.Join(dir, "ours-merged.o"), "the -r object")
			theirs := app(theirsObj, "theirs")
			run := func(exe string) error {
				cmd := exec.Command(exe)
				cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib)
				return cmd.Run()
			}
			if a, b := run(ours), run(theirs); fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("the application of goffload's -r object: %v; of clang-%d's: %v", a, major, b)
			} else {
				t.Logf("both applications: %v (as LLVM %d's -r link makes them)", a, major)
			}
		})
	}
}

// TestDemoRunsOffloadedKernel runs the README's main job.
func TestDemoRunsOffloadedKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("links and runs a program")
	}
	tooltest.Tool(t, "clang", 19)
	lib := tooltest.OpenMPRuntime(t, 19)
	stdout, stderr, code := cli(t, "demo", "--libdir", lib)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"vadd on the OpenMP device: sum = 1048576 (want 1048576)", "device 0 info: Entering OpenMP kernel"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo does not print %q:\n%s", want, stdout)
		}
	}
}

// TestDemoWithoutLLVM: with no clang-19 on $PATH and no libomptarget, the
// demo uses the image linked in advance (--override-image, whose triple is
// the one clang-linker-wrapper 19 gives an x86-64 file: x86_64--) and lists
// the registration object.
func TestDemoWithoutLLVM(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	stdout, stderr, code := cli(t, "demo", "--libdir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"clang-19 is not installed", "OFFLOADING IMAGE [0]:\nkind            elf\narch            \ntriple          x86_64--\nproducer        openmp"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("demo does not print %q:\n%s", want, stdout)
		}
	}
}

// TestWrapCommand wraps two binaries and lists the object: both images are
// there, in the order given.
func TestWrapCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "wrapper.o")
	multi := testdata("packager", "multi-llvm19.bin")
	if _, stderr, code := cli(t, "wrap", "--kind", "openmp", "--llvm", "19", "--triple", "aarch64-linux-gnu", "-o", out, multi); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	stdout, stderr, code := cli(t, "list", "--llvm", "19", out)
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"file format elf64-littleaarch64", "OFFLOADING IMAGE [0]:\nkind            <none>\narch            sm_70", "OFFLOADING IMAGE [1]:\nkind            elf\narch            gfx90a"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("list does not print %q:\n%s", want, stdout)
		}
	}
	if _, _, code := cli(t, "wrap", "--kind", "cuda", "-o", out, multi); code != 1 {
		t.Errorf("--kind cuda: exit %d, want 1", code)
	}
}
