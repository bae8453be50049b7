package stubs

import (
	"debug/elf"
	"encoding/binary"
	"fmt"

	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/ppc64/ppc64asm"
	"golang.org/x/arch/riscv64/riscv64asm"
	"golang.org/x/arch/x86/x86asm"
)

// disassemble decodes code of machine m with golang.org/x/arch, one line
// per instruction: its offset and its text in GNU syntax. ppc64 zero words
// (the traceback table) are written as `.long 0x0`.
func disassemble(m elf.Machine, code []byte) ([]string, error) {
	var lines []string
	for pc := 0; pc < len(code); {
		text, n, err := decodeOne(m, code[pc:], uint64(pc))
		if err != nil {
			return lines, fmt.Errorf("%v at %#x: % x: %w", m, pc, code[pc:min(pc+4, len(code))], err)
		}
		lines = append(lines, fmt.Sprintf("%#04x: %s", pc, text))
		pc += n
	}
	return lines, nil
}

func decodeOne(m elf.Machine, b []byte, pc uint64) (string, int, error) {
	switch m {
	case elf.EM_X86_64:
		inst, err := x86asm.Decode(b, 64)
		if err != nil {
			return "", 0, err
		}
		return x86asm.GNUSyntax(inst, pc, nil), inst.Len, nil
	case elf.EM_AARCH64:
		inst, err := arm64asm.Decode(b)
		if err != nil {
			return "", 0, err
		}
		return arm64asm.GNUSyntax(inst), 4, nil
	case elf.EM_PPC64:
		if len(b) >= 4 && binary.LittleEndian.Uint32(b) == 0 {
			return ".long 0x0", 4, nil
		}
		inst, err := ppc64asm.Decode(b, binary.LittleEndian)
		if err != nil {
			return "", 0, err
		}
		return ppc64asm.GNUSyntax(inst, pc), inst.Len, nil
	case elf.EM_RISCV:
		inst, err := riscv64asm.Decode(b)
		if err != nil {
			return "", 0, err
		}
		return riscv64asm.GNUSyntax(inst), inst.Len, nil
	}
	return "", 0, fmt.Errorf("no decoder")
}
