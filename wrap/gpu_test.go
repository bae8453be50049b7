package wrap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/wrap/internal/stubs"
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
				o, err := GPU(Options{Release: lookupRelease(t, major), Triple: "x86_64-unknown-linux-gnu"}, c.kind, io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb))))
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

// freshGPUWrapper compiles testdata/gpu/k.cu (kind "cuda") or k.hip (kind
// "hip") with clang of release major as tooltest.BuildGPUProgram does
// (-fgpu-rdc --offload-new-driver, sm_70 or gfx90a; CUDA against
// tooltest.CUDAStandIns, HIP against the real ld.lld and
// clang-offload-bundler) and links the object with clang, and returns the
// registration object that its clang-linker-wrapper made (--save-temps)
// and the fatbin it embedded, built once per test binary. The host linker
// is linkShared, and the program is the kernels' object alone (not
// main.c and runtime.c): only the registration object is compared.
func freshGPUWrapper(t testing.TB, major int, kind string) (wrapper, fatbin string) {
	t.Helper()
	clang := tooltest.Tool(t, "clang", major)
	if kind == "hip" {
		tooltest.Tool(t, "ld.lld", major)
		tooltest.Tool(t, "clang-offload-bundler", major)
	}
	linker := linkShared(t)
	p := shared(t, fmt.Sprintf("%s wrapper of testdata/gpu by clang-%d", kind, major), func(t testing.TB, dir string) [2]string {
		src, err := filepath.Abs(filepath.Join("testdata", "gpu"))
		if err != nil {
			t.Fatal(err)
		}
		var compile, link []string
		fb := "prog.fatbin"
		switch kind {
		case "cuda":
			cuda := tooltest.CUDAStandIns(t, filepath.Join(dir, "cuda"))
			compile = []string{"-x", "cuda", "--cuda-path=" + cuda, "--offload-arch=sm_70", "-nocudainc", "-nocudalib", filepath.Join(src, "k.cu")}
			link = []string{"--cuda-path=" + cuda, "-nocudalib"}
		case "hip":
			compile = []string{"-x", "hip", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", filepath.Join(src, "k.hip")}
			link = []string{"-fgpu-rdc", "--offload-arch=gfx90a", "-nogpulib"}
			fb = "prog.hipfb"
		default:
			t.Fatalf("freshGPUWrapper: kind %q: want cuda or hip", kind)
		}
		env := append(os.Environ(), "PATH="+filepath.Join(dir, "cuda", "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
		for _, args := range [][]string{
			append(compile, "-fgpu-rdc", "--offload-new-driver", "-c", "-o", "k.o"),
			append(link, "--offload-new-driver", "k.o", "-Wl,--save-temps", "--ld-path="+linker, "-o", "prog"),
		} {
			cmd := exec.Command(clang, args...)
			cmd.Dir, cmd.Env = dir, env
			runCmd(t, cmd)
		}
		return [2]string{filepath.Join(dir, "prog."+kind+".image.wrapper.o"), filepath.Join(dir, fb)}
	})
	return p[0], p[1]
}

// TestGPUMatchesFreshLinkerWrapper makes CUDA and HIP programs with clang 19
// and 22 (kernels, variables, a managed variable, a texture and a surface;
// HIP device code linked by the real lld and bundled by the real
// clang-offload-bundler, CUDA by stand-ins of NVIDIA's tools: see
// freshGPUWrapper) and compares the registration object their
// clang-linker-wrapper made with ours of the same fatbin. The default run
// builds CUDA with clang 19 and HIP with clang 22 (tooltest.Sample of the
// releases × kinds), so that each release and each kind is built once;
// TestGPUMatchesLinkerWrapper compares all four with clang-linker-wrapper's
// objects in the fixtures.
func TestGPUMatchesFreshLinkerWrapper(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and links programs")
	}
	t.Parallel()
	kinds := map[string]offload.OffloadKind{"cuda": offload.OffloadCUDA, "hip": offload.OffloadHIP}
	majors, names := []int{19, 22}, []string{"cuda", "hip"}
	for i, major := range majors {
		for j, name := range names {
			t.Run(fmt.Sprintf("%s/llvm%d", name, major), func(t *testing.T) {
				tooltest.Sample(t, i, j, len(majors), len(names))
				t.Parallel()
				wrapper, fatbin := freshGPUWrapper(t, major, name)
				theirs, err := os.ReadFile(wrapper)
				if err != nil {
					t.Fatal(err)
				}
				fb, err := os.ReadFile(fatbin)
				if err != nil {
					t.Fatal(err)
				}
				o, err := GPU(Options{Release: lookupRelease(t, major), Triple: "x86_64-unknown-linux-gnu"}, kinds[name], io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb))))
				if err != nil {
					t.Fatal(err)
				}
				compareViews(t, view(t, readObject(t, theirs)), view(t, readObject(t, writeObject(t, o))), nil)
			})
		}
	}
}

