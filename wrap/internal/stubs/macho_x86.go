package stubs

import (
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/release"
)

// x86-64 Darwin CUDA and HIP wrapper code (gpu_doc.go, "Mach-O hosts"). Its
// differences from the ELF code (gpu_x86.go): every reference to a function
// or global is relocated, local ones included (objects have subsections via
// symbols), the section's own being X86_64_RELOC_BRANCH and
// X86_64_RELOC_SIGNED against the symbols; globals_reg reserves its
// stack-argument area in the prologue (`subq`) and stores the arguments
// with `movq $0`/`movl`, so the rules describe the prologue only (nothing
// after the pops, which compact unwind does not need); and HIP's jump table
// ends the section, 32-bit differences from the table, which an
// LC_DATA_IN_CODE entry marks. The register allocation differs from the
// ELF code's, so the listings are the section's own.
var machoX86 = machoArch{
	align: 16,
	pad:   x86Nops,
	frame: ehframe.FrameInfo{CodeAlign: 1, DataAlign: -8, RAReg: 16, Initial: ehframe.CFI{ehframe.DefCFA(7, 8), ehframe.Offset(16, -8)}},
	write: func(a *gpuAsm, kind GPUKind, _ release.GPURegistration) ([]uint32, int) {
		x := &x86Darwin{x86Writer: &x86Writer{a: a, prologueOnly: true}}
		x.fatbinReg(kind)
		x.fatbinUnreg(kind)
		x.begin(kind.prefix() + ".globals_reg")
		table := x86DarwinGlobals[kind](x)
		return x.unwind, table
	},
}

// x86Darwin writes the Darwin listings and the compact unwind encoding of
// each function.
type x86Darwin struct {
	*x86Writer
	unwind []uint32
}

// compact records the function's compact unwind encoding after its
// prologue, which pushed saved (in this order) and left the CFA x.cfa
// bytes above rsp.
func (x *x86Darwin) compact(saved ...x86Reg) {
	x.unwind = append(x.unwind, x86CompactUnwind(x.cfa, saved))
}

// x86CompactUnwind is the encoding that LLVM's DarwinX86AsmBackend derives
// from a frameless prologue (<mach-o/compact_unwind_encoding.h>):
// UNWIND_X86_64_MODE_STACK_IMMD, the stack size in 8-byte words (return
// address included) in bits 16–23, the number of saved registers in bits
// 10–12 and their order, a permutation number, in bits 0–9. The registers
// are numbered rbx 1, r12 2, r13 3, r14 4, r15 5, rbp 6; from the lowest
// address (the last pushed) up, each is renumbered among those not yet
// taken, and the renumbered list is read as a mixed-radix number.
func x86CompactUnwind(stack uint64, saved []x86Reg) uint32 {
	number := map[x86Reg]uint32{x86RBX: 1, x86R12: 2, x86R13: 3, x86R14: 4, x86R15: 5, x86RBP: 6}
	n := len(saved)
	weights := [...][]uint32{1: {1}, 2: {5, 1}, 3: {20, 4, 1}, 4: {60, 12, 3, 1}, 5: {120, 24, 6, 2, 1}, 6: {120, 24, 6, 2, 1}}
	perm := uint32(0)
	for i := range n {
		r := number[saved[n-1-i]]
		less := uint32(0)
		for j := range i {
			if number[saved[n-1-j]] < r {
				less++
			}
		}
		if i < len(weights[n]) {
			perm += weights[n][i] * (r - less - 1)
		}
	}
	return 0x02000000 | uint32(stack/8)<<16 | uint32(n)<<10 | perm
}

// storeZero writes `movq $0, disp(%rsp)` (or movl): a stack argument.
func (x *x86Darwin) storeZero(w bool, disp int8) {
	x.a.inst(le32(x86MR(0xc7, w, 0, x86Mem{base: x86RSP, disp: disp}), 0))
}

// storeArg writes `movl %src, disp(%rsp)`.
func (x *x86Darwin) storeArg(src x86Reg, disp int8) {
	x.a.inst(x86MR(0x89, false, src, x86Mem{base: x86RSP, disp: disp}))
}

