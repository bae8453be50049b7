// Package ehframe builds the .eh_frame section of a relocatable object that
// package elfobj writes: the unwind rules of the functions it defines (one
// CIE, an FDE per function), encoded as LLVM's assembler encodes them for
// x86-64, AArch64, ppc64 and riscv64 ([FrameInfoFor]). Package wrap gives
// its registration code's functions their rules so.
//
// [Build] returns the section, with its relocations against the functions'
// symbols, for the Sections of an [elfobj.Object].
package ehframe

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
)

// Call-frame instruction opcodes (DWARF 5 §6.4.2, Figure 7.30). The three with
// an operand in their low six bits are the "primary" ones.
const (
	dwCFAAdvanceLoc      = 0x40
	dwCFAOffset          = 0x80
	dwCFARestore         = 0xc0
	dwCFANop             = 0x00
	dwCFAAdvanceLoc1     = 0x02
	dwCFAAdvanceLoc2     = 0x03
	dwCFAAdvanceLoc4     = 0x04
	dwCFAOffsetExtended  = 0x05
	dwCFARestoreExtended = 0x06
	dwCFADefCFA          = 0x0c
	dwCFADefCFARegister  = 0x0d
	dwCFADefCFAOffset    = 0x0e
	dwCFAOffsetExtSF     = 0x11

	// dwEHPEPCRelSData4 (DW_EH_PE_pcrel|DW_EH_PE_sdata4) is how every FDE
	// here encodes pc_begin: the "R" augmentation data of the CIE (LSB
	// §10.5.1.1).
	dwEHPEPCRelSData4 = 0x1b
)

// CFIOp is one call-frame instruction, as an assembler's `.cfi_*` directive
// states it: offsets and advances in bytes. [Build] encodes it with the
// factors of a [FrameInfo] and the object's byte order, choosing the shortest
// DWARF form as LLVM's assembler does.
type CFIOp struct {
	op  byte // the primary opcode or the one-byte opcode that names the kind
	reg uint64
	off int64
}

// CFI is a list of call-frame instructions.
type CFI []CFIOp

// AdvanceLoc moves the location of the rules that follow delta bytes further
// into the function. It is encoded as DW_CFA_advance_loc, advance_loc1, 2 or 4
// by the size of delta divided by the code alignment factor, and as nothing
// when delta is 0.
func AdvanceLoc(delta uint64) CFIOp { return CFIOp{op: dwCFAAdvanceLoc, off: int64(delta)} }

// DefCFA makes the CFA register reg plus off bytes (DW_CFA_def_cfa, like
// `.cfi_def_cfa reg, off`).
func DefCFA(reg uint64, off uint64) CFIOp {
	return CFIOp{op: dwCFADefCFA, reg: reg, off: int64(off)}
}

// DefCFAOffset keeps the CFA register and makes its offset off bytes
// (DW_CFA_def_cfa_offset, like `.cfi_def_cfa_offset off`).
func DefCFAOffset(off uint64) CFIOp { return CFIOp{op: dwCFADefCFAOffset, off: int64(off)} }

// DefCFARegister keeps the CFA offset and makes its register reg
// (DW_CFA_def_cfa_register).
func DefCFARegister(reg uint64) CFIOp { return CFIOp{op: dwCFADefCFARegister, reg: reg} }

// Offset says that register reg is saved off bytes from the CFA (like
// `.cfi_offset reg, off`). It is encoded, as LLVM does, as DW_CFA_offset
// when reg < 64 and the factored offset is not negative,
// DW_CFA_offset_extended when only reg is too large, and
// DW_CFA_offset_extended_sf when the factored offset is negative; off must be
// a multiple of the data alignment factor.
func Offset(reg uint64, off int64) CFIOp { return CFIOp{op: dwCFAOffset, reg: reg, off: off} }

// Restore gives register reg back the rule of the CIE's initial instructions
// (DW_CFA_restore, or DW_CFA_restore_extended when reg ≥ 64).
func Restore(reg uint64) CFIOp { return CFIOp{op: dwCFARestore, reg: reg} }

