package stubs

import (
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/release"
)

// MachOMachine is the host machine of a Mach-O wrapper object.
type MachOMachine int

const (
	MachOX86_64 MachOMachine = iota // x86_64-apple-macosx10.15.0
	MachOARM64                      // arm64-apple-macosx
)

func (m MachOMachine) String() string {
	switch m {
	case MachOX86_64:
		return "x86_64"
	case MachOARM64:
		return "arm64"
	}
	return fmt.Sprintf("MachOMachine(%d)", int(m))
}

// RelocTypeName names a relocation type of m as debug/macho does
// ("X86_64_RELOC_SIGNED", "ARM64_RELOC_PAGE21").
func (m MachOMachine) RelocTypeName(t uint8) string {
	if m == MachOARM64 {
		return macho.RelocTypeARM64(t).String()
	}
	return macho.RelocTypeX86_64(t).String()
}

// MachOCode is `__TEXT,__StaticInit` of a CUDA or HIP wrapper object for a
// Mach-O host and what else the code generator decides about the object's
// load commands and unwind sections (gpu_doc.go, "Mach-O hosts").
type MachOCode struct {
	// Text is the section's contents: the functions, LLVM's padding and,
	// on x86-64 HIP, the jump table after the last function.
	Text  []byte
	Align uint64 // of __StaticInit and of each function: 16 (x86-64), 4 (arm64)
	// Funcs are fatbin_reg, fatbin_unreg and globals_reg, in section order.
	Funcs []MachOFunc
	// Relocs are in the order LLVM's Mach-O writer puts them in the file:
	// the reverse of their emission, the highest offset first.
	Relocs []MachOReloc
	// DataInCode are the LC_DATA_IN_CODE entries (x86-64 HIP: the jump
	// table), Offset relative to the section.
	DataInCode []MachODataInCode
	// LOH are the linker optimization hints of LC_LINKER_OPTIMIZATION_HINT
	// (arm64), in file order; [AppendMachOLOH] encodes them.
	LOH []MachOLOH
	// Frame is the CIE of `__TEXT,__eh_frame`, which has one FDE per
	// function, in Funcs order. Its "zR" augmentation is
	// MachOFDEPointerEncoding, unlike ELF's (ehframe.Build).
	Frame ehframe.FrameInfo
	// Symbols names the symbol of each target that Relocs refer to, as the
	// object's symbol table spells it: with Mach-O's '_' before the IR name
	// ("_.hip.binary_handle", "___hipRegisterVar", "_atexit"), but for the
	// section$start$/section$end$ bounds, which the module names with
	// LLVM's \01 (no prefix).
	Symbols map[Target]string
	// Measured is true for the release whose llc the code was compared
	// with (22); other releases with the same module (23, 24) are inferred.
	Measured bool
}

// MachOFunc is one function of [MachOCode].
type MachOFunc struct {
	Name         string // ".hip.fatbin_reg" (the IR name: no Mach-O '_')
	Offset, Size uint64 // in __StaticInit; Size ends at the return (no padding, no jump table)
	// CompactUnwind is the encoding of the function's record in
	// `__LD,__compact_unwind` {address, Size, encoding, 0, 0}.
	CompactUnwind uint32
	// CFI are the call-frame instructions of its FDE, from its first byte.
	CFI ehframe.CFI
}

// MachOReloc is one relocation of `__StaticInit`: always extern (against
// Target's symbol, [MachOCode.Symbols]), never scattered, addend 0 (the
// instruction's field holds none).
type MachOReloc struct {
	Offset uint64 // in __StaticInit
	// Type is the r_type: a debug/macho RelocTypeX86_64 or RelocTypeARM64
	// value ([MachOMachine.RelocTypeName]).
	Type   uint8
	PCRel  bool
	Length uint8 // log2 of the size: 2 for 4 bytes
	Target Target
}

// MachODataInCode is one data_in_code_entry.
type MachODataInCode struct {
	Offset uint64 // in __StaticInit; the file holds the address
	Length uint16
	Kind   uint16 // MachODiceJumpTable32
}

// MachOFDEPointerEncoding is the pointer encoding in the augmentation
// data of LLVM's Mach-O CIEs: DW_EH_PE_pcrel with an 8-byte absptr, so an
// FDE's pc_begin and pc_range take 8 bytes each (x86-64: pc_begin
// resolved by the assembler; arm64: an ARM64_RELOC_SUBTRACTOR and
// ARM64_RELOC_UNSIGNED pair, length 3, against the function's symbol).
const MachOFDEPointerEncoding = 0x10

// MachODiceJumpTable32 is DICE_KIND_JUMP_TABLE32 (<mach-o/loader.h>): a
// table of 32-bit differences.
const MachODiceJumpTable32 = 4

// MachOLOH is one linker optimization hint: its kind and the section
// offsets of the instructions it names (the file holds their addresses).
type MachOLOH struct {
	Kind    uint32
	Offsets []uint64
}

// Kinds of linker optimization hint (LLVM's MCLOHType).
const (
	MachOLOHAdrpLdr = 2 // adrp; ldr from the page offset
	MachOLOHAdrpAdd = 7 // adrp; add of the page offset
)

