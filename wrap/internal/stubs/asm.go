package stubs

import (
	"debug/elf"
	"encoding/binary"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
)

// codegen is what changed between releases in the code that LLVM's code
// generators emit for the wrapper module. One row per release; the rows of
// 17, 18, 20 and 21 are inferred (measured marks the others). The rows of 13
// and 14 are clang's `-cc1 -emit-obj` at -O0 with the target features of the
// driver (clang-offload-wrapper's module), the others llc's with empty
// features at the default -O2 (clang-linker-wrapper's in-process compile).
type codegen struct {
	measured bool

	// machines, when not nil, are the only machines whose code is known for
	// the release; the others are refused. (clang-14 compiles the riscv64
	// module with the driver's rv64gc features: compressed code with
	// relaxations, another shape altogether.)
	machines []elf.Machine
	// noInfoLink: relocation sections lack SHF_INFO_LINK (LLVM 13's ELF
	// writer; set from 14).
	noInfoLink bool

	// ppc64Frame is the size of the ppc64 frame: 0 for the 32-byte ELFv2
	// minimum, 96 at -O0 (LLVM 14's clang -cc1), which also reserves the
	// 64-byte parameter save area.
	ppc64Frame int32

	// ppc64SaveLRFirst: the prologue stores LR (`std 0, 16(1)`) before
	// `stdu` (LLVM 15); from 16 on it stores it after, at 48(1).
	ppc64SaveLRFirst bool
	// ppc64MergeGlobals: PPC runs GlobalMerge on Linux from LLVM 20
	// (llvm-project PR #114850, "Replace PPCMergeStringPool with
	// GlobalMerge for Linux", November 2024). device_images and the
	// descriptor become one block ordered by size, addressed from its start.
	ppc64MergeGlobals bool

	// riscvBBLabels: the %pcrel_hi label is a basic-block label (.LBB0_1,
	// LLVM 15) instead of .Lpcrel_hiN (16 on).
	riscvBBLabels bool
	// riscvTempLabels: riscv64 writes the `.L0 ` FDE labels and the `$x`
	// mapping symbol (19 on; 15 and 16 write unnamed temporaries instead,
	// for .eh_frame relocations, which are not Labels).
	riscvTempLabels bool
	// riscvEpilogueCFI: riscv64 describes the epilogue too (LLVM 20 on,
	// PR #110810, October 2024).
	riscvEpilogueCFI bool
	// riscvISA is the arch attribute for empty features.
	riscvISA string

	// arm64MappingSuffix: AArch64 mapping symbols have a ".N" suffix
	// (`$x.0`, LLVM 15 and 16).
	arm64MappingSuffix bool
}

var codegens = map[int]codegen{
	13: {measured: true, machines: []elf.Machine{elf.EM_X86_64}, noInfoLink: true},
	14: {measured: true, machines: []elf.Machine{elf.EM_X86_64, elf.EM_AARCH64, elf.EM_PPC64},
		ppc64SaveLRFirst: true, ppc64Frame: 96, arm64MappingSuffix: true},
	15: {measured: true, ppc64SaveLRFirst: true, riscvBBLabels: true, riscvISA: "rv64i2p0", arm64MappingSuffix: true},
	16: {measured: true, riscvISA: "rv64i2p0", arm64MappingSuffix: true},
	17: {riscvTempLabels: true, riscvISA: "rv64i2p1"},
	18: {riscvTempLabels: true, riscvISA: "rv64i2p1"},
	19: {measured: true, riscvTempLabels: true, riscvISA: "rv64i2p1"},
	20: {ppc64MergeGlobals: true, riscvTempLabels: true, riscvEpilogueCFI: true, riscvISA: "rv64i2p1"},
	21: {ppc64MergeGlobals: true, riscvTempLabels: true, riscvEpilogueCFI: true, riscvISA: "rv64i2p1"},
	22: {measured: true, ppc64MergeGlobals: true, riscvTempLabels: true, riscvEpilogueCFI: true, riscvISA: "rv64i2p1"},
	// 23 and main after it (the table's row 24): 22's code generator
	// until a release shows otherwise.
	23: {ppc64MergeGlobals: true, riscvTempLabels: true, riscvEpilogueCFI: true, riscvISA: "rv64i2p1"},
	24: {ppc64MergeGlobals: true, riscvTempLabels: true, riscvEpilogueCFI: true, riscvISA: "rv64i2p1"},
}

