package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestWrapperHIP runs goffload as clang's clang-linker-wrapper (a link named
// clang-linker-wrapper in the folder given to clang -B) on HIP programs of
// clang 19 and 22 with the new offloading driver, against LLVM's own wrapper
// (the same clang command without -B):
//
//   - rdc: a.hip and b.hip (testdata/wrapperhip) compiled with -fgpu-rdc, b.o
//     in the static library libk.a; a's kernel calls a __device__ function and
//     reads a __device__ variable of b, so the device link must take b from the
//     archive. Both have kernels and __device__, __constant__ and __managed__
//     variables. clang --hip-link -fgpu-rdc links them with main_rdc.c's
//     object against libamdhip64.so, the logging stand-in of the registration
//     API (wrap/testdata/gpu/runtime.c). The two programs must print the same
//     registration calls, and the code objects the two wrappers linked and
//     left with -Wl,--save-temps (prog.amdgcn.ID.img, the same name for 19
//     and 22) must be the same bytes. For 19 the wrapper runs the device LTO
//     itself and goffload as it does (lld --lto-emit-llvm, then llc): the
//     optimised module, the assembly and the object it leaves
//     (prog.amdgcn-amd-amdhsa.ID.postopt.bc, .s, .o) must be LLVM's too.
//     rdc-xnack is the same for the target ID gfx90a:xnack+, rdc-O0 links
//     with -O0 (19: --opt-level=O0) and without --save-temps: the code object
//     is compared through the log, which gives the fatbin's size and hash.
//   - nordc: c.hip and d.hip (d.o in libd.a) without -fgpu-rdc. Which clang
//     commands run the wrapper is read from -###: clang 22 runs it at compile
//     time (--emit-fatbin-only, the device link and the bundle); clang 19
//     bundles with lld and clang-offload-bundler itself and runs the wrapper
//     only at link time, where the objects hold no device code to link. So
//     the objects are compiled with -save-temps with and without -B, and the
//     images and fatbins left must be the same bytes, and so must the objects;
//     the programs linked with and without -B must print the same.
//
// Nothing of the logs is masked: the stand-in prints the symbols that
// pointers point to, not addresses, and "<local>" for local symbols, which two
// links may place differently; the fatbin's size and hash must be equal since
// the fatbins must be (the same code object, bundled as clang-offload-bundler
// does). -cuid is given to the compiles with and without -B: clang makes the
// compilation unit's ID from the whole command line, -B included, and the ID
// names a symbol of both the host and the device code.
//
// OFFLOAD_TEST_WRAPPER=llvm puts LLVM's clang-linker-wrapper into the -B
// folder instead of goffload, and OFFLOAD_TEST_WRAPPER=/path/to/exe that
// program: checks of the test itself.
func TestWrapperHIP(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("compiles, links and runs HIP programs")
	}
	if runtime.GOOS != "linux" {
		tooltest.Missing(t, "HIP programs are linked for Linux")
	}
	majors := []int{19, 22}
	for r, major := range majors {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			e := newWrapperHIP(t, major)
			links := []struct {
				name string
				test func(t *testing.T)
			}{
				{"rdc", func(t *testing.T) { e.rdc(t, "gfx90a", true) }},
				{"rdc-xnack", func(t *testing.T) { e.rdc(t, "gfx90a:xnack+", true) }},
				{"rdc-O0", func(t *testing.T) { e.rdc(t, "gfx90a", false, "-O0") }},
				// Two arches, given in the order the wrapper does not
				// bundle them in (it sorts them, gfx90a first).
				{"rdc-two-arches", func(t *testing.T) { e.rdc(t, "gfx1100,gfx90a", true) }},
				{"nordc", e.nordc},
			}
			for i, l := range links {
				t.Run(l.name, func(t *testing.T) {
					tooltest.Sample(t, i, r, len(links), len(majors))
					l.test(t)
				})
			}
		})
	}
}

