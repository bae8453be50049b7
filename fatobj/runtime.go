package fatobj

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// CheckOptions are the options of [CheckWith].
type CheckOptions struct {
	// Runtime, if not nil, is the release of the libomptarget that will run
	// the program. Each OpenMP device image that it will be given (an ELF
	// executable or shared object, or any ELF image of a linked program or
	// shared object) is checked as that release's plugins check an image's
	// header before loading it: a cubin whose e_flags layout (CUDA 13's ELF
	// ABI 8) or SM it does not read, an AMDGPU code object of a version or
	// a processor it does not read, an image that is not a 64-bit
	// executable. Each is a finding of kind entries.FindRuntimeImage that
	// says what the runtime says and how to fix it. Releases before 18 check
	// no more than the machine, and nothing is found for them. Device code
	// in relocatable objects is the device link's input, not the runtime's:
	// it is not checked.
	Runtime *release.Release
}

// readImageHeader reads the ELF header of im; ok is false when the image
// is not ELF (LLVM bitcode, a PE image, a fat binary), which the runtime's
// ELF checks do not read.
func readImageHeader(im *Image) (h elfobj.Header, ok bool, err error) {
	r, err := im.Reader()
	if err != nil {
		return h, false, err
	}
	h, err = elfobj.ReadHeader(r)
	if errors.Is(err, goffload.ErrInvalid) || errors.Is(err, goffload.ErrTruncated) {
		return h, false, nil
	}
	return h, err == nil, err
}

const (
	amdgpuOSABIHSA     = 64
	cudaAddress64      = 0x400
	cudaABI1, cudaABI2 = 7, 8
	amdgpuMachMask     = 0xff
	amdgpuMachGFX700   = 0x22
)

// runtimeChecked reports whether the runtime will be given im, an image of
// o: an OpenMP image that is an executable or a shared object, or any
// OpenMP image of a linked program or shared object.
func runtimeChecked(o *Object, im *Image, h elfobj.Header) bool {
	if im.OffloadKind != offload.OffloadOpenMP {
		return false
	}
	if h.Type == elf.ET_EXEC || h.Type == elf.ET_DYN {
		return true
	}
	return o.ELF != nil && (o.ELF.Type == elf.ET_EXEC || o.ELF.Type == elf.ET_DYN)
}

// runtimeFindings returns what the libomptarget of release rt would refuse
// in the images of o.
func runtimeFindings(o *Object, rt *release.Release) ([]entries.Finding, error) {
	var fs []entries.Finding
	for _, im := range o.Images {
		h, ok, err := readImageHeader(im)
		if err != nil {
			return nil, fmt.Errorf("%v: %w", im, err)
		}
		if !ok || !runtimeChecked(o, im, h) {
			continue
		}
		why, fix := refusal(rt.Runtime.Images, rt.Major, h)
		if why == "" {
			continue
		}
		fs = append(fs, entries.Finding{Kind: entries.FindRuntimeImage, Releases: release.SetOf(rt),
			Message: fmt.Sprintf("libomptarget %d will not load the device image for %s (arch %q, image %s): %s; so the kernels run on the host, or, with OMP_TARGET_OFFLOAD=MANDATORY, the program stops. %s",
				rt.Major, im.Triple(), im.Arch(), im.Number(), why, fix)})
	}
	return fs, nil
}

