package stubs

import (
	"debug/elf"
	"encoding/binary"
	"fmt"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// GlobalsReg is `.cuda.globals_reg` (HIP: `.hip.globals_reg`) where the
// code calls it through a relocation: on COFF hosts LLVM relocates every
// reference to a function of the section against the function's own
// symbol, where on ELF the assembler resolves it; so on Mach-O hosts
// ([MachOGPU]), whose objects have subsections via symbols.
const GlobalsReg Target = 200

func init() { gpuTargetNames[GlobalsReg] = "GlobalsReg" }

// WinCode is `.text.startup` of a wrapper object for an x86-64 Windows host
// (x86_64-pc-windows-msvc, x86_64-w64-windows-gnu; both use the Microsoft
// x64 calling convention) as LLVM's code generator emits it
// (docs/registration.md#windows), with what the object's `.xdata`, `.pdata`
// and `.rdata` need.
type WinCode struct {
	Text  []byte // contents of .text.startup, padding included
	Align uint64 // of .text.startup and of each function
	// Funcs are the functions in section order: OpenMP's
	// .omp_offloading.descriptor_reg and _unreg; CUDA's and HIP's
	// .<p>.fatbin_reg, .<p>.fatbin_unreg and .<p>.globals_reg.
	Funcs []WinFunc
	// Relocs are the IMAGE_REL_AMD64_REL32 relocations of .text.startup in
	// offset order; the addend is in Text already.
	Relocs []WinReloc
	// JumpTable is the switch of HIP's globals_reg: 32-bit entries in
	// `.rdata`, each the distance from the table to a block of
	// .text.startup, written by REL32 relocations against the section
	// symbol of .text.startup whose addends are in Data. Nil for the others.
	JumpTable *WinJumpTable
	// Symbols names the undefined symbol of each such target the code
	// refers to (runtime functions, atexit, __start_/__stop_).
	Symbols map[Target]string
}

// WinFunc is one function of a WinCode.
type WinFunc struct {
	Name         string
	Offset, Size uint64 // in .text.startup; Size ends after the last instruction
	// Unwind is the function's UNWIND_INFO as `.xdata` holds it (version
	// 1, no handler, no frame register; the unwind codes of the prologue
	// in reverse order, padded to an even count).
	Unwind []byte
}

// WinReloc is an IMAGE_REL_AMD64_REL32 relocation.
type WinReloc struct {
	Offset uint64
	Target Target
}

// WinJumpTable is the jump table of a WinCode.
type WinJumpTable struct {
	Data   []byte
	Relocs []WinReloc // against TextStartup
}

// Windows x64 unwind operations (UNWIND_CODE.UnwindOp).
const (
	uwopPushNonvol = 0
	uwopAllocSmall = 2
)

// winWriter writes Windows x64 functions over the x86-64 writer, keeping
// the unwind codes of each prologue. The call-frame rules the x86-64 writer
// records are for .eh_frame and are ignored.
type winWriter struct {
	x      *x86Writer
	prolog int      // bytes of the current prologue
	codes  [][2]int // offset after the instruction, op | info<<4
	unwind [][]byte // per function
}

func (w *winWriter) begin(name string) {
	w.x.begin(name)
	w.prolog, w.codes = 0, nil
}

// push writes `pushq %r` in the prologue.
func (w *winWriter) push(r x86Reg) {
	w.x.pushq(r)
	w.prolog++
	if r >= x86R8 {
		w.prolog++
	}
	w.codes = append(w.codes, [2]int{w.prolog, uwopPushNonvol | int(r)<<4})
}

// alloc writes `subq $n, %rsp` in the prologue (n from 8 to 128, a
// multiple of 8).
func (w *winWriter) alloc(n int8) {
	w.x.imm8(x86Sub, true, n, x86RSP)
	w.prolog += 4
	w.codes = append(w.codes, [2]int{w.prolog, uwopAllocSmall | (int(n)-8)/8<<4})
}

// endPrologue records the function's UNWIND_INFO.
func (w *winWriter) endPrologue() {
	b := []byte{1, byte(w.prolog), byte(len(w.codes)), 0}
	for i := len(w.codes) - 1; i >= 0; i-- {
		b = append(b, byte(w.codes[i][0]), byte(w.codes[i][1]))
	}
	if len(w.codes)%2 == 1 {
		b = append(b, 0, 0)
	}
	w.unwind = append(w.unwind, b)
}

// end writes the function's end.
func (w *winWriter) end() { w.x.a.end() }

// rsp is the memory operand disp(%rsp).
func rsp(disp int8) x86Mem { return x86Mem{base: x86RSP, disp: disp} }

// rbx is the memory operand disp(%rbx).
func rbx(disp int8) x86Mem { return x86Mem{base: x86RBX, disp: disp} }

// storeImm writes `mov{q,l} $imm, m`.
func (w *winWriter) storeImm(q bool, imm uint32, m x86Mem) {
	w.x.a.inst(le32(x86MR(0xc7, q, 0, m), imm))
}

// store writes `mov{q,l} %r, m`.
func (w *winWriter) store(q bool, r x86Reg, m x86Mem) { w.x.a.inst(x86MR(0x89, q, r, m)) }

// winX86Writer returns a writer of 16-byte aligned functions padded with
// LLVM's x86 nops.
func winX86Writer() *winWriter {
	return &winWriter{x: &x86Writer{a: &gpuAsm{align: 16, pad: x86Nops}}}
}

// checkWinRelease returns release llvm if goffload knows its COFF wrapper
// ([release.Wrapper.COFFBounds]): 22's, measured (clang-linker-wrapper-22's
// --save-temps objects for both Windows triples, and llc-22 of its
// modules), and 23's and 24's, the modules their sources build compiled by
// llc-22.
func checkWinRelease(what string, llvm int) (*release.Release, error) {
	rel, err := release.Lookup(llvm)
	if err != nil || rel.Wrapper.COFFBounds == release.COFFBoundsNone {
		return nil, fmt.Errorf("%s for a Windows host, LLVM %d: %w (known: LLVM 22 to 24)", what, llvm, goffload.ErrUnsupported)
	}
	return rel, nil
}

// WinOpenMP returns `.text.startup` of the OpenMP wrapper object of
// release llvm (22 to 24: the same code) for an x86-64 Windows host: descriptor_reg registers
// the descriptor and unreg with atexit; descriptor_unreg unregisters it.
func WinOpenMP(llvm int) (*WinCode, error) {
	if _, err := checkWinRelease("OpenMP wrapper code", llvm); err != nil {
		return nil, err
	}
	w := winX86Writer()
	x := w.x
	w.begin("omp_offloading.descriptor_reg")
	w.alloc(0x28)
	w.endPrologue()
	x.rip(0x8d, x86RCX, Descriptor)
	x.call(RegisterLib)
	x.rip(0x8d, x86RCX, Unreg)
	x.call(Atexit)
	w.epilogue(0x28)
	w.end()
	w.begin("omp_offloading.descriptor_unreg")
	w.alloc(0x28)
	w.endPrologue()
	x.rip(0x8d, x86RCX, Descriptor)
	x.call(UnregisterLib)
	w.epilogue(0x28)
	w.end()
	c := w.assemble()
	for _, r := range c.Relocs {
		if s := r.Target.Symbol(); s != "" {
			c.Symbols[r.Target] = s
		}
	}
	return c, nil
}

// epilogue writes the nop that follows a call right before an epilogue
// (so that the return address is not in the epilogue), `addq $n, %rsp`
// and the return.
func (w *winWriter) epilogue(n int8, pops ...x86Reg) {
	w.x.inst(0x90)
	w.x.imm8(x86Add, true, n, x86RSP)
	for _, r := range pops {
		w.x.popq(r)
	}
	w.x.ret()
}

// WinGPU returns `.text.startup` of the CUDA or HIP wrapper object of
// release llvm (22 to 24) for an x86-64 Windows host; from 24 the loop
// over the entries begins one entry after __start_, past its sentinel
// ([release.COFFBoundsSentinel]).
func WinGPU(kind GPUKind, llvm int) (*WinCode, error) {
	if kind != CUDA && kind != HIP {
		return nil, fmt.Errorf("gpu wrapper code: kind %v: %w", kind, goffload.ErrUnsupported)
	}
	rel, err := checkWinRelease(kind.String()+" wrapper code", llvm)
	if err != nil {
		return nil, err
	}
	if rel.Wrapper.GPU != release.GPURegistrationKindCheck {
		return nil, fmt.Errorf("%v wrapper code for a Windows host, LLVM %d: %w", kind, llvm, goffload.ErrUnsupported)
	}
	w := winX86Writer()
	w.fatbinReg(kind)
	w.fatbinUnreg(kind)
	w.begin(kind.prefix() + ".globals_reg")
	if kind == HIP {
		w.globalsHIP()
	} else {
		w.globalsCUDA()
	}
	w.end()
	c := w.assemble()
	entries := offload.EntriesSection(rel, kind.offloadKind())
	for _, r := range c.Relocs {
		if s := kind.symbol(r.Target, entries); s != "" {
			c.Symbols[r.Target] = s
		}
		if r.Target == EntriesStart && rel.Wrapper.COFFBounds == release.COFFBoundsSentinel {
			// The loop begins after __start_'s sentinel entry:
			// leaq __start_+56(%rip), the addend in the field.
			binary.LittleEndian.PutUint32(c.Text[r.Offset:], uint32(rel.Entries.Size))
		}
	}
	return c, nil
}

// fatbinReg writes .<p>.fatbin_reg: CUDA keeps the handle in rsi (saved:
// it is non-volatile in the Microsoft x64 convention) for
// __cudaRegisterFatBinaryEnd.
func (w *winWriter) fatbinReg(kind GPUKind) {
	x := w.x
	w.begin(kind.prefix() + ".fatbin_reg")
	keep := kind == CUDA
	frame := int8(0x28)
	if keep {
		w.push(x86RSI)
		frame = 0x20
	}
	w.alloc(frame)
	w.endPrologue()
	x.rip(0x8d, x86RCX, FatbinWrapper)
	x.call(RegisterFatBinary)
	if keep {
		x.movq(x86RAX, x86RSI)
	}
	x.rip(0x89, x86RAX, BinaryHandle)
	x.movq(x86RAX, x86RCX)
	x.call(GlobalsReg)
	if keep {
		x.movq(x86RSI, x86RCX)
		x.call(RegisterFatBinaryEnd)
	}
	x.rip(0x8d, x86RCX, FatbinUnreg)
	x.call(Atexit)
	if keep {
		w.epilogue(frame, x86RSI)
	} else {
		w.epilogue(frame)
	}
	w.end()
}

func (w *winWriter) fatbinUnreg(kind GPUKind) {
	x := w.x
	w.begin(kind.prefix() + ".fatbin_unreg")
	w.alloc(0x28)
	w.endPrologue()
	x.rip(0x8b, x86RCX, BinaryHandle)
	x.call(UnregisterFatBinary)
	w.epilogue(0x28)
	w.end()
}

// globalsHead writes globals_reg up to the entry's size in rax: the
// prologue saving regs and allocating frame bytes, the loop over
// [__start_, __stop_) with the entry in rbx and the end in rdi, the handle
// in rsi, the kernel's registration (if.then, before the aligned latch)
// and the check of the entry's kind.
func (w *winWriter) globalsHead(regs []x86Reg, frame int8, kind int8, withTable bool) {
	x := w.x
	for _, r := range regs {
		w.push(r)
	}
	w.alloc(frame)
	w.endPrologue()
	x.rip(0x8d, x86RDI, EntriesStop)
	x.rip(0x8d, x86RBX, EntriesStart)
	x.cmpq(x86RDI, x86RBX)
	x.jcc(x86E, "while.end")
	x.movq(x86RCX, x86RSI)
	if withTable {
		x.rip(0x8d, x86R14, JumpTable)
	}
	x.jmp("while.entry")

	// __<p>RegisterFunction(handle, addr, name, name, -1, 0, 0, 0, 0, 0):
	// the last six on the stack above the 32 bytes of shadow space.
	x.a.label("if.then")
	for d := int8(0x48); d >= 0x28; d -= 8 {
		w.storeImm(true, 0, rsp(d))
	}
	w.storeImm(false, 0xffffffff, rsp(0x20))
	w.args3()
	x.call(RegisterFunction)
	x.a.alignTo(16)
	x.a.label("if.end")
	x.imm8(x86Add, true, 0x38, x86RBX)
	x.cmpq(x86RDI, x86RBX)
	x.jcc(x86E, "while.end")
	x.a.label("while.entry")
	x.cmpImm8(true, kind, rbx(0xa))
	x.jcc(x86NE, "if.end")
	x.loadq(rbx(0x10), x86R8) // addr
	x.loadq(rbx(0x18), x86R9) // name
	x.loadq(rbx(0x20), x86RAX)
	x.testq(x86RAX, x86RAX)
	x.jcc(x86E, "if.then")
}

// args3 moves the handle, addr and name to the first three arguments.
func (w *winWriter) args3() {
	w.x.movq(x86RSI, x86RCX)
	w.x.movq(x86R8, x86RDX)
	w.x.movq(x86R9, x86R8)
}

// globalsCUDA: variables (case 0) and managed variables (case 1).
func (w *winWriter) globalsCUDA() {
	x := w.x
	w.globalsHead([]x86Reg{x86RSI, x86RDI, x86RBX}, 0x50, 2, false)
	x.loadl(rbx(0xc), x86RCX) // flags
	x.movl(x86RCX, x86RDX)
	x.imm8(x86And, false, 7, x86RDX)
	x.imm8(x86Cmp, false, 1, x86RDX)
	x.jcc(x86E, "sw.managed")
	x.testl(x86RDX, x86RDX)
	x.jcc(x86NE, "if.end")
	x.movl(x86RCX, x86RDX)
	x.imm8(x86And, false, 8, x86RDX)
	x.shrl(3, x86RDX) // extern
	x.imm8(x86And, false, 0x10, x86RCX)
	x.shrl(4, x86RCX) // constant
	w.registerVar()
	x.jmp("if.end")

	x.a.label("sw.managed")
	x.loadq(rbx(0x30), x86RDX) // aux_addr
	x.loadl(rbx(0x28), x86RCX) // (i32)data
	w.store(false, x86RCX, rsp(0x28))
	w.store(true, x86RAX, rsp(0x20))
	x.movq(x86RSI, x86RCX)
	x.call(RegisterManagedVar)
	x.jmp("if.end")

	x.a.label("while.end")
	w.x.imm8(x86Add, true, 0x50, x86RSP)
	x.popq(x86RBX)
	x.popq(x86RDI)
	x.popq(x86RSI)
	x.ret()
}

// registerVar calls __<p>RegisterVar(handle, addr, name, name, extern
// (edx), size (rax), constant (ecx), 0).
func (w *winWriter) registerVar() {
	w.store(false, x86RCX, rsp(0x30))
	w.store(true, x86RAX, rsp(0x28))
	w.store(false, x86RDX, rsp(0x20))
	w.storeImm(false, 0, rsp(0x38))
	w.args3()
	w.x.call(RegisterVar)
}

// globalsHIP: four cases through a jump table in .rdata addressed from r14.
func (w *winWriter) globalsHIP() {
	x := w.x
	w.globalsHead([]x86Reg{x86R14, x86RSI, x86RDI, x86RBX}, 0x58, 4, true)
	x.loadl(rbx(0xc), x86RCX) // flags
	x.movl(x86RCX, x86R11)
	x.imm8(x86And, false, 7, x86R11)
	x.imm8(x86Cmp, false, 3, x86R11)
	x.jcc(x86A, "if.end")
	x.loadl(rbx(0x28), x86R10) // (i32)data
	x.movl(x86RCX, x86RDX)
	x.imm8(x86And, false, 8, x86RDX)
	x.shrl(3, x86RDX) // extern
	x.movl(x86R11, x86R11)
	x.movslq(x86Mem{base: x86R14, index: x86R11, scale: 4}, x86R11)
	x.addq(x86R14, x86R11)
	x.jmpReg(x86R11)
	x.a.jumpTable(elf.R_X86_64_PC32, "sw.global", "sw.managed", "sw.surface", "sw.texture")

	x.a.label("sw.global")
	x.imm8(x86And, false, 0x10, x86RCX)
	x.shrl(4, x86RCX)
	w.registerVar()
	x.jmp("if.end")

	x.a.label("sw.surface")
	w.store(false, x86RDX, rsp(0x28))
	w.store(false, x86R10, rsp(0x20))
	w.args3()
	x.call(RegisterSurface)
	x.jmp("if.end")

	x.a.label("sw.texture")
	x.imm8(x86And, false, 0x20, x86RCX)
	x.shrl(5, x86RCX) // normalized
	w.store(false, x86RDX, rsp(0x30))
	w.store(false, x86RCX, rsp(0x28))
	w.store(false, x86R10, rsp(0x20))
	w.args3()
	x.call(RegisterTexture)
	x.jmp("if.end")

	x.a.label("sw.managed")
	x.loadq(rbx(0x30), x86RDX) // aux_addr
	w.store(false, x86R10, rsp(0x28))
	w.store(true, x86RAX, rsp(0x20))
	x.movq(x86RSI, x86RCX)
	x.call(RegisterManagedVar)
	x.jmp("if.end")

	x.a.label("while.end")
	x.imm8(x86Add, true, 0x58, x86RSP)
	x.popq(x86RBX)
	x.popq(x86RDI)
	x.popq(x86RSI)
	x.popq(x86R14)
	x.ret()
}

// assemble lays the functions out and turns the x86-64 writer's
// PC-relative relocations (addend -4, as ELF writes it) into REL32 ones
// with the addend in the bytes, as COFF keeps it: REL32 is relative to the
// end of the 4-byte field.
func (w *winWriter) assemble() *WinCode {
	g := w.x.a.assemble()
	c := &WinCode{Text: g.Text, Align: g.Align, Symbols: map[Target]string{}}
	for i, f := range g.Funcs {
		c.Funcs = append(c.Funcs, WinFunc{Name: f.Name, Offset: f.Offset, Size: f.Size, Unwind: w.unwind[i]})
	}
	inline := func(b []byte, off uint64, add int64) {
		binary.LittleEndian.PutUint32(b[off:], binary.LittleEndian.Uint32(b[off:])+uint32(add+4))
	}
	for _, r := range g.Relocs {
		inline(c.Text, r.Offset, r.Addend)
		c.Relocs = append(c.Relocs, WinReloc{Offset: r.Offset, Target: r.Target})
	}
	if t := g.JumpTable; t != nil {
		jt := &WinJumpTable{Data: t.Data}
		for _, r := range t.Relocs {
			inline(jt.Data, r.Offset, r.Addend)
			jt.Relocs = append(jt.Relocs, WinReloc{Offset: r.Offset, Target: r.Target})
		}
		c.JumpTable = jt
	}
	return c
}