// String returns the instruction in the words of llvm-dwarfdump, with its
// operands unfactored.
func (c CFIOp) String() string {
	switch c.op {
	case dwCFAAdvanceLoc:
		return fmt.Sprintf("DW_CFA_advance_loc: %d", c.off)
	case dwCFADefCFA:
		return fmt.Sprintf("DW_CFA_def_cfa: reg%d +%d", c.reg, c.off)
	case dwCFADefCFAOffset:
		return fmt.Sprintf("DW_CFA_def_cfa_offset: +%d", c.off)
	case dwCFADefCFARegister:
		return fmt.Sprintf("DW_CFA_def_cfa_register: reg%d", c.reg)
	case dwCFAOffset:
		return fmt.Sprintf("DW_CFA_offset: reg%d %d", c.reg, c.off)
	case dwCFARestore:
		return fmt.Sprintf("DW_CFA_restore: reg%d", c.reg)
	}
	return fmt.Sprintf("DW_CFA_%#x", c.op)
}

// FrameInfo is what the CIE says for every function of a machine.
type FrameInfo struct {
	CodeAlign uint64 // code alignment factor: AdvanceLoc deltas are divided by it
	DataAlign int64  // data alignment factor: Offset offsets are divided by it
	RAReg     uint64 // return address column; at most 255 in a version-1 CIE
	Initial   CFI    // the rules at every function's first instruction
}

// frameInfos are the CIEs that LLVM 19 emits (`llc -filetype=obj`, read with
// `llvm-dwarfdump --eh-frame`). Registers are DWARF numbers: x86-64 r7 is
// %rsp and r16 the return address; AArch64 r31 is sp; ppc64 r1 is the stack
// pointer and r65 the link register; riscv64 r2 is sp and r1 ra.
var frameInfos = map[elf.Machine]FrameInfo{
	elf.EM_X86_64:  {CodeAlign: 1, DataAlign: -8, RAReg: 16, Initial: CFI{DefCFA(7, 8), Offset(16, -8)}},
	elf.EM_AARCH64: {CodeAlign: 1, DataAlign: -4, RAReg: 30, Initial: CFI{DefCFA(31, 0)}},
	elf.EM_PPC64:   {CodeAlign: 4, DataAlign: -8, RAReg: 65, Initial: CFI{DefCFA(1, 0)}},
	elf.EM_RISCV:   {CodeAlign: 1, DataAlign: -8, RAReg: 1, Initial: CFI{DefCFA(2, 0)}},
}

// ehRelocs are the 32-bit PC-relative relocations of pc_begin.
var ehRelocs = map[elf.Machine]elfobj.RelocType{
	elf.EM_X86_64:  elf.R_X86_64_PC32,
	elf.EM_AARCH64: elf.R_AARCH64_PREL32,
	elf.EM_PPC64:   elf.R_PPC64_REL32,
	elf.EM_RISCV:   elf.R_RISCV_32_PCREL,
}

// FrameInfoFor returns the CIE values that LLVM uses on machine m (x86-64,
// AArch64, ppc64 of either byte order, or riscv64).
func FrameInfoFor(m elf.Machine) (FrameInfo, error) {
	fi, ok := frameInfos[m]
	if !ok {
		return FrameInfo{}, fmt.Errorf("eh_frame for %v: %w", m, goffload.ErrUnsupported)
	}
	fi.Initial = append(CFI(nil), fi.Initial...)
	return fi, nil
}

// FDE describes the unwind rules of one function.
type FDE struct {
	// Symbol plus Addend is the function's first byte, the target of the
	// pc_begin relocation: the function's own symbol with Addend 0, or, as
	// LLVM does, the symbol of its section with the function's offset.
	Symbol *elfobj.Symbol
	Addend int64
	Size   uint64 // bytes of code covered (pc_range); less than 4 GiB
	CFI    CFI    // rules from the function's first byte on
}

