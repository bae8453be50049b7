package wrap

import (
	"bytes"
	"debug/macho"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/wrap/internal/stubs"
)

// machoTriples are the hosts of main's HIP-MACHO test and its arm64 twin.
var machoTriples = []string{"x86_64-apple-macosx10.15.0", "arm64-apple-macosx"}

// writeMachO writes o and returns the bytes.
func writeMachO(t *testing.T, o *machoobj.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := machoobj.Write(&b, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// llcMachO is llc-22's object of the IR ll for triple, as
// clang-linker-wrapper compiles its module (-relocation-model=pic).
func llcMachO(t *testing.T, triple, ll string) []byte {
	t.Helper()
	llc := tooltest.Tool(t, "llc", 22)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "m.ll"), filepath.Join(dir, "m.o")
	if err := os.WriteFile(in, []byte(ll), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(llc, "-mtriple="+triple, "-relocation-model=pic", "-filetype=obj", in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("llc-22: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGPUMachOMatchesLLC: the CUDA and HIP registration objects for a
// macOS host, x86-64 and arm64, are byte for byte what llc-22 makes of the
// wrapper module of LLVM main for that triple (the HIP-MACHO module of
// llvm-offload-wrapper's test, the CUDA one alike): sections, symbols,
// relocations, data-in-code records, linker optimization hints, compact
// unwind and __eh_frame; for a HIP fatbin and a CUDA fatbinary. (A
// fatbin of 16 bytes or less would be aligned 1, llc-22 says for both
// machines; no valid one is that small.)
func TestGPUMachOMatchesLLC(t *testing.T) {
	r := lookupRelease(t, 24)
	for _, triple := range machoTriples {
		for _, kind := range []offload.OffloadKind{offload.OffloadHIP, offload.OffloadCUDA} {
			fatbins := [][]byte{tooltest.HIPFatbin()}
			if kind == offload.OffloadCUDA {
				fatbins = [][]byte{tooltest.CUDAFatbinary()}
			}
			for _, fb := range fatbins {
				t.Run(triple+"/"+kind.String(), func(t *testing.T) {
					o, err := GPUMachO(Options{Release: r, Triple: triple}, kind, io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb))))
					if err != nil {
						t.Fatal(err)
					}
					got := writeMachO(t, o)
					gk := map[offload.OffloadKind]stubs.GPUKind{offload.OffloadHIP: stubs.HIP, offload.OffloadCUDA: stubs.CUDA}[kind]
					want := llcMachO(t, triple, stubs.GPUModuleIRMachO(r.Major, gk, string(fb)))
					if !bytes.Equal(got, want) {
						t.Fatalf("%d bytes, llc-22's %d; first difference at %#x", len(got), len(want), tooltest.FirstDiff(got, want))
					}
				})
			}
		}
	}
}

// TestGPUMachORefuses: releases without a Mach-O wrapper, hosts that are
// not Apple's or not x86-64 and arm64.
func TestGPUMachORefuses(t *testing.T) {
	fb := tooltest.HIPFatbin()
	data := io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb)))
	for _, c := range []struct {
		major  int
		triple string
	}{{22, "x86_64-apple-macosx10.15.0"}, {23, "arm64-apple-macos"}, {24, "x86_64-unknown-linux-gnu"}, {24, "armv7-apple-ios"}} {
		if _, err := GPUMachO(Options{Release: lookupRelease(t, c.major), Triple: c.triple}, offload.OffloadHIP, data); !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("LLVM %d, %s: %v, want ErrUnsupported", c.major, c.triple, err)
		}
	}
}

// TestGPUMachOLinks: ld64.lld-22 links the registration object with a host
// object clang-22 made for the same triple, and resolves the entries'
// bounds to the section of the entries: the dummy's byte and clang's
// entry of a kernel. Nothing here can run the program.
func TestGPUMachOLinks(t *testing.T) {
	ld := tooltest.Tool(t, "ld64.lld", 22)
	clang := tooltest.Tool(t, "clang", 22)
	r := lookupRelease(t, 24)
	fb := tooltest.HIPFatbin()
	for _, triple := range machoTriples {
		t.Run(triple, func(t *testing.T) {
			dir := t.TempDir()
			o, err := GPUMachO(Options{Release: r, Triple: triple}, offload.OffloadHIP, io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb))))
			if err != nil {
				t.Fatal(err)
			}
			wrapper := filepath.Join(dir, "wrapper.o")
			if err := os.WriteFile(wrapper, writeMachO(t, o), 0o644); err != nil {
				t.Fatal(err)
			}
			// The host's main and the HIP runtime's entry points the
			// wrapper calls, as a stand-in library would define them.
			src := filepath.Join(dir, "host.c")
			if err := os.WriteFile(src, []byte(machoHostSource), 0o644); err != nil {
				t.Fatal(err)
			}
			host := filepath.Join(dir, "host.o")
			if msg, err := exec.Command(clang, "--target="+triple, "-c", src, "-o", host).CombinedOutput(); err != nil {
				t.Fatalf("clang-22: %v\n%s", err, msg)
			}
			arch := "x86_64"
			if o.Cpu == machoobj.CpuArm64 {
				arch = "arm64"
			}
			exe := filepath.Join(dir, "a.out")
			// -dead_strip: the entries' section is kept by its dummy's
			// N_NO_DEAD_STRIP alone.
			args := []string{"-arch", arch, "-platform_version", "macos", "11.0", "11.0", "-dead_strip", "-o", exe, host, wrapper}
			if msg, err := exec.Command(ld, args...).CombinedOutput(); err != nil {
				t.Fatalf("ld64.lld-22 %v: %v\n%s", args, err, msg)
			}
			f, err := macho.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Section("__StaticInit") == nil && f.Section("__text") == nil {
				t.Fatal("no code in the program")
			}
			if s := f.Section("__mod_init_func"); s == nil || s.Size != 8 {
				t.Errorf("__mod_init_func: %v, want one pointer", s)
			}
			if s := f.Section("__hip_fatbin"); s == nil || s.Size != uint64(len(fb)) {
				t.Errorf("__hip_fatbin: %v, want the fatbin's %d bytes", s, len(fb))
			}
			if s := f.Section(offload.MachOEntriesSection); s == nil || s.Seg != offload.MachOEntriesSegment {
				t.Errorf("%s,%s: %v, want the entries' section kept", offload.MachOEntriesSegment, offload.MachOEntriesSection, s)
			}
		})
	}
}

// machoHostSource is a host file that defines what the wrapper calls.
const machoHostSource = `
void *__hipRegisterFatBinary(void *w) { return w; }
void __hipUnregisterFatBinary(void *h) {}
int __hipRegisterFunction(void *h, void *a, void *b, void *c, int d, void *e, void *f, void *g, void *i, void *j) { return 0; }
void __hipRegisterVar(void *h, void *a, void *b, void *c, int d, long e, int f, int g) {}
void __hipRegisterManagedVar(void *h, void *a, void *b, void *c, long d, int e) {}
void __hipRegisterSurface(void *h, void *a, void *b, void *c, int d, int e) {}
void __hipRegisterTexture(void *h, void *a, void *b, void *c, int d, int e, int f) {}
int atexit(void (*f)(void)) { return 0; }
int main(void) { return 0; }
`
