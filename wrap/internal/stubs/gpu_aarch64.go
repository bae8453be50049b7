package stubs

import (
	"debug/elf"

	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/release"
)

// AArch64 CUDA and HIP wrapper code (docs/registration.md#cuda-hip). (The file
// is not named gpu_arm64.go, which Go would build on arm64 only.) Functions are
// aligned to 4, so nothing pads them; branches have one size. fatbin_reg saves
// x19 with x30 to keep the handle (CUDA); globals_reg has a 48-byte frame whose
// first 16 bytes hold the stack arguments of __<p>RegisterFunction. The fatbin
// wrapper and the handle are addressed page-relative against the section
// symbols of .nvFatBinSegment/.hipFatBinSegment and .bss, and so is
// fatbin_unreg (against .text.startup), which x86-64 resolves; the call of
// globals_reg needs no relocation. The only mapping symbol is `$x` at the
// start; llc lowers the switch to compares on all releases (no jump table).
var gpuARM64 = gpuArch{
	align:      4,
	pad:        func(n int) []byte { return make([]byte, n) }, // never used: every function is a multiple of 4
	viaSection: []Target{FatbinWrapper, BinaryHandle, FatbinUnreg},
	write: func(a *gpuAsm, kind GPUKind, module release.GPURegistration) {
		w := &arm64Writer{a: a}
		w.fatbinReg(kind)
		w.fatbinUnreg(kind)
		a.begin("." + kind.prefix() + ".globals_reg")
		arm64GlobalsReg[gpuGlobalsKey{module, kind}](w)
		a.end()
	},
}

// arm64Writer writes AArch64 instructions; registers are numbers, 31 being
// sp or xzr/wzr as the instruction reads it.
type arm64Writer struct {
	a *gpuAsm
	// frameRecord: functions save x29 with x30, Darwin's frame record
	// (macho_aarch64.go).
	frameRecord bool
}

const arm64ZR = 31 // xzr, wzr

// AArch64 condition codes.
const (
	arm64EQ = 0x0
	arm64NE = 0x1
	arm64GT = 0xc
)

func (w *arm64Writer) word(x uint32, relocs ...Reloc) { w.a.inst(le32(nil, x), relocs...) }

// pair encodes LDP/STP of 64-bit (x) or 32-bit registers; mode is 1 for
// post-index, 2 for a signed offset, 3 for pre-index.
func arm64Pair(x, load bool, mode uint32, rt, rt2, rn uint32, imm int32) uint32 {
	opc, scale := uint32(0), int32(4)
	if x {
		opc, scale = 2, 8
	}
	l := uint32(0)
	if load {
		l = 1
	}
	return 0x28000000 | opc<<30 | mode<<23 | l<<22 | uint32(imm/scale)&0x7f<<15 | rt2<<10 | rn<<5 | rt
}

func (w *arm64Writer) stpPre(rt, rt2, rn uint32, imm int32) {
	w.word(arm64Pair(true, false, 3, rt, rt2, rn, imm))
}
func (w *arm64Writer) ldpPost(rt, rt2, rn uint32, imm int32) {
	w.word(arm64Pair(true, true, 1, rt, rt2, rn, imm))
}
func (w *arm64Writer) stp(rt, rt2, rn uint32, imm int32) {
	w.word(arm64Pair(true, false, 2, rt, rt2, rn, imm))
}
func (w *arm64Writer) ldp(rt, rt2, rn uint32, imm int32) {
	w.word(arm64Pair(true, true, 2, rt, rt2, rn, imm))
}

// ldpW writes `ldp wt, wt2, [xn, #imm]`.
func (w *arm64Writer) ldpW(rt, rt2, rn uint32, imm int32) {
	w.word(arm64Pair(false, true, 2, rt, rt2, rn, imm))
}

