package wrap

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/wrap/internal/stubs"
)

var winTriples = []string{"x86_64-pc-windows-msvc", "x86_64-w64-windows-gnu"}

// readobjCOFF is llvm-readobj-22's view of COFF objects, one process for
// all of them: for each, its headers, sections with their bytes,
// relocations, symbols with their aux records, unwind information and
// directives; everything but the file's name.
func readobjCOFF(t *testing.T, paths ...string) map[string][]string {
	t.Helper()
	cmd := exec.Command(tooltest.Tool(t, "llvm-readobj", 22), append([]string{"--file-headers", "--sections", "--section-data", "--relocations",
		"--symbols", "--unwind", "--coff-directives"}, paths...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := tooltest.Slot()
	err := cmd.Run()
	done()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("llvm-readobj: %v\n%s%s", err, stderr.String(), stdout.String())
	}
	views := map[string][]string{}
	var cur []string
	k := -1
	end := func() {
		for len(cur) > 0 && cur[len(cur)-1] == "" {
			cur = cur[:len(cur)-1]
		}
		if k >= 0 {
			views[paths[k]] = cur
		}
	}
	for _, l := range strings.Split(stdout.String(), "\n") {
		if name, ok := strings.CutPrefix(l, "File: "); ok {
			end()
			if k++; k >= len(paths) || name != paths[k] {
				t.Fatalf("llvm-readobj printed file %q, want %q", name, paths[min(k, len(paths)-1)])
			}
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	end()
	if k != len(paths)-1 {
		t.Fatalf("llvm-readobj printed %d files of %d", k+1, len(paths))
	}
	return views
}

// coffComparison is one comparison of a test: LLVM's object and ours.
type coffComparison struct {
	name, theirs, ours string
}

// writeCOFF writes o to a file of the test's and returns its path.
func writeCOFF(t *testing.T, o *coffobj.Object) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := coffobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "ours-*.o")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// compareCOFF runs llvm-readobj-22 once on the objects of every comparison
// and reports, in a subtest for each, the lines where it sees ours
// differently from theirs.
func compareCOFF(t *testing.T, cs []coffComparison) {
	t.Helper()
	var paths []string
	seen := map[string]bool{}
	for _, c := range cs {
		for _, p := range []string{c.theirs, c.ours} {
			if !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	views := readobjCOFF(t, paths...)
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			want, got := views[c.theirs], views[c.ours]
			bad := 0
			for i := 0; i < max(len(want), len(got)) && bad < 20; i++ {
				var w, g string
				if i < len(want) {
					w = want[i]
				}
				if i < len(got) {
					g = got[i]
				}
				if w != g {
					t.Errorf("line %d:\nLLVM %s\nours %s", i+1, w, g)
					bad++
				}
			}
			if bad == 0 && len(want) < 100 {
				t.Fatalf("llvm-readobj printed %d lines", len(want))
			}
		})
	}
}

// winLinkerWrapper compiles src for host triple with clang-22 (args) and
// runs clang-linker-wrapper-22 --save-temps on the object, returning its
// directory: the registration object is *.image.wrapper.o there. It runs
// once per test binary for the same arguments (TestCOFFMatchesLinkerWrapper
// and TestCOFFAfter22MatchesLLC share the OpenMP one); the directory is
// shared, not to be changed.
func winLinkerWrapper(t *testing.T, triple, src string, compile []string, wrapper ...string) string {
	t.Helper()
	clang := tooltest.Tool(t, "clang", 22)
	clw := tooltest.Tool(t, "clang-linker-wrapper", 22)
	trueBin := trueProgram(t)
	key := fmt.Sprintf("clang-linker-wrapper-22 for %s of %s %q %q", triple, src, compile, wrapper)
	return shared(t, key, func(t testing.TB, dir string) string {
		abs, err := filepath.Abs(src)
		if err != nil {
			t.Fatal(err)
		}
		args := append([]string{"--target=" + triple}, compile...)
		runCmd(t, exec.Command(clang, append(args, "-c", abs, "-o", filepath.Join(dir, "in.o"))...))
		args = append([]string{"--host-triple=" + triple, "--linker-path=" + trueBin, "--save-temps", "-o", "a.exe"}, wrapper...)
		cmd := exec.Command(clw, append(args, "in.o")...)
		cmd.Dir = dir
		runCmd(t, cmd)
		return dir
	})
}

// The arguments of winLinkerWrapper for the HIP and the OpenMP program.
var (
	winHIPCompile = []string{"-x", "hip", "--offload-new-driver", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-fgpu-rdc"}
	winHIPWrapper = []string{"--should-extract=gfx90a", "--device-compiler=amdgcn-amd-amdhsa=-flto-partitions=8"}
	winOMPCompile = []string{"-fopenmp", "-fopenmp-targets=amdgcn-amd-amdhsa", "-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx90a", "-nogpulib", "-nogpuinc"}
	// The device runtime is not needed to see the wrapper.
	winOMPWrapper = []string{"--device-linker=amdgcn-amd-amdhsa=--unresolved-symbols=ignore-all"}
)

// The programs that winLinkerWrapper builds for each of winTriples: the
// columns of the matrix whose tooltest.Sample the default run builds (the
// HIP one for MSVC, the OpenMP one for MinGW).
const (
	winHIP = iota
	winOpenMP
	winPrograms
)

// TestCOFFMatchesLinkerWrapper has clang-linker-wrapper-22 wrap a HIP
// program (kernels, a template kernel, device variables, a managed
// variable; -fgpu-rdc) and an OpenMP one for both Windows hosts and
// compares its registration objects with ours of the same fatbin and
// binary, as llvm-readobj-22 prints them. The default run builds a
// tooltest.Sample of the hosts × programs: HIP for one host, OpenMP for
// the other.
func TestCOFFMatchesLinkerWrapper(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and device-links programs")
	}
	t.Parallel()
	r := lookupRelease(t, 22)
	var cs []coffComparison
	for i, triple := range winTriples {
		if !tooltest.Sampled(i, winHIP, len(winTriples), winPrograms) {
			t.Run(triple+"/hip", func(t *testing.T) { tooltest.Sample(t, i, winHIP, len(winTriples), winPrograms) })
		} else {
			dir := winLinkerWrapper(t, triple, filepath.Join("testdata", "win", "prog.hip"), winHIPCompile, winHIPWrapper...)
			fb, err := os.ReadFile(filepath.Join(dir, "a.exe.hipfb"))
			if err != nil {
				t.Fatal(err)
			}
			o, err := GPUCOFF(Options{Release: r, Triple: triple}, offload.OffloadHIP, io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb))))
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, coffComparison{triple + "/hip", filepath.Join(dir, "a.exe.hip.image.wrapper.o"), writeCOFF(t, o)})
		}

		if !tooltest.Sampled(i, winOpenMP, len(winTriples), winPrograms) {
			t.Run(triple+"/openmp", func(t *testing.T) { tooltest.Sample(t, i, winOpenMP, len(winTriples), winPrograms) })
			continue
		}
		dir := winLinkerWrapper(t, triple, filepath.Join("testdata", "win", "omp.c"), winOMPCompile, winOMPWrapper...)
		theirs := filepath.Join(dir, "a.exe.openmp.image.wrapper.o")
		bin := coffSection(t, theirs, ".llvm.offloading")
		b, err := FromBinary(bytes.NewReader(bin), int64(len(bin)))
		if err != nil {
			t.Fatal(err)
		}
		o, err := OpenMPCOFF(Options{Release: r, Triple: triple}, []Binary{b})
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, coffComparison{triple + "/openmp", theirs, writeCOFF(t, o)})
	}
	compareCOFF(t, cs)
}

