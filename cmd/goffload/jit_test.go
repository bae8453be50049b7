package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestWrapperJITAsClangs: an OpenMP program for an AMDGPU target compiled
// and linked with clang-22 -fopenmp-target-jit (the wrapper's
// --embed-bitcode) through clang -B DIR, goffload as DIR's
// clang-linker-wrapper, is the same program, byte for byte, as clang-22's
// own link: the device link stops after its LTO (-Wl,--lto-emit-llvm) and
// the image registered is that bitcode, of kind LLVM IR. (Nothing here runs
// it: there is no AMD GPU. LLVM 22's JIT link of a CPU target fails in its
// own wrapper, whose device clang gives GNU ld --lto-emit-llvm.)
func TestWrapperJITAsClangs(t *testing.T) {
	t.Parallel()
	clang := tooltest.Tool(t, "clang", 22)
	clw := tooltest.Tool(t, "clang-linker-wrapper", 22)
	tooltest.Tool(t, "ld.lld", 22)
	rt := tooltest.OpenMPRuntime(t, 22)
	exe := goffloadExe(t)
	dir := t.TempDir()
	src := "int main(void) {\n  int x = 0;\n#pragma omp target map(tofrom: x)\n  x = 42;\n  return x != 42;\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "k.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-fopenmp-target-jit"}
	compiled(t, "clang", 22, dir, append(flags, "-c", "k.c", "-o", "k.o"), "k.o")
	wrapperBins(t, dir, clw, exe)
	progs := map[string][]byte{}
	for _, w := range []string{"theirs", "ours"} {
		work := filepath.Join(dir, w)
		if err := os.Mkdir(work, 0o755); err != nil {
			t.Fatal(err)
		}
		release := tooltest.Slot()
		runCmd(t, work, clang, append(flags, "-B", filepath.Join(dir, w+"-bin"), filepath.Join(dir, "k.o"), "-o", "prog", "-L"+rt, tooltest.AllowShlibUndefined)...)
		release()
		data, err := os.ReadFile(filepath.Join(work, "prog"))
		if err != nil {
			t.Fatal(err)
		}
		progs[w] = data
	}
	if !bytes.Equal(progs["theirs"], progs["ours"]) {
		t.Errorf("the programs differ: clang-22's own link %d bytes, through goffload %d", len(progs["theirs"]), len(progs["ours"]))
	}
	out, stderr, code := cli(t, "list", filepath.Join(dir, "ours", "prog"))
	if code != 0 || !strings.Contains(out, "kind            llvm ir\narch            gfx90a\ntriple          amdgcn-amd-amdhsa\nproducer        openmp\n") {
		t.Errorf("list of the program: exit %d %s\n%s\nwant one image of LLVM IR for gfx90a", code, stderr, out)
	}
}

// jitSources are two translation units whose device code resolves as a
// linker would: a weak definition in the first (w, wf) that the second's
// strong one overrides (from LLVM 18; 15 to 17's LTO takes the first), an
// undefined function the second defines, a hidden and a protected global,
// a global in a section named as a C identifier, a common symbol, and a
// static function.
var jitSources = map[string]string{
	"a.c": `#include <stdio.h>
int g = 3;
__attribute__((weak)) int w = 5;
__attribute__((visibility("hidden"))) int h = 7;
__attribute__((section("mysec"))) int s = 9;
int com;
#pragma omp declare target to(g, w, h, s, com)
#pragma omp declare target
__attribute__((weak)) int wf(int x) { return x + 1; }
int helper(int x);
static int st(int x) { return x * 2; }
#pragma omp end declare target
int main(void) {
  int x[8];
#pragma omp target map(from: x)
  for (int i = 0; i < 8; i++) x[i] = st(i) * g + w + h + s + com + wf(i) + helper(i);
  int r = 0;
  for (int i = 0; i < 8; i++) r += x[i];
  printf("%d\n", r);
  return 0;
}
`,
	"lib.c":  "int libfn(int x) { return x * 3; }\n",
	"stub.c": "int __kmpc_target_init(void *a, void *b) { return -1; }\nvoid __kmpc_target_deinit(void) {}\n",
	"b.c": `#pragma omp declare target
int wf(int x) { return x + 2; }
int helper(int x) { return x - 1; }
#pragma omp end declare target
int w = 6;
#pragma omp declare target to(w)
`,
}

