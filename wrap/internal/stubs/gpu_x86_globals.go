package stubs

import (
	"debug/elf"

	"github.com/goffload/goffload/release"
)

// gpuGlobalsKey selects a listing of globals_reg (x86-64 and AArch64).
type gpuGlobalsKey struct {
	module release.GPURegistration
	kind   GPUKind
}

// x86GlobalsReg are the bodies of .<p>.globals_reg as llc lays them out
// (block placement rotates the loop: the kernel case comes first, the loop
// latch and the entry's loads after it). Labels name the IR blocks. The
// 17 module's is the same for CUDA and HIP.
var x86GlobalsReg = map[gpuGlobalsKey]func(x *x86Writer){
	{release.GPURegistrationWholeFlags, CUDA}: x86Globals17,
	{release.GPURegistrationWholeFlags, HIP}:  x86Globals17,
	{release.GPURegistrationFlagBits, CUDA}:   x86GlobalsFlagsCUDA,
	{release.GPURegistrationFlagBits, HIP}:    x86GlobalsFlagsHIP,
	{release.GPURegistrationKindCheck, CUDA}:  x86GlobalsKindCUDA,
	{release.GPURegistrationKindCheck, HIP}:   x86GlobalsKindHIP,
}

// r15 is the operand disp(%r15): a field of the current entry.
func r15(disp int8) x86Mem { return x86Mem{base: x86R15, disp: disp} }

// x86LoopStart saves the registers (r12 too when withR12, then rax to align
// the stack) and enters the loop over [__start_, __stop_) at while.entry,
// r15 the entry, r14 the end, rbx the handle.
func x86LoopStart(x *x86Writer, withR12 bool) {
	saved := []x86Reg{x86R15, x86R14, x86RBX}
	if withR12 {
		saved = []x86Reg{x86R15, x86R14, x86R12, x86RBX}
	}
	for _, r := range saved {
		x.pushq(r)
	}
	if withR12 {
		x.pushq(x86RAX)
	}
	x.saved(saved...)
	x.rip(0x8d, x86R14, EntriesStop)  // leaq __stop_<sec>(%rip), %r14
	x.rip(0x8d, x86R15, EntriesStart) // leaq __start_<sec>(%rip), %r15
	x.cmpq(x86R14, x86R15)
	x.jcc(x86E, "while.end")
	x.movq(x86RDI, x86RBX)
}

// x86RegisterFunction is if.then: __<p>RegisterFunction(h, addr, name,
// name, -1, null, null, null, null, null) with addr in rsi (32-byte
// entries) or rdx (56-byte), name in rcx.
func x86RegisterFunction(x *x86Writer, addrInRDX bool) {
	x.movq(x86RBX, x86RDI)
	if addrInRDX {
		x.movq(x86RDX, x86RSI)
	}
	x.movq(x86RCX, x86RDX)
	x.movlImm(0xffffffff, x86R8)
	x.xorl(x86R9, x86R9)
	for i := 0; i < 4; i++ {
		x.pushq0()
	}
	x.call(RegisterFunction)
	x.imm8(x86Add, true, 0x20, x86RSP)
}

// x86Latch is if.end: the next entry, or the end.
func x86Latch(x *x86Writer, entrySize int8) {
	x.a.label("if.end")
	x.imm8(x86Add, true, entrySize, x86R15)
	x.cmpq(x86R14, x86R15)
	x.jcc(x86E, "while.end")
}

// x86Loads32 loads addr, name and size of a 32-byte entry and branches to
// if.then for a kernel (size 0).
func x86Loads32(x *x86Writer) {
	x.a.label("while.entry")
	x.loadq(r15(0), x86RSI)
	x.loadq(r15(8), x86RCX)
	x.loadq(r15(0x10), x86R9)
	x.testq(x86R9, x86R9)
	x.jcc(x86E, "if.then")
}

// x86Loop32Head is the loop's start up to the entry's type, for 32-byte
// entries: the kernel case is the aligned loop header.
func x86Loop32Head(x *x86Writer) {
	x86LoopStart(x, false)
	x.jmp("while.entry")
	x.a.alignTo(16)
	x.a.label("if.then")
	x86RegisterFunction(x, false)
	x86Latch(x, 0x20)
	x86Loads32(x)
}

func x86Epilogue3(x *x86Writer) {
	x.a.label("while.end")
	x.popq(x86RBX)
	x.popq(x86R14)
	x.popq(x86R15)
	x.ret()
}

