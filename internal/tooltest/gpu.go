package tooltest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// GPUProgram is a CUDA or HIP program that clang linked with the new
// offloading driver, and what its clang-linker-wrapper left (-Wl,--save-temps).
type GPUProgram struct {
	Dir     string // the folder of all of it
	Object  string // the host object of the kernels (k.o)
	Program string // the program clang linked
	Fatbin  string // the fatbin the wrapper embedded (prog.fatbin, prog.hipfb)
	Image   string // HIP: the linked AMDGPU code object in the fatbin
	Wrapper string // the wrapper's registration object
}

// BuildGPUProgram compiles src/k.cu (kind "cuda") or src/k.hip (kind "hip")
// with clang of release major, -fgpu-rdc --offload-new-driver, for sm_70 or
// gfx90a, and links the host object with src/main.c and src/runtime.c (a
// stand-in of the registration API) into dir/prog, with the flags the
// runtime's call log needs (-rdynamic -ldl). CUDA runs against stand-ins of
// NVIDIA's tools ([CUDAStandIns]); HIP against the real ld.lld and
// clang-offload-bundler of the release. A missing tool ends the test as
// [Tool] does.
func BuildGPUProgram(t testing.TB, major int, kind, src, dir string) GPUProgram {
	t.Helper()
	if runtime.GOOS != "linux" {
		Missing(t, "GPU programs are linked for Linux")
	}
	clang := Tool(t, "clang", major)
	src, err := filepath.Abs(src)
	if err != nil {
		t.Fatal(err)
	}
	p := GPUProgram{Dir: dir, Object: filepath.Join(dir, "k.o"), Program: filepath.Join(dir, "prog")}
	var compile, link []string
	switch kind {
	case "cuda":
		cuda := CUDAStandIns(t, filepath.Join(dir, "cuda"))
		compile = []string{"-x", "cuda", "--cuda-path=" + cuda, "--offload-arch=sm_70", "-nocudainc", "-nocudalib", filepath.Join(src, "k.cu")}
		link = []string{"--cuda-path=" + cuda, "-nocudalib"}
		p.Fatbin = p.Program + ".fatbin"
	case "hip":
		Tool(t, "ld.lld", major)
		Tool(t, "clang-offload-bundler", major)
		compile = []string{"-x", "hip", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", filepath.Join(src, "k.hip")}
		link = []string{"-fgpu-rdc", "--offload-arch=gfx90a", "-nogpulib"}
		p.Fatbin = p.Program + ".hipfb"
		p.Image = p.Program + ".amdgcn.gfx90a.img"
	default:
		t.Fatalf("BuildGPUProgram: kind %q: want cuda or hip", kind)
	}
	p.Wrapper = p.Program + "." + kind + ".image.wrapper.o"
	env := append(os.Environ(), "PATH="+filepath.Join(dir, "cuda", "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(clang, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %q: %v\n%s", clang, args, err, out)
		}
	}
	run(append(compile, "-fgpu-rdc", "--offload-new-driver", "-c", "-o", p.Object)...)
	run(append(link, "--offload-new-driver", p.Object, filepath.Join(src, "main.c"), filepath.Join(src, "runtime.c"),
		"-rdynamic", "-ldl", "-Wl,--save-temps", "-o", p.Program)...)
	return p
}

// CUDAStandIns makes a CUDA installation of stand-ins in dir for clang's
// --cuda-path, and returns dir: include/cuda.h gives the version (11.8),
// bin/ptxas writes an empty ELF object of the host (clang-nvlink-wrapper reads
// its inputs as ELF), bin/nvlink a marker, and bin/fatbinary the 20-byte
// [CUDAFatbinary] (the CUDA wrapper objects in offload/testdata/llvm/wrapper
// have "FAKEFATBIN-fatbinary", which is no fatbinary).
func CUDAStandIns(t testing.TB, dir string) string {
	t.Helper()
	if _, err := exec.LookPath("cc"); err != nil {
		Missing(t, "no C compiler cc (the stand-in ptxas makes its ELF objects with it)")
	}
	files := map[string]string{
		"include/cuda.h": "#define CUDA_VERSION 11080\n",
		"bin/ptxas": `#!/bin/sh
out=""
while [ $# -gt 0 ]; do case "$1" in -o|--output-file) out="$2"; shift;; esac; shift; done
exec cc -c -x c /dev/null -o "$out"
`,
		"bin/nvlink": `#!/bin/sh
out=""
while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift;; esac; shift; done
printf FAKECUBIN > "$out"
`,
		"bin/fatbinary": `#!/bin/sh
out=""
for a in "$@"; do case "$a" in --create=*) out="${a#--create=}";; esac; done
if [ -z "$out" ]; then while [ $# -gt 0 ]; do case "$1" in --create) out="$2"; shift;; esac; shift; done; fi
` + shPrintf(CUDAFatbinary()) + ` > "$out"
`,
	}
	for _, sub := range []string{"bin", "include", "lib64", "nvvm/libdevice"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
