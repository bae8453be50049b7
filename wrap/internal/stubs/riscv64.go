package stubs

import (
	"debug/elf"
	"encoding/binary"
	"fmt"

	"github.com/goffload/goffload/elfobj/ehframe"
)

// riscv64 with empty features (rv64i, lp64: no compressed instructions, no
// linker relaxation): a 16-byte frame saving ra, the descriptor addressed
// with auipc+addi against the descriptor's own symbol (%pcrel_lo refers to
// the label of its auipc), calls as auipc+jalr with R_RISCV_CALL_PLT. The
// reference to unreg is resolved by the assembler. Functions are aligned to
// 4, so there is no padding.
var riscv64 = arch{
	align: 4,
	pad:   func(n int) []byte { return make([]byte, n) }, // never used: every function is a multiple of 4
	setup: func(c *Code, v variant) { c.Attributes = riscvAttributes(v.riscvISA) },
	reg: func(e *emitter, v variant, unreg uint64) {
		riscvPrologue(e, v)
		riscvDescriptorA0(e, v, 0)
		riscvCall(e, RegisterLib)
		if v.atexit {
			// auipc a0, %pcrel_hi(unreg); addi a0, a0, %pcrel_lo, both
			// resolved here.
			d := int64(unreg) - int64(e.pc())
			hi := (d + 0x800) >> 12
			e.word(riscvU(0x17, riscvA0, int32(hi)))
			e.word(riscvI(0x13, 0, riscvA0, riscvA0, int32(d-hi<<12)))
			riscvCall(e, Atexit)
		}
		riscvEpilogue(e, v)
	},
	unreg: func(e *emitter, v variant) {
		riscvPrologue(e, v)
		// The %pcrel_hi labels are numbered across the module: reg's second
		// auipc (for atexit) took one.
		n := 1
		if v.atexit {
			n = 2
		}
		riscvDescriptorA0(e, v, n)
		riscvCall(e, UnregisterLib)
		riscvEpilogue(e, v)
	},
}

// riscv64 registers by number.
const (
	riscvRA = 1
	riscvSP = 2
	riscvA0 = 10
)

func riscvU(opcode, rd uint32, imm20 int32) uint32 {
	return uint32(imm20)<<12 | rd<<7 | opcode
}

func riscvI(opcode, funct3, rd, rs1 uint32, imm int32) uint32 {
	return uint32(imm)&0xfff<<20 | rs1<<15 | funct3<<12 | rd<<7 | opcode
}

func riscvS(opcode, funct3, rs1, rs2 uint32, imm int32) uint32 {
	u := uint32(imm) & 0xfff
	return u>>5<<25 | rs2<<20 | rs1<<15 | funct3<<12 | u&0x1f<<7 | opcode
}

func riscvPrologue(e *emitter, v variant) {
	if v.riscvTempLabels {
		e.label(".L0 ") // the FDE's pc_begin target
		if e.fn == 0 {
			e.label("$x")
		}
	}
	e.word(riscvI(0x13, 0, riscvSP, riscvSP, -16)) // addi sp, sp, -16
	e.rule(ehframe.DefCFAOffset(16))
	e.word(riscvS(0x23, 3, riscvSP, riscvRA, 8)) // sd ra, 8(sp)
	e.rule(ehframe.Offset(riscvRA, -8))
}

func riscvEpilogue(e *emitter, v variant) {
	e.word(riscvI(0x03, 3, riscvRA, riscvSP, 8)) // ld ra, 8(sp)
	if v.riscvEpilogueCFI {
		e.rule(ehframe.Restore(riscvRA))
	}
	e.word(riscvI(0x13, 0, riscvSP, riscvSP, 16)) // addi sp, sp, 16
	if v.riscvEpilogueCFI {
		e.rule(ehframe.DefCFAOffset(0))
	}
	e.word(riscvI(0x67, 0, 0, riscvRA, 0)) // ret (jalr zero, 0(ra))
}

// riscvDescriptorA0 writes `auipc a0, %pcrel_hi(descriptor); addi a0, a0,
// %pcrel_lo(label)`; n numbers the label.
func riscvDescriptorA0(e *emitter, v variant, n int) {
	name := fmt.Sprintf(".Lpcrel_hi%d", n)
	if v.riscvBBLabels {
		name = fmt.Sprintf(".LBB%d_1", e.fn) // the auipc starts the function's second basic block
	}
	l := e.label(name)
	e.reloc(e.pc(), elf.R_RISCV_PCREL_HI20, Descriptor, 0)
	e.word(riscvU(0x17, riscvA0, 0))
	e.labelReloc(e.pc(), elf.R_RISCV_PCREL_LO12_I, l)
	e.word(riscvI(0x13, 0, riscvA0, riscvA0, 0))
}

// riscvCall writes `call t` (auipc ra + jalr ra).
func riscvCall(e *emitter, t Target) {
	e.reloc(e.pc(), elf.R_RISCV_CALL_PLT, t, 0)
	e.word(riscvU(0x17, riscvRA, 0))
	e.word(riscvI(0x67, 0, riscvRA, riscvRA, 0))
}

// riscvAttributes returns the `.riscv.attributes` section for arch: format
// 'A', one "riscv" subsection with a file tag holding Tag_stack_align (4) =
// 16 and Tag_arch (5) = arch.
func riscvAttributes(arch string) []byte {
	file := append([]byte{4, 16, 5}, arch...)
	file = append(file, 0)
	// Tag_File, then the size of the tag's data including the tag and the
	// size field.
	sub := append([]byte("riscv\x00"), 1)
	sub = binary.LittleEndian.AppendUint32(sub, uint32(1+4+len(file)))
	sub = append(sub, file...)
	b := []byte{'A'}
	b = binary.LittleEndian.AppendUint32(b, uint32(4+len(sub)))
	return append(b, sub...)
}