// ldr writes LDR (unsigned offset) of size bytes (2: ldrh, 4: w, 8: x).
func (w *arm64Writer) ldr(size, rt, rn uint32, imm uint32) {
	sz := map[uint32]uint32{2: 1, 4: 2, 8: 3}[size]
	w.word(sz<<30 | 0x39400000 | imm/size<<10 | rn<<5 | rt)
}

// addImm and subImm write `add/sub xd, xn, #imm`.
func (w *arm64Writer) addImm(rd, rn, imm uint32) { w.word(0x91000000 | imm<<10 | rn<<5 | rd) }
func (w *arm64Writer) subImm(rd, rn, imm uint32) { w.word(0xd1000000 | imm<<10 | rn<<5 | rd) }

// cmpImmW writes `cmp wn, #imm` (SUBS wzr).
func (w *arm64Writer) cmpImmW(rn, imm uint32) { w.word(0x71000000 | imm<<10 | rn<<5 | arm64ZR) }

// cmpX writes `cmp xn, xm` (SUBS xzr, shifted register).
func (w *arm64Writer) cmpX(rn, rm uint32) { w.word(0xeb000000 | rm<<16 | rn<<5 | arm64ZR) }

// movX and movW write `mov xd, xm` / `mov wd, wm` (ORR with the zero
// register); m may be arm64ZR.
func (w *arm64Writer) movX(rd, rm uint32) { w.word(0xaa0003e0 | rm<<16 | rd) }
func (w *arm64Writer) movW(rd, rm uint32) { w.word(0x2a0003e0 | rm<<16 | rd) }

// movMinus1W writes `mov wd, #-1` (MOVN wd, #0).
func (w *arm64Writer) movMinus1W(rd uint32) { w.word(0x12800000 | rd) }

// andLowW writes `and wd, wn, #(1<<bits)-1`.
func (w *arm64Writer) andLowW(rd, rn, bits uint32) { w.word(0x12000000 | (bits-1)<<10 | rn<<5 | rd) }

// ubfxW writes `ubfx wd, wn, #lsb, #width`.
func (w *arm64Writer) ubfxW(rd, rn, lsb, width uint32) {
	w.word(0x53000000 | lsb<<16 | (lsb+width-1)<<10 | rn<<5 | rd)
}

func (w *arm64Writer) ret() { w.word(0xd65f03c0) }

// addr writes `adrp xd, t; add xd, xd, :lo12:t`.
func (w *arm64Writer) addr(rd uint32, t Target) {
	w.word(0x90000000|rd, Reloc{Type: elf.R_AARCH64_ADR_PREL_PG_HI21, Target: t})
	w.addImmReloc(rd, rd, t)
}

func (w *arm64Writer) addImmReloc(rd, rn uint32, t Target) {
	w.word(0x91000000|rn<<5|rd, Reloc{Type: elf.R_AARCH64_ADD_ABS_LO12_NC, Target: t})
}

// adrp writes `adrp xd, t`.
func (w *arm64Writer) adrp(rd uint32, t Target) {
	w.word(0x90000000|rd, Reloc{Type: elf.R_AARCH64_ADR_PREL_PG_HI21, Target: t})
}

// ldrLo12 and strLo12 write `ldr/str xt, [xn, :lo12:t]`.
func (w *arm64Writer) ldrLo12(rt, rn uint32, t Target) {
	w.word(0xf9400000|rn<<5|rt, Reloc{Type: elf.R_AARCH64_LDST64_ABS_LO12_NC, Target: t})
}
func (w *arm64Writer) strLo12(rt, rn uint32, t Target) {
	w.word(0xf9000000|rn<<5|rt, Reloc{Type: elf.R_AARCH64_LDST64_ABS_LO12_NC, Target: t})
}

// bl writes `bl t`.
func (w *arm64Writer) bl(t Target) { w.word(0x94000000, Reloc{Type: elf.R_AARCH64_CALL26, Target: t}) }