// wrapperHIP is what the HIP links of one release share.
type wrapperHIP struct {
	major int
	clang string
	ar    string
	src   string // testdata/wrapperhip, absolute
	bin   string // the -B folder: clang-linker-wrapper, the wrapper under test
	rt    string // the folder of libamdhip64.so, the stand-in runtime
}

func newWrapperHIP(t *testing.T, major int) *wrapperHIP {
	t.Helper()
	e := &wrapperHIP{major: major, clang: tooltest.Tool(t, "clang", major)}
	tooltest.Tool(t, "ld.lld", major) // LLVM's wrapper runs them
	tooltest.Tool(t, "clang-offload-bundler", major)
	var err error
	if e.ar, err = exec.LookPath("ar"); err != nil {
		e.ar = tooltest.Tool(t, "llvm-ar", major)
	}
	if e.src, err = filepath.Abs(filepath.Join("testdata", "wrapperhip")); err != nil {
		t.Fatal(err)
	}
	wrapper := os.Getenv("OFFLOAD_TEST_WRAPPER")
	switch wrapper {
	case "":
		wrapper = goffloadExe(t)
	case "llvm":
		wrapper = tooltest.Tool(t, "clang-linker-wrapper", major)
		fallthrough
	default:
		t.Logf("OFFLOAD_TEST_WRAPPER: the -B folder holds %s, not goffload", wrapper)
	}
	dir := t.TempDir()
	e.bin, e.rt = filepath.Join(dir, "bin"), filepath.Join(dir, "rt")
	for _, d := range []string{e.bin, e.rt} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(wrapper, filepath.Join(e.bin, "clang-linker-wrapper")); err != nil {
		t.Fatal(err)
	}
	// --hip-link adds -lamdhip64: the stand-in, under that name. It names the
	// pointers it is given with dladdr, so the programs export their symbols
	// (-rdynamic).
	stub, err := filepath.Abs(filepath.Join("..", "..", "wrap", "testdata", "gpu", "runtime.c"))
	if err != nil {
		t.Fatal(err)
	}
	runCmd(t, e.rt, e.clang, "-shared", "-fPIC", "-o", "libamdhip64.so", stub, "-ldl")
	return e
}

// hipCompile returns the arguments that compile the HIP source name of the
// test data into obj for the target ID arch (several, separated by commas);
// rdc adds -fgpu-rdc.
func (e *wrapperHIP) hipCompile(arch, name, obj string, rdc bool, more ...string) []string {
	args := []string{"-x", "hip", "--offload-new-driver"}
	for _, a := range strings.Split(arch, ",") {
		args = append(args, "--offload-arch="+a)
	}
	args = append(args, "-nogpulib", "-nogpuinc")
	if rdc {
		args = append(args, "-fgpu-rdc")
	}
	args = append(args, more...)
	return append(args, "-c", filepath.Join(e.src, name), "-o", obj)
}

// storedCompile compiles the HIP source name of the test data into obj
// (a path) for arch with -fgpu-rdc, through the package's store of
// compiles: in the package's folder, which names the source.
func (e *wrapperHIP) storedCompile(t *testing.T, arch, name, obj string) {
	t.Helper()
	args := e.hipCompile(arch, name, obj, true)
	args[slices.Index(args, filepath.Join(e.src, name))] = filepath.Join("testdata", "wrapperhip", name)
	compiled(t, "clang", e.major, "", args, obj)
}

// hipLink returns the arguments of clang --hip-link that link prog in its
// folder for the target ID arch from the given inputs (and options), against
// the stand-in runtime, with -Wl,--save-temps if saveTemps.
func (e *wrapperHIP) hipLink(arch string, rdc, saveTemps bool, inputs ...string) []string {
	args := []string{"--hip-link", "--offload-new-driver"}
	for _, a := range strings.Split(arch, ",") {
		args = append(args, "--offload-arch="+a)
	}
	args = append(args, "-nogpulib")
	if rdc {
		args = append(args, "-fgpu-rdc")
	}
	args = append(args, inputs...)
	args = append(args, "-L"+e.rt, "-Wl,-rpath,"+e.rt, "-rdynamic")
	if saveTemps {
		args = append(args, "-Wl,--save-temps")
	}
	return append(args, "-o", "prog")
}

