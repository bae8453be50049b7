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

	"github.com/goffload/goffload/internal/stubs"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
)

// TestGPUMatchesLinkerWrapper wraps the fatbin of clang-linker-wrapper's own
// CUDA and HIP wrapper objects (LLVM 19 and 22, x86-64) with the same release
// and compares the objects.
func TestGPUMatchesLinkerWrapper(t *testing.T) {
	for _, c := range []struct {
		kind    offload.OffloadKind
		name    string
		section string
	}{{offload.OffloadCUDA, "cuda", ".nv_fatbin"}, {offload.OffloadHIP, "hip", ".hip_fatbin"}} {
		for _, major := range []int{19, 22} {
			t.Run(fmt.Sprintf("%s/llvm%d", c.name, major), func(t *testing.T) {
				data, err := os.ReadFile(filepath.Join("..", "offload", "testdata", "llvm", "wrapper", fmt.Sprintf("%s-wrapper-llvm%d.o", c.name, major)))
				if err != nil {
					t.Fatal(err)
				}
				if c.kind == offload.OffloadCUDA {
					data = realFatbinary(t, data)
				}
				theirs := readObject(t, data)
				fb, err := theirs.Section(c.section).Data()
				if err != nil {
					t.Fatal(err)
				}
				o, err := GPU(Options{Release: release(t, major), Triple: "x86_64-unknown-linux-gnu"}, c.kind, io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb))))
				if err != nil {
					t.Fatal(err)
				}
				compareViews(t, view(t, theirs), view(t, readObject(t, writeObject(t, o))), nil)
			})
		}
	}
}

// realFatbinary returns the object of a CUDA fixture with the stand-in
// "FAKEFATBIN-fatbinary" that the CUDA wrapper objects in
// offload/testdata/llvm/wrapper hold, which is no fatbinary, replaced by
// tooltest.CUDAFatbinary, as long and so aligned alike. clang-linker-wrapper
// copies the fatbinary into .nv_fatbin as it is
// (TestGPUMatchesFreshLinkerWrapper runs it on the real header), so its object
// of the real header differs in those bytes only.
func realFatbinary(t *testing.T, obj []byte) []byte {
	t.Helper()
	fake := []byte("FAKEFATBIN-fatbinary")
	if bytes.Count(obj, fake) != 1 {
		t.Fatalf("the fixture holds the stand-in fatbinary %d times", bytes.Count(obj, fake))
	}
	return bytes.Replace(obj, fake, tooltest.CUDAFatbinary(), 1)
}

// TestGPUMatchesFreshLinkerWrapper makes CUDA and HIP programs with clang 19
// and 22 (kernels, variables, a managed variable, a texture and a surface;
// HIP device code linked by the real lld and bundled by the real
// clang-offload-bundler, CUDA by stand-ins of NVIDIA's tools) and compares
// the registration object their clang-linker-wrapper made with ours of the
// same fatbin.
func TestGPUMatchesFreshLinkerWrapper(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and links programs")
	}
	kinds := map[string]offload.OffloadKind{"cuda": offload.OffloadCUDA, "hip": offload.OffloadHIP}
	for _, major := range []int{19, 22} {
		for _, name := range []string{"cuda", "hip"} {
			t.Run(fmt.Sprintf("%s/llvm%d", name, major), func(t *testing.T) {
				p := tooltest.BuildGPUProgram(t, major, name, filepath.Join("testdata", "gpu"), t.TempDir())
				theirs, err := os.ReadFile(p.Wrapper)
				if err != nil {
					t.Fatal(err)
				}
				fb, err := os.ReadFile(p.Fatbin)
				if err != nil {
					t.Fatal(err)
				}
				o, err := GPU(Options{Release: release(t, major), Triple: "x86_64-unknown-linux-gnu"}, kinds[name], io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb))))
				if err != nil {
					t.Fatal(err)
				}
				compareViews(t, view(t, readObject(t, theirs)), view(t, readObject(t, writeObject(t, o))), nil)
			})
		}
	}
}

// TestGPUMatchesLLC compares the CUDA and HIP wrappers of LLVM 19 and 22 on
// AArch64 (and x86-64) with what llc of the same release makes of the
// wrapper module.
func TestGPUMatchesLLC(t *testing.T) {
	for _, major := range []int{19, 22} {
		llc := tooltest.Tool(t, "llc", major)
		for _, triple := range []string{"aarch64-unknown-linux-gnu", "x86_64-unknown-linux-gnu"} {
			for _, c := range []struct {
				kind  offload.OffloadKind
				stub  stubs.GPUKind
				image string
			}{{offload.OffloadCUDA, stubs.CUDA, string(tooltest.CUDAFatbinary())}, {offload.OffloadHIP, stubs.HIP, string(tooltest.HIPFatbin())}} {
				t.Run(fmt.Sprintf("%s/%v/llvm%d", triple, c.kind, major), func(t *testing.T) {
					dir := t.TempDir()
					ll := filepath.Join(dir, "w.ll")
					if err := os.WriteFile(ll, []byte(stubs.GPUModuleIR(major, c.stub, c.image)), 0o644); err != nil {
						t.Fatal(err)
					}
					obj := filepath.Join(dir, "w.o")
					if msg, err := exec.Command(llc, "-mtriple="+triple, "-relocation-model=pic", "-filetype=obj", ll, "-o", obj).CombinedOutput(); err != nil {
						t.Fatalf("%v\n%s", err, msg)
					}
					data, _ := os.ReadFile(obj)
					o, err := GPU(Options{Release: release(t, major), Triple: triple}, c.kind, io.NewSectionReader(strings.NewReader(c.image), 0, int64(len(c.image))))
					if err != nil {
						t.Fatal(err)
					}
					compareViews(t, view(t, readObject(t, data)), view(t, readObject(t, writeObject(t, o))), nil)
				})
			}
		}
	}
}
