package stubs

import (
	"debug/elf"
	"encoding/binary"
	"slices"
	"sort"

	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/release"
)

// arm64 Darwin CUDA and HIP wrapper code (gpu_doc.go, "Mach-O hosts").
// Every function saves the frame record x29, x30 (without setting x29),
// which makes globals_reg's frame 64 bytes with x22 saved beside x21; the
// bodies are otherwise the ELF code's (gpu_aarch64_globals.go). Every
// reference is relocated against the symbols, globals_reg's call too
// (ARM64_RELOC_BRANCH26, PAGE21, PAGEOFF12), and llc records linker
// optimization hints for its adrp pairs. LLVM's compact unwind encoder
// gives up on these frames (a frame record that x29 does not point to),
// so every function's encoding is UNWIND_ARM64_MODE_DWARF with a zero FDE
// offset, which the linker fills in.
var machoARM64 = machoArch{
	align: 4,
	pad:   func(n int) []byte { return make([]byte, n) }, // never used: every function is a multiple of 4
	frame: ehframe.FrameInfo{CodeAlign: 1, DataAlign: -8, RAReg: 30, Initial: ehframe.CFI{ehframe.DefCFA(31, 0)}},
	write: func(a *gpuAsm, kind GPUKind, module release.GPURegistration) ([]uint32, int) {
		w := &arm64Writer{a: a, frameRecord: true}
		arm64DarwinFatbinReg(w, kind)
		arm64DarwinFatbinUnreg(w, kind)
		a.begin("." + kind.prefix() + ".globals_reg")
		arm64GlobalsReg[gpuGlobalsKey{module, kind}](w)
		a.end()
		return []uint32{arm64CompactDWARF, arm64CompactDWARF, arm64CompactDWARF}, 0
	},
	hints: arm64Hints,
}

// arm64CompactDWARF is UNWIND_ARM64_MODE_DWARF.
const arm64CompactDWARF = 0x03000000

const arm64FP = 29 // x29

// arm64DarwinFatbinReg writes .<p>.fatbin_reg: CUDA keeps the handle in
// x19 (saved with x20, the pair's other register).
func arm64DarwinFatbinReg(w *arm64Writer, kind GPUKind) {
	w.a.begin("." + kind.prefix() + ".fatbin_reg")
	keep := kind == CUDA
	if keep {
		w.stpPre(20, 19, arm64SP, -32)       // stp x20, x19, [sp, #-32]!
		w.stp(arm64FP, arm64LR, arm64SP, 16) // stp x29, x30, [sp, #16]
		w.frame(32, arm64LR, -8, arm64FP, -16, 19, -24, 20, -32)
	} else {
		w.stpPre(arm64FP, arm64LR, arm64SP, -16) // stp x29, x30, [sp, #-16]!
		w.frame(16, arm64LR, -8, arm64FP, -16)
	}
	w.addr(0, FatbinWrapper)
	w.bl(RegisterFatBinary)
	w.adrp(8, BinaryHandle)
	if keep {
		w.movX(19, 0)
	}
	w.strLo12(0, 8, BinaryHandle)
	w.bl(GlobalsReg)
	if keep {
		w.movX(0, 19)
		w.bl(RegisterFatBinaryEnd)
	}
	w.addr(0, FatbinUnreg)
	w.bl(Atexit)
	if keep {
		w.ldp(arm64FP, arm64LR, arm64SP, 16)
		w.ldpPost(20, 19, arm64SP, 32)
	} else {
		w.ldpPost(arm64FP, arm64LR, arm64SP, 16)
	}
	w.ret()
	w.a.end()
}

func arm64DarwinFatbinUnreg(w *arm64Writer, kind GPUKind) {
	w.a.begin("." + kind.prefix() + ".fatbin_unreg")
	w.stpPre(arm64FP, arm64LR, arm64SP, -16)
	w.frame(16, arm64LR, -8, arm64FP, -16)
	w.adrp(8, BinaryHandle)
	w.ldrLo12(0, 8, BinaryHandle)
	w.bl(UnregisterFatBinary)
	w.ldpPost(arm64FP, arm64LR, arm64SP, 16)
	w.ret()
	w.a.end()
}

// arm64FrameRecordGlobalsPrologue saves x19–x22 and the frame record in
// globals_reg's 64-byte frame, whose first 16 bytes hold the stack
// arguments of __<p>RegisterFunction.
func arm64FrameRecordGlobalsPrologue(w *arm64Writer) {
	w.subImm(arm64SP, arm64SP, 0x40)
	w.stp(22, 21, arm64SP, 0x10)
	w.stp(20, 19, arm64SP, 0x20)
	w.stp(arm64FP, arm64LR, arm64SP, 0x30)
	w.frame(64, arm64LR, -8, arm64FP, -16, 19, -24, 20, -32, 21, -40, 22, -48)
}

func arm64FrameRecordGlobalsEpilogue(w *arm64Writer) {
	w.ldp(arm64FP, arm64LR, arm64SP, 0x30)
	w.ldp(20, 19, arm64SP, 0x20)
	w.ldp(22, 21, arm64SP, 0x10)
	w.addImm(arm64SP, arm64SP, 0x40)
	w.ret()
}

// arm64Hints returns the linker optimization hints that LLVM's
// AArch64CollectLOH finds in the assembled code c: an adrp whose page
// offset an add completes is AdrpAdd, one that a 64-bit ldr completes
// AdrpLdr; a store gets none. The pass walks each basic block from its
// end, so the hints come block by block, in each the last adrp first.
// Blocks begin at functions, labels and after branches.
func arm64Hints(a *gpuAsm, c *GPUCode) []MachOLOH {
	pos, _ := a.layout(make([]int, len(a.items))) // arm64 references have one form
	var starts []uint64
	for i, it := range a.items {
		switch {
		case it.begin != "" || it.label != "":
			starts = append(starts, pos[i])
		case it.forms != nil:
			starts = append(starts, pos[i+1])
		}
	}
	block := func(off uint64) int {
		return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
	}
	type hint struct {
		MachOLOH
		block int
	}
	var hints []hint
	for i, r := range c.Relocs {
		if r.Type != elf.R_AARCH64_ADR_PREL_PG_HI21 {
			continue
		}
		j := slices.IndexFunc(c.Relocs[i+1:], func(s Reloc) bool {
			return s.Target == r.Target && s.Type != elf.R_AARCH64_ADR_PREL_PG_HI21 && s.Type != elf.R_AARCH64_CALL26
		})
		if j < 0 {
			continue
		}
		lo := c.Relocs[i+1+j].Offset
		kind := uint32(0)
		switch inst := binary.LittleEndian.Uint32(c.Text[lo:]); {
		case inst&0xffc00000 == 0x91000000: // add xd, xn, #imm
			kind = MachOLOHAdrpAdd
		case inst&0xffc00000 == 0xf9400000: // ldr xt, [xn, #imm]
			kind = MachOLOHAdrpLdr
		default:
			continue
		}
		hints = append(hints, hint{MachOLOH{Kind: kind, Offsets: []uint64{r.Offset, lo}}, block(r.Offset)})
	}
	slices.SortStableFunc(hints, func(x, y hint) int {
		if x.block != y.block {
			return x.block - y.block
		}
		return int(y.Offsets[0]) - int(x.Offsets[0])
	})
	out := make([]MachOLOH, len(hints))
	for i, h := range hints {
		out[i] = h.MachOLOH
	}
	return out
}