// AppendMachOLOH appends the data of LC_LINKER_OPTIMIZATION_HINT for hints
// in a section at address addr: each hint as ULEB128 kind, count and
// addresses, then zeros to a multiple of 8, as LLVM writes it.
func AppendMachOLOH(b []byte, hints []MachOLOH, addr uint64) []byte {
	start := len(b)
	for _, h := range hints {
		b = binary.AppendUvarint(b, uint64(h.Kind))
		b = binary.AppendUvarint(b, uint64(len(h.Offsets)))
		for _, off := range h.Offsets {
			b = binary.AppendUvarint(b, addr+off)
		}
	}
	for (len(b)-start)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

// machoArch writes the three functions of one Mach-O machine.
type machoArch struct {
	align uint64
	pad   func(n int) []byte
	frame ehframe.FrameInfo
	// write lists the functions and returns their compact unwind
	// encodings and the number of entries of a jump table after them.
	write func(a *gpuAsm, kind GPUKind, module release.GPURegistration) (unwind []uint32, table int)
	// hints returns the linker optimization hints of the assembled code.
	hints func(a *gpuAsm, c *GPUCode) []MachOLOH
}

var machoArches = map[MachOMachine]machoArch{
	MachOX86_64: machoX86,
	MachOARM64:  machoARM64,
}

// machoRelocs is the Mach-O relocation that LLVM's Mach-O writer makes of
// each fixup, which the machines' writers record by its ELF relocation.
var machoRelocs = map[elfobj.RelocType]struct {
	typ   uint8
	pcrel bool
}{
	elf.R_X86_64_PC32:                {uint8(macho.X86_64_RELOC_SIGNED), true},
	elf.R_X86_64_PLT32:               {uint8(macho.X86_64_RELOC_BRANCH), true},
	elf.R_AARCH64_CALL26:             {uint8(macho.ARM64_RELOC_BRANCH26), true},
	elf.R_AARCH64_ADR_PREL_PG_HI21:   {uint8(macho.ARM64_RELOC_PAGE21), true},
	elf.R_AARCH64_ADD_ABS_LO12_NC:    {uint8(macho.ARM64_RELOC_PAGEOFF12), false},
	elf.R_AARCH64_LDST64_ABS_LO12_NC: {uint8(macho.ARM64_RELOC_PAGEOFF12), false},
}

// MachOGPU returns `__TEXT,__StaticInit` of the CUDA or HIP wrapper object
// for a Mach-O host m as `llc-22 -mtriple=<triple> -relocation-model=pic
// -filetype=obj` compiles [GPUModuleIRMachO] of release llvm (a release
// whose module checks the entries' Kind, 21 and later). Unknown machines,
// kinds and releases give an error wrapping goffload.ErrUnsupported.
func MachOGPU(m MachOMachine, kind GPUKind, llvm int) (*MachOCode, error) {
	if kind != CUDA && kind != HIP {
		return nil, fmt.Errorf("mach-o gpu wrapper code: kind %v: %w", kind, goffload.ErrUnsupported)
	}
	arch, ok := machoArches[m]
	if !ok {
		return nil, fmt.Errorf("%v mach-o wrapper code for %v: %w", kind, m, goffload.ErrUnsupported)
	}
	rel, err := release.Lookup(llvm)
	if err != nil || rel.Wrapper.GPU != release.GPURegistrationKindCheck {
		known := release.Where(func(r *release.Release) bool { return r.Wrapper.GPU == release.GPURegistrationKindCheck })
		return nil, fmt.Errorf("%v mach-o wrapper code of LLVM %d: %w (known: %v)", kind, llvm, goffload.ErrUnsupported, known)
	}
	a := &gpuAsm{align: arch.align, pad: arch.pad}
	unwind, table := arch.write(a, kind, rel.Wrapper.GPU)
	g := a.assemble()
	fi := arch.frame
	fi.Initial = slices.Clone(fi.Initial)
	c := &MachOCode{Text: g.Text, Align: g.Align, Frame: fi, Symbols: map[Target]string{}, Measured: gpuMeasured[llvm]}
	for i, f := range g.Funcs {
		c.Funcs = append(c.Funcs, MachOFunc{Name: f.Name, Offset: f.Offset, Size: f.Size, CompactUnwind: unwind[i], CFI: f.CFI})
	}
	for _, r := range slices.Backward(g.Relocs) {
		t := machoRelocs[r.Type]
		c.Relocs = append(c.Relocs, MachOReloc{Offset: r.Offset, Type: t.typ, PCRel: t.pcrel, Length: 2, Target: r.Target})
		c.Symbols[r.Target] = kind.machoSymbol(r.Target)
	}
	if table > 0 {
		n := uint64(4 * table)
		c.DataInCode = []MachODataInCode{{Offset: uint64(len(c.Text)) - n, Length: uint16(n), Kind: MachODiceJumpTable32}}
	}
	if arch.hints != nil {
		c.LOH = arch.hints(a, g)
	}
	return c, nil
}

// machoSymbol is the object's name of the symbol of t (MachOCode.Symbols).
func (k GPUKind) machoSymbol(t Target) string {
	p := "." + k.prefix()
	switch t {
	case FatbinWrapper:
		return "_.fatbin_wrapper"
	case BinaryHandle:
		return "_" + p + ".binary_handle"
	case FatbinUnreg:
		return "_" + p + ".fatbin_unreg"
	case GlobalsReg:
		return "_" + p + ".globals_reg"
	case EntriesStart:
		return MachOBound("start")
	case EntriesStop:
		return MachOBound("end")
	}
	return "_" + k.symbol(t, "")
}