// variant is one request: a release's code generator, the IR style and the
// number of images.
type variant struct {
	codegen
	atexit, static bool
	images         uint64
	// sizeArg: the calls pass size after the descriptor (Options.SizeArg).
	sizeArg bool
	size    uint64
}

// arch is how one machine's code is laid out and written.
type arch struct {
	align uint64             // of the section and of each function
	pad   func(n int) []byte // padding between functions
	// setup fills in the Code fields that do not depend on the code.
	setup func(c *Code, v variant)
	// reg and unreg write the functions; unreg is the offset of unreg, for
	// the reference that reg passes to atexit.
	reg   func(e *emitter, v variant, unreg uint64)
	unreg func(e *emitter, v variant)
}

// assemble lays out reg and unreg: reg is written once to learn its size
// (no instruction's size depends on where unreg is), then again with unreg's
// offset.
func assemble(a arch, v variant) *Code {
	c := &Code{Align: a.align, Measured: v.measured, InfoLink: !v.noInfoLink}
	c.DescriptorOffset = 32 * v.images
	a.setup(c, v)

	probe := &emitter{code: &Code{}}
	probe.begin(RegName)
	a.reg(probe, v, 0)
	unregOff := alignUp(uint64(len(probe.text)), a.align)

	e := &emitter{code: c}
	e.begin(RegName)
	a.reg(e, v, unregOff)
	e.end()
	e.text = append(e.text, a.pad(int(unregOff)-len(e.text))...)
	e.begin(UnregName)
	a.unreg(e, v)
	e.end()
	c.Text = e.text
	return c
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

// emitter appends little-endian code to text and records, as it goes, the
// relocations, labels and call-frame rules of the current function.
type emitter struct {
	code *Code
	text []byte

	fn    int    // index of the current function in code.Funcs
	start uint64 // its first byte
	cfiAt uint64 // where the last CFI rule applies
	cfi   ehframe.CFI
}

func (e *emitter) pc() uint64 { return uint64(len(e.text)) }

func (e *emitter) bytes(b ...byte) { e.text = append(e.text, b...) }

func (e *emitter) word(w uint32) { e.text = binary.LittleEndian.AppendUint32(e.text, w) }

// reloc records a relocation at offset off of the code.
func (e *emitter) reloc(off uint64, typ elfobj.RelocType, t Target, addend int64) {
	e.code.Relocs = append(e.code.Relocs, Reloc{Offset: off, Type: typ, Target: t, Addend: addend})
}

// labelReloc records a relocation at off against the label l.
func (e *emitter) labelReloc(off uint64, typ elfobj.RelocType, l Label) {
	e.code.Relocs = append(e.code.Relocs, Reloc{Offset: off, Type: typ, Target: LocalLabel, Label: l.Name, LabelOffset: l.Offset})
}

// label records a named label at the current position and returns it.
func (e *emitter) label(name string) Label {
	l := Label{Name: name, Offset: e.pc(), Func: e.fn}
	e.code.Labels = append(e.code.Labels, l)
	return l
}

// rule adds call-frame rules that apply from the current position on.
func (e *emitter) rule(ops ...ehframe.CFIOp) {
	if d := e.pc() - e.cfiAt; d > 0 {
		e.cfi = append(e.cfi, ehframe.AdvanceLoc(d))
	}
	e.cfi = append(e.cfi, ops...)
	e.cfiAt = e.pc()
}

func (e *emitter) begin(name string) {
	e.fn = len(e.code.Funcs)
	e.start, e.cfiAt, e.cfi = e.pc(), e.pc(), nil
	e.code.Funcs = append(e.code.Funcs, Func{Name: name, Offset: e.pc()})
}

func (e *emitter) end() {
	f := &e.code.Funcs[e.fn]
	f.Size = e.pc() - e.start
	f.CFI = e.cfi
}

// arches are the machines there is code for.
var arches = map[elf.Machine]arch{
	elf.EM_X86_64:  x86,
	elf.EM_AARCH64: arm64,
	elf.EM_PPC64:   ppc64,
	elf.EM_RISCV:   riscv64,
}
