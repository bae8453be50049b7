package stubs

import (
	"debug/elf"

	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/release"
)

// x86-64 CUDA and HIP wrapper code (docs/registration.md#cuda-hip). fatbin_reg
// keeps the handle in rbx across globals_reg for __cudaRegisterFatBinaryEnd
// (CUDA; HIP only aligns the stack with `push %rax`); globals_reg keeps the
// handle in rbx, the end of the entries in r14 and the entry in r15, passes the
// stack arguments with pushes (each with its call-frame rule: there is no frame
// pointer) and aligns its loop header to 16. The fatbin wrapper and the handle
// are addressed RIP-relative against the section symbols of
// .nvFatBinSegment/.hipFatBinSegment and .bss; local functions need no
// relocation; runtime calls go through the PLT.
var gpuX86 = gpuArch{
	align:      16,
	pad:        x86Nops,
	viaSection: []Target{FatbinWrapper, BinaryHandle, JumpTable, TextStartup},
	write: func(a *gpuAsm, kind GPUKind, module release.GPURegistration) {
		x := &x86Writer{a: a}
		x.fatbinReg(kind)
		x.fatbinUnreg(kind)
		x.begin(kind.prefix() + ".globals_reg")
		x86GlobalsReg[gpuGlobalsKey{module, kind}](x)
		x.a.end()
	},
}

// x86Reg is an x86-64 general register by its encoding number.
type x86Reg uint8

const (
	x86RAX x86Reg = iota
	x86RCX
	x86RDX
	x86RBX
	x86RSP
	x86RBP
	x86RSI
	x86RDI
	x86R8
	x86R9
	x86R10
	x86R11
	x86R12
	x86R13
	x86R14
	x86R15
)

// dwarf is the register's DWARF number, which orders rax, rdx, rcx, rbx.
func (r x86Reg) dwarf() uint64 {
	return [...]uint64{0, 2, 1, 3, 7, 6, 4, 5, 8, 9, 10, 11, 12, 13, 14, 15}[r]
}

// x86Cond is the condition field of jcc.
type x86Cond byte

const (
	x86E  x86Cond = 0x4
	x86NE x86Cond = 0x5
	x86A  x86Cond = 0x7
)

// x86Mem is a memory operand disp(base) or (base,index,scale).
type x86Mem struct {
	base  x86Reg
	disp  int8
	index x86Reg
	scale byte // 0: no index
}

// x86Writer writes instructions in AT&T operand order (source first) and,
// since the code has no frame pointer, a call-frame rule after each
// instruction that moves the stack pointer, as LLVM does.
type x86Writer struct {
	a   *gpuAsm
	cfa uint64 // CFA offset from rsp
	// prologueOnly: rules only where rsp goes down (Darwin, whose
	// compact unwind describes prologues: LLVM writes no epilogue CFI).
	prologueOnly bool
}

func (x *x86Writer) begin(name string) {
	x.a.begin("." + name)
	x.cfa = 8
}

// sp records that the last instruction moved rsp by -delta.
func (x *x86Writer) sp(delta int64) {
	x.cfa = uint64(int64(x.cfa) + delta)
	if delta < 0 && x.prologueOnly {
		return
	}
	x.a.rule(ehframe.DefCFAOffset(x.cfa))
}

// cfaAt starts a block that is entered with CFA offset cfa: LLVM restates
// the rule where it differs from the end of the block before.
func (x *x86Writer) cfaAt(cfa uint64) {
	if cfa != x.cfa {
		x.cfa = cfa
		x.a.rule(ehframe.DefCFAOffset(cfa))
	}
}

// saved records the prologue's register saves, at offsets -16, -24, ...
// from the CFA for regs in push order.
func (x *x86Writer) saved(regs ...x86Reg) {
	ops := make(ehframe.CFI, len(regs))
	for i, r := range regs {
		ops[len(regs)-1-i] = ehframe.Offset(r.dwarf(), -16-8*int64(i))
	}
	x.a.rule(ops...)
}

// x86REX returns the REX prefix for operand size w and the registers in
// the ModRM reg, SIB index and ModRM rm/base fields, or nothing.
func x86REX(w bool, reg, index, base x86Reg) []byte {
	rex := byte(0x40)
	if w {
		rex |= 8
	}
	rex |= byte(reg>>3)<<2 | byte(index>>3)<<1 | byte(base>>3)
	if rex == 0x40 {
		return nil
	}
	return []byte{rex}
}

// rr encodes `op %reg, %rm` with a register-direct ModRM.
func x86RR(op byte, w bool, reg, rm x86Reg) []byte {
	return append(x86REX(w, reg, 0, rm), op, 0xc0|byte(reg&7)<<3|byte(rm&7))
}

