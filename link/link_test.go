package link

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

func TestParseWrapperArgs(t *testing.T) {
	// LLVM 16: the wrapper's options, --, the linker's.
	o, err := ParseWrapperArgs([]string{"--host-triple=x86_64-pc-linux-gnu", "--wrapper-verbose", "--linker-path=/usr/bin/ld", "--",
		"-pie", "-o", "p", "a.o", "--whole-archive", "-lfoo"})
	if err != nil {
		t.Fatal(err)
	}
	if o.HostTriple != "x86_64-pc-linux-gnu" || o.Linker != "/usr/bin/ld" || !o.Verbose ||
		!cmp.Equal(o.LinkerArgs, []string{"-pie", "-o", "p", "a.o", "--whole-archive", "-lfoo"}) {
		t.Errorf("16 form: %+v", o)
	}
	// 15 and 16's wrappers read their options after -- too (clang
	// -Wl,--embed-bitcode; measured with their --dry-run: --opt-level=O3
	// and --save-temps after -- reach the device link, not ld), and -r
	// there is the linker's alone.
	o, err = ParseWrapperArgs([]string{"--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld", "--",
		"-o", "p", "a.o", "--embed-bitcode", "--opt-level=O3", "--save-temps", "-r"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.EmbedBitcode || o.OptLevel != "O3" || !o.SaveTemps || o.Relocatable || !cmp.Equal(o.LinkerArgs, []string{"-o", "p", "a.o", "-r"}) {
		t.Errorf("16 form, the wrapper's options after --: %+v", o)
	}
	// LLVM 22: mixed, with per-triple device arguments.
	o, err = ParseWrapperArgs([]string{"--should-extract=gfx90a", "--device-compiler=amdgcn-amd-amdhsa=-flto-partitions=8",
		"--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld", "--hash-style=gnu", "-m", "elf_x86_64", "-o", "p", "k.o",
		"--device-linker=-lm", "--device-compiler=-O2", "--save-temps", "--dry-run", "-r",
		"--offload-opt=-pass-remarks=inline", "-mllvm", "-inline-threshold=10", "-offload-opt=-a=b,c"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []LLVMOption{{Arg: "-pass-remarks=inline"}, {Arg: "-inline-threshold=10", MLLVM: true}, {Arg: "-a=b,c"}}; !cmp.Equal(o.LLVMOptions, want) {
		t.Errorf("LLVM's options %+v, want %+v", o.LLVMOptions, want)
	}
	want := []TargetArg{{Triple: "amdgcn-amd-amdhsa", Arg: "-flto-partitions=8"}, {Arg: "-O2"}}
	if !cmp.Equal(o.DeviceCompilerArgs, want) || !cmp.Equal(o.DeviceLinkerArgs, []TargetArg{{Arg: "-lm"}}) ||
		!cmp.Equal(o.ShouldExtract, []string{"gfx90a"}) || !o.SaveTemps || !o.DryRun || !o.Relocatable ||
		!cmp.Equal(o.LinkerArgs, []string{"--hash-style=gnu", "-m", "elf_x86_64", "-o", "p", "k.o", "-r"}) {
		t.Errorf("22 form: %+v", o)
	}
	for _, bad := range [][]string{
		{"--wrapper-frobnicate", "a.o"}, // unknown, of the wrapper's families
		{"--device-frob=1"},             //
		{"--clang-backend", "a.o"},      // LLVM's, not goffload's
		{"--override-image=x.o"},        // no kind
		{"--override-image=frob=x.o"},   // not a kind
		{"--override-image=openmp="},    // no file
		{"--override-image=none=x.o"},   // not a kind of image
		{"--opt-level=O9"},
		{"--host-triple"}, // no value
		{"--dry-run=1"},
		{"--wrapper-jobs=x"},
	} {
		if _, err := ParseWrapperArgs(bad); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), strings.SplitN(bad[0], "=", 2)[0]) {
			t.Errorf("%q: %v, want ErrUsage naming the option", bad, err)
		}
	}
}

func TestScanLD(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"liba.a", "libb.so", "libb.a", "libc.a", "exact.a"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("!<arch>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-m", "elf_x86_64", "-o", "out", "x.o", "-la", "--whole-archive", "-lb", "--no-whole-archive",
		"--push-state", "-Bstatic", "--whole-archive", "-l", "b", "--pop-state", "-lc", "-l:exact.a", "-rpath", "/r", "-L" + dir,
		"-dynamic-linker", "/lib/ld.so", "y.o"}
	h, err := scanLD(args, func(lib string) error { return errors.New("missing " + lib) }, os.Stat)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range h.inputs {
		s := strings.TrimPrefix(in.path, dir+"/")
		if in.whole {
			s += " whole"
		}
		got = append(got, s)
	}
	// -lb finds libb.so first (a shared library: no device code), but
	// libb.a after -Bstatic; --pop-state ends --whole-archive.
	want := []string{"x.o", "liba.a", "libb.a whole", "libc.a", "exact.a", "y.o"}
	if !cmp.Equal(got, want) {
		t.Errorf("inputs %q, want %q", got, want)
	}
	if h.output != "out" || h.firstInput != 4 || h.emulation != "elf_x86_64" || h.dynLinker != "/lib/ld.so" {
		t.Errorf("%+v", h)
	}
	if _, err := scanLD([]string{"-lnone", "-L" + dir}, func(lib string) error { return errors.New("missing " + lib) }, os.Stat); err == nil || err.Error() != "missing none" {
		t.Errorf("a missing library: %v", err)
	}
	if _, err := scanLD([]string{"--pop-state"}, nil, os.Stat); !errors.Is(err, ErrUsage) {
		t.Errorf("--pop-state alone: %v", err)
	}
	if _, err := scanLD([]string{"x.o", "-o"}, nil, os.Stat); !errors.Is(err, ErrUsage) {
		t.Errorf("-o without a value: %v", err)
	}
}

func TestDriverToLD(t *testing.T) {
	ld, _ := driverToLD([]string{"-O2", "-o", "p", "a.o", "-Wl,--whole-archive,-lx,--no-whole-archive", "-L", "d", "-lm", "-Xlinker", "-zdefs", "-x", "c", "-fopenmp", "--", "-weird.o"})
	want := []string{"-o", "p", "a.o", "--whole-archive", "-lx", "--no-whole-archive", "-L", "d", "-lm", "-zdefs", "-weird.o"}
	if !cmp.Equal(ld, want) {
		t.Errorf("got %q, want %q", ld, want)
	}
}

func TestLibrariesLast(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"-lm", "-Wl,--whole-archive", "-lx", "-Wl,--no-whole-archive", "main.o", "-o", "p"},
			[]string{"-o", "p", "main.o", "-lm", "-Wl,--whole-archive", "-lx", "-Wl,--no-whole-archive"}},
		{[]string{"-o", "p", "main.o", "-L", ".", "-l", "v", "libw.a", "b.o", "libs.so.1", "-Xlinker", "--as-needed", "c.o"},
			[]string{"-o", "p", "-L", ".", "main.o", "b.o", "c.o", "-l", "v", "libw.a", "libs.so.1", "-Xlinker", "--as-needed"}},
		{[]string{"-lx", "a.o", "--", "-b.o", "-lz"}, []string{"a.o", "-lx", "--", "-b.o", "-lz"}},
		{[]string{"-shared", "-fPIC", "x.o", "-L."}, []string{"-shared", "-fPIC", "-L.", "x.o"}},
		{nil, []string{}},
	} {
		if got := LibrariesLast(c.in); !cmp.Equal(got, c.want) {
			t.Errorf("LibrariesLast(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// stepsOf returns the programs of a dry run's printed commands, in order:
// the base name of each quoted program, "goffload" steps by their kind.
func stepsOf(out string) []string {
	var steps []string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, ` "`):
			prog := strings.SplitN(line[2:], `"`, 2)[0]
			steps = append(steps, filepath.Base(prog))
		case strings.HasPrefix(line, "# goffload: "):
			steps = append(steps, strings.Fields(line)[2])
		}
	}
	return steps
}

