package offload

import (
	"errors"
	"testing"
)

func TestImageKindNames(t *testing.T) {
	for _, c := range []struct {
		k         ImageKind
		name, ext string
	}{
		{ImageNone, "<none>", ""}, {ImageObject, "elf", "o"}, {ImageBitcode, "llvm ir", "bc"}, {ImageCubin, "cubin", "cubin"},
		{ImageFatbinary, "fatbinary", "fatbin"}, {ImagePTX, "ptx", "s"}, {ImageSPIRV, "<none>", ""}, {99, "<none>", ""},
	} {
		if c.k.String() != c.name || c.k.Extension() != c.ext {
			t.Errorf("%d: %q %q, want %q %q", uint16(c.k), c.k.String(), c.k.Extension(), c.name, c.ext)
		}
		if c.ext != "" && ImageKindFromExtension("."+c.ext) != c.k {
			t.Errorf("extension %q is not %v", c.ext, c.k)
		}
	}
	for in, want := range map[string]ImageKind{"elf": ImageObject, "o": ImageObject, "llvm ir": ImageBitcode, "IMG_Bitcode": ImageBitcode,
		"spirv": ImageSPIRV, "<none>": ImageNone, "none": ImageNone, "7": 7, "fatbin": ImageFatbinary, "ptx": ImagePTX} {
		if got, err := ParseImageKind(in); err != nil || got != want {
			t.Errorf("ParseImageKind(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseImageKind("exe"); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("ParseImageKind(exe): %v", err)
	}
}

func TestOffloadKindNumbering(t *testing.T) {
	for _, c := range []struct {
		major     int
		hip, sycl uint16
		syclOK    bool
	}{{15, 3, 0, false}, {19, 3, 0, false}, {20, 3, 0, false}, {21, 4, 8, true}, {22, 4, 8, true}} {
		r := mustRelease(t, c.major)
		if got, _ := OffloadKindCode(r, OffloadHIP); got != c.hip {
			t.Errorf("LLVM %d: HIP is %d", c.major, got)
		}
		if got, ok := OffloadKindCode(r, OffloadSYCL); got != c.sycl || ok != c.syclOK {
			t.Errorf("LLVM %d: SYCL is %d, %v", c.major, got, ok)
		}
		for k := OffloadNone; k <= OffloadSYCL; k++ {
			if code, ok := OffloadKindCode(r, k); ok && OffloadKindOf(r, code) != k {
				t.Errorf("LLVM %d: %v -> %d -> %v", c.major, k, code, OffloadKindOf(r, code))
			}
		}
		if OffloadKindOf(r, 16) != OffloadNone || OffloadKindOf(r, c.hip^7) != OffloadNone {
			t.Errorf("LLVM %d: unknown codes are not none", c.major)
		}
	}
	for k, name := range map[OffloadKind]string{OffloadNone: "none", OffloadOpenMP: "openmp", OffloadCUDA: "cuda", OffloadHIP: "hip", OffloadSYCL: "sycl", 9: "OffloadKind(9)"} {
		if k.String() != name {
			t.Errorf("%d.String() = %q", k, k.String())
		}
		if k <= OffloadSYCL {
			if got, err := ParseOffloadKind(name); err != nil || got != k {
				t.Errorf("ParseOffloadKind(%q) = %v, %v", name, got, err)
			}
		}
	}
}