// viaB runs clang with args in dir with -B and the wrapper under test.
func (e *wrapperHIP) viaB(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(e.clang, append([]string{"-B", e.bin}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("with the wrapper under test (-B %s): %s %q: %v\n%s", e.bin, e.clang, args, err, out)
	}
}

// wrapperArgs returns the arguments with which clang, run with args in dir,
// runs clang-linker-wrapper (clang -###), or nil if it does not.
func (e *wrapperHIP) wrapperArgs(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	out := runCmd(t, dir, e.clang, append(args, "-###")...)
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "clang-linker-wrapper\"") {
			continue
		}
		var argv []string
		for _, m := range quotedArg.FindAllString(line, -1) {
			a, err := strconv.Unquote(m)
			if err != nil {
				t.Fatalf("clang -###: %s: %v", m, err)
			}
			argv = append(argv, a)
		}
		return argv[1:]
	}
	return nil
}

// quotedArg is an argument as clang -### prints it.
var quotedArg = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// rdc links the -fgpu-rdc programs for the target ID arch with the link
// options more, with LLVM's wrapper and the one under test.
func (e *wrapperHIP) rdc(t *testing.T, arch string, saveTemps bool, more ...string) {
	dir := t.TempDir()
	ref, ours, lib := filepath.Join(dir, "ref"), filepath.Join(dir, "ours"), filepath.Join(dir, "lib")
	for _, d := range []string{ref, ours, lib} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a", "b"} {
		e.storedCompile(t, arch, name+".hip", filepath.Join(dir, name+".o"))
	}
	runCmd(t, dir, e.ar, "rcs", filepath.Join(lib, "libk.a"), "b.o")
	runCmd(t, dir, e.clang, "-c", filepath.Join(e.src, "main_rdc.c"), "-o", "main.o")
	inputs := append(slices.Clone(more), filepath.Join("..", "a.o"), filepath.Join("..", "main.o"), "-L"+filepath.Join("..", "lib"), "-lk")
	link := e.hipLink(arch, true, saveTemps, inputs...)
	if e.wrapperArgs(t, ref, link...) == nil {
		t.Fatalf("clang-%d %q does not run clang-linker-wrapper", e.major, link)
	}
	runCmd(t, ref, e.clang, link...)
	want := runLog(t, filepath.Join(ref, "prog"))
	calls := []string{
		"__hipRegisterFatBinary(magic=0x48495046 version=1 image: ",
		"__hipRegisterFunction(<handle>, _Z5akernPi, ",
		"__hipRegisterFunction(<handle>, _Z5bkernPl, ", // from libk.a
		"__hipRegisterVar(<handle>, avar, avar, avar, 0, 4, 0, 0)",
		"__hipRegisterVar(<handle>, acon, acon, acon, 0, 16, 1, 0)",
		"__hipRegisterVar(<handle>, bvar, bvar, bvar, 0, 4, 0, 0)",
		"hipLaunchKernel(_Z5bkernPl)",
		"__hipUnregisterFatBinary(<handle>)",
	}
	if e.major >= 22 { // clang 19's wrapper does not register managed variables
		calls = append(calls, "__hipRegisterManagedVar(<handle>, amanaged, amanaged.managed, amanaged, 4, 4)",
			"__hipRegisterManagedVar(<handle>, bmanaged, bmanaged.managed, bmanaged, 24, 16)")
	}
	for _, call := range calls {
		if !strings.Contains(want, call) {
			t.Fatalf("LLVM's wrapper's program does not log %s:\n%s", call, want)
		}
	}
	arches := strings.Split(arch, ",")
	if saveTemps {
		for _, a := range arches {
			checkCodeObject(t, filepath.Join(ref, "prog.amdgcn."+a+".img"), "_Z5akernPi", "_Z5bkernPl")
		}
	}

	e.viaB(t, ours, link...)
	logSaveTemps(t, ref, ours)
	// The log gives the fatbin's size and hash: the same code object.
	if got := runLog(t, filepath.Join(ours, "prog")); got != want {
		t.Errorf("registration with the wrapper under test:\n%s\nwith LLVM's wrapper:\n%s", got, want)
	}
	tooltest.SameFile(t, filepath.Join(ref, "prog"), filepath.Join(ours, "prog"), "the program")
	if !saveTemps {
		return
	}
	for _, a := range arches {
		img := "prog.amdgcn." + a + ".img"
		tooltest.SameFile(t, filepath.Join(ref, img), filepath.Join(ours, img), "the linked code object")
	}
	tooltest.SameFile(t, filepath.Join(ref, "prog.hipfb"), filepath.Join(ours, "prog.hipfb"), "the fatbin")
	if e.major < 22 {
		// LLVM 17-21's wrapper runs the device LTO itself; goffload runs it
		// as the wrapper does (lld --lto-emit-llvm, llc -filetype=asm, and
		// clang -save-temps assembles the .s).
		for _, a := range arches {
			for _, ext := range []string{".postopt.bc", ".s", ".o"} {
				f := "prog.amdgcn-amd-amdhsa." + a + ext
				tooltest.SameFile(t, filepath.Join(ref, f), filepath.Join(ours, f), "the device LTO's file")
			}
		}
	}
}