// modrm encodes memory operand m with field reg (a register or an opcode
// extension).
func (m x86Mem) modrm(reg byte) []byte {
	mod := byte(0)
	if m.disp != 0 || m.base&7 == x86RBP {
		mod = 1
	}
	var b []byte
	if m.scale == 0 && m.base&7 != x86RSP {
		b = []byte{mod<<6 | (reg&7)<<3 | byte(m.base&7)}
	} else {
		index, ss := x86RSP, byte(0) // no index
		if m.scale != 0 {
			index, ss = m.index, map[byte]byte{1: 0, 2: 1, 4: 2, 8: 3}[m.scale]
		}
		b = []byte{mod<<6 | (reg&7)<<3 | 4, ss<<6 | byte(index&7)<<3 | byte(m.base&7)}
	}
	if mod == 1 {
		b = append(b, byte(m.disp))
	}
	return b
}

// x86MR encodes `op m, %reg` (or with the operands the other way, as op
// says).
func x86MR(op byte, w bool, reg x86Reg, m x86Mem) []byte {
	index := x86RAX
	if m.scale != 0 {
		index = m.index
	}
	return append(append(x86REX(w, reg, index, m.base), op), m.modrm(byte(reg))...)
}

func (x *x86Writer) inst(b ...byte) { x.a.inst(b) }

func (x *x86Writer) pushq(r x86Reg) {
	x.a.inst(append(x86REX(false, 0, 0, r), 0x50+byte(r&7)))
	x.sp(8)
}

func (x *x86Writer) popq(r x86Reg) {
	x.a.inst(append(x86REX(false, 0, 0, r), 0x58+byte(r&7)))
	x.sp(-8)
}

// pushq0 writes `pushq $0`.
func (x *x86Writer) pushq0() {
	x.inst(0x6a, 0)
	x.sp(8)
}

func (x *x86Writer) ret() { x.inst(0xc3) }

func (x *x86Writer) movq(src, dst x86Reg)  { x.a.inst(x86RR(0x89, true, src, dst)) }
func (x *x86Writer) movl(src, dst x86Reg)  { x.a.inst(x86RR(0x89, false, src, dst)) }
func (x *x86Writer) cmpq(src, dst x86Reg)  { x.a.inst(x86RR(0x39, true, src, dst)) }
func (x *x86Writer) testq(src, dst x86Reg) { x.a.inst(x86RR(0x85, true, src, dst)) }
func (x *x86Writer) testl(src, dst x86Reg) { x.a.inst(x86RR(0x85, false, src, dst)) }
func (x *x86Writer) xorl(src, dst x86Reg)  { x.a.inst(x86RR(0x31, false, src, dst)) }
func (x *x86Writer) addq(src, dst x86Reg)  { x.a.inst(x86RR(0x01, true, src, dst)) }

// x86 group-1 operations with an 8-bit immediate (0x83 /ext).
const (
	x86Add = 0
	x86And = 4
	x86Sub = 5
	x86Cmp = 7
)

// imm8 writes `<op> $imm, %dst`; on rsp it moves the CFA.
func (x *x86Writer) imm8(ext byte, w bool, imm int8, dst x86Reg) {
	x.a.inst(append(x86REX(w, 0, 0, dst), 0x83, 0xc0|ext<<3|byte(dst&7), byte(imm)))
	if dst == x86RSP {
		x.sp(map[byte]int64{x86Add: -1, x86Sub: 1}[ext] * int64(imm))
	}
}

// shrl writes `shrl $imm, %dst`.
func (x *x86Writer) shrl(imm byte, dst x86Reg) {
	x.a.inst(append(x86REX(false, 0, 0, dst), 0xc1, 0xe8|byte(dst&7), imm))
}

func (x *x86Writer) loadq(m x86Mem, dst x86Reg)  { x.a.inst(x86MR(0x8b, true, dst, m)) }
func (x *x86Writer) loadl(m x86Mem, dst x86Reg)  { x.a.inst(x86MR(0x8b, false, dst, m)) }
func (x *x86Writer) movslq(m x86Mem, dst x86Reg) { x.a.inst(x86MR(0x63, true, dst, m)) }

// cmpImm8 writes `cmp{w,l} $imm, m`.
func (x *x86Writer) cmpImm8(word bool, imm int8, m x86Mem) {
	b := x86MR(0x83, false, x86Cmp, m)
	if word {
		b = append([]byte{0x66}, b...)
	}
	x.a.inst(append(b, byte(imm)))
}