// fatbinReg is the ELF code's (gpu_x86.go) but for the relocated
// references to globals_reg and fatbin_unreg.
func (x *x86Darwin) fatbinReg(kind GPUKind) {
	x.begin(kind.prefix() + ".fatbin_reg")
	keep := kind == CUDA
	if keep {
		x.pushq(x86RBX)
		x.a.rule(ehframe.Offset(x86RBX.dwarf(), -16))
		x.compact(x86RBX)
	} else {
		x.pushq(x86RAX)
		x.compact()
	}
	x.rip(0x8d, x86RDI, FatbinWrapper) // leaq _.fatbin_wrapper(%rip), %rdi
	x.call(RegisterFatBinary)
	if keep {
		x.movq(x86RAX, x86RBX)
	}
	x.rip(0x89, x86RAX, BinaryHandle) // movq %rax, _.<p>.binary_handle(%rip)
	x.movq(x86RAX, x86RDI)
	x.call(GlobalsReg)
	if keep {
		x.movq(x86RBX, x86RDI)
		x.call(RegisterFatBinaryEnd)
	}
	x.rip(0x8d, x86RDI, FatbinUnreg) // leaq _.<p>.fatbin_unreg(%rip), %rdi
	x.call(Atexit)
	if keep {
		x.popq(x86RBX)
	} else {
		x.popq(x86RAX)
	}
	x.ret()
	x.a.end()
}

func (x *x86Darwin) fatbinUnreg(kind GPUKind) {
	x.begin(kind.prefix() + ".fatbin_unreg")
	x.pushq(x86RAX)
	x.compact()
	x.rip(0x8b, x86RDI, BinaryHandle) // movq _.<p>.binary_handle(%rip), %rdi
	x.call(UnregisterFatBinary)
	x.popq(x86RAX)
	x.ret()
	x.a.end()
}

// x86DarwinGlobals are the bodies of .<p>.globals_reg of the Kind-checking
// module (the only one Mach-O hosts have); each returns the number of
// entries of its jump table.
var x86DarwinGlobals = map[GPUKind]func(x *x86Darwin) int{
	CUDA: x86DarwinGlobalsCUDA,
	HIP:  x86DarwinGlobalsHIP,
}

// loopStart pushes saved, reserves frame bytes (the stack arguments, and
// the stack's alignment) and enters the loop over [section$start,
// section$end): r15 the entry, r14 the end, rbx the handle.
func (x *x86Darwin) loopStart(frame int8, saved ...x86Reg) {
	for _, r := range saved {
		x.pushq(r)
	}
	x.imm8(x86Sub, true, frame, x86RSP)
	x.saved(saved...)
	x.compact(saved...)
	x.rip(0x8d, x86R14, EntriesStop)  // leaq section$end$...(%rip), %r14
	x.rip(0x8d, x86R15, EntriesStart) // leaq section$start$...(%rip), %r15
	x.cmpq(x86R14, x86R15)
	x.jcc(x86E, "while.end")
	x.movq(x86RDI, x86RBX)
}

// loopBody is if.then, the aligned latch and the Kind check, up to the
// size's test: __<p>RegisterFunction(h, addr, name, name, -1, null, null,
// null, null, null) with the last four arguments stored on the stack, addr
// in rdx, name in rcx, size in the register given.
func (x *x86Darwin) loopBody(kind int8, size x86Reg) {
	x.a.label("if.then")
	for _, d := range []int8{0x18, 0x10, 8, 0} {
		x.storeZero(true, d)
	}
	x.movq(x86RBX, x86RDI)
	x.movq(x86RDX, x86RSI)
	x.movq(x86RCX, x86RDX)
	x.movlImm(0xffffffff, x86R8)
	x.xorl(x86R9, x86R9)
	x.call(RegisterFunction)
	x.a.alignTo(16)
	x86Latch(x.x86Writer, 0x38)
	x.a.label("while.entry")
	x.cmpImm8(true, kind, r15(0xa)) // cmpw $kind, kind
	x.jcc(x86NE, "if.end")
	x.loadq(r15(0x10), x86RDX) // addr
	x.loadq(r15(0x18), x86RCX) // name
	x.loadq(r15(0x20), size)
	x.testq(size, size)
	x.jcc(x86E, "if.then")
}

// epilogue frees the frame and pops saved in reverse.
func (x *x86Darwin) epilogue(frame int8, saved ...x86Reg) {
	x.a.label("while.end")
	x.imm8(x86Add, true, frame, x86RSP)
	for _, r := range saved {
		x.popq(r)
	}
	x.ret()
}