func (e *wrapperHIP) nordc(t *testing.T) {
	dir := t.TempDir()
	ref, ours := filepath.Join(dir, "ref"), filepath.Join(dir, "ours")
	for _, d := range []string{ref, ours} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runCmd(t, dir, e.clang, "-c", filepath.Join(e.src, "main_nordc.c"), "-o", "main.o")

	// Compile with and without -B, with -save-temps in the folder of each.
	// outputs: what the wrapper writes, when the compile runs it.
	var outputs []string
	for _, src := range []string{"c", "d"} {
		args := e.hipCompile("gfx90a", src+".hip", src+".o", false, "-cuid="+src, "-save-temps")
		if w := e.wrapperArgs(t, ref, args...); w != nil {
			i := slices.Index(w, "-o")
			if i < 0 || i+1 == len(w) || !slices.Contains(w, "--emit-fatbin-only") {
				t.Fatalf("clang-%d runs the wrapper at compile time as %q: want --emit-fatbin-only -o FILE", e.major, w)
			}
			outputs = append(outputs, w[i+1])
		}
		runCmd(t, ref, e.clang, args...)
		e.viaB(t, ours, args...)
	}
	for _, d := range []string{ref, ours} {
		runCmd(t, d, e.ar, "rcs", "libd.a", "d.o")
	}
	link := e.hipLink("gfx90a", false, true, "c.o", filepath.Join("..", "main.o"), "-L.", "-ld")
	linkRuns := e.wrapperArgs(t, ref, link...) != nil
	compileRuns := len(outputs) > 0
	t.Logf("clang-%d without -fgpu-rdc runs clang-linker-wrapper at compile time: %v %q, at link time: %v", e.major, compileRuns, outputs, linkRuns)
	if !compileRuns && !linkRuns {
		t.Fatalf("clang-%d runs no clang-linker-wrapper for a program without -fgpu-rdc: nothing to test", e.major)
	}
	if compileRuns {
		// What the wrapper wrote (the fatbin, which clang keeps with
		// -save-temps) and the code objects it linked (*.img) must be the
		// same; other save-temps (LLVM's wrapper also leaves its fatbin as
		// OUTPUT.hipfb) are compared where the wrapper under test left them.
		logSaveTemps(t, ref, ours)
		for _, f := range outputs {
			tooltest.SameFile(t, filepath.Join(ref, f), filepath.Join(ours, f), "the fatbin the wrapper wrote")
		}
		for _, src := range []string{"c", "d"} {
			imgs, _ := filepath.Glob(filepath.Join(ref, src+".hip*.img"))
			if len(imgs) == 0 {
				t.Fatalf("LLVM's wrapper left no %s.hip*.img in %s", src, ref)
			}
			for _, f := range imgs {
				checkCodeObject(t, f, "_Z5"+src+"kern")
				tooltest.SameFile(t, f, filepath.Join(ours, filepath.Base(f)), "the linked code object")
			}
			fatbins, _ := filepath.Glob(filepath.Join(ref, src+".hip*.hipfb"))
			for _, f := range fatbins {
				if slices.Contains(outputs, filepath.Base(f)) {
					continue
				}
				if _, err := os.Stat(filepath.Join(ours, filepath.Base(f))); err == nil {
					tooltest.SameFile(t, f, filepath.Join(ours, filepath.Base(f)), "a fatbin left with -save-temps")
				}
			}
		}
	}
	for _, obj := range []string{"c.o", "d.o"} {
		tooltest.SameFile(t, filepath.Join(ref, obj), filepath.Join(ours, obj), "the object")
	}

	runCmd(t, ref, e.clang, link...)
	want := runLog(t, filepath.Join(ref, "prog"))
	for _, call := range []string{
		"__hipRegisterFunction(<handle>, _Z5ckernPi, ",
		"__hipRegisterFunction(<handle>, _Z5dkernPs, ", // from libd.a
		"__hipRegisterVar(<handle>, <local>, cvar, cvar, 0, 4, 0, 0)",
		"__hipRegisterManagedVar(<handle>, <local>, <local>, dmanaged, 8, 8)",
		"hipLaunchKernel(_Z5dkernPs)",
	} {
		if !strings.Contains(want, call) {
			t.Fatalf("LLVM's wrapper's program does not log %s:\n%s", call, want)
		}
	}
	if n := strings.Count(want, "__hipRegisterFatBinary("); n != 2 {
		t.Fatalf("LLVM's wrapper's program registers %d fatbins, want 2 (one of each object):\n%s", n, want)
	}
	e.viaB(t, ours, link...)
	// No mask: the code objects are clang's of the compile, the same with
	// both wrappers (compared above).
	if got := runLog(t, filepath.Join(ours, "prog")); got != want {
		t.Errorf("registration with the wrapper under test:\n%s\nwith LLVM's wrapper:\n%s", got, want)
	}
	a, _ := os.ReadFile(filepath.Join(ref, "prog"))
	b, _ := os.ReadFile(filepath.Join(ours, "prog"))
	t.Logf("the programs linked by the two wrappers are the same bytes: %v", bytes.Equal(a, b))
}

// checkCodeObject checks that file is an AMDGPU code object that defines the
// symbols.
func checkCodeObject(t *testing.T, file string, symbols ...string) {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatalf("the code object: %v", err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AMDGPU || f.Type != elf.ET_DYN {
		t.Fatalf("%s: machine %v, type %v: not an AMDGPU code object", file, f.Machine, f.Type)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, want := range symbols {
		if !slices.ContainsFunc(syms, func(s elf.Symbol) bool {
			return s.Section != elf.SHN_UNDEF && strings.HasPrefix(s.Name, want)
		}) {
			t.Errorf("%s does not define %s*", file, want)
		}
	}
}

// logSaveTemps logs the names of the files in ref and ours, when they differ.
func logSaveTemps(t *testing.T, ref, ours string) {
	t.Helper()
	names := func(dir string) []string {
		ents, _ := os.ReadDir(dir)
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	if a, b := names(ref), names(ours); !slices.Equal(a, b) {
		t.Logf("files left with LLVM's wrapper: %s\nwith the wrapper under test: %s", strings.Join(a, " "), strings.Join(b, " "))
	}
}