// TestDryRunStepOrder: for the links clang 15, 16, 19 and 22 ask of their
// wrapper (OpenMP, two objects and a static library; HIP -fgpu-rdc for 19
// and 22, for gfx90a and gfx90a:xnack+), a dry run prints the steps in the
// order LLVM's own wrapper's dry run prints its commands: the device links,
// the bundling for HIP (ours), the host link; and the device link and host
// link commands equal LLVM's but for the temporary files' names. The device
// LTO that LLVM 19's wrapper runs in its own process for HIP is two
// commands of ours before the device link, which then takes their one
// object as LLVM's does. For 19 and 22 the releases × the kinds of link
// (OpenMP, HIP, HIP with xnack+) are a matrix of which the default run
// links a sample (each release and each kind once; every link when
// exhaustive); the links that compile the same sources alike share the
// objects. NVIDIA's links join them, against a stand-in CUDA folder (no
// CUDA here: a ptxas that writes a cubin NVIDIA's ptxas made, a fatbinary
// that is never run): OpenMP for sm_90 with -g, -save-temps and
// -Xoffload-linker (16, 19, 22; both objects named: which archive members
// LLVM 16 takes depends on the cubins' symbols, and every stand-in cubin
// is the same), CUDA -fgpu-rdc for one GPU and for two (19, 22) and CUDA for
// the whole program (19,
// 22: a stand-in fatbinary writes the fat binary of an object NVIDIA's
// tools made, and the wrapper links no device code); JIT links of 22 and
// of 19 (whose LTO goffload runs as llvm-lto2, which LLVM's dry run does
// not print; 20's plan is checked to give the device link
// -Wl,--lto-emit-llvm instead); HIP for two processors, HIP
// whole-program and OpenMP for an AMDGPU processor (19, 22), and OpenMP for
// SPIR-V (22) too. The
// driver's flags that reach the wrapper (-O0, -O3, -Os, -g,
// -Xoffload-linker, -foffload-lto, -fno-lto, -r, -ftime-trace,
// -save-temps) are a matrix with the OpenMP links of 15 and 16, NVPTX's of
// 16, and those links of 19 and 22; the cells that cannot be compared say
// why (knownDifferences).
func TestDryRunStepOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with every release")
	}
	// The sources (testdata/dryrun), copied into the test's folder.
	dir := t.TempDir()
	sources, err := filepath.Glob(filepath.Join("testdata", "dryrun", "*"))
	if err != nil || len(sources) == 0 {
		t.Fatalf("no testdata/dryrun (%v)", err)
	}
	for _, f := range sources {
		data, err := os.ReadFile(f)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	src, lib := filepath.Join(dir, "a.c"), filepath.Join(dir, "b.c")
	hip, hipLib := filepath.Join(dir, "k.hip"), filepath.Join(dir, "d.hip")
	// clang -### with --hip-link asks for libamdhip64; LLVM's wrapper looks
	// for it.
	rtDir := filepath.Join(dir, "rt")
	os.Mkdir(rtDir, 0o755)
	for _, f := range []string{"libomp.so", "libomptarget.so", "libamdhip64.so", "libomptarget.devicertl.a", "libcudart.so"} {
		os.WriteFile(filepath.Join(rtDir, f), []byte("!<arch>\n"), 0o644)
	}
	type link struct {
		name    string
		major   int
		compile []string  // clang's arguments for the compile of both sources
		sources [2]string // compiled to a.o and b.o; b.o is put into libx.a
		cell    *[4]int   // row, column, rows, columns: a cell of a matrix sampled by default, or nil
		link    []string
		wrapper []string // more arguments for the wrapper, before clang's
	}
	omp := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"}
	hipArgs := []string{"-x", "hip", "--offload-new-driver", "-nogpulib", "-nogpuinc", "-fgpu-rdc"}
	// -Rpass=inline: clang 15 to 21 give the wrapper --offload-opt=...,
	// 22 --device-compiler=...; LLVM's own options given to the wrapper
	// (--offload-opt, -mllvm), which 22's passes on to the device link.
	openmpLink := func(n int) link {
		return link{name: "openmp", major: n, compile: omp, sources: [2]string{src, lib},
			link:    append(slices.Clone(omp), "a.o", "-L.", "-lx", "-L"+rtDir, "-o", "prog", "-Rpass=inline"),
			wrapper: []string{"--offload-opt=-inline-threshold=10", "-mllvm", "-pass-remarks-missed=inline"}}
	}
	hipLink := func(n int, arch string) link {
		name := "hip"
		if arch != "gfx90a" {
			name = "hip-xnack"
		}
		return link{name: name, major: n, compile: slices.Concat(hipArgs, []string{"--offload-arch=" + arch}), sources: [2]string{hip, hipLib},
			link: []string{"--hip-link", "--offload-new-driver", "--offload-arch=" + arch, "-nogpulib", "-fgpu-rdc", "a.o", "-L.", "-lx", "-L" + rtDir, "-o", "prog"}}
	}
	cuda := standInCUDA(t, dir)
	nvptx := []string{"-fopenmp", "--offload-arch=sm_90", "--cuda-path=" + cuda, "-nocudalib"}
	nvptxLink := func(n int) link {
		return link{name: "openmp-nvptx", major: n, compile: nvptx, sources: [2]string{src, lib},
			link: append(slices.Clone(nvptx), "a.o", "b.o", "-L"+rtDir, "-o", "prog", "-g", "-save-temps", "-Xoffload-linker", "-v")}
	}
	cu, cuLib := filepath.Join(dir, "k.cu"), filepath.Join(dir, "d.cu")
	cudaArgs := []string{"-x", "cuda", "--offload-new-driver", "-fgpu-rdc", "--cuda-path=" + cuda, "-nocudalib", "-nocudainc", "--offload-arch=sm_90"}
	cudaLink := func(n int) link {
		return link{name: "cuda", major: n, compile: cudaArgs, sources: [2]string{cu, cuLib},
			link: []string{"--offload-link", "--offload-new-driver", "-fgpu-rdc", "--cuda-path=" + cuda, "--offload-arch=sm_90", "a.o", "-L.", "-lx", "-L" + rtDir, "-o", "prog"}}
	}
	// HIP for two processors; HIP whole-program (no -fgpu-rdc: the objects
	// hold their fat binaries, and the wrapper links no device code; CUDA's
	// would need NVIDIA's fatbinary to compile); OpenMP for an AMDGPU
	// processor.
	hipTwoArches := func(n int) link {
		l := hipLink(n, "gfx90a")
		l.name = "hip-two-arches"
		l.compile = append(slices.Clone(l.compile), "--offload-arch=gfx1100")
		l.link = slices.Insert(slices.Clone(l.link), 3, "--offload-arch=gfx1100")
		return l
	}
	// Whole-program sources: each file's device code stands alone, and the
	// host code launches it.
	wholeA, wholeB := filepath.Join(dir, "w1.hip"), filepath.Join(dir, "w2.hip")
	noRDC := func(args []string) []string {
		return slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "-fgpu-rdc" })
	}
	hipWhole := func(n int) link {
		l := hipLink(n, "gfx90a")
		l.name, l.sources = "hip-whole", [2]string{wholeA, wholeB}
		l.compile, l.link = noRDC(l.compile), noRDC(l.link)
		return l
	}
	// CUDA whole-program: clang compiles each file's device code to a
	// cubin (the stand-in ptxas) and a fat binary (the stand-in fatbinary,
	// which writes one NVIDIA's made) in its .nv_fatbin, and the wrapper
	// links no device code.
	// CUDA -fgpu-rdc for two GPUs (sm_90 and sm_80): one device link
	// each, one fatbinary of both.
	cudaTwoArches := func(n int) link {
		l := cudaLink(n)
		l.name = "cuda-two-arches"
		l.compile = append(slices.Clone(l.compile), "--offload-arch=sm_80")
		l.link = slices.Insert(slices.Clone(l.link), 5, "--offload-arch=sm_80")
		return l
	}
	cudaWhole := func(n int) link {
		l := cudaLink(n)
		l.name, l.sources = "cuda-whole", [2]string{filepath.Join(dir, "w1.cu"), filepath.Join(dir, "w2.cu")}
		l.compile, l.link = noRDC(l.compile), noRDC(l.link)
		return l
	}

	amdgpuOMP := []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib"}
	openmpAMDGPU := func(n int) link {
		return link{name: "openmp-amdgpu", major: n, compile: amdgpuOMP, sources: [2]string{src, lib},
			link: append(slices.Clone(amdgpuOMP), "a.o", "-L.", "-lx", "-L"+rtDir, "-o", "prog")}
	}
	// OpenMP for SPIR-V (spirv64-intel, 22: 19's driver has no
	// --offload-targets).
	spirv := []string{"-fopenmp", "--offload-targets=spirv64-intel", "-nogpulib"}
	openmpSPIRV := link{name: "openmp-spirv", major: 22, compile: spirv, sources: [2]string{src, lib},
		link: append(slices.Clone(spirv), "a.o", "-L.", "-lx", "-L"+rtDir, "-o", "prog")}
	// OpenMP only for 15 and 16 (and NVPTX for 16); for 19 and 22, the
	// releases × OpenMP, HIP, HIP with xnack+, OpenMP for NVPTX and CUDA
	// are a matrix, sampled by default (tooltest.Sample: each release and
	// each kind of link once).
	links := []link{openmpLink(15), openmpLink(16), nvptxLink(16), openmpSPIRV}
	matrixReleases := []int{19, 22}
	for i, n := range matrixReleases {
		kinds := []link{openmpLink(n), hipLink(n, "gfx90a"), hipLink(n, "gfx90a:xnack+"), nvptxLink(n), cudaLink(n),
			hipTwoArches(n), hipWhole(n), openmpAMDGPU(n), cudaWhole(n), cudaTwoArches(n)}
		for j, l := range kinds {
			l.cell = &[4]int{i, j, len(matrixReleases), len(kinds)}
			links = append(links, l)
		}
	}
	// The driver's flags that reach the wrapper, each with the kinds of
	// link of 19 and 22: a matrix of flags × (release, kind) of which the
	// default run links each flag once and each (release, kind) once.
	flagSets := [][]string{{"-O0"}, {"-O3"}, {"-g"}, {"-Xoffload-linker", "--build-id=none"}, {"-foffload-lto"}, {"-r"}, {"-Os"}, {"-ftime-trace"}, {"-save-temps"}, {"-fno-lto"}}
	bases := []link{openmpLink(15), openmpLink(16), nvptxLink(16)}
	for _, n := range matrixReleases {
		bases = append(bases, openmpLink(n), hipLink(n, "gfx90a"), nvptxLink(n), cudaLink(n))
	}
	for i, f := range flagSets {
		for j, b := range bases {
			l := b
			l.name = b.name + "-flags" + strings.Join(f, "")
			l.link = slices.Concat(b.link, f)
			l.cell = &[4]int{i, j, len(flagSets), len(bases)}
			links = append(links, l)
		}
	}
	// --offload-compress: the wrapper passes -compress (and the level)
	// to the bundler (clang-19 does not pass it on).
	compress := hipLink(22, "gfx90a")
	compress.name = "hip-compress"
	compress.link = slices.Insert(compress.link, 5, "--offload-compress", "--offload-compression-level=9")
	links = append(links, compress)
	// -fopenmp-target-jit: the wrapper's --embed-bitcode, whose device link
	// 22 runs with -Wl,--lto-emit-llvm (clang gives it
	// --device-compiler=TRIPLE=-flto=full); 19's runs in its process.
	jit := openmpLink(22)
	jit.name = "openmp-jit"
	jit.compile = append(slices.Clone(omp), "-fopenmp-target-jit")
	jit.link = append(slices.Clone(omp), "-fopenmp-target-jit", "a.o", "-L.", "-lx", "-L"+rtDir, "-o", "prog")
	jit.wrapper = nil
	// 19's runs that LTO in its own process, which goffload runs as
	// llvm-lto2: its dry run prints the host link alone.
	jit19 := jit
	jit19.major = 19
	links = append(links, jit, jit19)
	// --override-image: the device code of the inputs is not used, and the
	// file given is bundled (HIP: an AMDGPU code object clang-22 links) or
	// registered (OpenMP: the inputs' own object, an x86-64 file).
	codeObject := filepath.Join(dir, "override.gfx90a.so")
	hipOverride := hipLink(22, "gfx90a")
	hipOverride.name = "hip-override"
	hipOverride.wrapper = []string{"--override-image=hip=" + codeObject}
	ompOverride := openmpLink(19)
	ompOverride.name = "openmp-override"
	ompOverride.wrapper = []string{"--override-image=openmp=" + filepath.Join(dir, "override.x86.o"), "--override-image=openmp=" + codeObject}
	links = append(links, hipOverride, ompOverride)
	// --bitcode-library: no option of 22's wrapper (#114298), which passes
	// it to the host linker where it stands (ld would refuse it: a dry run
	// does not run ld).
	bcLib := openmpLink(22)
	bcLib.name = "openmp-bitcode-library"
	bcLib.wrapper = []string{"--bitcode-library=openmp-x86_64-unknown-linux-gnu-=" + filepath.Join(dir, "lib.bc")}
	// 19's wrapper links the file in the LTO it runs in its own process
	// (llvm-lto2 for goffload), for the target its triple and arch name:
	// a bitcode file clang-19 made (bitcode/testdata).
	if err := tooltest.CopyFile(filepath.Join(dir, "lib.bc"), filepath.Join("..", "bitcode", "testdata", "x86_64-clang19.bc")); err != nil {
		t.Fatal(err)
	}
	bcLib19 := openmpLink(19)
	bcLib19.name = "openmp-bitcode-library"
	bcLib19.wrapper = []string{"--bitcode-library=openmp-x86_64-pc-linux-gnu-=" + filepath.Join(dir, "lib.bc")}
	links = append(links, bcLib, bcLib19)
	// The objects and libx.a of each compile, made once for the links that
	// share it (hip-22 and hip-compress-22), by compile.
	inputs := map[string]string{}
	// The links of the flags' matrix where goffload differs from LLVM's
	// wrapper, and why.
	knownDifferences := map[string]string{
		"hip-flags-O0-19": "LLVM 19's wrapper crashes in the device LTO it runs in its own process at O0 (in AMDGPU's register usage analysis)",
	}
	knownDifferences["openmp-flags-save-temps-15"] = "LLVM 15's wrapper's dry run with --save-temps fails: it reads the device image it did not write ('prog-x86_64-.out': No such file or directory)"
	for _, n := range matrixReleases {
		for _, k := range []string{"hip", "cuda"} {
			knownDifferences[fmt.Sprintf("%s-flags-save-temps-%d", k, n)] = "LLVM's wrapper's dry run with --save-temps fails for HIP and CUDA: it reads the bundle or fat binary it did not write ('prog.hipfb': No such file or directory)"
		}
	}
	for _, l := range links {
		t.Run(l.name+"-"+strconv.Itoa(l.major), func(t *testing.T) {
			if c := l.cell; c != nil {
				tooltest.Sample(t, c[0], c[1], c[2], c[3])
			}
			if why, ok := knownDifferences[l.name+"-"+strconv.Itoa(l.major)]; ok {
				t.Skip("a difference the test names: " + why)
			}
			clang := tooltest.Tool(t, "clang", l.major)
			wrapper := tooltest.Tool(t, "clang-linker-wrapper", l.major)
			if strings.HasPrefix(l.name, "hip") {
				tooltest.Tool(t, "ld.lld", l.major)
			}
			work := t.TempDir()
			runIn := func(dir, prog string, args ...string) string {
				t.Helper()
				cmd := exec.Command(prog, args...)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s %q: %v\n%s", prog, args, err, out)
				}
				return string(out)
			}
			run := func(prog string, args ...string) string {
				t.Helper()
				return runIn(work, prog, args...)
			}
			key := fmt.Sprint(l.major, l.compile, l.sources)
			in, ok := inputs[key]
			if !ok {
				var err error
				if in, err = os.MkdirTemp(dir, "inputs"); err != nil {
					t.Fatal(err)
				}
				// One clang for both sources, each compiled to its base
				// name, or the objects of the store (tooltest.Store).
				rel := []string{"../" + filepath.Base(l.sources[0]), "../" + filepath.Base(l.sources[1])}
				args := slices.Concat(l.compile, []string{"-c"}, rel)
				work := fmt.Sprintf("clang-%d %s\nrenamed a.o b.o", l.major, strings.ReplaceAll(strings.Join(args, " "), cuda, "CUDA"))
				storeInputs := []string{filepath.Join("testdata", "dryrun", filepath.Base(l.sources[0])), filepath.Join("testdata", "dryrun", filepath.Base(l.sources[1]))}
				if strings.Contains(work, "CUDA") {
					work += "\nCUDA: stand-ins of " + standInCUDAVersion
					storeInputs = append(storeInputs, standInCubin)
					if l.name == "cuda-whole" {
						storeInputs = append(storeInputs, standInFatbin)
					}
				}
				objs, err := compileStore.Files(t, in, work, storeInputs, []string{"a.o", "b.o"}, func(string) error {
					runIn(in, clang, args...)
					for i, to := range []string{"a.o", "b.o"} {
						from := strings.TrimSuffix(filepath.Base(l.sources[i]), filepath.Ext(l.sources[i])) + ".o"
						if err := os.Rename(filepath.Join(in, from), filepath.Join(in, to)); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if objs != in {
					for _, f := range []string{"a.o", "b.o"} {
						if err := tooltest.CopyFile(filepath.Join(in, f), filepath.Join(objs, f)); err != nil {
							t.Fatal(err)
						}
					}
				}
				ar, arArgs := binutilsAr(t)
				runIn(in, ar, append(arArgs, "rcs", "libx.a", "b.o")...)
				inputs[key] = in
			}
			for _, f := range []string{"a.o", "b.o", "libx.a"} {
				if err := tooltest.CopyFile(filepath.Join(work, f), filepath.Join(in, f)); err != nil {
					t.Fatal(err)
				}
			}
			if strings.HasSuffix(l.name, "-override") {
				if _, err := os.Stat(codeObject); err != nil {
					run(tooltest.Tool(t, "clang", 22), "--target=amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", "-O1", "-o", codeObject, lib)
					run(clang, "-c", "-o", filepath.Join(dir, "override.x86.o"), lib)
				}
			}
			argv := append(slices.Clone(l.wrapper), wrapperArgv(t, run(clang, append(l.link, "-###")...))...)
			theirs := run(wrapper, append([]string{"--dry-run"}, argv...)...)
			if l.name == "openmp-jit" && l.major >= 22 && !strings.Contains(theirs, " -Wl,--lto-emit-llvm") {
				t.Fatalf("LLVM %d's wrapper does not stop the device link at bitcode:\n%s", l.major, theirs)
			}
			if l.name == "hip-compress" && !strings.Contains(theirs, " -compress -compression-level=9 ") {
				t.Fatalf("LLVM %d's wrapper does not compress:\n%s", l.major, theirs)
			}

			lk, ours := dryRunIn(t, work, argv)
			// LLVM 17-21's wrapper runs the device LTO of HIP's bitcode
			// images in its own process and gives clang one object; goffload
			// runs it as commands of its own (lld, then llc), which LLVM's
			// dry run does not print: they are left out of ours.
			printed := ours
			lto, jitLTO := 0, 0
			for i, s := range lk.Steps {
				if s.Kind != StepDeviceLTO && s.Kind != StepCodegen {
					continue
				}
				if filepath.Base(s.Tool) == "llvm-lto2" {
					// The LTO LLVM 15 to 19's wrapper runs in its own
					// process: the JIT's (--embed-bitcode), whose optimised
					// module the wrap step registers, or one whose object
					// the device link takes first.
					jitLTO++
					if !slices.Contains(lk.Steps[i+1].Inputs, s.Outputs[0]) {
						t.Errorf("step %d llvm-lto2 -> %q, then %s takes %q", i, s.Outputs, lk.Steps[i+1].Kind, lk.Steps[i+1].Inputs)
					}
					printed = strings.Replace(printed, FormatCommand(&s)+"\n", "", 1)
					continue
				}
				lto++
				next := lk.Steps[i+1]
				if len(s.Outputs) != 1 || !cmp.Equal(next.Inputs, s.Outputs) || s.Kind == StepCodegen && next.Kind != StepDeviceLink {
					t.Errorf("step %d %s %q -> %q, then %s takes %q", i, s.Kind, s.Inputs, s.Outputs, next.Kind, next.Inputs)
				}
				printed = strings.Replace(printed, FormatCommand(&s)+"\n", "", 1)
			}
			// HIP of 17 to 21 (lld and llc; with -g, 19's in-process LTO,
			// which is llvm-lto2).
			hipDebug19 := l.name == "hip-flags-g" && l.major == 19
			if wantLTO := strings.HasPrefix(l.name, "hip") && l.name != "hip-whole" && l.major < 22 && !hipDebug19; wantLTO != (lto > 0 && lto%2 == 0) {
				t.Errorf("%d device LTO steps (lld, llc), want them: %v\n%s", lto, wantLTO, ours)
			}
			if want := (l.name == "openmp-jit" || l.name == "openmp-bitcode-library" || l.name == "openmp-amdgpu") && l.major < 20 || hipDebug19; want != (jitLTO == 1) {
				t.Errorf("%d llvm-lto2 steps, want one: %v\n%s", jitLTO, want, ours)
			}
			if l.name == "openmp-jit" && l.major == 19 {
				// 20 (LLVM's sources; no binaries here; 21 does not link 19's
				// objects, whose entries it reads otherwise): no LTO of
				// the wrapper's own, the device link stops at bitcode.
				opt, err := ParseWrapperArgs(argv)
				if err != nil {
					t.Fatal(err)
				}
				opt.DryRun, opt.Stdout = true, io.Discard
				if opt.Release, err = release.Lookup(20); err != nil {
					t.Fatal(err)
				}
				lk21, err := Plan(opt)
				if err != nil {
					t.Fatal(err)
				}
				var dev []string
				for _, s := range lk21.Steps {
					if s.Kind == StepDeviceLTO || s.Kind == StepDeviceLink {
						dev = append(dev, FormatCommand(&s))
					}
				}
				lk21.Close()
				if len(dev) != 1 || !strings.Contains(dev[0], " -Wl,--lto-emit-llvm") || strings.Contains(dev[0], "llvm-lto2") {
					t.Errorf("LLVM 20's JIT device link: %q, want one clang link with -Wl,--lto-emit-llvm", dev)
				}
			}
			want := stepsOf(theirs)
			for i, s := range want {
				switch s {
				case "clang-offload-bundler":
					want[i] = "bundle" // ours
				case "llvm-objcopy":
					want[i] = "finish" // ours, for -r
				}
			}
			if got := stepsOf(printed); !cmp.Equal(got, want) {
				t.Errorf("steps %q, LLVM %d's %q\nours:\n%s\ntheirs:\n%s", got, l.major, want, ours, theirs)
			}
			a, b := masked(printed), masked(theirs)
			if jitLTO > 0 {
				// llvm-lto2 names its object PREFIX.0; LLVM's wrapper
				// OUT.TRIPLE.ARCH.o.
				a = regexp.MustCompile(`TMP\.0\b`).ReplaceAllString(a, "TMP.o")
			}
			if slices.Contains(l.link, "-r") && l.major >= 19 {
				// LLVM's ld writes the output, which llvm-objcopy then
				// edits in place; goffload's writes a temporary object,
				// which its own finish step writes to the output, renamed
				// alike (TestRelocatableLinkMakesStaticLibrary).
				a = strings.Join(slices.DeleteFunc(strings.Split(a, "\n"), func(s string) bool { return strings.HasPrefix(s, "# goffload: finish ") }), "\n")
				b = strings.Join(slices.DeleteFunc(strings.Split(b, "\n"), func(s string) bool { return strings.Contains(s, "/llvm-objcopy\" ") }), "\n")
				if m := regexp.MustCompile(`(?m)^"/usr/bin/ld" .*? -o (\S+) `).FindStringSubmatch(a); m != nil {
					b = strings.Replace(b, " -o prog ", " -o "+m[1]+" ", 1)
				}
			}
			if a != b {
				t.Errorf("commands differ beyond temporary names:\n%s", cmp.Diff(b, a))
			}
			if l.name == "hip-compress" {
				compressedFatbin(t, work, argv, l.major)
			}
		})
	}
}

// standInCUDA makes a CUDA folder in dir for clang's NVPTX compiles and
// the wrappers' dry runs: the files clang looks for, a CUDA 12.8 cuda.h, a
// ptxas that writes a cubin NVIDIA's ptxas made (offload/testdata/nvidia)
// wherever it is asked to, and a fatbinary that writes a fat binary NVIDIA's
// fatbinary made (clang runs it to compile CUDA for the whole program; a dry
// run names it, never runs it). It returns the folder.
// standInCubin is the cubin the stand-in ptxas writes, and
// standInCUDAVersion the version of the stand-in CUDA.
var standInCubin = filepath.Join("..", "offload", "testdata", "nvidia", "openmp-llvm19", "teams.sm_90.cubin")

// standInFatbin holds the fat binary the stand-in fatbinary writes: the
// .nv_fatbin of a whole-program CUDA object of clang-22, which CUDA 13's
// fatbinary made.
var standInFatbin = filepath.Join("..", "offload", "testdata", "nvidia", "cuda-llvm22", "vadd.o")

const standInCUDAVersion = "12080"

// compileStore holds the objects that the releases' clang made of
// testdata/dryrun for the default run (tooltest.Store).
var compileStore = tooltest.Store{Dir: filepath.Join("testdata", "compiled")}

// TestStoredCompilesAreCurrent: every compile in the store was made of the
// sources as they are.
func TestStoredCompilesAreCurrent(t *testing.T) {
	compileStore.CheckCurrent(t)
}

func standInCUDA(t *testing.T, dir string) string {
	t.Helper()
	cubin, err := filepath.Abs(standInCubin)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := elf.Open(standInFatbin)
	if err != nil {
		t.Fatal(err)
	}
	data, err := obj.Section(".nv_fatbin").Data()
	obj.Close()
	if err != nil {
		t.Fatal(err)
	}
	fatbin := filepath.Join(dir, "vadd.fatbin")
	if err := os.WriteFile(fatbin, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cuda := filepath.Join(dir, "cuda")
	files := map[string]string{
		"include/cuda.h":                 "#define CUDA_VERSION " + standInCUDAVersion + "\n",
		"nvvm/libdevice/libdevice.10.bc": "",
		"lib64/.keep":                    "",
		"bin/ptxas": "#!/bin/sh\n# A stand-in: the cubin NVIDIA's ptxas made, to the file after -o or --output-file.\n" +
			"while [ $# -gt 0 ]; do case \"$1\" in -o|--output-file) out=\"$2\"; shift;; esac; shift; done\n" +
			"exec cp '" + cubin + "' \"$out\"\n",
		"bin/fatbinary": "#!/bin/sh\n# A stand-in: the fat binary NVIDIA's fatbinary made, to the file after --create.\n" +
			"while [ $# -gt 0 ]; do case \"$1\" in --create) out=\"$2\"; shift;; --create=*) out=\"${1#--create=}\";; esac; shift; done\n" +
			"exec cp '" + fatbin + "' \"$out\"\n",
	}
	for name, text := range files {
		p := filepath.Join(cuda, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return cuda
}

// binutilsAr returns GNU ar and the arguments it takes before its own here:
// --plugin with the LTO plugin of cc (gcc's, which its links give ld), for
// without it ar loads every plugin of bfd-plugins, where each LLVM release
// installed puts its LLVMgold, each loading its libLLVM (0.4 s of CPU a
// command with six releases), and no plugin reads the objects archived here
// (ELF objects). Where cc names no plugin file, none: ar's default.
func binutilsAr(t *testing.T) (string, []string) {
	t.Helper()
	return tooltest.Program(t, "ar"), tooltest.BinutilsPlugin()
}

// compressedFatbin runs the link of argv (with --compress) up to the HIP
// fatbin, compressed and not, and has the release's clang-offload-bundler
// read both: the same code object must come out.
func compressedFatbin(t *testing.T, work string, argv []string, major int) {
	bundler := tooltest.Tool(t, "clang-offload-bundler", major)
	fatbin := func(compress bool) string {
		opt, err := ParseWrapperArgs(argv)
		if err != nil {
			t.Fatal(err)
		}
		if !opt.Compress || opt.CompressionLevel == nil || *opt.CompressionLevel != 9 {
			t.Fatalf("--compress --compression-level=9 not read: %+v", opt)
		}
		opt.Compress, opt.EmitFatbinOnly = compress, true
		opt.LinkerArgs = append(opt.LinkerArgs, "-o", fmt.Sprintf("fb-%v.hipfb", compress))
		lk, err := Plan(opt)
		if err != nil {
			t.Fatal(err)
		}
		defer lk.Close()
		if err := lk.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(work, fmt.Sprintf("fb-%v.hipfb", compress))
	}
	compressed, plain := fatbin(true), fatbin(false)
	head, err := os.ReadFile(compressed)
	if err != nil || !bytes.HasPrefix(head, []byte("CCOB")) {
		t.Fatalf("%s is not a compressed bundle (%v)", compressed, err)
	}
	var objs []string
	for _, fb := range []string{compressed, plain} {
		out := fb + ".co"
		cmd := exec.Command(bundler, "-type=o", "-unbundle", "-input="+fb, "-targets=hip-amdgcn-amd-amdhsa--gfx90a", "-output="+out)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, msg)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, string(b))
	}
	st, _ := os.Stat(plain)
	t.Logf("fatbin %d bytes compressed, %d not; code object %d bytes", len(head), st.Size(), len(objs[0]))
	if objs[0] != objs[1] || len(objs[0]) == 0 {
		t.Errorf("clang-offload-bundler-%d unbundles %d bytes from the compressed fatbin, %d from the plain one", major, len(objs[0]), len(objs[1]))
	}
}

// wrapperArgv returns the arguments of the clang-linker-wrapper command
// that clang -### prints.
func wrapperArgv(t *testing.T, out string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "clang-linker-wrapper\"") {
			continue
		}
		var argv []string
		for _, f := range strings.Split(strings.TrimSpace(line), `" "`) {
			argv = append(argv, strings.Trim(f, `"`))
		}
		return argv[1:]
	}
	t.Fatalf("no clang-linker-wrapper command in\n%s", out)
	return nil
}

