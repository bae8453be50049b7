package stubs

import (
	"debug/elf"
	"encoding/binary"

	"github.com/goffload/goffload/elfobj/ehframe"
)

// ppc64le (ELFv2): each function starts with the global entry point that
// sets r2 from r12 (the local entry point, 8 bytes in, is in st_other), saves
// LR in a 32-byte frame, addresses the descriptor (and unreg) TOC-relative
// against the section symbols, calls with `bl` followed by the nop that the
// linker may turn into a TOC restore, and ends with an empty traceback table
// (`.long 0; .quad 0`, counted in the symbol's size). Functions are aligned
// to 16 and padded with nops.
var ppc64 = arch{
	align: 16,
	pad:   ppc64Nops,
	setup: func(c *Code, v variant) {
		c.DescriptorViaSection = true
		c.UnregViaSection = v.atexit
		c.Flags = 2 // EF_PPC64_ABI v2
		if v.ppc64MergeGlobals {
			c.DescriptorOffset = mergedDescriptorOffset(v.images)
		}
	},
	reg: func(e *emitter, v variant, unreg uint64) {
		ppc64Prologue(e, v)
		ppc64Descriptor(e, v)
		ppc64Call(e, RegisterLib)
		if v.atexit {
			ppc64AddrR3(e, Unreg, 0)
			ppc64Call(e, Atexit)
		}
		ppc64Epilogue(e, v)
	},
	unreg: func(e *emitter, v variant) {
		ppc64Prologue(e, v)
		ppc64Descriptor(e, v)
		ppc64Call(e, UnregisterLib)
		ppc64Epilogue(e, v)
	},
}

// ppc64 instruction words used as they are.
const (
	ppc64Mflr0 = 0x7c0802a6 // mflr 0
	ppc64Mtlr0 = 0x7c0803a6 // mtlr 0
	ppc64Bl    = 0x48000001 // bl 0 (with R_PPC64_REL24)
	ppc64Nop   = 0x60000000 // nop (ori 0, 0, 0)
	ppc64Blr   = 0x4e800020 // blr
)

// ppc64 primary opcodes of the D and DS forms.
const (
	ppc64OpAddi  = 14
	ppc64OpAddis = 15
	ppc64OpLd    = 58 // DS form, XO 0
	ppc64OpStd   = 62 // DS form, XO 0 (std) or 1 (stdu)
)

// LocalEntry8 is st_other for a ppc64 ELFv2 function whose local entry point
// is 8 bytes after its global one (STO_PPC64_LOCAL = 3, in bits 5–7).
const LocalEntry8 = 3 << 5

// ppc64Frame is the size of the frame: the 32-byte ELFv2 minimum, unless
// the code generator reserves more.
func ppc64Frame(v variant) int32 {
	if v.ppc64Frame != 0 {
		return v.ppc64Frame
	}
	return 32
}

func ppc64D(op, rt, ra uint32, imm int32) uint32 {
	return op<<26 | rt<<21 | ra<<16 | uint32(imm)&0xffff
}

func ppc64DS(op, rs, ra uint32, ds int32, xo uint32) uint32 {
	return op<<26 | rs<<21 | ra<<16 | uint32(ds)&0xfffc | xo
}

func ppc64Prologue(e *emitter, v variant) {
	e.code.Funcs[e.fn].Other = LocalEntry8
	// Global entry: r2 = .TOC. from the function's address in r12.
	e.reloc(e.pc(), elf.R_PPC64_REL16_HA, TOC, 0)
	e.word(ppc64D(ppc64OpAddis, 2, 12, 0)) // addis 2, 12, .TOC.-gep@ha
	e.reloc(e.pc(), elf.R_PPC64_REL16_LO, TOC, 4)
	e.word(ppc64D(ppc64OpAddi, 2, 2, 0)) // addi 2, 2, .TOC.-gep@l
	e.word(ppc64Mflr0)
	frame := ppc64Frame(v)
	if v.ppc64SaveLRFirst {
		e.word(ppc64DS(ppc64OpStd, 0, 1, 16, 0))     // std 0, 16(1)
		e.word(ppc64DS(ppc64OpStd, 1, 1, -frame, 1)) // stdu 1, -32(1)
	} else {
		e.word(ppc64DS(ppc64OpStd, 1, 1, -frame, 1))   // stdu 1, -32(1)
		e.word(ppc64DS(ppc64OpStd, 0, 1, frame+16, 0)) // std 0, 48(1)
	}
	e.rule(ehframe.DefCFAOffset(uint64(frame)), ehframe.Offset(65, 16)) // LR (DWARF 65) at CFA+16
}

// ppc64Descriptor puts the descriptor's address in r3. With merged globals
// the TOC-relative pair addresses the start of the merged block and an addi
// adds the descriptor's place in it.
func ppc64Descriptor(e *emitter, v variant) {
	if !v.ppc64MergeGlobals {
		ppc64AddrR3(e, Descriptor, 0)
		return
	}
	off := int64(mergedDescriptorOffset(v.images))
	ppc64AddrR3(e, Descriptor, -off)
	if off != 0 {
		e.word(ppc64D(ppc64OpAddi, 3, 3, int32(off))) // addi 3, 3, off
	}
}

// ppc64AddrR3 writes `addis 3, 2, t@toc@ha; addi 3, 3, t@toc@l`.
func ppc64AddrR3(e *emitter, t Target, addend int64) {
	e.reloc(e.pc(), elf.R_PPC64_TOC16_HA, t, addend)
	e.word(ppc64D(ppc64OpAddis, 3, 2, 0))
	e.reloc(e.pc(), elf.R_PPC64_TOC16_LO, t, addend)
	e.word(ppc64D(ppc64OpAddi, 3, 3, 0))
}

// ppc64Call writes `bl t; nop`.
func ppc64Call(e *emitter, t Target) {
	e.reloc(e.pc(), elf.R_PPC64_REL24, t, 0)
	e.word(ppc64Bl)
	e.word(ppc64Nop)
}

func ppc64Epilogue(e *emitter, v variant) {
	e.word(ppc64D(ppc64OpAddi, 1, 1, ppc64Frame(v))) // addi 1, 1, 32
	e.word(ppc64DS(ppc64OpLd, 0, 1, 16, 0))          // ld 0, 16(1)
	e.word(ppc64Mtlr0)
	e.word(ppc64Blr)
	e.bytes(make([]byte, 12)...) // empty traceback table: .long 0; .quad 0
}

func ppc64Nops(n int) []byte {
	var b []byte
	for ; n >= 4; n -= 4 {
		b = binary.LittleEndian.AppendUint32(b, ppc64Nop)
	}
	return append(b, make([]byte, n)...)
}

// mergedDescriptorOffset is the descriptor's place in the block that
// GlobalMerge makes of device_images ([N x 32 bytes]) and the descriptor (32
// bytes): it sorts them by size, stably, so the descriptor comes first unless
// the sizes are equal (one image).
func mergedDescriptorOffset(images uint64) uint64 {
	if 32*images > 32 {
		return 0
	}
	return 32 * images
}
