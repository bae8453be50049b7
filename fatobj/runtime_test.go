package fatobj

import (
	"debug/elf"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/release"
)

// TestRuntimeRefusals: each release's libomptarget refuses the image
// headers its plugins refuse, and loads the others. The cubin headers are
// those of the NVIDIA fixtures (CUDA 13: ELF ABI 8, e_flags 0x6005a04 for
// sm_90) and of CUDA 12 (ABI 7: 0x5a055a for sm_90, the SM in the low byte).
func TestRuntimeRefusals(t *testing.T) {
	cubin := func(abi byte, flags uint32) elfobj.Header {
		return elfobj.Header{Class: elf.ELFCLASS64, OSABI: 0x41, ABIVersion: abi, Type: elf.ET_EXEC, Machine: elfobj.EMCUDA, Flags: flags}
	}
	amd := func(abi byte, mach uint32) elfobj.Header {
		return elfobj.Header{Class: elf.ELFCLASS64, OSABI: amdgpuOSABIHSA, ABIVersion: abi, Type: elf.ET_DYN, Machine: elf.EM_AMDGPU, Flags: mach}
	}
	cuda13sm90 := cubin(8, 0x6005a04)
	cuda13sm86 := cubin(8, 0x6005604) // bit 10 set: the low byte (4) is read as the SM
	cuda12sm90 := cubin(7, 0x5a055a)
	cuda12sm100 := cubin(7, 0x640564)
	relocatable := cuda12sm90
	relocatable.Type = elf.ET_REL
	for _, c := range []struct {
		name   string
		h      elfobj.Header
		refuse map[int]string // release: what its refusal says ("" loads it)
	}{
		{"cuda13-sm90", cuda13sm90, map[int]string{17: "", 18: "Invalid CUDA addressing mode", 19: "Invalid CUDA addressing mode", 20: "ELF ABI version 8", 21: "", 22: "", 24: ""}},
		{"cuda13-sm86", cuda13sm86, map[int]string{19: `its low byte as the SM, 4 ("Unsupported NVPTX architecture")`, 22: ""}},
		{"cuda12-sm90", cuda12sm90, map[int]string{17: "", 19: "", 22: ""}},
		{"cuda12-sm100", cuda12sm100, map[int]string{19: "reads sm_35 to sm_90", 21: "", 22: ""}},
		{"cubin-abi-9", cubin(9, 0x6005a04), map[int]string{22: "invalid CUDA ABI version"}},
		{"relocatable", relocatable, map[int]string{17: "", 19: "only executable ELF files", 22: "only executable ELF files"}},
		{"32-bit", elfobj.Header{Class: elf.ELFCLASS32, Type: elf.ET_EXEC, Machine: elf.EM_386}, map[int]string{19: "64-bit", 22: "64-bit"}},
		{"amd-cov4", amd(2, 0x3f), map[int]string{19: "", 21: "code object of version 4", 22: "reads versions 5 and 6"}},
		{"amd-cov5", amd(3, 0x3f), map[int]string{18: "", 19: "", 22: ""}},
		{"amd-cov6", amd(4, 0x3f), map[int]string{19: "reads versions 4 and 5", 22: ""}},
		{"amd-generic-on-19", amd(3, 0x51), map[int]string{19: "outside the range", 22: ""}},
		{"amd-not-hsa", elfobj.Header{Class: elf.ELFCLASS64, ABIVersion: 3, Type: elf.ET_DYN, Machine: elf.EM_AMDGPU, Flags: 0x3f}, map[int]string{19: "not AMDGPU_HSA", 22: "not AMDGPU_HSA"}},
		{"x86-64", elfobj.Header{Class: elf.ELFCLASS64, Type: elf.ET_DYN, Machine: elf.EM_X86_64}, map[int]string{15: "", 19: "", 22: ""}},
	} {
		for major, want := range c.refuse {
			r, err := release.Lookup(major)
			if err != nil {
				t.Fatal(err)
			}
			why, fix := refusal(r.Runtime.Images, major, c.h)
			switch {
			case want == "" && why != "":
				t.Errorf("%s: libomptarget %d refuses it: %s", c.name, major, why)
			case want != "" && !strings.Contains(why, want):
				t.Errorf("%s: libomptarget %d: %q, want it refused saying %q", c.name, major, why, want)
			case want != "" && !strings.HasPrefix(fix, "Fix: "):
				t.Errorf("%s: libomptarget %d: no fix: %q", c.name, major, fix)
			}
		}
	}
}