// Build returns an `.eh_frame` section as LLVM writes it in a
// relocatable object for machine m with byte order data: one CIE (version 1,
// augmentation "zR", FDE pointers DW_EH_PE_pcrel|DW_EH_PE_sdata4) made of fi,
// then one FDE per element of fdes whose pc_begin is a 32-bit PC-relative
// relocation. Each record is padded with DW_CFA_nop to 4 bytes and the last
// one so that the section's size is a multiple of 8. As in LLVM's objects
// there is no zero terminator: the linker adds one (crtend.o's
// __FRAME_END__). The section has type SHT_X86_64_UNWIND on x86-64 and
// SHT_PROGBITS elsewhere, flag SHF_ALLOC and alignment 8. Errors for invalid
// values wrap [ErrInconsistent]; an unknown machine gives
// goffload.ErrUnsupported.
func Build(m elf.Machine, data elf.Data, fi FrameInfo, fdes []FDE) (*elfobj.Section, error) {
	rel, ok := ehRelocs[m]
	if !ok {
		return nil, fmt.Errorf("eh_frame for %v: %w", m, goffload.ErrUnsupported)
	}
	e := ehWriter{fi: fi}
	switch data {
	case elf.ELFDATA2LSB:
		e.order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		e.order = binary.BigEndian
	default:
		return nil, fmt.Errorf("eh_frame: %w", inconsistent("byte order %v", data))
	}
	if err := e.cie(len(fdes) == 0); err != nil {
		return nil, fmt.Errorf("eh_frame CIE: %w", err)
	}
	var relocs []elfobj.Reloc
	for i, f := range fdes {
		if f.Symbol == nil {
			return nil, fmt.Errorf("eh_frame FDE %d: %w", i, inconsistent("no symbol for pc_begin"))
		}
		pcBegin, err := e.fde(f, i == len(fdes)-1)
		if err != nil {
			return nil, fmt.Errorf("eh_frame FDE %d (%q%+d): %w", i, f.Symbol.Name, f.Addend, err)
		}
		relocs = append(relocs, elfobj.Reloc{Offset: pcBegin, Type: rel, Symbol: f.Symbol, Addend: f.Addend})
	}
	typ := elf.SHT_PROGBITS
	if m == elf.EM_X86_64 {
		typ = elfobj.SHT_X86_64_UNWIND
	}
	return &elfobj.Section{Name: ".eh_frame", Type: typ, Flags: elf.SHF_ALLOC, Addralign: 8, Data: e.b, Relocs: relocs}, nil
}

// ehWriter appends the records of one .eh_frame.
type ehWriter struct {
	fi    FrameInfo
	order byteOrder
	b     []byte
}

func (e *ehWriter) cie(last bool) error {
	fi := e.fi
	switch {
	case fi.CodeAlign == 0:
		return inconsistent("code alignment factor 0")
	case fi.DataAlign == 0:
		return inconsistent("data alignment factor 0")
	case fi.RAReg > math.MaxUint8:
		return inconsistent("return address register %d does not fit a version-1 CIE", fi.RAReg)
	}
	start := e.begin()
	e.b = e.order.AppendUint32(e.b, 0) // CIE id
	e.b = append(e.b, 1, 'z', 'R', 0)  // version, augmentation
	e.b = binary.AppendUvarint(e.b, fi.CodeAlign)
	e.b = appendSLEB(e.b, fi.DataAlign)
	e.b = append(e.b, byte(fi.RAReg), 1, dwEHPEPCRelSData4) // augmentation data: length 1, R
	if err := e.instructions(fi.Initial); err != nil {
		return err
	}
	e.end(start, last)
	return nil
}

// fde appends f and returns the offset of its pc_begin field.
func (e *ehWriter) fde(f FDE, last bool) (uint64, error) {
	if f.Size > math.MaxUint32 {
		return 0, inconsistent("function size %d does not fit pc_range", f.Size)
	}
	start := e.begin()
	e.b = e.order.AppendUint32(e.b, uint32(len(e.b))) // CIE pointer: back to offset 0
	pcBegin := uint64(len(e.b))
	e.b = e.order.AppendUint32(e.b, 0) // pc_begin, by relocation
	e.b = e.order.AppendUint32(e.b, uint32(f.Size))
	e.b = append(e.b, 0) // augmentation data length
	if err := e.instructions(f.CFI); err != nil {
		return 0, err
	}
	e.end(start, last)
	return pcBegin, nil
}

// begin reserves a record's length field and returns where it is.
func (e *ehWriter) begin() int {
	start := len(e.b)
	e.b = append(e.b, 0, 0, 0, 0)
	return start
}