// TestWrapperDriverFlagsAsClangs: links through clang -B DIR, goffload as
// DIR's clang-linker-wrapper, of two objects of jitSources, each against
// clang's own link of the same objects with the same flags.
//
// The JIT links (the wrapper's --embed-bitcode) of the releases whose
// wrapper runs the device LTO in its own process (15 to 19), which goffload
// runs as llvm-lto2 given the wrapper's symbol resolutions: as clang-19
// -fopenmp-target-jit links them for x86-64 and for sm_90 (no CUDA needed:
// the device code stays bitcode), and as clang-16 links bitcode objects
// with -Wl,--embed-bitcode (16's clang has no -fopenmp-target-jit), the
// programs are clang's own, byte for byte. clang-19's x86-64 JIT program
// ends as clang's own does on the release's runtime (Debian's libomptarget
// 19 cannot compile the IR: "no targets are registered"). LLVM 15's wrapper
// fails after its LTO (it opens its bitcode by a name it freed): the image
// goffload registers is the bitcode that LTO wrote, kept by --save-temps.
// goffload's x86-64 JIT link of 19 is also given -Wl,--print-wrapped-module,
// which prints what the registration object holds and changes nothing.
//
// Two of the driver's flags at a link: clang-19 -Rpass=inline (the
// wrapper's --offload-opt=-pass-remarks=inline) and clang-22 -ftime-trace
// (which clang-22 gives the wrapper nothing for: -### shows no
// --wrapper-time-trace): the programs are clang's own, byte for byte, and
// print what clang's print, offloading mandatory.
// defaultCase are the cases of TestWrapperDriverFlagsAsClangs the default
// run links: 19's JIT (with --print-wrapped-module) and in-process LTO
// (with --bitcode-library), -Rpass and -ftime-trace.
var defaultCase = map[string]bool{"x86-19": true, "rpass-19": true, "time-trace-22": true, "amdgpu-19": true}