// x86Globals17: the switch on the whole flags word keeps only case 0,
// RegisterVar(h, addr, name, name, 0, size, 0, 0).
func x86Globals17(x *x86Writer) {
	x86Loop32Head(x)
	x.cmpImm8(false, 0, r15(0x18)) // cmpl $0, flags
	x.jcc(x86NE, "if.end")
	x.movq(x86RBX, x86RDI)
	x.movq(x86RCX, x86RDX)
	x.xorl(x86R8, x86R8)
	x.pushq0()
	x.pushq0()
	x.call(RegisterVar)
	x.imm8(x86Add, true, 0x10, x86RSP)
	x.jmp("if.end")
	x86Epilogue3(x)
}

// x86GlobalsFlagsCUDA: only sw.global does anything:
// RegisterVar(h, addr, name, name, extern, size, constant, 0).
func x86GlobalsFlagsCUDA(x *x86Writer) {
	x86Loop32Head(x)
	x.loadl(r15(0x18), x86RAX) // flags
	x.movl(x86RAX, x86RDX)
	x.imm8(x86And, false, 7, x86RDX)
	x.jcc(x86NE, "if.end")
	x.movl(x86RAX, x86R8)
	x.imm8(x86And, false, 8, x86R8)
	x.shrl(3, x86R8) // extern
	x.imm8(x86And, false, 0x10, x86RAX)
	x.shrl(4, x86RAX) // constant
	x.movq(x86RBX, x86RDI)
	x.movq(x86RCX, x86RDX)
	x.pushq0()
	x.pushq(x86RAX)
	x.call(RegisterVar)
	x.imm8(x86Add, true, 0x10, x86RSP)
	x.jmp("if.end")
	x86Epilogue3(x)
}

// x86GlobalsFlagsHIP: cases 0, 2 and 3 as compares; texture and variable
// share the stack clean-up.
func x86GlobalsFlagsHIP(x *x86Writer) {
	x86Loop32Head(x)
	x.loadl(r15(0x18), x86R10) // flags
	x.loadl(r15(0x1c), x86R8)  // textype
	x.movl(x86R10, x86RDX)
	x.imm8(x86And, false, 7, x86RDX) // type
	x.movl(x86R10, x86RAX)
	x.imm8(x86And, false, 8, x86RAX)
	x.shrl(3, x86RAX) // extern
	x.imm8(x86Cmp, false, 3, x86RDX)
	x.jcc(x86E, "sw.texture")
	x.imm8(x86Cmp, false, 2, x86RDX)
	x.jcc(x86E, "sw.surface")
	x.testl(x86RDX, x86RDX)
	x.jcc(x86NE, "if.end")

	x.imm8(x86And, false, 0x10, x86R10)
	x.shrl(4, x86R10) // constant
	x.movq(x86RBX, x86RDI)
	x.movq(x86RCX, x86RDX)
	x.movl(x86RAX, x86R8)
	x.pushq0()
	x.pushq(x86R10)
	x.call(RegisterVar)
	x.jmp("pop16")

	x.a.label("sw.surface")
	x.cfaAt(32)
	x.movq(x86RBX, x86RDI)
	x.movq(x86RCX, x86RDX)
	x.movl(x86RAX, x86R9)
	x.call(RegisterSurface)
	x.jmp("if.end")

	x.a.label("sw.texture")
	x.imm8(x86And, false, 0x20, x86R10)
	x.shrl(5, x86R10) // normalized
	x.imm8(x86Sub, true, 8, x86RSP)
	x.movq(x86RBX, x86RDI)
	x.movq(x86RCX, x86RDX)
	x.movl(x86R10, x86R9)
	x.pushq(x86RAX)
	x.call(RegisterTexture)
	x.a.label("pop16")
	x.imm8(x86Add, true, 0x10, x86RSP)
	x.jmp("if.end")
	x86Epilogue3(x)
}

// x86Loop56Head is the loop's start up to the entry's flags, for 56-byte
// entries of kind k: the latch is the aligned loop header. withR12 keeps the
// jump table's address in r12.
func x86Loop56Head(x *x86Writer, k int8, withR12 bool) {
	x86LoopStart(x, withR12)
	if withR12 {
		x.rip(0x8d, x86R12, JumpTable) // leaq .LJTI(%rip), %r12
	}
	x.jmp("while.entry")
	x.a.label("if.then")
	x86RegisterFunction(x, true)
	x.a.alignTo(16)
	x86Latch(x, 0x38)
	x.a.label("while.entry")
	x.cmpImm8(true, k, r15(0xa)) // cmpw $k, kind
	x.jcc(x86NE, "if.end")
	x.loadq(r15(0x10), x86RDX) // addr
	x.loadq(r15(0x18), x86RCX) // name
}

