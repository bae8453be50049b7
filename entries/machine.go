package entries

import (
	"debug/elf"
	"fmt"
)

// machine holds what the entry tables need to know of a host machine.
type machine struct {
	// dynRelative are the dynamic relocations that store load address plus
	// addend; dynAbsolute those that store symbol plus addend.
	dynRelative []uint32
	dynAbsolute []uint32
	// minGlobalAlign is the alignment clang gives a global of at most 16
	// bytes without an alignment of its own: a region ID, or a name string
	// when the release puts names in .rodata.str1.N (measured with clang 15,
	// 16, 19 and 22: 4 on AArch64, 1 elsewhere); longer strings get 16.
	minGlobalAlign uint64
	// nameBySymbol: name pointers are relocated against the string's own
	// local symbol, not its section's (riscv64, whose assembler keeps local
	// symbols for linker relaxation).
	nameBySymbol bool
}

var machines = map[elf.Machine]machine{
	elf.EM_X86_64: {
		dynRelative:    []uint32{uint32(elf.R_X86_64_RELATIVE)},
		dynAbsolute:    []uint32{uint32(elf.R_X86_64_64), uint32(elf.R_X86_64_GLOB_DAT)},
		minGlobalAlign: 1,
	},
	elf.EM_AARCH64: {
		dynRelative:    []uint32{uint32(elf.R_AARCH64_RELATIVE)},
		dynAbsolute:    []uint32{uint32(elf.R_AARCH64_ABS64), uint32(elf.R_AARCH64_GLOB_DAT)},
		minGlobalAlign: 4,
	},
	elf.EM_PPC64: {
		dynRelative:    []uint32{uint32(elf.R_PPC64_RELATIVE)},
		dynAbsolute:    []uint32{uint32(elf.R_PPC64_ADDR64), uint32(elf.R_PPC64_GLOB_DAT)},
		minGlobalAlign: 1,
	},
	elf.EM_RISCV: {
		dynRelative:    []uint32{uint32(elf.R_RISCV_RELATIVE)},
		dynAbsolute:    []uint32{uint32(elf.R_RISCV_64)},
		minGlobalAlign: 1,
		nameBySymbol:   true,
	},
}

func machineOf(m elf.Machine) (machine, error) {
	mc, ok := machines[m]
	if !ok {
		return machine{}, fmt.Errorf("entries: machine %v is not x86-64, AArch64, ppc64 or riscv64", m)
	}
	return mc, nil
}

func contains(list []uint32, v uint32) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