func coffSection(t *testing.T, path, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := coffobj.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(name)
	if s == nil {
		t.Fatalf("%s has no %s", path, name)
	}
	d, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// coffGPUCases are the CUDA and HIP fatbins of the COFF comparisons with
// llc: 20 bytes (the stand-in fatbinary) and the bundle the HIP tests use.
var coffGPUCases = []struct {
	kind  offload.OffloadKind
	stub  stubs.GPUKind
	image string
}{{offload.OffloadCUDA, stubs.CUDA, string(tooltest.CUDAFatbinary())}, {offload.OffloadHIP, stubs.HIP, string(tooltest.HIPFatbin())}}

// coffGPUComparison compiles the CUDA or HIP module of release major for
// triple (stubs.GPUModuleIRCOFF) with llc-22 and wraps the same fatbin.
func coffGPUComparison(t *testing.T, llc string, major int, triple string, kind offload.OffloadKind, stub stubs.GPUKind, image string) coffComparison {
	t.Helper()
	theirs := compileLLC(t, llc, stubs.GPUModuleIRCOFF(major, stub, image), "-mtriple="+triple, "-filetype=obj")
	o, err := GPUCOFF(Options{Release: lookupRelease(t, major), Triple: triple}, kind, io.NewSectionReader(strings.NewReader(image), 0, int64(len(image))))
	if err != nil {
		t.Fatal(err)
	}
	return coffComparison{fmt.Sprintf("%s/%v", triple, kind), theirs, writeCOFF(t, o)}
}

// TestCOFFMatchesLLC compares the CUDA and HIP objects for both Windows
// hosts with what llc-22 makes of clang-linker-wrapper-22's module for
// them (stubs.GPUModuleIRCOFF), for fatbins of 20 bytes (the stand-in
// fatbinary) and of the bundle the HIP tests use.
func TestCOFFMatchesLLC(t *testing.T) {
	t.Parallel()
	llc := tooltest.Tool(t, "llc", 22)
	var cs []coffComparison
	for _, triple := range winTriples {
		for _, c := range coffGPUCases {
			cs = append(cs, coffGPUComparison(t, llc, 22, triple, c.kind, c.stub, c.image))
		}
	}
	compareCOFF(t, cs)
}

// TestCOFFAfter22MatchesLLC compares the objects of 23 and 24 for both
// Windows hosts with what llc-22 makes of the modules their sources build
// (no LLVM 23 or 24 tool is at hand): for CUDA and HIP stubs.GPUModuleIRCOFF,
// for OpenMP clang-linker-wrapper-22's own module (its --save-temps
// bitcode) changed as main's #215390 changes it (sentinelModule). 23's
// objects are 22's. The default run compiles every CUDA and HIP module of
// 23 (the same as 22's: the llc runs are TestCOFFMatchesLLC's), a
// tooltest.Sample of 24's hosts × kinds, and the OpenMP modules of the
// host whose OpenMP program TestCOFFMatchesLinkerWrapper builds (its
// sample).
func TestCOFFAfter22MatchesLLC(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and device-links a program")
	}
	t.Parallel()
	llc := tooltest.Tool(t, "llc", 22)
	dis := tooltest.Tool(t, "llvm-dis", 22)
	var cs []coffComparison
	for _, major := range []int{23, 24} {
		r := lookupRelease(t, major)
		for i, triple := range winTriples {
			for j, c := range coffGPUCases {
				name := fmt.Sprintf("llvm%d/%s/%v", major, triple, c.kind)
				if major > 23 && !tooltest.Sampled(i, j, len(winTriples), len(coffGPUCases)) {
					t.Run(name, func(t *testing.T) { tooltest.Sample(t, i, j, len(winTriples), len(coffGPUCases)) })
					continue
				}
				c := coffGPUComparison(t, llc, major, triple, c.kind, c.stub, c.image)
				c.name = name
				cs = append(cs, c)
			}
			if !tooltest.Sampled(i, winOpenMP, len(winTriples), winPrograms) {
				t.Run(fmt.Sprintf("llvm%d/%s/openmp", major, triple), func(t *testing.T) {
					tooltest.Sample(t, i, winOpenMP, len(winTriples), winPrograms)
				})
				continue
			}
			dir := winLinkerWrapper(t, triple, filepath.Join("testdata", "win", "omp.c"), winOMPCompile, winOMPWrapper...)
			bc := filepath.Join(dir, "a.exe.openmp.image.wrapper.bc")
			module := shared(t, "llvm-dis-22 "+bc, func(t testing.TB, dir string) string {
				ll := filepath.Join(dir, "w.ll")
				runCmd(t, exec.Command(dis, bc, "-o", ll))
				data, err := os.ReadFile(ll)
				if err != nil {
					t.Fatal(err)
				}
				return string(data)
			})
			if major >= 24 {
				module = sentinelModule(t, module)
			}
			theirs := compileLLC(t, llc, module, "-mtriple="+triple, "-filetype=obj")
			bin := coffSection(t, filepath.Join(dir, "a.exe.openmp.image.wrapper.o"), ".llvm.offloading")
			b, err := FromBinary(bytes.NewReader(bin), int64(len(bin)))
			if err != nil {
				t.Fatal(err)
			}
			o, err := OpenMPCOFF(Options{Release: r, Triple: triple}, []Binary{b})
			if err != nil {
				t.Fatal(err)
			}
			cs = append(cs, coffComparison{fmt.Sprintf("llvm%d/%s/openmp", major, triple), theirs, writeCOFF(t, o)})
		}
	}
	compareCOFF(t, cs)
}