// x86DarwinGlobalsCUDA: cases 1 (managed) and 0 by compares.
func x86DarwinGlobalsCUDA(x *x86Darwin) int {
	x.loopStart(0x20, x86R15, x86R14, x86RBX)
	x.jmp("while.entry")
	x.loopBody(2, x86RAX)
	x.loadl(r15(0xc), x86RSI) // flags
	x.movl(x86RSI, x86RDI)
	x.imm8(x86And, false, 7, x86RDI)
	x.imm8(x86Cmp, false, 1, x86RDI)
	x.jcc(x86E, "sw.managed")
	x.testl(x86RDI, x86RDI)
	x.jcc(x86NE, "if.end")

	x.movl(x86RSI, x86R8)
	x.imm8(x86And, false, 8, x86R8)
	x.shrl(3, x86R8) // extern
	x.imm8(x86And, false, 0x10, x86RSI)
	x.shrl(4, x86RSI) // constant
	x.storeArg(x86RSI, 0)
	x.storeZero(false, 8)
	x.movq(x86RBX, x86RDI)
	x.movq(x86RDX, x86RSI)
	x.movq(x86RCX, x86RDX)
	x.movq(x86RAX, x86R9)
	x.call(RegisterVar)
	x.jmp("if.end")

	x.a.label("sw.managed")
	x.loadq(r15(0x30), x86RSI) // aux_addr
	x.loadl(r15(0x28), x86R9)  // (i32)data
	x.movq(x86RBX, x86RDI)
	x.movq(x86RAX, x86R8)
	x.call(RegisterManagedVar)
	x.jmp("if.end")
	x.epilogue(0x20, x86RBX, x86R14, x86R15)
	x.a.end()
	return 0
}

// x86DarwinGlobalsHIP: four cases through a jump table at the end of the
// section, addressed from r12; its entries are the blocks' distances from
// the table, which the assembler resolves (no relocation).
func x86DarwinGlobalsHIP(x *x86Darwin) int {
	x.loopStart(0x28, x86R15, x86R14, x86R12, x86RBX)
	x.leaLocal("jump.table", x86R12)
	x.jmp("while.entry")
	x.loopBody(4, x86R11)
	x.loadl(r15(0xc), x86R9) // flags
	x.movl(x86R9, x86RSI)
	x.imm8(x86And, false, 7, x86RSI)
	x.imm8(x86Cmp, false, 3, x86RSI)
	x.jcc(x86A, "if.end")
	x.loadl(r15(0x28), x86RAX) // (i32)data
	x.movl(x86R9, x86R10)
	x.imm8(x86And, false, 8, x86R10)
	x.shrl(3, x86R10) // extern
	x.movl(x86RSI, x86RSI)
	x.movslq(x86Mem{base: x86R12, index: x86RSI, scale: 4}, x86RSI)
	x.addq(x86R12, x86RSI)
	x.jmpReg(x86RSI)

	x.a.label("sw.global")
	x.imm8(x86And, false, 0x10, x86R9)
	x.shrl(4, x86R9) // constant
	x.storeArg(x86R9, 0)
	x.storeZero(false, 8)
	x.movq(x86RBX, x86RDI)
	x.movq(x86RDX, x86RSI)
	x.movq(x86RCX, x86RDX)
	x.movl(x86R10, x86R8)
	x.movq(x86R11, x86R9)
	x.call(RegisterVar)
	x.jmp("if.end")

	x.a.label("sw.surface")
	x.movq(x86RBX, x86RDI)
	x.movq(x86RDX, x86RSI)
	x.movq(x86RCX, x86RDX)
	x.movl(x86RAX, x86R8)
	x.movl(x86R10, x86R9)
	x.call(RegisterSurface)
	x.jmp("if.end")

	x.a.label("sw.texture")
	x.imm8(x86And, false, 0x20, x86R9)
	x.shrl(5, x86R9) // normalized
	x.storeArg(x86R10, 0)
	x.movq(x86RBX, x86RDI)
	x.movq(x86RDX, x86RSI)
	x.movq(x86RCX, x86RDX)
	x.movl(x86RAX, x86R8)
	x.call(RegisterTexture)
	x.jmp("if.end")

	x.a.label("sw.managed")
	x.loadq(r15(0x30), x86RSI) // aux_addr
	x.movq(x86RBX, x86RDI)
	x.movq(x86R11, x86R8)
	x.movl(x86RAX, x86R9)
	x.call(RegisterManagedVar)
	x.jmp("if.end")
	x.epilogue(0x28, x86RBX, x86R12, x86R14, x86R15)
	x.a.end()

	cases := []string{"sw.global", "sw.managed", "sw.surface", "sw.texture"}
	x.a.alignTo(4)
	x.a.label("jump.table")
	for i, l := range cases {
		x.a.ref(l, x86TableEntry(i))
	}
	return len(cases)
}

// x86TableEntry is entry i of a jump table: the distance of its block from
// the table's start, 4i bytes before the entry.
func x86TableEntry(i int) gpuForm {
	return gpuForm{size: 4, encode: func(pc, to uint64) ([]byte, bool) {
		return le32(nil, uint32(int64(to)-int64(pc)+int64(4*i))), true
	}}
}
