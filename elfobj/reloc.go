package elfobj

import "debug/elf"

// relocWidth returns how many bytes at its offset relocation type code of
// machine m changes, for the check that a relocation lies inside its section;
// 1 when it is not known here.
func relocWidth(m elf.Machine, code uint32) uint64 {
	if w, ok := relocWidths[m][code]; ok {
		return w
	}
	if w, ok := relocDefaultWidth[m]; ok {
		return w
	}
	return 1
}

// relocDefaultWidth is the width of the relocations of a machine that are not
// listed: on AArch64 and riscv64 most patch one 4-byte instruction.
var relocDefaultWidth = map[elf.Machine]uint64{elf.EM_AARCH64: 4, elf.EM_RISCV: 4}

var relocWidths = map[elf.Machine]map[uint32]uint64{
	elf.EM_X86_64: {
		uint32(elf.R_X86_64_NONE): 0,
		uint32(elf.R_X86_64_64):   8, uint32(elf.R_X86_64_PC64): 8, uint32(elf.R_X86_64_GOTOFF64): 8,
		uint32(elf.R_X86_64_32): 4, uint32(elf.R_X86_64_32S): 4, uint32(elf.R_X86_64_PC32): 4,
		uint32(elf.R_X86_64_PLT32): 4, uint32(elf.R_X86_64_GOTPCREL): 4, uint32(elf.R_X86_64_GOTPCRELX): 4,
		uint32(elf.R_X86_64_REX_GOTPCRELX): 4, uint32(elf.R_X86_64_TPOFF32): 4, uint32(elf.R_X86_64_GOTTPOFF): 4,
		uint32(elf.R_X86_64_TLSGD): 4, uint32(elf.R_X86_64_TLSLD): 4, uint32(elf.R_X86_64_DTPOFF32): 4,
		uint32(elf.R_X86_64_DTPOFF64): 8, uint32(elf.R_X86_64_16): 2, uint32(elf.R_X86_64_PC16): 2,
		uint32(elf.R_X86_64_8): 1, uint32(elf.R_X86_64_PC8): 1,
	},
	elf.EM_AARCH64: {
		uint32(elf.R_AARCH64_NONE): 0, uint32(elf.R_AARCH64_ABS64): 8, uint32(elf.R_AARCH64_PREL64): 8,
		uint32(elf.R_AARCH64_ABS32): 4, uint32(elf.R_AARCH64_PREL32): 4,
		uint32(elf.R_AARCH64_ABS16): 2, uint32(elf.R_AARCH64_PREL16): 2,
	},
	elf.EM_PPC64: {
		uint32(elf.R_PPC64_NONE): 0, uint32(elf.R_PPC64_ADDR64): 8, uint32(elf.R_PPC64_REL64): 8,
		uint32(elf.R_PPC64_TOC): 8, uint32(elf.R_PPC64_ADDR32): 4, uint32(elf.R_PPC64_REL32): 4,
		uint32(elf.R_PPC64_REL24): 4, uint32(elf.R_PPC64_REL14): 4, uint32(elf.R_PPC64_ADDR24): 4,
		uint32(elf.R_PPC64_ADDR16): 2, uint32(elf.R_PPC64_ADDR16_LO): 2, uint32(elf.R_PPC64_ADDR16_HI): 2,
		uint32(elf.R_PPC64_ADDR16_HA): 2, uint32(elf.R_PPC64_TOC16): 2, uint32(elf.R_PPC64_TOC16_LO): 2,
		uint32(elf.R_PPC64_TOC16_HI): 2, uint32(elf.R_PPC64_TOC16_HA): 2, uint32(elf.R_PPC64_TOC16_DS): 2,
		uint32(elf.R_PPC64_TOC16_LO_DS): 2, uint32(elf.R_PPC64_REL16): 2, uint32(elf.R_PPC64_REL16_LO): 2,
		uint32(elf.R_PPC64_REL16_HI): 2, uint32(elf.R_PPC64_REL16_HA): 2, uint32(elf.R_PPC64_ADDR16_DS): 2,
		uint32(elf.R_PPC64_ADDR16_LO_DS): 2,
	},
	elf.EM_RISCV: {
		uint32(elf.R_RISCV_NONE): 0, uint32(elf.R_RISCV_RELAX): 0, uint32(elf.R_RISCV_ALIGN): 0,
		uint32(elf.R_RISCV_64): 8, uint32(elf.R_RISCV_ADD64): 8, uint32(elf.R_RISCV_SUB64): 8,
		uint32(elf.R_RISCV_32): 4, uint32(elf.R_RISCV_32_PCREL): 4, uint32(elf.R_RISCV_ADD32): 4, uint32(elf.R_RISCV_SUB32): 4,
		uint32(elf.R_RISCV_ADD16): 2, uint32(elf.R_RISCV_SUB16): 2, uint32(elf.R_RISCV_ADD8): 1, uint32(elf.R_RISCV_SUB8): 1,
		uint32(elf.R_RISCV_SET6): 1, uint32(elf.R_RISCV_SUB6): 1, uint32(elf.R_RISCV_SET8): 1, uint32(elf.R_RISCV_SET16): 2,
		uint32(elf.R_RISCV_SET32): 4, uint32(elf.R_RISCV_CALL): 8, uint32(elf.R_RISCV_CALL_PLT): 8,
		uint32(elf.R_RISCV_RVC_BRANCH): 2, uint32(elf.R_RISCV_RVC_JUMP): 2,
	},
}

// Abs64 returns machine m's relocation of a 64-bit absolute pointer in data
// (R_X86_64_64, R_AARCH64_ABS64, R_PPC64_ADDR64, R_RISCV_64), or nil.
func Abs64(m elf.Machine) RelocType {
	switch m {
	case elf.EM_X86_64:
		return elf.R_X86_64_64
	case elf.EM_AARCH64:
		return elf.R_AARCH64_ABS64
	case elf.EM_PPC64:
		return elf.R_PPC64_ADDR64
	case elf.EM_RISCV:
		return elf.R_RISCV_64
	}
	return nil
}