// masked replaces the temporary files' names in printed commands (LLVM's:
// /tmp/NAME-RANDOM.EXT; ours: a folder of our own) by their extension and
// drops goffload's own steps (LLVM runs the bundler as a program).
func masked(out string) string {
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, ` "`) || strings.Contains(line, "clang-offload-bundler") {
			continue
		}
		var fs []string
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, os.TempDir()+"/") {
				f = "TMP" + filepath.Ext(f)
			} else if i := strings.Index(f, "file="+os.TempDir()+"/"); i >= 0 {
				// fatbinary's --image=...,file=PATH
				f = f[:i] + "file=TMP" + filepath.Ext(f)
			}
			fs = append(fs, f)
		}
		lines = append(lines, strings.Join(fs, " "))
	}
	return strings.Join(lines, "\n")
}

// TestRunChains: the device steps of several targets run at once, each
// target's in its order, and an error stops its target's chain.
func TestRunChains(t *testing.T) {
	dir := t.TempDir()
	step := func(kind StepKind, target string, fail bool) Step {
		script := "echo " + string(kind) + " >> " + filepath.Join(dir, target)
		if fail {
			script += "; exit 3"
		}
		return Step{Kind: kind, Target: target, Tool: "/bin/sh", Args: []string{"-c", script}}
	}
	var steps []Step
	for _, tg := range []string{"a", "b", "c"} {
		steps = append(steps, step(StepDeviceLTO, tg, false), step(StepCodegen, tg, tg == "b"), step(StepDeviceLink, tg, false))
	}
	steps = append(steps, step(StepBundle, "hip", false))
	l := &Link{opt: &Options{Jobs: 2, DryRun: false}, Steps: steps}
	if err := l.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Run: %v, want the codegen step's error", err)
	}
	want := map[string][]string{"a": {"device-lto", "codegen", "device-link"}, "b": {"device-lto", "codegen"},
		"c": {"device-lto", "codegen", "device-link"}}
	for tg, w := range want {
		b, _ := os.ReadFile(filepath.Join(dir, tg))
		if got := strings.Fields(string(b)); !cmp.Equal(got, w) {
			t.Errorf("target %s ran %q, want %q", tg, got, w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "hip")); err == nil {
		t.Error("the bundle step ran after a failed chain")
	}
}

