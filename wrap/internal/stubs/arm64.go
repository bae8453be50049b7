package stubs

import (
	"debug/elf"

	"github.com/goffload/goffload/elfobj/ehframe"
)

// AArch64: save x30 with a pre-indexed store, address the descriptor (and
// unreg) page-relative with adrp+add against the section symbols, call with
// bl. Functions are aligned to 4 only, so there is no padding.
var arm64 = arch{
	align: 4,
	pad:   func(n int) []byte { return make([]byte, n) }, // never used: every function is a multiple of 4
	setup: func(c *Code, v variant) {
		c.DescriptorViaSection = true
		c.UnregViaSection = v.atexit
	},
	reg: func(e *emitter, v variant, unreg uint64) {
		arm64Prologue(e, v)
		arm64Args(e, v)
		arm64Call(e, RegisterLib)
		if v.atexit {
			arm64Addr(e, Unreg)
			arm64Call(e, Atexit)
		}
		arm64Epilogue(e)
	},
	unreg: func(e *emitter, v variant) {
		arm64Prologue(e, v)
		arm64Args(e, v)
		arm64Call(e, UnregisterLib)
		arm64Epilogue(e)
	},
}

// AArch64 registers by number.
const (
	arm64X0 = 0
	arm64LR = 30
	arm64SP = 31
)

func arm64Prologue(e *emitter, v variant) {
	if e.fn == 0 {
		// The mapping symbol that starts the section's code.
		name := "$x"
		if v.arm64MappingSuffix {
			name = "$x.0"
		}
		e.label(name)
	}
	e.word(arm64StrPre(arm64LR, arm64SP, -16)) // str x30, [sp, #-16]!
	e.rule(ehframe.DefCFAOffset(16), ehframe.Offset(arm64LR, -16))
}

func arm64Epilogue(e *emitter) {
	e.word(arm64LdrPost(arm64LR, arm64SP, 16)) // ldr x30, [sp], #16
	e.word(0xd65f03c0)                         // ret
}

// arm64Args puts the descriptor's address in x0 and, when the calls pass
// a size, the size in w1 or x1. LLVM's scheduler puts the first
// instruction of a size that takes several (MOVZ, then MOVKs) before the
// address, and the rest after it.
func arm64Args(e *emitter, v variant) {
	var size []uint32
	if v.sizeArg {
		size = arm64MovImm(1, v.size)
	}
	if len(size) > 1 {
		e.word(size[0])
		size = size[1:]
	}
	arm64Addr(e, Descriptor)
	for _, w := range size {
		e.word(w)
	}
}

// arm64Addr writes `adrp x0, t; add x0, x0, :lo12:t`.
func arm64Addr(e *emitter, t Target) {
	e.reloc(e.pc(), elf.R_AARCH64_ADR_PREL_PG_HI21, t, 0)
	e.word(0x90000000 | arm64X0) // adrp x0, 0
	e.reloc(e.pc(), elf.R_AARCH64_ADD_ABS_LO12_NC, t, 0)
	e.word(0x91000000 | arm64X0<<5 | arm64X0) // add x0, x0, #0
}

// arm64Call writes `bl t`.
func arm64Call(e *emitter, t Target) {
	e.reloc(e.pc(), elf.R_AARCH64_CALL26, t, 0)
	e.word(0x94000000)
}

// arm64StrPre encodes `str xt, [xn, #imm]!` (STR immediate, pre-index, 64-bit).
func arm64StrPre(rt, rn uint32, imm int32) uint32 {
	return 0xf8000c00 | uint32(imm)&0x1ff<<12 | rn<<5 | rt
}

// arm64LdrPost encodes `ldr xt, [xn], #imm` (LDR immediate, post-index, 64-bit).
func arm64LdrPost(rt, rn uint32, imm int32) uint32 {
	return 0xf8400400 | uint32(imm)&0x1ff<<12 | rn<<5 | rt
}