// sentinelModule changes LLVM 22's COFF wrapper module as llvm-project
// #215390 (main, August 2026) changes it, as its regression test
// offload-wrapper-coff shows: __start_ and __stop_ one zeroed entry each,
// aligned 8, and every pointer to the first entry one entry after
// __start_ (seen in HIP's loop; for OpenMP's __tgt_device_image and
// __tgt_bin_desc inferred).
func sentinelModule(t *testing.T, ir string) string {
	t.Helper()
	const entry = "%struct.__tgt_offload_entry"
	n := 0
	var out []string
	for _, l := range strings.SplitAfter(ir, "\n") {
		if strings.HasPrefix(l, "@__start_") || strings.HasPrefix(l, "@__stop_") {
			l = strings.Replace(l, "[0 x "+entry+"] zeroinitializer", "[1 x "+entry+"] zeroinitializer", 1)
			l = strings.Replace(l, "\"\n", "\", align 8\n", 1)
			n++
		} else {
			l = strings.ReplaceAll(l, "ptr @__start_llvm_offload_entries,",
				"ptr getelementptr inbounds ([1 x "+entry+"], ptr @__start_llvm_offload_entries, i32 0, i32 1),")
		}
		out = append(out, l)
	}
	if n != 2 {
		t.Fatalf("the module has %d bounds, not 2:\n%s", n, ir)
	}
	return strings.Join(out, "")
}