func TestAfterOrdersStepsByTheirFiles(t *testing.T) {
	steps := []Step{
		{Kind: StepExtract, Outputs: []string{"a.o"}},                                                   // 0
		{Kind: StepExtract, Outputs: []string{"b.o"}},                                                   // 1
		{Kind: StepDeviceLink, Target: "x", Inputs: []string{"a.o", "b.o"}, Outputs: []string{"x.img"}}, // 2
		{Kind: StepDeviceLink, Target: "y", Inputs: []string{"b.o"}, Outputs: []string{"y.img"}},        // 3
		{Kind: StepWrap, Inputs: []string{"x.img", "y.img"}, Outputs: []string{"w.o"}},                  // 4
		{Kind: StepExtract, Outputs: []string{"b.o"}},                                                   // 5: rewrites what 2 and 3 read
		{Kind: StepBundle}, // 6: declares nothing
		{Kind: StepExtract, Outputs: []string{"c.o"}},             // 7
		{Kind: StepCodegen, Target: "x", Inputs: []string{"c.o"}}, // 8
		{Kind: StepDeviceLink, Target: "x"},                       // 9: after 8, its chain
	}
	want := [][]int{nil, nil, {0, 1}, {1}, {2, 3}, {1, 2, 3}, {0, 1, 2, 3, 4, 5}, {6}, {2, 6, 7}, {6, 8}}
	if got := after(steps); !cmp.Equal(got, want, cmpopts.EquateEmpty()) {
		t.Errorf("after:\n got %v\nwant %v", got, want)
	}
}

