package stubs

import "github.com/goffload/goffload/release"

// arm64GlobalsReg are the bodies of .<p>.globals_reg (block placement as on
// x86-64: the kernel case first). The handle is in x19, the end of the
// entries in x20, the entry in x21. Labels name the IR blocks.
var arm64GlobalsReg = map[gpuGlobalsKey]func(w *arm64Writer){
	{release.GPURegistrationWholeFlags, CUDA}: arm64Globals17,
	{release.GPURegistrationWholeFlags, HIP}:  arm64Globals17,
	{release.GPURegistrationFlagBits, CUDA}:   arm64GlobalsFlagsCUDA,
	{release.GPURegistrationFlagBits, HIP}:    arm64GlobalsFlagsHIP,
	{release.GPURegistrationKindCheck, CUDA}:  arm64GlobalsKindCUDA,
	{release.GPURegistrationKindCheck, HIP}:   arm64GlobalsKindHIP,
}

// arm64LoopHead saves x30 and x19–x21 in a 48-byte frame, enters the loop
// at while.entry, and writes if.then (__<p>RegisterFunction with the two
// last arguments on the stack) and if.end for entries of entrySize bytes,
// whose addr and name are in x1 and x2 (32-byte entries) or x2 and x3.
func arm64LoopHead(w *arm64Writer, entrySize uint32) {
	wide := entrySize == 0x38
	if w.frameRecord {
		arm64FrameRecordGlobalsPrologue(w)
	} else {
		w.subImm(arm64SP, arm64SP, 0x30)
		w.stp(arm64LR, 21, arm64SP, 0x10)
		w.stp(20, 19, arm64SP, 0x20)
		w.frame(48, 19, -8, 20, -16, 21, -24, arm64LR, -32)
	}
	w.addr(20, EntriesStop)
	w.addr(8, EntriesStart)
	w.cmpX(8, 20)
	w.bcond(arm64EQ, "while.end")
	w.movX(19, 0)
	w.addr(21, EntriesStart)
	w.b("while.entry")

	w.a.label("if.then")
	if wide {
		w.movX(5, arm64ZR)
	}
	w.movX(6, arm64ZR)
	w.movX(7, arm64ZR)
	w.movX(0, 19)
	if wide {
		w.movX(1, 2)
		w.movX(2, 3)
	} else {
		w.movX(3, 2)
	}
	w.movMinus1W(4)
	w.stp(arm64ZR, arm64ZR, arm64SP, 0) // stp xzr, xzr, [sp]
	w.bl(RegisterFunction)

	w.a.label("if.end")
	w.addImm(21, 21, entrySize)
	w.cmpX(21, 20)
	w.bcond(arm64EQ, "while.end")
	w.a.label("while.entry")
}

// arm64Loads32 loads addr (x1), name (x2) and size (x5) of a 32-byte entry
// and branches to if.then for a kernel.
func arm64Loads32(w *arm64Writer) {
	w.ldp(2, 5, 21, 8)
	w.ldr(8, 1, 21, 0)
	w.cbz(true, 5, "if.then")
}

// arm64Kind checks the entry's Kind (56-byte entries), loads addr (x2),
// name (x3) and size (x8) and branches to if.then for a kernel.
func arm64Kind(w *arm64Writer, kind uint32) {
	w.ldr(2, 8, 21, 0xa)
	w.cmpImmW(8, kind)
	w.bcond(arm64NE, "if.end")
	w.ldp(3, 8, 21, 0x18)
	w.ldr(8, 2, 21, 0x10)
	w.cbz(true, 8, "if.then")
}

func arm64GlobalsEpilogue(w *arm64Writer) {
	w.a.label("while.end")
	if w.frameRecord {
		arm64FrameRecordGlobalsEpilogue(w)
		return
	}
	w.ldp(20, 19, arm64SP, 0x20)
	w.ldp(arm64LR, 21, arm64SP, 0x10)
	w.addImm(arm64SP, arm64SP, 0x30)
	w.ret()
}

// arm64Globals17: the switch on the whole flags word keeps only case 0,
// RegisterVar(h, addr, name, name, 0, size, 0, 0).
func arm64Globals17(w *arm64Writer) {
	arm64LoopHead(w, 0x20)
	arm64Loads32(w)
	w.ldr(4, 8, 21, 0x18) // flags
	w.cbnz(false, 8, "if.end")
	w.movX(0, 19)
	w.movX(3, 2)
	w.movW(4, arm64ZR)
	w.movW(6, arm64ZR)
	w.movW(7, arm64ZR)
	w.bl(RegisterVar)
	w.b("if.end")
	arm64GlobalsEpilogue(w)
}