// Branches to labels in the section.
func (w *arm64Writer) blLocal(label string) { w.a.ref(label, arm64Branch(0x94000000, 26, 0)) }
func (w *arm64Writer) b(label string)       { w.a.ref(label, arm64Branch(0x14000000, 26, 0)) }
func (w *arm64Writer) bcond(cond uint32, label string) {
	w.a.ref(label, arm64Branch(0x54000000|cond, 19, 5))
}

// cbz and cbnz on x (64-bit) or w registers.
func (w *arm64Writer) cbz(x bool, rt uint32, label string) {
	w.a.ref(label, arm64Branch(arm64SF(x)|0x34000000|rt, 19, 5))
}
func (w *arm64Writer) cbnz(x bool, rt uint32, label string) {
	w.a.ref(label, arm64Branch(arm64SF(x)|0x35000000|rt, 19, 5))
}

func arm64SF(x bool) uint32 {
	if x {
		return 1 << 31
	}
	return 0
}

// arm64Branch is a branch with a word offset of bits bits at bit shift.
func arm64Branch(op uint32, bits, shift uint) gpuForm {
	return gpuForm{size: 4, encode: func(pc, to uint64) ([]byte, bool) {
		d := (int64(to) - int64(pc)) / 4
		ok := d >= -(1<<(bits-1)) && d < 1<<(bits-1)
		return le32(nil, op|uint32(d)&(1<<bits-1)<<shift), ok
	}}
}

// frame records the prologue's rules: the CFA offset, then the saved
// registers, the one nearest the CFA first: regs are register and offset
// from the CFA in turn.
func (w *arm64Writer) frame(size uint64, regs ...int64) {
	ops := ehframe.CFI{ehframe.DefCFAOffset(size)}
	for i := 0; i < len(regs); i += 2 {
		ops = append(ops, ehframe.Offset(uint64(regs[i]), regs[i+1]))
	}
	w.a.rule(ops...)
}

// fatbinReg writes .<p>.fatbin_reg: CUDA keeps the handle in x19 for
// __cudaRegisterFatBinaryEnd.
func (w *arm64Writer) fatbinReg(kind GPUKind) {
	p := "." + kind.prefix()
	w.a.begin(p + ".fatbin_reg")
	w.a.mappingSymbol("$x")
	keep := kind == CUDA
	if keep {
		w.stpPre(arm64LR, 19, arm64SP, -16) // stp x30, x19, [sp, #-16]!
		w.frame(16, 19, -8, arm64LR, -16)
	} else {
		w.word(arm64StrPre(arm64LR, arm64SP, -16)) // str x30, [sp, #-16]!
		w.frame(16, arm64LR, -16)
	}
	w.addr(0, FatbinWrapper)
	w.bl(RegisterFatBinary)
	w.adrp(8, BinaryHandle)
	if keep {
		w.movX(19, 0)
	}
	w.strLo12(0, 8, BinaryHandle)
	w.blLocal(p + ".globals_reg")
	if keep {
		w.movX(0, 19)
		w.bl(RegisterFatBinaryEnd)
	}
	w.addr(0, FatbinUnreg)
	w.bl(Atexit)
	if keep {
		w.ldpPost(arm64LR, 19, arm64SP, 16) // ldp x30, x19, [sp], #16
	} else {
		w.word(arm64LdrPost(arm64LR, arm64SP, 16)) // ldr x30, [sp], #16
	}
	w.ret()
	w.a.end()
}

func (w *arm64Writer) fatbinUnreg(kind GPUKind) {
	w.a.begin("." + kind.prefix() + ".fatbin_unreg")
	w.word(arm64StrPre(arm64LR, arm64SP, -16))
	w.frame(16, arm64LR, -16)
	w.adrp(8, BinaryHandle)
	w.ldrLo12(0, 8, BinaryHandle)
	w.bl(UnregisterFatBinary)
	w.word(arm64LdrPost(arm64LR, arm64SP, 16))
	w.ret()
	w.a.end()
}