func TestRunStepsWritesInParallelAndInOrder(t *testing.T) {
	dir := t.TempDir()
	var steps []Step
	var outs []string
	for i := range 20 {
		out := filepath.Join(dir, fmt.Sprintf("%d.o", i))
		outs = append(outs, out)
		steps = append(steps, Step{Kind: StepExtract, Tool: "/bin/sh", Args: []string{"-c", "echo " + strconv.Itoa(i) + " > " + out}, Outputs: []string{out}})
	}
	sum := filepath.Join(dir, "all")
	steps = append(steps, Step{Kind: StepDeviceLink, Target: "x", Tool: "/bin/sh", Args: []string{"-c", "cat " + strings.Join(outs, " ") + " > " + sum}, Inputs: outs, Outputs: []string{sum}})
	l := &Link{opt: &Options{Jobs: 4}, Steps: steps}
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(b)); len(got) != 20 || got[19] != "19" {
		t.Errorf("the device link read %q: not every image was written first", got)
	}
}

// dryRunIn runs goffload's wrapper on argv with --dry-run in the folder
// work, as clang would run it there, and returns its link (closed when the
// test ends) and what it prints. The test stays in work until it ends.
func dryRunIn(t *testing.T, work string, argv []string) (*Link, string) {
	t.Helper()
	opt, err := ParseWrapperArgs(argv)
	if err != nil {
		t.Fatal(err)
	}
	var ours bytes.Buffer
	opt.DryRun, opt.Stdout = true, &ours
	t.Chdir(work) // until the test ends
	lk, err := Plan(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lk.Close() })
	if err := lk.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return lk, ours.String()
}

