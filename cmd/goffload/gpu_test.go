package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// runLog runs a program linked against testdata/gpu/runtime.c and returns
// what it printed: every registration call with its arguments.
func runLog(t *testing.T, exe string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(exe)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s%s", exe, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestGPUWrapperRegistersAsClangs is the differential run of CUDA and HIP
// wrapping: a host object that clang 19 or 22 compiled with -fgpu-rdc
// --offload-new-driver (kernels, a variable, a constant array, a managed
// variable for HIP, a texture and a surface) is linked twice against a stand-in
// of the registration API that logs every call: by clang, whose
// clang-linker-wrapper makes the registration object (HIP with the real
// lld and clang-offload-bundler, CUDA with stand-ins of NVIDIA's tools), and
// by cc with the object of `goffload wrap --kind cuda|hip` of the fatbin
// clang made. The two programs must print the same. For HIP, wrapping the
// device image itself (--image gfx90a=..., or an OffloadBinary holding it)
// must give the object that wrapping clang's fatbin gives, byte for byte: our
// bundle is clang-offload-bundler's.
func TestGPUWrapperRegistersAsClangs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	cc, err := exec.LookPath("cc")
	if err != nil {
		tooltest.Missing(t, "no C compiler cc")
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "wrap", "testdata", "gpu"))
	if err != nil {
		t.Fatal(err)
	}
	for _, major := range []int{19, 22} {
		for _, kind := range []string{"cuda", "hip"} {
			t.Run(fmt.Sprintf("%s-llvm%d", kind, major), func(t *testing.T) {
				dir := t.TempDir()
				p := tooltest.BuildGPUProgram(t, major, kind, src, dir)
				want := runLog(t, p.Program)
				runtime, main := filepath.Join(src, "runtime.c"), filepath.Join(src, "main.c")

				ours := filepath.Join(dir, "ours.o")
				if _, stderr, code := cli(t, "wrap", "--kind", kind, "--llvm", fmt.Sprint(major), "-o", ours, p.Fatbin); code != 0 {
					t.Fatalf("goffload wrap: exit %d: %s", code, stderr)
				}
				runCmd(t, dir, cc, "k.o", "ours.o", main, runtime, "-rdynamic", "-ldl", "-o", "ours")
				assertCheckPasses(t, p.Program, filepath.Join(dir, "ours"))
				got := runLog(t, filepath.Join(dir, "ours"))
				if got != want {
					t.Errorf("registration with goffload's wrapper:\n%s\nwith clang-linker-wrapper's:\n%s", got, want)
				}
				for _, call := range []string{"RegisterFatBinary(", "RegisterFunction(<handle>, ", "RegisterVar(<handle>, dvar, dvar, dvar, 0, 4, 0, 0)", "UnregisterFatBinary(<handle>)"} {
					if !strings.Contains(want, "__"+kind+call) {
						t.Errorf("the log does not show __%s%s:\n%s", kind, call, want)
					}
				}
				if kind != "hip" {
					return
				}
				fromImage := filepath.Join(dir, "image.o")
				if _, stderr, code := cli(t, "wrap", "--kind", "hip", "--llvm", fmt.Sprint(major), "-o", fromImage, "--image", "gfx90a="+p.Image); code != 0 {
					t.Fatalf("goffload wrap --image: exit %d: %s", code, stderr)
				}
				// And from an OffloadBinary holding the image, as the linker
				// wrapper's device link leaves it.
				bin, fromBinary := filepath.Join(dir, "image.bin"), filepath.Join(dir, "binary.o")
				if _, stderr, code := cli(t, "package", "--llvm", fmt.Sprint(major), "-o", bin, "--image", "file="+p.Image+",triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip"); code != 0 {
					t.Fatalf("goffload package: exit %d: %s", code, stderr)
				}
				if _, stderr, code := cli(t, "wrap", "--kind", "hip", "--llvm", fmt.Sprint(major), "-o", fromBinary, bin); code != 0 {
					t.Fatalf("goffload wrap of a binary: exit %d: %s", code, stderr)
				}
				a, _ := os.ReadFile(ours)
				for _, other := range []string{fromImage, fromBinary} {
					if b, _ := os.ReadFile(other); !bytes.Equal(a, b) {
						t.Errorf("wrapping %s gives another object than wrapping clang's fatbin of it", filepath.Base(other))
					}
				}
				seeInsideHIPFatbin(t, major, dir, p.Image)
			})
		}
	}
}

// seeInsideHIPFatbin checks that list and extract see the code object img
// inside the .hip_fatbin of ours.o (made by the caller), and inside that of
// a wrapper of a compressed fatbin made by clang-offload-bundler -compress.
func seeInsideHIPFatbin(t *testing.T, major int, dir, img string) {
	t.Helper()
	want, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	runCmd(t, dir, tooltest.Tool(t, "clang-offload-bundler", major), "-type=o", "-bundle-align=4096", "-compress",
		"-targets=host-x86_64-unknown-linux-gnu,hip-amdgcn-amd-amdhsa--gfx90a", "-input=/dev/null", "-input="+img, "-output=comp.hipfb")
	comp := filepath.Join(dir, "comp.o")
	if _, stderr, code := cli(t, "wrap", "--kind", "hip", "--llvm", fmt.Sprint(major), "-o", comp, filepath.Join(dir, "comp.hipfb")); code != 0 {
		t.Fatalf("goffload wrap of a compressed fatbin: exit %d: %s", code, stderr)
	}
	for obj, how := range map[string]string{"ours": "(uncompressed):", "comp": "(zstd, compressed bundle version "} {
		path := filepath.Join(dir, obj+".o")
		stdout, stderr, code := cli(t, "list", "--all", "--llvm", fmt.Sprint(major), path)
		entry := fmt.Sprintf("[1] hip-amdgcn-amd-amdhsa--gfx90a offset=4096 size=%d\n", len(want))
		if code != 0 || !strings.Contains(stdout, "OFFLOAD BUNDLE [.hip_fatbin at ") || !strings.Contains(stdout, how) || !strings.Contains(stdout, entry) {
			t.Errorf("list %s.o: exit %d, want %q and %q:\n%s%s", obj, code, how, entry, stdout, stderr)
		}
		out := t.TempDir()
		if _, stderr, code := cli(t, "extract", "--llvm", fmt.Sprint(major), "--raw", "--kind", "hip", "--arch", "gfx90a", "-o", out, path); code != 0 {
			t.Fatalf("extract %s.o: exit %d: %s", obj, code, stderr)
		}
		got, err := os.ReadFile(filepath.Join(out, obj+"-amdgcn-amd-amdhsa-gfx90a.0.o"))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("extract %s.o: the code object is not the image clang linked (%v)", obj, err)
		}
	}
	// Both objects merged: the section holds the two bundles, one after the
	// other, and list shows both.
	ld, err := exec.LookPath("ld")
	if err != nil {
		tooltest.Missing(t, "no linker ld")
	}
	runCmd(t, dir, ld, "-r", "ours.o", "comp.o", "-o", "two.o")
	stdout, stderr, code := cli(t, "list", "--all", "--llvm", fmt.Sprint(major), filepath.Join(dir, "two.o"))
	if n := strings.Count(stdout, "OFFLOAD BUNDLE [.hip_fatbin at "); code != 0 || n != 2 {
		t.Errorf("list of two wrappers merged by ld -r: exit %d, %d bundles, want 2:\n%s%s", code, n, stdout, stderr)
	}
}
