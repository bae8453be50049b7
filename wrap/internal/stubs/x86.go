package stubs

import (
	"debug/elf"

	"github.com/goffload/goffload/elfobj/ehframe"
)

// x86-64: `push %rax` aligns the stack to 16 for the calls; the descriptor
// is addressed RIP-relative against .data.rel.ro, the calls go through the
// PLT, and the reference to unreg is resolved by the assembler (same section,
// no relocation). See docs/registration.md#openmp-object.
var x86 = arch{
	align: 16,
	pad:   x86Nops,
	setup: func(c *Code, v variant) { c.DescriptorViaSection = true },
	reg: func(e *emitter, v variant, unreg uint64) {
		x86Prologue(e)
		x86Descriptor(e, v)
		x86Size(e, v)
		x86Call(e, RegisterLib)
		if v.atexit {
			e.bytes(0x48, 0x8d, 0x3d) // lea unreg(%rip), %rdi
			e.word(uint32(int64(unreg) - int64(e.pc()+4)))
			x86Call(e, Atexit)
		}
		x86Epilogue(e)
	},
	unreg: func(e *emitter, v variant) {
		x86Prologue(e)
		x86Descriptor(e, v)
		x86Size(e, v)
		x86Call(e, UnregisterLib)
		x86Epilogue(e)
	},
}

func x86Prologue(e *emitter) {
	e.bytes(0x50) // push %rax
	e.rule(ehframe.DefCFAOffset(16))
}

func x86Epilogue(e *emitter) {
	e.bytes(0x58) // pop %rax
	e.rule(ehframe.DefCFAOffset(8))
	e.bytes(0xc3) // ret
}

// x86Descriptor puts the descriptor's address in %rdi: RIP-relative, or
// with an absolute 64-bit move in static code (LLVM 13's driver, which
// compiles the module without PIC; clang -cc1 of an IR module uses the
// large immediate, R_X86_64_64).
func x86Descriptor(e *emitter, v variant) {
	if !v.static {
		x86LeaRDI(e, Descriptor)
		return
	}
	e.bytes(0x48, 0xbf) // movabs $t, %rdi
	e.reloc(e.pc(), elf.R_X86_64_64, Descriptor, 0)
	e.bytes(0, 0, 0, 0, 0, 0, 0, 0)
}

// x86Size puts the size in %rsi, when the calls pass one: `xor %esi, %esi`
// for 0, `mov $imm32, %esi` (zero-extending) below 2^32, else
// `movabs $imm64, %rsi`, as LLVM selects them.
func x86Size(e *emitter, v variant) {
	switch {
	case !v.sizeArg:
	case v.size == 0:
		e.bytes(0x31, 0xf6)
	case v.size>>32 == 0:
		e.bytes(0xbe)
		e.word(uint32(v.size))
	default:
		e.bytes(0x48, 0xbe)
		e.word(uint32(v.size))
		e.word(uint32(v.size >> 32))
	}
}

// x86LeaRDI writes `lea t(%rip), %rdi`.
func x86LeaRDI(e *emitter, t Target) {
	e.bytes(0x48, 0x8d, 0x3d)
	e.reloc(e.pc(), elf.R_X86_64_PC32, t, -4)
	e.bytes(0, 0, 0, 0)
}

// x86Call writes `call t@PLT`.
func x86Call(e *emitter, t Target) {
	e.bytes(0xe8)
	e.reloc(e.pc(), elf.R_X86_64_PLT32, t, -4)
	e.bytes(0, 0, 0, 0)
}

// x86NopTable holds the no-ops that LLVM's x86 assembler pads code with, by
// length (X86AsmBackend::writeNopData, for 64-bit CPUs without a longer
// preferred no-op).
var x86NopTable = [...][]byte{
	1:  {0x90},
	2:  {0x66, 0x90},
	3:  {0x0f, 0x1f, 0x00},
	4:  {0x0f, 0x1f, 0x40, 0x00},
	5:  {0x0f, 0x1f, 0x44, 0x00, 0x00},
	6:  {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
	7:  {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
	8:  {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
	9:  {0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
	10: {0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
}

// x86Nops returns n bytes of no-ops, the longest first.
func x86Nops(n int) []byte {
	var b []byte
	for n > 0 {
		k := min(n, len(x86NopTable)-1)
		b = append(b, x86NopTable[k]...)
		n -= k
	}
	return b
}
