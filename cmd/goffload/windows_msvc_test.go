package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestWindowsMSVCProgramsRun links a HIP program (-fgpu-rdc) and an
// OpenMP one for an MSVC host (x86_64-pc-windows-msvc) through clang-22
// -B, whose MSVC toolchain gives the wrapper lld-link's command line
// (-out:, -libpath:, NAME.lib, /Brepro), once with clang-linker-wrapper-22
// and once with goffload as the wrapper, and wants the same PE bytes
// (/Brepro: no time stamp). Debian has no Microsoft C runtime: the programs
// are linked -nostdlib with a start of their own (testdata/windows/start.c)
// against import libraries that llvm-lib-22 makes from .def files, for
// wine's msvcrt.dll and for stand-ins of amdhip64.dll and omptarget.dll
// (MinGW gcc builds them), which log every registration call. Both
// programs then run under wine and log the registration of their device
// code.
func TestWindowsMSVCProgramsRun(t *testing.T) {
	t.Parallel() // wine's runs, beside the package's other tests
	exe := goffloadExe(t)
	clang := tooltest.Tool(t, "clang", 22)
	clw := tooltest.Tool(t, "clang-linker-wrapper", 22)
	lib := tooltest.Tool(t, "llvm-lib", 22)
	tooltest.Tool(t, "lld-link", 22)
	readobj := tooltest.Tool(t, "llvm-readobj", 22)
	gcc := tooltest.Program(t, "x86_64-w64-mingw32-gcc")
	wine := tooltest.Program(t, "wine")
	const triple = "x86_64-pc-windows-msvc"
	dir := t.TempDir()
	run := func(t *testing.T, name string, args ...string) []byte {
		t.Helper()
		return []byte(runCmdOut(t, dir, name, args...))
	}
	src, _ := filepath.Abs(filepath.Join("testdata", "windows"))
	importLib := func(dll string, exports ...string) {
		t.Helper()
		def := filepath.Join(dir, dll+".def")
		if err := os.WriteFile(def, []byte("LIBRARY "+dll+".dll\nEXPORTS\n"+strings.Join(exports, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, lib, "/def:"+def, "/machine:x64", "/out:"+filepath.Join(dir, dll+".lib"))
	}
	importLib("msvcrt", "printf", "atexit", "exit")
	importLib("amdhip64", "__hipRegisterFatBinary", "__hipUnregisterFatBinary", "__hipRegisterFunction", "__hipRegisterVar",
		"__hipRegisterManagedVar", "__hipRegisterSurface", "__hipRegisterTexture", "__hipPushCallConfiguration",
		"__hipPopCallConfiguration", "hipLaunchKernel")
	importLib("omptarget", "__tgt_register_lib", "__tgt_unregister_lib", "__tgt_target_kernel")
	// clang -fopenmp names libomp.lib (-defaultlib:libomp.lib), which
	// lld-link must find; the program calls nothing of it.
	importLib("libomp", "omp_get_num_devices")
	run(t, gcc, "-shared", "-o", "amdhip64.dll", filepath.Join(src, "amdhip64.c"))
	run(t, gcc, "-shared", "-o", "omptarget.dll", filepath.Join(src, "omptarget.c"))
	win := []string{"--target=" + triple, "-nogpulib"}
	run(t, clang, append(win, "-fms-extensions", "-O1", "-c", filepath.Join(src, "start.c"), "-o", "start.o")...)
	hip := append(win, "--offload-new-driver", "--offload-arch=gfx90a", "-fgpu-rdc")
	rel := filepath.Join("testdata", "windows")
	compiled(t, "clang", 22, "", append(hip, "-x", "hip", "-nogpuinc", "-c", filepath.Join(rel, "prog.hip"), "-o", filepath.Join(dir, "prog.o")), filepath.Join(dir, "prog.o"))
	omp := append(win, "-fopenmp", "--offload-arch=gfx90a")
	compiled(t, "clang", 22, "", append(omp, "-nogpuinc", "-c", filepath.Join(rel, "omp.c"), "-o", filepath.Join(dir, "omp.o")), filepath.Join(dir, "omp.o"))
	link := []string{"-fuse-ld=lld", "-nostdlib", "-L.", "-lmsvcrt", "-Wl,-entry:start", "-Wl,/Brepro"}
	programs := []struct {
		name string
		args []string
		want []string
	}{
		{"hip", append(append(hip, "--hip-link", "prog.o", "start.o", "-lamdhip64"), link...),
			[]string{"__hipRegisterFatBinary PTR\n", "__hipRegisterFunction _Z4kernPi\n", "__hipRegisterFunction plain\n",
				"__hipRegisterVar table 256\n", "__hipRegisterManagedVar shared_flag\n", "__hipUnregisterFatBinary\n"}},
		// The device runtime (-nogpulib) is not needed to register the
		// image: the device link leaves its symbols undefined.
		{"openmp", append(append(omp, "omp.o", "start.o", "-lomptarget", "-Xoffload-linker", "--unresolved-symbols=ignore-all"), link...),
			[]string{"__tgt_register_lib images 1 entries 2\n", "entry dev_counter size 4\n", "__tgt_target_kernel\n", "x 4\n",
				"__tgt_unregister_lib images 1\n"}},
	}
	wrapperBins(t, dir, clw, exe)
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			pe := map[string][]byte{}
			for _, w := range []string{"theirs", "ours"} {
				out := p.name + "-" + w + ".exe"
				run(t, clang, append(p.args, "-B", filepath.Join(dir, w+"-bin"), "-o", out)...)
				b, err := os.ReadFile(filepath.Join(dir, out))
				if err != nil {
					t.Fatal(err)
				}
				pe[w] = b
			}
			if !bytes.Equal(pe["ours"], pe["theirs"]) {
				view := func(w string) string {
					return string(run(t, readobj, "--file-headers", "--sections", "--symbols", p.name+"-"+w+".exe"))
				}
				t.Errorf("linked with goffload as the wrapper: %d bytes, not clang-linker-wrapper-22's %d\nLLVM\n%s\nours\n%s",
					len(pe["ours"]), len(pe["theirs"]), view("theirs"), view("ours"))
			}
			// The same bytes run the same: goffload's program runs under
			// wine where it differs from LLVM's, and in the exhaustive run.
			runs := []string{"theirs", "ours"}
			if bytes.Equal(pe["ours"], pe["theirs"]) && !tooltest.Exhaustive() {
				runs = runs[:1]
			}
			logs := map[string]string{}
			for _, w := range runs {
				logs[w] = runWine(t, wine, dir, p.name+"-"+w+".exe")
			}
			t.Logf("the program linked by clang-linker-wrapper-22 logs:\n%s", logs["theirs"])
			for _, want := range p.want {
				if !strings.Contains(logs["theirs"], want) {
					t.Errorf("clang-linker-wrapper-22's program does not log %q", want)
				}
			}
			if len(runs) == 2 && logs["ours"] != logs["theirs"] {
				t.Errorf("goffload's program logs\n%s\nclang-linker-wrapper-22's\n%s", logs["ours"], logs["theirs"])
			}
		})
	}
}