func TestWrapperDriverFlagsAsClangs(t *testing.T) {
	t.Parallel()
	exe := goffloadExe(t)
	dir := t.TempDir()
	for name, src := range jitSources {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tooltest.CUDAStandIns(t, filepath.Join(dir, "cuda"))
	os.Mkdir(filepath.Join(dir, "stub"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "stub", "libomptarget.devicertl.a"), []byte("!<arch>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	x86 := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"}
	for _, c := range []struct {
		name      string
		major     int
		compile   []string // both sources
		link      []string
		sources   []string
		runs      bool // the program runs against the release's runtime
		failsLLVM bool
		lib       []string // clang's arguments for lib.bc of the source named last
	}{
		{"x86-19", 19, append(slices.Clone(x86), "-fopenmp-target-jit"), append(slices.Clone(x86), "-fopenmp-target-jit"), []string{"a", "b"}, true, false, nil},
		{"nvptx-19", 19, []string{"-fopenmp", "--offload-arch=sm_90", "--cuda-path=cuda", "-nocudalib", "-fopenmp-target-jit"},
			[]string{"-fopenmp", "--offload-arch=sm_90", "--cuda-path=../cuda", "-nocudalib", "-fopenmp-target-jit"}, []string{"a", "b"}, false, false, nil},
		// 16's driver asks for -lomptarget.devicertl, which Debian's
		// libomp5-16 does not ship: an empty one.
		{"x86-16", 16, append(slices.Clone(x86), "-foffload-lto"), append(slices.Clone(x86), "-Wl,--embed-bitcode", "-L../../stub"), []string{"a", "b"}, false, false, nil},
		{"x86-15", 15, append(slices.Clone(x86), "-foffload-lto"), append(slices.Clone(x86), "-Wl,--embed-bitcode", "-Wl,--save-temps"), []string{"a", "b"}, false, true, nil},
		{"rpass-19", 19, x86, append(slices.Clone(x86), "-Rpass=inline"), []string{"a", "b"}, true, false, nil},
		{"time-trace-22", 22, x86, append(slices.Clone(x86), "-ftime-trace"), []string{"a", "b"}, true, false, nil},
		// Bitcode objects (-foffload-lto), which 15 to 19's wrapper links in
		// the LTO it runs in its own process, before the device link.
		{"lto-19", 19, append(slices.Clone(x86), "-foffload-lto"), x86, []string{"a", "b"}, true, false, nil},
		{"lto-16", 16, append(slices.Clone(x86), "-foffload-lto"), append(slices.Clone(x86), "-L../../stub"), []string{"a", "b"}, false, false, nil},
		{"lto-15", 15, append(slices.Clone(x86), "-foffload-lto"), x86, []string{"a", "b"}, false, false, nil},
		// --bitcode-library=KIND-TRIPLE-ARCH=FILE (15 to 19): the file's
		// bitcode in that target's LTO; for OpenMP on gfx90a, a stand-in
		// of the device runtime's two entry points (-nogpulib).
		{"bitcode-library-19", 19, x86, append(slices.Clone(x86), "-Wl,--bitcode-library=openmp-x86_64-pc-linux-gnu-=../lib.bc"), []string{"a", "b", "lib"}, true, false,
			[]string{"--target=x86_64-pc-linux-gnu", "-O1", "-c", "-emit-llvm"}},
		{"amdgpu-19", 19, []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib"},
			[]string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-g", "-Wl,--bitcode-library=openmp-amdgcn-amd-amdhsa-gfx90a=../lib.bc", "-Wl,--unresolved-symbols=ignore-all"},
			[]string{"a", "b", "stub"}, false, false, []string{"--target=amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", "-O1", "-c", "-emit-llvm"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !defaultCase[c.name] && !tooltest.Exhaustive() {
				// 15 and 16's links, and those the default cases cover
				// in part: in the exhaustive run (.ci/run).
				t.Skipf("not in the default sample (%s=1 runs it)", tooltest.ExhaustiveEnv)
			}
			clang := tooltest.Tool(t, "clang", c.major)
			clw := tooltest.Tool(t, "clang-linker-wrapper", c.major)
			tooltest.Tool(t, "llvm-lto2", c.major)
			rt := tooltest.OpenMPRuntime(t, c.major)
			cdir := filepath.Join(dir, c.name)
			if err := os.Mkdir(cdir, 0o755); err != nil {
				t.Fatal(err)
			}
			var objs []string
			for i, s := range c.sources {
				if err := tooltest.CopyFile(filepath.Join(cdir, s+".c"), filepath.Join(dir, s+".c")); err != nil {
					t.Fatal(err)
				}
				if c.lib != nil && i == len(c.sources)-1 {
					compiled(t, "clang", c.major, cdir, append(slices.Clone(c.lib), s+".c", "-o", "lib.bc"), "lib.bc")
					break
				}
				compiled(t, "clang", c.major, cdir, append(slices.Clone(c.compile), "-c", s+".c", "-o", s+".o"), s+".o")
				objs = append(objs, filepath.Join(cdir, s+".o"))
			}
			if strings.Contains(strings.Join(c.compile, " "), "cuda") {
				os.Symlink(filepath.Join(dir, "cuda"), filepath.Join(cdir, "cuda"))
			}
			wrapperBins(t, cdir, clw, exe)
			progs := map[string]string{}
			for _, w := range []string{"theirs", "ours"} {
				work := filepath.Join(cdir, w)
				if err := os.Mkdir(work, 0o755); err != nil {
					t.Fatal(err)
				}
				args := slices.Concat(c.link, []string{"-B", filepath.Join(cdir, w+"-bin")}, objs, []string{"-o", "prog", "-L" + rt, tooltest.AllowShlibUndefined})
				if w == "ours" && c.name == "x86-19" {
					// What was wrapped, on the standard error; the
					// program stays the same.
					args = append(args, "-Wl,--print-wrapped-module")
				}
				release := tooltest.Slot()
				cmd := exec.Command(clang, args...)
				cmd.Dir = work
				out, err := cmd.CombinedOutput()
				release()
				if w == "theirs" && c.failsLLVM {
					if err == nil {
						t.Fatalf("clang-%d's own JIT link passed; the test expects its wrapper to fail", c.major)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s link: %v\n%s", w, err, out)
				}
				if w == "ours" && c.name == "x86-19" && (!strings.Contains(string(out), "; image 0: llvm ir for x86_64-pc-linux-gnu \"\" (openmp)") || !strings.Contains(string(out), "; symbol __tgt_register_lib global undefined")) {
					t.Errorf("--print-wrapped-module printed:\n%s\nwant the image of LLVM IR and the registration", out)
				}
				progs[w] = filepath.Join(work, "prog")
			}
			if c.failsLLVM {
				// The image of ours against the bitcode LLVM's LTO wrote.
				want, err := os.ReadFile(filepath.Join(cdir, "theirs", "prog-jit-x86_64-pc-linux-gnu.bc"))
				if err != nil {
					t.Fatal(err)
				}
				x := filepath.Join(cdir, "extracted")
				if _, stderr, code := cli(t, "extract", "-raw", "-o", x, progs["ours"]); code != 0 {
					t.Fatalf("extract: %s", stderr)
				}
				got, _ := filepath.Glob(filepath.Join(x, "*"))
				if len(got) != 1 {
					t.Fatalf("extracted %v, want one image", got)
				}
				data, _ := os.ReadFile(got[0])
				if !bytes.Equal(data, want) {
					t.Errorf("the image goffload registered (%d bytes) is not the bitcode of LLVM %d's LTO (%d bytes)", len(data), c.major, len(want))
				}
				return
			}
			theirs, _ := os.ReadFile(progs["theirs"])
			ours, _ := os.ReadFile(progs["ours"])
			if !bytes.Equal(theirs, ours) {
				t.Errorf("the programs differ: clang-%d's own link %d bytes, through goffload %d", c.major, len(theirs), len(ours))
			}
			if out, stderr, code := cli(t, "list", progs["ours"]); code != 0 || (strings.HasPrefix(c.name, "x86") || strings.HasPrefix(c.name, "nvptx")) && !strings.Contains(out, "kind            llvm ir\n") {
				t.Errorf("list of the program: exit %d %s\n%s\nwant an image of LLVM IR", code, stderr, out)
			}
			if !c.runs {
				return
			}
			run := func(p string) (string, int) {
				cmd := exec.Command(p)
				cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+rt, "OMP_TARGET_OFFLOAD=MANDATORY")
				out, _ := cmd.Output()
				return string(out), cmd.ProcessState.ExitCode()
			}
			tout, tcode := run(progs["theirs"])
			oout, ocode := run(progs["ours"])
			if tout != oout || tcode != ocode || !strings.Contains(c.name, "jit") && c.name != "x86-19" && (tcode != 0 || tout == "") {
				t.Errorf("clang's program: exit %d, %q; goffload's: exit %d, %q", tcode, tout, ocode, oout)
			}
		})
	}
}
