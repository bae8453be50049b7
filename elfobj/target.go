package elfobj

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/goffload/goffload"
)

// Header is what the ELF header of a file says of its target.
type Header struct {
	Class      elf.Class
	Data       elf.Data
	OSABI      elf.OSABI
	ABIVersion uint8
	Type       elf.Type
	Machine    elf.Machine
	Flags      uint32 // e_flags
}

// HeaderSize is the most ReadHeader reads: the size of an ELF64 header.
const HeaderSize = 64

// ReadHeader reads the ELF header at the start of r. A file that is not ELF,
// or too short for its header, is an error matching goffload.ErrInvalid.
func ReadHeader(r io.Reader) (Header, error) {
	var h Header
	b := make([]byte, HeaderSize)
	n, err := io.ReadFull(r, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return h, err
	}
	b = b[:n]
	if len(b) < 16 || string(b[:4]) != elf.ELFMAG {
		return h, fmt.Errorf("%w: not an ELF file", goffload.ErrInvalid)
	}
	h.Class, h.Data = elf.Class(b[elf.EI_CLASS]), elf.Data(b[elf.EI_DATA])
	h.OSABI, h.ABIVersion = elf.OSABI(b[elf.EI_OSABI]), b[elf.EI_ABIVERSION]
	var bo binary.ByteOrder = binary.LittleEndian
	if h.Data == elf.ELFDATA2MSB {
		bo = binary.BigEndian
	}
	flagsAt := 36 // ELF32
	if h.Class == elf.ELFCLASS64 {
		flagsAt = 48
	}
	if len(b) < flagsAt+4 {
		return h, fmt.Errorf("%w: an ELF header of %d bytes", goffload.ErrTruncated, len(b))
	}
	h.Type, h.Machine = elf.Type(bo.Uint16(b[16:])), elf.Machine(bo.Uint16(b[18:]))
	h.Flags = bo.Uint32(b[flagsAt:])
	return h, nil
}

// EMCUDA is NVIDIA's machine number (a cubin's e_machine), which debug/elf
// does not name.
const EMCUDA = elf.Machine(190)

// Target returns the target triple and processor of a file with header h
// as LLVM names them from its header alone (ELFObjectFile's makeTriple and
// tryGetCPUName), which is how clang-linker-wrapper --override-image names
// an image; measured with clang-linker-wrapper 19 and 22:
//
//	x86-64            x86_64--                ""
//	AArch64           aarch64-- (aarch64_be--) ""
//	ppc64le, ppc64    powerpc64le-- (powerpc64--) "future"
//	RISC-V            riscv64-- (riscv32--)   ""
//	AMDGPU            amdgcn-amd-amdhsa       the processor of EF_AMDGPU_MACH, such as gfx90a
//	NVIDIA cubins     nvptx64-nvidia-amdpal   sm_N, sm_Na with bit 11 set (for sm_90 and later)
//
// cpu is "" where LLVM names no processor (the wrapper then writes no arch
// string). A cubin's SM is read from bits 0-7, or with ELF ABI version 8 (CUDA 13)
// from bits 8-15, as LLVM 22 reads it; LLVM 19's wrapper crashes on those
// of version 8. Other machines are an error matching
// goffload.ErrUnsupported.
func (h Header) Target() (triple, cpu string, err error) {
	le := h.Data != elf.ELFDATA2MSB
	is64 := h.Class == elf.ELFCLASS64
	switch h.Machine {
	case elf.EM_X86_64:
		return "x86_64--", "", nil
	case elf.EM_AARCH64:
		if le {
			return "aarch64--", "", nil
		}
		return "aarch64_be--", "", nil
	case elf.EM_PPC64:
		if le {
			return "powerpc64le--", "future", nil
		}
		return "powerpc64--", "future", nil
	case elf.EM_RISCV:
		if is64 {
			return "riscv64--", "", nil
		}
		return "riscv32--", "", nil
	case elf.EM_AMDGPU:
		if is64 {
			if name := amdgpuProcessors[h.Flags&0xff]; name != "" {
				return "amdgcn-amd-amdhsa", name, nil
			}
			return "", "", fmt.Errorf("%w: AMDGPU processor %#x (EF_AMDGPU_MACH) that LLVM 22 does not name", goffload.ErrUnsupported, h.Flags&0xff)
		}
	case EMCUDA:
		if is64 {
			sm := h.Flags & 0xff
			if h.ABIVersion == 8 {
				sm = h.Flags >> 8 & 0xff
			}
			cpu := fmt.Sprintf("sm_%d", sm)
			if sm >= 90 && h.Flags&0x800 != 0 {
				cpu += "a"
			}
			return "nvptx64-nvidia-amdpal", cpu, nil
		}
	}
	return "", "", fmt.Errorf("%w: the target of a %v %v file", goffload.ErrUnsupported, h.Class, h.Machine)
}

// amdgpuProcessors are the AMDGPU processors by EF_AMDGPU_MACH, as
// llvm-readelf-22 names them.
var amdgpuProcessors = map[uint32]string{
	0x20: "gfx600", 0x21: "gfx601", 0x22: "gfx700", 0x23: "gfx701", 0x24: "gfx702", 0x25: "gfx703", 0x26: "gfx704",
	0x28: "gfx801", 0x29: "gfx802", 0x2a: "gfx803", 0x2b: "gfx810", 0x2c: "gfx900", 0x2d: "gfx902", 0x2e: "gfx904",
	0x2f: "gfx906", 0x30: "gfx908", 0x31: "gfx909", 0x32: "gfx90c", 0x33: "gfx1010", 0x34: "gfx1011", 0x35: "gfx1012",
	0x36: "gfx1030", 0x37: "gfx1031", 0x38: "gfx1032", 0x39: "gfx1033", 0x3a: "gfx602", 0x3b: "gfx705", 0x3c: "gfx805",
	0x3d: "gfx1035", 0x3e: "gfx1034", 0x3f: "gfx90a", 0x41: "gfx1100", 0x42: "gfx1013", 0x43: "gfx1150", 0x44: "gfx1103",
	0x45: "gfx1036", 0x46: "gfx1101", 0x47: "gfx1102", 0x48: "gfx1200", 0x49: "gfx1250", 0x4a: "gfx1151", 0x4c: "gfx942",
	0x4e: "gfx1201", 0x4f: "gfx950", 0x51: "gfx9-generic", 0x52: "gfx10-1-generic", 0x53: "gfx10-3-generic",
	0x54: "gfx11-generic", 0x55: "gfx1152", 0x58: "gfx1153", 0x59: "gfx12-generic", 0x5a: "gfx1251", 0x5f: "gfx9-4-generic",
}