// x86GlobalsKindCUDA: cases 0 and 1 (managed).
func x86GlobalsKindCUDA(x *x86Writer) {
	x86Loop56Head(x, 2, false)
	x.loadq(r15(0x20), x86RAX) // size
	x.testq(x86RAX, x86RAX)
	x.jcc(x86E, "if.then")
	x.loadl(r15(0xc), x86R10) // flags
	x.movl(x86R10, x86RSI)
	x.imm8(x86And, false, 7, x86RSI)
	x.imm8(x86Cmp, false, 1, x86RSI)
	x.jcc(x86E, "sw.managed")
	x.testl(x86RSI, x86RSI)
	x.jcc(x86NE, "if.end")

	x.movl(x86R10, x86R8)
	x.imm8(x86And, false, 8, x86R8)
	x.shrl(3, x86R8)
	x.imm8(x86And, false, 0x10, x86R10)
	x.shrl(4, x86R10)
	x.movq(x86RBX, x86RDI)
	x.movq(x86RDX, x86RSI)
	x.movq(x86RCX, x86RDX)
	x.movq(x86RAX, x86R9)
	x.pushq0()
	x.pushq(x86R10)
	x.call(RegisterVar)
	x.imm8(x86Add, true, 0x10, x86RSP)
	x.jmp("if.end")

	x.a.label("sw.managed")
	x.loadq(r15(0x30), x86RSI) // aux_addr
	x.loadl(r15(0x28), x86R9)  // (i32)data
	x.movq(x86RBX, x86RDI)
	x.movq(x86RAX, x86R8)
	x.call(RegisterManagedVar)
	x.jmp("if.end")
	x86Epilogue3(x)
}

// x86GlobalsKindHIP: four cases, dispatched through a jump table in
// .rodata (entries relative to the table, addressed from r12).
func x86GlobalsKindHIP(x *x86Writer) {
	x86Loop56Head(x, 4, true)
	x.loadq(r15(0x20), x86R9) // size
	x.testq(x86R9, x86R9)
	x.jcc(x86E, "if.then")
	x.loadl(r15(0xc), x86RAX) // flags
	x.movl(x86RAX, x86RSI)
	x.imm8(x86And, false, 7, x86RSI)
	x.imm8(x86Cmp, false, 3, x86RSI)
	x.jcc(x86A, "if.end")
	x.loadl(r15(0x28), x86R11) // (i32)data
	x.movl(x86RAX, x86R10)
	x.imm8(x86And, false, 8, x86R10)
	x.shrl(3, x86R10) // extern
	x.movl(x86RSI, x86RSI)
	x.movslq(x86Mem{base: x86R12, index: x86RSI, scale: 4}, x86RSI)
	x.addq(x86R12, x86RSI)
	x.jmpReg(x86RSI)
	x.a.jumpTable(elf.R_X86_64_PC32, "sw.global", "sw.managed", "sw.surface", "sw.texture")

	x.a.label("sw.global")
	x.imm8(x86And, false, 0x10, x86RAX)
	x.shrl(4, x86RAX)
	x.movq(x86RBX, x86RDI)
	x.movq(x86RDX, x86RSI)
	x.movq(x86RCX, x86RDX)
	x.movl(x86R10, x86R8)
	x.pushq0()
	x.pushq(x86RAX)
	x.call(RegisterVar)
	x.jmp("pop16")

	x.a.label("sw.surface")
	x.cfaAt(48)
	x.movq(x86RBX, x86RDI)
	x.movq(x86RDX, x86RSI)
	x.movq(x86RCX, x86RDX)
	x.movl(x86R11, x86R8)
	x.movl(x86R10, x86R9)
	x.call(RegisterSurface)
	x.jmp("if.end")

	x.a.label("sw.texture")
	x.imm8(x86And, false, 0x20, x86RAX)
	x.shrl(5, x86RAX)
	x.imm8(x86Sub, true, 8, x86RSP)
	x.movq(x86RBX, x86RDI)
	x.movq(x86RDX, x86RSI)
	x.movq(x86RCX, x86RDX)
	x.movl(x86R11, x86R8)
	x.movl(x86RAX, x86R9)
	x.pushq(x86R10)
	x.call(RegisterTexture)
	x.a.label("pop16")
	x.imm8(x86Add, true, 0x10, x86RSP)
	x.jmp("if.end")

	x.a.label("sw.managed")
	x.loadq(r15(0x30), x86RSI)
	x.movq(x86RBX, x86RDI)
	x.movq(x86R9, x86R8)
	x.movl(x86R11, x86R9)
	x.call(RegisterManagedVar)
	x.jmp("if.end")

	x.a.label("while.end")
	x.imm8(x86Add, true, 8, x86RSP)
	x.popq(x86RBX)
	x.popq(x86R12)
	x.popq(x86R14)
	x.popq(x86R15)
	x.ret()
}