// movlImm writes `movl $imm, %dst`.
func (x *x86Writer) movlImm(imm uint32, dst x86Reg) {
	x.a.inst(le32(append(x86REX(false, 0, 0, dst), 0xb8+byte(dst&7)), imm))
}

// jmpReg writes `jmpq *%r`.
func (x *x86Writer) jmpReg(r x86Reg) { x.a.inst(append(x86REX(false, 0, 0, r), 0xff, 0xe0|byte(r&7))) }

// rip writes `op t(%rip)` with operand reg: lea (0x8d), load (0x8b) or
// store (0x89), relocated R_X86_64_PC32.
func (x *x86Writer) rip(op byte, reg x86Reg, t Target) {
	b := append(x86REX(true, reg, 0, 0), op, byte(reg&7)<<3|5)
	x.a.inst(append(b, 0, 0, 0, 0), Reloc{Offset: uint64(len(b)), Type: elf.R_X86_64_PC32, Target: t, Addend: -4})
}

// leaLocal writes `leaq label(%rip), %reg` for a label in the section: the
// assembler resolves it.
func (x *x86Writer) leaLocal(label string, reg x86Reg) {
	head := append(x86REX(true, reg, 0, 0), 0x8d, byte(reg&7)<<3|5)
	x.a.ref(label, x86Rel32(head))
}

// call writes `callq t@PLT`.
func (x *x86Writer) call(t Target) {
	x.a.inst([]byte{0xe8, 0, 0, 0, 0}, Reloc{Offset: 1, Type: elf.R_X86_64_PLT32, Target: t, Addend: -4})
}

// callLocal writes `callq label` for a function in the section.
func (x *x86Writer) callLocal(label string) { x.a.ref(label, x86Rel32([]byte{0xe8})) }

// jmp and jcc write branches that LLVM relaxes from rel8 to rel32.
func (x *x86Writer) jmp(label string) { x.a.ref(label, x86Rel8([]byte{0xeb}), x86Rel32([]byte{0xe9})) }

func (x *x86Writer) jcc(c x86Cond, label string) {
	x.a.ref(label, x86Rel8([]byte{0x70 | byte(c)}), x86Rel32([]byte{0x0f, 0x80 | byte(c)}))
}

func x86Rel8(head []byte) gpuForm {
	n := len(head) + 1
	return gpuForm{size: n, encode: func(pc, to uint64) ([]byte, bool) {
		d := int64(to) - int64(pc) - int64(n)
		return append(head[:len(head):len(head)], byte(d)), d >= -128 && d < 128
	}}
}

func x86Rel32(head []byte) gpuForm {
	n := len(head) + 4
	return gpuForm{size: n, encode: func(pc, to uint64) ([]byte, bool) {
		d := int64(to) - int64(pc) - int64(n)
		return le32(head[:len(head):len(head)], uint32(d)), true
	}}
}

// fatbinReg writes .<p>.fatbin_reg: CUDA keeps the handle in rbx for
// __cudaRegisterFatBinaryEnd.
func (x *x86Writer) fatbinReg(kind GPUKind) {
	p := kind.prefix()
	x.begin(p + ".fatbin_reg")
	keep := kind == CUDA
	if keep {
		x.pushq(x86RBX)
		x.a.rule(ehframe.Offset(x86RBX.dwarf(), -16))
	} else {
		x.pushq(x86RAX)
	}
	x.rip(0x8d, x86RDI, FatbinWrapper) // leaq .fatbin_wrapper(%rip), %rdi
	x.call(RegisterFatBinary)
	if keep {
		x.movq(x86RAX, x86RBX)
	}
	x.rip(0x89, x86RAX, BinaryHandle) // movq %rax, .<p>.binary_handle(%rip)
	x.movq(x86RAX, x86RDI)
	x.callLocal("." + p + ".globals_reg")
	if keep {
		x.movq(x86RBX, x86RDI)
		x.call(RegisterFatBinaryEnd)
	}
	x.leaLocal("."+p+".fatbin_unreg", x86RDI)
	x.call(Atexit)
	if keep {
		x.popq(x86RBX)
	} else {
		x.popq(x86RAX)
	}
	x.ret()
	x.a.end()
}

func (x *x86Writer) fatbinUnreg(kind GPUKind) {
	name := kind.prefix() + ".fatbin_unreg"
	x.begin(name)
	x.pushq(x86RAX)
	x.rip(0x8b, x86RDI, BinaryHandle) // movq .<p>.binary_handle(%rip), %rdi
	x.call(UnregisterFatBinary)
	x.popq(x86RAX)
	x.ret()
	x.a.end()
}