// arm64GlobalsFlagsCUDA: only sw.global does anything.
func arm64GlobalsFlagsCUDA(w *arm64Writer) {
	arm64LoopHead(w, 0x20)
	arm64Loads32(w)
	w.ldr(4, 8, 21, 0x18) // flags
	w.andLowW(9, 8, 3)    // type
	w.cbnz(false, 9, "if.end")
	w.ubfxW(4, 8, 3, 1) // extern
	w.ubfxW(6, 8, 4, 1) // constant
	w.movX(0, 19)
	w.movX(3, 2)
	w.movW(7, arm64ZR)
	w.bl(RegisterVar)
	w.b("if.end")
	arm64GlobalsEpilogue(w)
}

// arm64GlobalsFlagsHIP: cases 3, 2, 0 by compares.
func arm64GlobalsFlagsHIP(w *arm64Writer) {
	arm64LoopHead(w, 0x20)
	arm64Loads32(w)
	w.ldpW(9, 4, 21, 0x18) // flags, textype
	w.andLowW(10, 9, 3)    // type
	w.ubfxW(8, 9, 3, 1)    // extern
	w.cmpImmW(10, 3)
	w.bcond(arm64EQ, "sw.texture")
	w.cmpImmW(10, 2)
	w.bcond(arm64EQ, "sw.surface")
	w.cbnz(false, 10, "if.end")
	w.ubfxW(6, 9, 4, 1) // constant
	w.movX(0, 19)
	w.movX(3, 2)
	w.movW(4, 8)
	w.movW(7, arm64ZR)
	w.bl(RegisterVar)
	w.b("if.end")

	w.a.label("sw.surface")
	w.movX(0, 19)
	w.movX(3, 2)
	w.movW(5, 8)
	w.bl(RegisterSurface)
	w.b("if.end")

	w.a.label("sw.texture")
	w.ubfxW(5, 9, 5, 1) // normalized
	w.movX(0, 19)
	w.movX(3, 2)
	w.movW(6, 8)
	w.bl(RegisterTexture)
	w.b("if.end")
	arm64GlobalsEpilogue(w)
}

// arm64GlobalsKindCUDA: cases 1 (managed) and 0.
func arm64GlobalsKindCUDA(w *arm64Writer) {
	arm64LoopHead(w, 0x38)
	arm64Kind(w, 2)
	w.ldr(4, 9, 21, 0xc) // flags
	w.andLowW(10, 9, 3)
	w.cmpImmW(10, 1)
	w.bcond(arm64EQ, "sw.managed")
	w.cbnz(false, 10, "if.end")
	w.ubfxW(4, 9, 3, 1)
	w.ubfxW(6, 9, 4, 1)
	w.movX(0, 19)
	w.movX(1, 2)
	w.movX(2, 3)
	w.movX(5, 8)
	w.movW(7, arm64ZR)
	w.bl(RegisterVar)
	w.b("if.end")

	w.a.label("sw.managed")
	w.ldr(8, 1, 21, 0x30) // aux_addr
	w.ldr(4, 5, 21, 0x28) // (i32)data
	w.movX(0, 19)
	w.movX(4, 8)
	w.bl(RegisterManagedVar)
	w.b("if.end")
	arm64GlobalsEpilogue(w)
}

// arm64GlobalsKindHIP: the four cases as a binary search (no jump table).
func arm64GlobalsKindHIP(w *arm64Writer) {
	arm64LoopHead(w, 0x38)
	arm64Kind(w, 4)
	w.ldr(4, 11, 21, 0xc)  // flags
	w.ldr(4, 10, 21, 0x28) // (i32)data
	w.andLowW(12, 11, 3)   // type
	w.ubfxW(9, 11, 3, 1)   // extern
	w.cmpImmW(12, 1)
	w.bcond(arm64GT, "type>1")
	w.cbz(false, 12, "sw.global")
	w.cmpImmW(12, 1)
	w.bcond(arm64NE, "if.end")
	// sw.managed
	w.ldr(8, 1, 21, 0x30)
	w.movX(0, 19)
	w.movX(4, 8)
	w.movW(5, 10)
	w.bl(RegisterManagedVar)
	w.b("if.end")

	w.a.label("type>1")
	w.cmpImmW(12, 2)
	w.bcond(arm64EQ, "sw.surface")
	w.cmpImmW(12, 3)
	w.bcond(arm64NE, "if.end")
	// sw.texture
	w.ubfxW(5, 11, 5, 1)
	w.movX(0, 19)
	w.movX(1, 2)
	w.movX(2, 3)
	w.movW(4, 10)
	w.movW(6, 9)
	w.bl(RegisterTexture)
	w.b("if.end")

	w.a.label("sw.global")
	w.ubfxW(6, 11, 4, 1)
	w.movX(0, 19)
	w.movX(1, 2)
	w.movX(2, 3)
	w.movW(4, 9)
	w.movX(5, 8)
	w.movW(7, arm64ZR)
	w.bl(RegisterVar)
	w.b("if.end")

	w.a.label("sw.surface")
	w.movX(0, 19)
	w.movX(1, 2)
	w.movX(2, 3)
	w.movW(4, 10)
	w.movW(5, 9)
	w.bl(RegisterSurface)
	w.b("if.end")
	arm64GlobalsEpilogue(w)
}
