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
	"github.com/goffload/goffload/internal/stubs"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
)

var winTriples = []string{"x86_64-pc-windows-msvc", "x86_64-w64-windows-gnu"}

// readobjCOFF is llvm-readobj-22's view of a COFF object: headers, sections
// with their bytes, relocations, symbols with their aux records, unwind
// information and directives; everything but the file's name.
func readobjCOFF(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command(tooltest.Tool(t, "llvm-readobj", 22), "--file-headers", "--sections", "--section-data", "--relocations",
		"--symbols", "--unwind", "--coff-directives", path).CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-readobj: %v\n%s", err, out)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "File: ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// compareCOFF reports the lines where llvm-readobj-22 sees ours differently
// from theirs.
func compareCOFF(t *testing.T, theirs string, o *coffobj.Object) {
	t.Helper()
	ours := filepath.Join(t.TempDir(), "ours.o")
	var buf bytes.Buffer
	if _, err := coffobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ours, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want, got := readobjCOFF(t, theirs), readobjCOFF(t, ours)
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
}

// winLinkerWrapper compiles src for host triple with clang-22 (args) and
// runs clang-linker-wrapper-22 --save-temps on the object, returning its
// directory: the registration object is *.image.wrapper.o there.
func winLinkerWrapper(t *testing.T, triple, src string, compile []string, wrapper ...string) string {
	t.Helper()
	clang := tooltest.Tool(t, "clang", 22)
	clw := tooltest.Tool(t, "clang-linker-wrapper", 22)
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no `true` to stand in for the host linker")
	}
	dir := t.TempDir()
	abs, _ := filepath.Abs(src)
	args := append([]string{"--target=" + triple}, compile...)
	args = append(args, "-c", abs, "-o", filepath.Join(dir, "in.o"))
	if msg, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		t.Fatalf("clang %q: %v\n%s", args, err, msg)
	}
	args = append([]string{"--host-triple=" + triple, "--linker-path=" + trueBin, "--save-temps", "-o", "a.exe"}, wrapper...)
	cmd := exec.Command(clw, append(args, "in.o")...)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("clang-linker-wrapper %q: %v\n%s", args, err, msg)
	}
	return dir
}

// TestCOFFMatchesLinkerWrapper has clang-linker-wrapper-22 wrap a HIP
// program (kernels, a template kernel, device variables, a managed
// variable; -fgpu-rdc) and an OpenMP one for both Windows hosts and
// compares its registration objects with ours of the same fatbin and
// binary, as llvm-readobj-22 prints them.
func TestCOFFMatchesLinkerWrapper(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and device-links programs")
	}
	r := release(t, 22)
	for _, triple := range winTriples {
		t.Run(triple+"/hip", func(t *testing.T) {
			dir := winLinkerWrapper(t, triple, filepath.Join("testdata", "win", "prog.hip"),
				[]string{"-x", "hip", "--offload-new-driver", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-fgpu-rdc"},
				"--should-extract=gfx90a", "--device-compiler=amdgcn-amd-amdhsa=-flto-partitions=8")
			fb, err := os.ReadFile(filepath.Join(dir, "a.exe.hipfb"))
			if err != nil {
				t.Fatal(err)
			}
			o, err := GPUCOFF(Options{Release: r, Triple: triple}, offload.OffloadHIP, io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb))))
			if err != nil {
				t.Fatal(err)
			}
			compareCOFF(t, filepath.Join(dir, "a.exe.hip.image.wrapper.o"), o)
		})
		t.Run(triple+"/openmp", func(t *testing.T) {
			dir := winLinkerWrapper(t, triple, filepath.Join("testdata", "win", "omp.c"),
				[]string{"-fopenmp", "-fopenmp-targets=amdgcn-amd-amdhsa", "-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx90a", "-nogpulib", "-nogpuinc"},
				// The device runtime is not needed to see the wrapper.
				"--device-linker=amdgcn-amd-amdhsa=--unresolved-symbols=ignore-all")
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
			compareCOFF(t, theirs, o)
		})
	}
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