// gpuLLCCases are the host machines and kinds of TestGPUMatchesLLC, in the
// order of its sample: each release's two cells hold both machines and
// both kinds.
var gpuLLCCases = []struct {
	triple string
	kind   offload.OffloadKind
	stub   stubs.GPUKind
	image  string
}{
	{"aarch64-unknown-linux-gnu", offload.OffloadCUDA, stubs.CUDA, string(tooltest.CUDAFatbinary())},
	{"aarch64-unknown-linux-gnu", offload.OffloadHIP, stubs.HIP, string(tooltest.HIPFatbin())},
	{"x86_64-unknown-linux-gnu", offload.OffloadHIP, stubs.HIP, string(tooltest.HIPFatbin())},
	{"x86_64-unknown-linux-gnu", offload.OffloadCUDA, stubs.CUDA, string(tooltest.CUDAFatbinary())},
}

// TestGPUMatchesLLC compares the CUDA and HIP wrappers of LLVM 19 and 22 on
// AArch64 (and x86-64) with what llc of the same release makes of the
// wrapper module. The default run compares 4 of the 8 (tooltest.Sample of
// releases × gpuLLCCases): each release on both machines and with both
// kinds, each machine and kind with both releases.
func TestGPUMatchesLLC(t *testing.T) {
	t.Parallel()
	majors := []int{19, 22}
	for i, major := range majors {
		llc := tooltest.Tool(t, "llc", major)
		for j, c := range gpuLLCCases {
			t.Run(fmt.Sprintf("%s/%v/llvm%d", c.triple, c.kind, major), func(t *testing.T) {
				tooltest.Sample(t, i, j, len(majors), len(gpuLLCCases))
				obj := compileLLC(t, llc, stubs.GPUModuleIR(major, c.stub, c.image), "-mtriple="+c.triple, "-relocation-model=pic", "-filetype=obj")
				data, err := os.ReadFile(obj)
				if err != nil {
					t.Fatal(err)
				}
				o, err := GPU(Options{Release: lookupRelease(t, major), Triple: c.triple}, c.kind, io.NewSectionReader(strings.NewReader(c.image), 0, int64(len(c.image))))
				if err != nil {
					t.Fatal(err)
				}
				compareViews(t, view(t, readObject(t, data)), view(t, readObject(t, writeObject(t, o))), nil)
			})
		}
	}
}

// TestGPUMatchesNVIDIAFixture wraps the fatbin that NVIDIA's fatbinary
// made in clang-linker-wrapper 22's own link of a CUDA -fgpu-rdc program
// (offload/testdata/nvidia/cuda-llvm22/link-rdc): the object is the one
// that link made of it, byte for byte. Where not, it says which sections
// differ, in their headers, their bytes or their places in the file.
func TestGPUMatchesNVIDIAFixture(t *testing.T) {
	dir := filepath.Join("..", "offload", "testdata", "nvidia", "cuda-llvm22", "link-rdc")
	fb, err := os.ReadFile(filepath.Join(dir, "rdc.fatbin"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "rdc.cuda.image.wrapper.o"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := GPU(Options{Release: lookupRelease(t, 22), Triple: "x86_64-unknown-linux-gnu"}, offload.OffloadCUDA, io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb))))
	if err != nil {
		t.Fatal(err)
	}
	got := writeObject(t, o)
	if bytes.Equal(got, want) {
		return
	}
	t.Errorf("%d bytes, not the %d of clang-linker-wrapper 22's object", len(got), len(want))
	if !bytes.Equal(got[:0x40], want[:0x40]) {
		t.Errorf("ELF headers differ:\n%x\n%x", got[:0x40], want[:0x40])
	}
	a, b := elfSections(t, got), elfSections(t, want)
	if len(a) != len(b) {
		t.Fatalf("%d sections, clang-linker-wrapper 22's %d", len(a), len(b))
	}
	for i := range a {
		if a[i].header != b[i].header {
			t.Errorf("section %d: header %x, clang-linker-wrapper 22's %x", i, a[i].header, b[i].header)
		}
		if !bytes.Equal(a[i].data, b[i].data) {
			t.Errorf("section %d (%d bytes): not the bytes of clang-linker-wrapper 22's", i, len(a[i].data))
		}
		if a[i].offset != b[i].offset {
			t.Errorf("section %d at %#x, clang-linker-wrapper 22's at %#x", i, a[i].offset, b[i].offset)
		}
	}
}

// elfSection is a section of an ELF64 little-endian object: its header but
// sh_offset, the offset, and its bytes (none for SHT_NOBITS).
type elfSection struct {
	header [56]byte
	offset uint64
	data   []byte
}

func elfSections(t *testing.T, b []byte) []elfSection {
	t.Helper()
	if len(b) < 64 {
		t.Fatalf("%d bytes: no ELF header", len(b))
	}
	le := binary.LittleEndian
	shoff, shnum := le.Uint64(b[0x28:]), int(le.Uint16(b[0x3c:]))
	if shoff+uint64(shnum)*64 > uint64(len(b)) {
		t.Fatalf("section headers at %#x past the end", shoff)
	}
	var out []elfSection
	for i := range shnum {
		h := b[shoff+uint64(i)*64:][:64]
		var s elfSection
		copy(s.header[:24], h[:24])
		copy(s.header[24:], h[32:])
		s.offset = le.Uint64(h[24:])
		size := le.Uint64(h[32:])
		if typ := le.Uint32(h[4:]); typ != 8 && i > 0 { // SHT_NOBITS
			if s.offset+size > uint64(len(b)) {
				t.Fatalf("section %d past the end", i)
			}
			s.data = b[s.offset : s.offset+size]
		}
		out = append(out, s)
	}
	return out
}