// end pads the record at start with DW_CFA_nop and writes its length. LLVM
// aligns records to 4 and the last one to 8, so that a linker reading the
// section as 8-aligned pieces never sees padding as a zero terminator.
func (e *ehWriter) end(start int, last bool) {
	align := 4
	if last {
		align = 8
	}
	for len(e.b)%align != 0 {
		e.b = append(e.b, dwCFANop)
	}
	e.order.PutUint32(e.b[start:], uint32(len(e.b)-start-4))
}

func (e *ehWriter) instructions(c CFI) error {
	for i, op := range c {
		var err error
		if e.b, err = op.appendTo(e.b, e.fi, e.order); err != nil {
			return fmt.Errorf("instruction %d (%v): %w", i, op, err)
		}
	}
	return nil
}

// appendTo encodes c with the factors of fi, choosing forms as LLVM's
// MCDwarf does.
func (c CFIOp) appendTo(b []byte, fi FrameInfo, order byteOrder) ([]byte, error) {
	switch c.op {
	case dwCFAAdvanceLoc:
		d := uint64(c.off)
		if d%fi.CodeAlign != 0 {
			return nil, inconsistent("advance %d is not a multiple of the code alignment factor %d", d, fi.CodeAlign)
		}
		switch d /= fi.CodeAlign; {
		case d == 0:
			return b, nil
		case d < 0x40:
			return append(b, dwCFAAdvanceLoc|byte(d)), nil
		case d <= math.MaxUint8:
			return append(b, dwCFAAdvanceLoc1, byte(d)), nil
		case d <= math.MaxUint16:
			return order.AppendUint16(append(b, dwCFAAdvanceLoc2), uint16(d)), nil
		case d <= math.MaxUint32:
			return order.AppendUint32(append(b, dwCFAAdvanceLoc4), uint32(d)), nil
		}
		return nil, inconsistent("advance %d does not fit DW_CFA_advance_loc4", c.off)
	case dwCFADefCFA:
		b = binary.AppendUvarint(append(b, dwCFADefCFA), c.reg)
		return binary.AppendUvarint(b, uint64(c.off)), nil
	case dwCFADefCFAOffset:
		return binary.AppendUvarint(append(b, dwCFADefCFAOffset), uint64(c.off)), nil
	case dwCFADefCFARegister:
		return binary.AppendUvarint(append(b, dwCFADefCFARegister), c.reg), nil
	case dwCFAOffset:
		if c.off%fi.DataAlign != 0 {
			return nil, inconsistent("offset %d is not a multiple of the data alignment factor %d", c.off, fi.DataAlign)
		}
		switch f := c.off / fi.DataAlign; {
		case f < 0:
			b = binary.AppendUvarint(append(b, dwCFAOffsetExtSF), c.reg)
			return appendSLEB(b, f), nil
		case c.reg < 0x40:
			return binary.AppendUvarint(append(b, dwCFAOffset|byte(c.reg)), uint64(f)), nil
		default:
			b = binary.AppendUvarint(append(b, dwCFAOffsetExtended), c.reg)
			return binary.AppendUvarint(b, uint64(f)), nil
		}
	case dwCFARestore:
		if c.reg < 0x40 {
			return append(b, dwCFARestore|byte(c.reg)), nil
		}
		return binary.AppendUvarint(append(b, dwCFARestoreExtended), c.reg), nil
	}
	return nil, inconsistent("unknown call-frame instruction %#x", c.op)
}

// appendSLEB appends v as a signed LEB128 number (DWARF 5 §7.6); Go's
// binary.AppendVarint is a different (zig-zag) encoding.
func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// byteOrder is what the writer needs of a binary.ByteOrder.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// inconsistent is an error of what the caller asks for: it matches
// elfobj.ErrInconsistent.
func inconsistent(format string, args ...any) error {
	return fmt.Errorf("%w: %s", elfobj.ErrInconsistent, fmt.Sprintf(format, args...))
}

// AppendCFI appends the call-frame instructions c, encoded little-endian
// with the factors of fi in the forms LLVM's MCDwarf chooses: for writers
// of frame sections Build does not make (Mach-O's __eh_frame, whose
// pointers are 8 bytes).
func AppendCFI(b []byte, fi FrameInfo, c CFI) ([]byte, error) {
	e := ehWriter{fi: fi, order: binary.LittleEndian, b: b}
	if err := e.instructions(c); err != nil {
		return nil, err
	}
	return e.b, nil
}