// TestCOFFMatchesLLC compares the CUDA and HIP objects for both Windows
// hosts with what llc-22 makes of clang-linker-wrapper-22's module for
// them (stubs.GPUModuleIRCOFF), for fatbins of 20 bytes (the stand-in
// fatbinary) and of the bundle the HIP tests use.
func TestCOFFMatchesLLC(t *testing.T) {
	llc := tooltest.Tool(t, "llc", 22)
	r := release(t, 22)
	for _, triple := range winTriples {
		for _, c := range []struct {
			kind  offload.OffloadKind
			stub  stubs.GPUKind
			image string
		}{{offload.OffloadCUDA, stubs.CUDA, string(tooltest.CUDAFatbinary())}, {offload.OffloadHIP, stubs.HIP, string(tooltest.HIPFatbin())}} {
			t.Run(fmt.Sprintf("%s/%v", triple, c.kind), func(t *testing.T) {
				dir := t.TempDir()
				ll := filepath.Join(dir, "w.ll")
				if err := os.WriteFile(ll, []byte(stubs.GPUModuleIRCOFF(22, c.stub, c.image)), 0o644); err != nil {
					t.Fatal(err)
				}
				obj := filepath.Join(dir, "w.o")
				if msg, err := exec.Command(llc, "-mtriple="+triple, "-filetype=obj", ll, "-o", obj).CombinedOutput(); err != nil {
					t.Fatalf("%v\n%s", err, msg)
				}
				o, err := GPUCOFF(Options{Release: r, Triple: triple}, c.kind, io.NewSectionReader(strings.NewReader(c.image), 0, int64(len(c.image))))
				if err != nil {
					t.Fatal(err)
				}
				compareCOFF(t, obj, o)
			})
		}
	}
}

// TestCOFFAfter22MatchesLLC compares the objects of 23 and 24 for both
// Windows hosts with what llc-22 makes of the modules their sources build
// (no LLVM 23 or 24 tool is at hand): for CUDA and HIP stubs.GPUModuleIRCOFF,
// for OpenMP clang-linker-wrapper-22's own module (its --save-temps
// bitcode) changed as main's #215390 changes it (sentinelModule). 23's
// objects are 22's.
func TestCOFFAfter22MatchesLLC(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and device-links a program")
	}
	llc := tooltest.Tool(t, "llc", 22)
	dis := tooltest.Tool(t, "llvm-dis", 22)
	compile := func(t *testing.T, triple, ir string) string {
		t.Helper()
		dir := t.TempDir()
		ll := filepath.Join(dir, "w.ll")
		if err := os.WriteFile(ll, []byte(ir), 0o644); err != nil {
			t.Fatal(err)
		}
		obj := filepath.Join(dir, "w.o")
		if msg, err := exec.Command(llc, "-mtriple="+triple, "-filetype=obj", ll, "-o", obj).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, msg)
		}
		return obj
	}
	for _, major := range []int{23, 24} {
		r := release(t, major)
		for _, triple := range winTriples {
			for _, c := range []struct {
				kind  offload.OffloadKind
				stub  stubs.GPUKind
				image string
			}{{offload.OffloadCUDA, stubs.CUDA, string(tooltest.CUDAFatbinary())}, {offload.OffloadHIP, stubs.HIP, string(tooltest.HIPFatbin())}} {
				t.Run(fmt.Sprintf("llvm%d/%s/%v", major, triple, c.kind), func(t *testing.T) {
					obj := compile(t, triple, stubs.GPUModuleIRCOFF(major, c.stub, c.image))
					o, err := GPUCOFF(Options{Release: r, Triple: triple}, c.kind, io.NewSectionReader(strings.NewReader(c.image), 0, int64(len(c.image))))
					if err != nil {
						t.Fatal(err)
					}
					compareCOFF(t, obj, o)
				})
			}
			t.Run(fmt.Sprintf("llvm%d/%s/openmp", major, triple), func(t *testing.T) {
				dir := winLinkerWrapper(t, triple, filepath.Join("testdata", "win", "omp.c"),
					[]string{"-fopenmp", "-fopenmp-targets=amdgcn-amd-amdhsa", "-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx90a", "-nogpulib", "-nogpuinc"},
					"--device-linker=amdgcn-amd-amdhsa=--unresolved-symbols=ignore-all")
				ir, err := exec.Command(dis, filepath.Join(dir, "a.exe.openmp.image.wrapper.bc"), "-o", "-").Output()
				if err != nil {
					t.Fatal(err)
				}
				module := string(ir)
				if major >= 24 {
					module = sentinelModule(t, module)
				}
				obj := compile(t, triple, module)
				bin := coffSection(t, filepath.Join(dir, "a.exe.openmp.image.wrapper.o"), ".llvm.offloading")
				b, err := FromBinary(bytes.NewReader(bin), int64(len(bin)))
				if err != nil {
					t.Fatal(err)
				}
				o, err := OpenMPCOFF(Options{Release: r, Triple: triple}, []Binary{b})
				if err != nil {
					t.Fatal(err)
				}
				compareCOFF(t, obj, o)
			})
		}
	}
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