// TestTimeTrace: --wrapper-time-trace writes a Chrome trace of the steps
// that ran (the whole link, then each step, on as many threads as ran at
// once), leaving out steps shorter than the granularity; a dry run writes
// none.
func TestTimeTrace(t *testing.T) {
	o, err := ParseWrapperArgs([]string{"--wrapper-time-trace=t.json", "--wrapper-time-trace-granularity=20", "-o", "p", "a.o"})
	if err != nil || o.TimeTrace != "t.json" || o.TimeTraceGranularity != 20 {
		t.Fatalf("ParseWrapperArgs: %+v, %v", o, err)
	}
	if o, err := ParseWrapperArgs([]string{"--wrapper-time-trace=t.json", "a.o"}); err != nil {
		t.Error(err)
	} else if o.TimeTraceGranularity != DefaultTimeTraceGranularity {
		t.Errorf("no granularity given: %d, want LLVM's default %d", o.TimeTraceGranularity, DefaultTimeTraceGranularity)
	}
	for _, bad := range []string{"--wrapper-time-trace-granularity=-1", "--wrapper-time-trace-granularity=x", "--wrapper-time-trace="} {
		if _, err := ParseWrapperArgs([]string{bad, "a.o"}); !errors.Is(err, ErrUsage) {
			t.Errorf("%s: %v, want ErrUsage", bad, err)
		}
	}
	dir := t.TempDir()
	var steps []Step
	for _, tg := range []string{"a", "b"} {
		steps = append(steps, Step{Kind: StepDeviceLink, Target: tg, Tool: "/bin/sh", Args: []string{"-c", "sleep 0.05"}})
	}
	steps = append(steps, Step{Kind: StepHostLink, Tool: "/bin/sh", Args: []string{"-c", "true"}})
	type event struct {
		Name string            `json:"name"`
		Ph   string            `json:"ph"`
		TS   int64             `json:"ts"`
		Dur  int64             `json:"dur"`
		TID  int               `json:"tid"`
		Args map[string]string `json:"args"`
	}
	trace := func(granularity int, dry bool) []event {
		t.Helper()
		path := filepath.Join(dir, fmt.Sprintf("trace-%d-%v.json", granularity, dry))
		l := &Link{opt: &Options{Jobs: 2, DryRun: dry, Stdout: io.Discard, TimeTrace: path, TimeTraceGranularity: granularity}, Steps: steps}
		if err := l.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if dry {
			if err == nil {
				t.Error("a dry run wrote a trace")
			}
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		var tr struct {
			TraceEvents []event `json:"traceEvents"`
		}
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		return tr.TraceEvents
	}
	evs := trace(0, false) // every step
	if len(evs) != 4 || evs[0].Name != "Total goffload link" || evs[0].Ph != "X" {
		t.Fatalf("events %+v, want the total and three steps", evs)
	}
	tids := map[int]bool{}
	for _, e := range evs[1:] {
		if e.TS+e.Dur > evs[0].Dur || e.TID == 0 {
			t.Errorf("event %+v outside the total %+v", e, evs[0])
		}
		if e.Name == "device-link" {
			tids[e.TID] = true
			if e.Dur < 50000 || e.Args["detail"] == "" {
				t.Errorf("device link %+v: want 50 ms or more and its target", e)
			}
		}
	}
	if len(tids) != 2 {
		t.Errorf("the two device links, run at once, on threads %v", tids)
	}
	// A granularity of 40 ms keeps the device links (50 ms), not the host
	// link.
	if evs := trace(40000, false); len(evs) != 3 {
		t.Errorf("granularity 40 ms: %+v, want the total and the two device links", evs)
	}
	trace(1, true)
}

// TestEmbedBitcodePerRelease: --embed-bitcode (-fopenmp-target-jit) is
// planned for every release with a clang-linker-wrapper: from 22 the device
// link stops after its LTO (-Wl,--lto-emit-llvm); 15 to 21 run llvm-lto2 as
// their wrappers run the LTO in their own process (one step, no device link;
// TestWrapperDriverFlagsAsClangs in cmd/goffload compares the programs with
// clang's own); 13 and 14 have no wrapper and refuse it, naming the option.
func TestEmbedBitcodePerRelease(t *testing.T) {
	for _, major := range []int{13, 15, 16, 19, 21, 22, 24} {
		o, err := ParseWrapperArgs([]string{"--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld", "--embed-bitcode", "--dry-run", "-o", "prog"})
		if err != nil {
			t.Fatal(err)
		}
		if !o.EmbedBitcode {
			t.Fatal("--embed-bitcode not read")
		}
		o.Release, _ = release.Lookup(major)
		o.Stdout = io.Discard
		_, err = Plan(o)
		switch {
		case major >= 15 && err != nil:
			t.Errorf("LLVM %d: %v", major, err)
		case major < 15 && (!errors.Is(err, goffload.ErrUnsupported) || !strings.Contains(err.Error(), "--embed-bitcode")):
			t.Errorf("LLVM %d: %v, want ErrUnsupported naming --embed-bitcode", major, err)
		}
	}
}

// TestBitcodeLibraryPerRelease: --bitcode-library is an option of 15 to
// 19's wrapper, which adds the file's bitcode to the target its triple and
// arch name (one of its own where none matches) and links it in the LTO it
// runs in its own process: goffload's plan runs llvm-lto2 over it, the
// device link takes the object, and the option reaches no host link
// (TestDryRunStepOrder and TestWrapperDriverFlagsAsClangs compare with
// LLVM's). 20 and later have none (#114298) and pass it to the host linker
// where it stands, as clang-linker-wrapper-22 --dry-run shows. A value that
// is not KIND-TRIPLE-ARCH=FILE, or a file that is no bitcode, is refused.
func TestBitcodeLibraryPerRelease(t *testing.T) {
	dir := t.TempDir()
	bc := filepath.Join(dir, "lib.bc")
	if err := tooltest.CopyFile(bc, filepath.Join("..", "bitcode", "testdata", "x86_64-clang19.bc")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		major   int
		triple  string
		targets int // device links
		inLTO   bool
	}{{15, "x86_64-unknown-linux-gnu", 1, true}, {16, "x86_64-unknown-linux-gnu", 1, true}, {19, "x86_64-unknown-linux-gnu", 1, true},
		{19, "x86_64-pc-linux-gnu", 2, true}, {20, "x86_64-unknown-linux-gnu", 1, false}, {22, "x86_64-unknown-linux-gnu", 1, false}, {24, "x86_64-unknown-linux-gnu", 1, false}} {
		lib := "--bitcode-library=openmp-" + c.triple + "-=" + bc
		obj := filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm22.o")
		if c.major < 21 {
			obj = filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm16.o")
		}
		o, err := ParseWrapperArgs([]string{"--host-triple=x86_64-unknown-linux-gnu", "--linker-path=/usr/bin/ld", "--dry-run", lib, "-o", "prog", obj})
		if err != nil {
			t.Fatal(err)
		}
		if !cmp.Equal(o.BitcodeLibraries, []string{strings.TrimPrefix(lib, "--bitcode-library=")}) || !cmp.Equal(o.LinkerArgs, []string{lib, "-o", "prog", obj}) {
			t.Fatalf("%+v", o)
		}
		o.Release, err = release.Lookup(c.major)
		if err != nil {
			t.Fatal(err)
		}
		o.TempDir = "tmp"
		l, err := Plan(o)
		if err != nil {
			t.Fatalf("LLVM %d: %v", c.major, err)
		}
		var lto, links int
		for _, s := range l.Steps {
			switch s.Kind {
			case StepDeviceLTO:
				lto++
				if !slices.Contains(s.Inputs, bc) || filepath.Base(s.Tool) != "llvm-lto2" {
					t.Errorf("LLVM %d: %s %q, want llvm-lto2 of %s", c.major, s.Tool, s.Inputs, bc)
				}
			case StepDeviceLink:
				links++
			}
		}
		host := l.Steps[len(l.Steps)-1]
		l.Close()
		if c.inLTO != (lto == 1) || links != c.targets {
			t.Errorf("LLVM %d, %s: %d LTO steps and %d device links", c.major, c.triple, lto, links)
		}
		if got := host.Kind == StepHostLink && slices.Contains(host.Args, lib); got == c.inLTO {
			t.Errorf("LLVM %d: the host link %q; the option is the host linker's: %v", c.major, host.Args, !c.inLTO)
		}
	}
	for _, bad := range []string{"openmp=" + bc, "frob-x86_64-unknown-linux-gnu-=" + bc, "openmp-x86_64-unknown-linux-gnu-=" + filepath.Join("..", "go.mod")} {
		o, err := ParseWrapperArgs([]string{"--host-triple=x86_64-unknown-linux-gnu", "--linker-path=/usr/bin/ld", "--dry-run", "--bitcode-library=" + bad, "-o", "prog"})
		if err != nil {
			t.Fatal(err)
		}
		o.Release, _ = release.Lookup(19)
		o.TempDir = "tmp"
		if l, err := Plan(o); err == nil {
			l.Close()
			t.Errorf("--bitcode-library=%s planned", bad)
		}
	}
}

// TestHostLinkOutputAsLLVM: the wrapper of each release (16, 19, 22) gives
// the host linker its output as -o OUT, however it was given (-o OUT,
// -oOUT, --output=OUT), each -o followed by the registration object, and
// -r as --relocatable (19 and later), and passes an empty file on (an empty
// linker script to ld); the device link's -dumpdir names the image beside
// the program (sub/prog.x86_64..img.); goffload's commands are LLVM's but
// for the temporary files' names.
func TestHostLinkOutputAsLLVM(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with three releases")
	}
	src := filepath.Join(t.TempDir(), "x.c")
	if err := os.WriteFile(src, []byte("int main(void){int s=0;\n#pragma omp target map(from:s)\ns=2;\nreturn s!=2;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, major := range []int{16, 19, 22} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			clang := tooltest.Tool(t, "clang", major)
			wrapper := tooltest.Tool(t, "clang-linker-wrapper", major)
			work := t.TempDir()
			cmd := exec.Command(clang, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", src, "-o", "x.o")
			cmd.Dir = work
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			cmd = exec.Command(clang, "-x", "c", "-c", "-", "-o", "y.o")
			cmd.Dir, cmd.Stdin = work, strings.NewReader("int y;\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			// An empty file: an empty linker script to ld, which LLVM's
			// wrapper passes on.
			if err := os.WriteFile(filepath.Join(work, "empty.o"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			wrapperOpts := []string{"--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld"}
			if err := os.Mkdir(filepath.Join(work, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			forms := [][]string{{"x.o", "-o", "prog", "y.o", "empty.o"}, {"x.o", "-o", "sub/prog"}, {"x.o", "y.o", "-oprog"}, {"x.o", "--output=prog", "y.o"},
				{"x.o", "-o", "first", "y.o", "-o", "prog"}, {"-o", "prog", "x.o", "-r"}}
			for _, form := range forms {
				argv := append(slices.Clone(wrapperOpts), form...)
				if major == 16 {
					argv = append(append(slices.Clone(wrapperOpts), "--"), form...)
				}
				c := exec.Command(wrapper, append([]string{"--dry-run"}, argv...)...)
				c.Dir = work
				theirs, err := c.CombinedOutput()
				if err != nil {
					t.Fatalf("%q: %v\n%s", form, err, theirs)
				}
				_, ours := dryRunIn(t, work, argv)
				host := func(out string) string {
					lines := strings.Split(masked(out), "\n")
					return lines[len(lines)-1]
				}
				if slices.Contains(form, "-r") && major > 16 {
					// goffload's ld writes a temporary object, which its own
					// finish step writes to prog (TestDryRunStepOrder); 16
					// takes -r as any linker option.
					if !strings.Contains(host(ours), "-o TMP.o TMP.o x.o --relocatable") || !strings.Contains(string(theirs), "-o prog ") {
						t.Errorf("%q: ours\n%s\ntheirs\n%s", form, ours, theirs)
					}
					continue
				}
				if masked(ours) != masked(string(theirs)) {
					t.Errorf("%q: the commands\n%s\nLLVM %d's\n%s", form, masked(ours), major, masked(string(theirs)))
				}
			}
		})
	}
}
