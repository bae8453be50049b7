package machoobj

import (
	"debug/macho"
	"io"
)

// Object is a 64-bit little-endian relocatable Mach-O object (MH_OBJECT):
// what [Write] writes and what [File.Object] loads for editing.
type Object struct {
	// Cpu and SubCpu are the header's CPU type and subtype: [CpuAmd64] with
	// CPU_SUBTYPE_X86_64_ALL, or [CpuArm64] with CPU_SUBTYPE_ARM64_ALL.
	Cpu    macho.Cpu
	SubCpu uint32
	// Flags are the header's MH_* flags: MH_SUBSECTIONS_VIA_SYMBOLS in what
	// clang and llc write.
	Flags uint32

	// Sections in header order; section number i+1 (a symbol's n_sect) is
	// Sections[i]. The writer gives each its address, as LLVM does: those
	// with bytes in the file first, in this order, each at its alignment,
	// then the zero-fill ones.
	Sections []*Section
	// Symbols: the writer keeps the order of the local ones and sorts the
	// external ones by name, defined before undefined, as LLVM's writer
	// does (the order LC_DYSYMTAB asks for).
	Symbols []*Symbol

	// Version is the LC_BUILD_VERSION or LC_VERSION_MIN_* command, or nil
	// for none.
	Version *Version
	// DataInCode are the LC_DATA_IN_CODE records (jump tables and other
	// data among instructions).
	DataInCode []DataInCode
	// Hints are the linker optimization hints (LC_LINKER_OPTIMIZATION_HINT)
	// of arm64 code.
	Hints []Hint
	// Indirect is the indirect symbol table, for sections of symbol
	// pointers and stubs (whose Reserved1 indexes it).
	Indirect []Indirect
	// Commands are the other load commands, kept as read (linker options),
	// written after LC_DYSYMTAB. One that points into the file cannot be
	// kept: [File.Object] refuses it.
	Commands [][]byte
}

// Section is one section. Its contents are Data, or the Size bytes of
// Reader from offset 0, read each time the object is written, or none for
// a zero-fill section (S_ZEROFILL and the like), whose Size is its size at
// run time.
type Section struct {
	Seg, Name string // "__TEXT", "__text"
	// Align is the alignment in bytes, a power of two.
	Align uint32
	// Flags is the section type and attributes (S_REGULAR,
	// S_ATTR_PURE_INSTRUCTIONS, ...).
	Flags                           uint32
	Reserved1, Reserved2, Reserved3 uint32

	Data   []byte
	Reader io.ReaderAt
	Size   int64

	// Relocs are written in this order (LLVM writes a section's
	// relocations last to first).
	Relocs []Reloc

	// Base is the address the section was at when the addresses stored in
	// its bytes (and in other sections' bytes that point into it) were
	// computed: its address in the file [File.Object] loaded it from.
	// Write corrects those bytes by how far the section moves (see
	// [Reloc]); a builder that computes them at the addresses Write will
	// give ([Addresses]) sets Base to that address.
	Base uint64
}

// ContentSize returns the size of s's contents as given (Data, or Size).
func (s *Section) ContentSize() int64 {
	if s.Data != nil {
		return int64(len(s.Data))
	}
	return s.Size
}

// ZeroFill reports whether s has no bytes in the file.
func (s *Section) ZeroFill() bool { return virtual(s.Flags) }

// Symbol is one nlist_64 record.
type Symbol struct {
	Name string
	// Type is n_type: N_SECT, N_UNDF, N_ABS, N_INDR or a stab, with N_EXT
	// and N_PEXT. A symbol with a Section must be of type N_SECT.
	Type uint8
	// Section defines an N_SECT symbol; Value is then its offset in it.
	// For other symbols Value is n_value as written (the size of a common
	// symbol, an absolute value).
	Section *Section
	Desc    uint16
	Value   uint64
}

// External reports whether s is external (N_EXT), a private external
// included.
func (s *Symbol) External() bool { return s.Type&N_STAB == 0 && s.Type&N_EXT != 0 }

// Defined reports whether s is defined: not N_UNDF, or a common symbol
// (N_UNDF with a size).
func (s *Symbol) Defined() bool { return s.Type&N_STAB != 0 || s.Type&N_TYPE != N_UNDF || s.Value != 0 }

// Reloc is one relocation_info record of a section. Mach-O relocations
// carry no addend but ARM64_RELOC_ADDEND's: it is in the bytes relocated.
//
// A section-relative relocation's bytes hold an address in the target
// section (pc-relative: relative to the place relocated), and so do the
// pc-relative pointers of __TEXT,__eh_frame that x86-64 objects leave
// unrelocated. Mach-O objects lay their sections out in one address
// space: the writer puts each section at the address LLVM's layout gives
// it and corrects those bytes by how far the sections moved from their
// Base.
type Reloc struct {
	Offset uint32 // r_address: the offset in the section
	// Symbol is the target of an external relocation (r_extern 1). Without
	// it, Section is the target of a section-relative one (r_extern 0),
	// and without either Num is r_symbolnum as written (R_ABS 0, or the
	// addend of ARM64_RELOC_ADDEND).
	Symbol  *Symbol
	Section *Section
	Num     uint32
	Type    uint8 // debug/macho's X86_64_RELOC_* or ARM64_RELOC_* value
	PCRel   bool
	Length  uint8 // log2 of the size relocated: 2 for 4 bytes, 3 for 8
}

// Version is the deployment target: an LC_BUILD_VERSION command (Cmd
// LC_BUILD_VERSION, with Platform) or an LC_VERSION_MIN_* one. Versions
// are encoded as Mach-O encodes them: xxxx.yy.zz in nibbles, 10.15.0 is
// 0x000a0f00.
type Version struct {
	Cmd      uint32
	Platform uint32
	Min, SDK uint32
	// Tools are LC_BUILD_VERSION's build_tool_version records (tool,
	// version), none in what LLVM writes.
	Tools [][2]uint32
}

// DataInCode is one data_in_code_entry: Length bytes of data at Offset in
// Section, of kind Kind (DICE_KIND_JUMP_TABLE32 4, ...).
type DataInCode struct {
	Section *Section
	Offset  uint32
	Length  uint16
	Kind    uint16
}

// Hint is one linker optimization hint: its kind (LOH_ARM64_ADRP_ADD 7,
// ...) and the instructions it names, each a section and an offset.
type Hint struct {
	Kind uint64
	Args []Place
}

// Place is a place in the object: an offset in a section.
type Place struct {
	Section *Section
	Offset  uint64
}

// Indirect is one entry of the indirect symbol table: a symbol, or with
// none Raw (INDIRECT_SYMBOL_LOCAL, INDIRECT_SYMBOL_ABS).
type Indirect struct {
	Symbol *Symbol
	Raw    uint32
}

// Section returns the first section seg,name, or nil.
func (o *Object) Section(seg, name string) *Section {
	for _, s := range o.Sections {
		if s.Seg == seg && s.Name == name {
			return s
		}
	}
	return nil
}

// Symbol returns the first symbol named name (Mach-O's leading underscore
// included), or nil.
func (o *Object) Symbol(name string) *Symbol {
	for _, s := range o.Symbols {
		if s.Name == name {
			return s
		}
	}
	return nil
}