// refusal returns why a runtime that checks image headers as c does (that
// of release major) refuses an image with header h, and the fix; "" when it
// loads it.
func refusal(c release.ImageHeaders, major int, h elfobj.Header) (why, fix string) {
	if !c.Checked {
		return "", ""
	}
	const otherRuntime = "Fix: run it with a libomptarget that reads it"
	if h.Class != elf.ELFCLASS64 {
		return `it is not a 64-bit ELF file ("Only 64-bit ELF files are supported")`, "Fix: build the device code for a 64-bit target"
	}
	if h.Type != elf.ET_EXEC && h.Type != elf.ET_DYN {
		return fmt.Sprintf(`it is of type %v, and the runtime loads executables and shared objects ("only executable ELF files are supported")`, h.Type),
			"Fix: register the device link's output, not its input"
	}
	switch h.Machine {
	case elf.EM_AMDGPU:
		if h.OSABI != amdgpuOSABIHSA {
			return fmt.Sprintf(`its OS/ABI is %#x, not AMDGPU_HSA (%#x) ("invalid AMD OS/ABI, must be AMDGPU_HSA")`, uint8(h.OSABI), amdgpuOSABIHSA),
				"Fix: build the device code for amdgcn-amd-amdhsa"
		}
		if !slices.Contains(c.AMDABIVersions, h.ABIVersion) {
			var vs []string
			for _, v := range c.AMDABIVersions {
				vs = append(vs, fmt.Sprint(int(v)+2))
			}
			return fmt.Sprintf(`it is a code object of version %d (EI_ABIVERSION %d), and libomptarget %d reads versions %s ("invalid AMD ABI version")`,
					int(h.ABIVersion)+2, h.ABIVersion, major, strings.Join(vs, " and ")),
				"Fix: compile the device code with -mcode-object-version=5, which libomptarget 18 and later read"
		}
		mach := h.Flags & amdgpuMachMask
		if mach < amdgpuMachGFX700 || c.AMDMaxMach != 0 && mach > c.AMDMaxMach {
			return fmt.Sprintf(`its processor (EF_AMDGPU_MACH %#x) is outside the range libomptarget %d reads ("unsupported AMDGPU architecture")`, mach, major), otherRuntime
		}
	case elfobj.EMCUDA:
		if !c.CUDAABI2 || h.ABIVersion == cudaABI1 {
			// The layout of ABI 7: what 18 to 20 read of every cubin.
			if h.Flags&cudaAddress64 == 0 {
				if h.ABIVersion == cudaABI2 {
					return fmt.Sprintf(`it is a cubin of ELF ABI version 8 (CUDA 13; CUDA 12.8 and later for sm_100 and later), whose e_flags %#x hold sm_%d in bits 8-15, and libomptarget %d reads e_flags as ABI 7 lays them out (the SM in bits 0-7, 64-bit addressing in bit 10): it says "Invalid CUDA addressing mode" (and "No images found compatible with the installed hardware")`,
							h.Flags, h.Flags>>8&0xff, major),
						"Fix: run it with libomptarget 22 (or 21.1.2 and later), or make the cubin with CUDA 12's ptxas"
				}
				return fmt.Sprintf(`its e_flags %#x do not say 64-bit addressing ("Invalid CUDA addressing mode")`, h.Flags), "Fix: build the device code for nvptx64"
			}
			sm := h.Flags & 0xff
			if h.ABIVersion == cudaABI2 && !c.CUDAABI2 {
				// Bit 10 happens to be set: the SM libomptarget reads is
				// the layout's low byte.
				return fmt.Sprintf(`it is a cubin of ELF ABI version 8 (CUDA 13; CUDA 12.8 and later for sm_100 and later), whose e_flags %#x hold sm_%d in bits 8-15, and libomptarget %d reads its low byte as the SM, %d ("Unsupported NVPTX architecture")`,
						h.Flags, h.Flags>>8&0xff, major, sm),
					"Fix: run it with libomptarget 22 (or 21.1.2 and later), or make the cubin with CUDA 12's ptxas"
			}
			if sm < 35 {
				return fmt.Sprintf(`it is a cubin for sm_%d, below sm_35 ("Unsupported NVPTX architecture")`, sm), "Fix: build the device code for sm_35 or later"
			}
			if c.CUDAMaxSM != 0 && sm > c.CUDAMaxSM {
				return fmt.Sprintf(`it is a cubin for sm_%d, and libomptarget %d reads sm_35 to sm_%d ("Unsupported NVPTX architecture")`, sm, major, c.CUDAMaxSM),
					"Fix: run it with libomptarget 21 or later"
			}
			return "", ""
		}
		if h.ABIVersion != cudaABI2 {
			return fmt.Sprintf(`it is a cubin of ELF ABI version %d, and libomptarget %d reads versions 7 and 8 ("invalid CUDA ABI version")`, h.ABIVersion, major), otherRuntime
		}
		if sm := h.Flags >> 8 & 0xff; sm < 35 {
			return fmt.Sprintf(`it is a cubin for sm_%d, below sm_35 ("unsupported NVPTX architecture")`, sm), "Fix: build the device code for sm_35 or later"
		}
	}
	return "", ""
}
