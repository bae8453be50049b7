package elfobj

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
)

// Values that debug/elf lacks, named in its style.
const (
	// SHT_LLVM_OFFLOADING is the type of LLVM's `.llvm.offloading` sections.
	SHT_LLVM_OFFLOADING elf.SectionType = 0x6fff4c0b
	// SHT_LLVM_ADDRSIG is the type of `.llvm_addrsig`: ULEB128 symbol indices.
	SHT_LLVM_ADDRSIG elf.SectionType = 0x6fff4c03
	// SHT_X86_64_UNWIND is the type LLVM gives `.eh_frame` on x86-64.
	SHT_X86_64_UNWIND elf.SectionType = 0x70000001
	// SHF_EXCLUDE marks a section that a final link drops.
	SHF_EXCLUDE elf.SectionFlag = 0x80000000
	// SHF_GNU_RETAIN marks a section that --gc-sections keeps.
	SHF_GNU_RETAIN elf.SectionFlag = 0x200000
	// GRP_COMDAT is the flag word of a COMDAT group.
	GRP_COMDAT uint32 = 1
)

// Object is a relocatable ELF64 object (ET_REL): what [Write] writes and what
// [File.Object] loads for editing. The null section and the null symbol are
// implied.
type Object struct {
	Data       elf.Data // elf.ELFDATA2LSB or elf.ELFDATA2MSB
	Machine    elf.Machine
	OSABI      elf.OSABI
	ABIVersion uint8
	Flags      uint32 // e_flags, e.g. 2 (ELFv2) for ppc64le, 5 (RVC, double-float) for riscv64

	// Sections in file order. The writer makes the sections it needs that are
	// not here: a `.rela<name>` after each section with relocations, `.symtab`
	// and `.strtab`, and `.shstrtab` (see [Object.SectionNames]).
	Sections []*Section
	// Symbols in table order. The writer puts the local ones first, keeping
	// their order, as ELF requires.
	Symbols []*Symbol
	// SectionNames is the string table of section names (e_shstrndx); nil
	// makes a `.shstrtab`. It may be the symbol string table, as LLVM does.
	SectionNames *Section
	// KeepLayout places the contents of the sections of an object read from
	// a file ([File.Object]) in the order of their offsets there, and those
	// made since after them, as llvm-objcopy does; without it they are in
	// section order.
	KeepLayout bool
	// AssemblerLayout places the contents of the sections as LLVM's
	// assembler (MC's ELF writer) does: the other sections' in section
	// order, then the symbol table's, the relocation sections' in section
	// order, and the string tables' last; without it all are in section
	// order. KeepLayout comes first.
	AssemblerLayout bool
}

// Section is one section. Its contents are Data, or the Size bytes of Reader
// from offset 0, read each time the object is written, or nothing for
// SHT_NOBITS (Size bytes of zeros at run time). The contents of symbol tables, string tables used for names,
// relocation sections and groups are made by the writer from the fields that
// describe them.
type Section struct {
	Name      string
	Type      elf.SectionType
	Flags     elf.SectionFlag
	Addr      uint64
	Addralign uint64 // 0 or a power of two
	Entsize   uint64

	Data []byte
	// Reader holds the contents when Data is nil: Size bytes from offset 0,
	// streamed when the object is written. It is an io.ReaderAt so that the
	// object can be written again, and from several goroutines at once.
	Reader io.ReaderAt
	Size   int64 // for Reader and SHT_NOBITS

	// Link is the sh_link section of sections whose link the type does not
	// imply (for example SHF_LINK_ORDER); Info is sh_info likewise.
	Link *Section
	Info uint32

	// Relocs apply to this section; the writer puts them in the SHT_RELA (or
	// SHT_REL) section whose Target is this section.
	Relocs []Reloc
	// Target is the section a SHT_RELA or SHT_REL section applies to.
	Target *Section
	// Group describes a SHT_GROUP section.
	Group *Group
	// Addrsig lists the symbols of a SHT_LLVM_ADDRSIG section. One whose
	// sh_link is not the symbol table (0, as GNU ld -r leaves it) is read as
	// data: its indices are not the table's.
	Addrsig []*Symbol

	fileOffset int64 // where the contents were in the file read, plus one; 0 for a section made since
}

// ContentSize returns the size of s's contents as given (Data, or Size).
func (s *Section) ContentSize() int64 {
	if s.Data != nil {
		return int64(len(s.Data))
	}
	return s.Size
}

// Group is the content of a SHT_GROUP section (a COMDAT group when Flags has
// GRP_COMDAT).
type Group struct {
	Signature *Symbol
	Flags     uint32
	Members   []*Section
}

// Symbol is one symbol-table entry.
type Symbol struct {
	Name       string
	Type       elf.SymType
	Bind       elf.SymBind
	Visibility elf.SymVis
	// Other holds the bits of st_other above the visibility (for example the
	// ppc64 ELFv2 local-entry offset, STO_PPC64_LOCAL_MASK 0xe0).
	Other uint8
	// Section defines the symbol; when it is nil, Index says what the symbol
	// is: elf.SHN_UNDEF, elf.SHN_ABS or elf.SHN_COMMON (then Value is the
	// alignment).
	Section *Section
	Index   elf.SectionIndex
	Value   uint64
	Size    uint64
}

// IsLocal reports whether s goes among the local symbols.
func (s *Symbol) IsLocal() bool { return s.Bind == elf.STB_LOCAL }

// Reloc is one relocation of a section.
type Reloc struct {
	Offset uint64
	Type   RelocType // elf.R_X86_64_PC32, elf.R_AARCH64_CALL26, ...
	Symbol *Symbol   // nil for none (symbol index 0)
	Addend int64
}

// RelocType is a relocation type of debug/elf for the object's machine:
// elf.R_X86_64, elf.R_AARCH64, elf.R_PPC64 or elf.R_RISCV, or a RawReloc.
type RelocType interface {
	fmt.Stringer
	GoString() string
}

// RawReloc is a relocation type by number, for machines whose debug/elf type
// is not one of the four.
type RawReloc uint32

func (r RawReloc) String() string   { return fmt.Sprintf("R_%d", uint32(r)) }
func (r RawReloc) GoString() string { return fmt.Sprintf("elfobj.RawReloc(%d)", uint32(r)) }

// relocCode returns the number of relocation type t on machine m.
func relocCode(m elf.Machine, t RelocType) (uint32, error) {
	var code uint32
	var want elf.Machine
	switch v := t.(type) {
	case RawReloc:
		return uint32(v), nil
	case elf.R_X86_64:
		code, want = uint32(v), elf.EM_X86_64
	case elf.R_AARCH64:
		code, want = uint32(v), elf.EM_AARCH64
	case elf.R_PPC64:
		code, want = uint32(v), elf.EM_PPC64
	case elf.R_RISCV:
		code, want = uint32(v), elf.EM_RISCV
	case nil:
		return 0, fmt.Errorf("no relocation type")
	default:
		return 0, fmt.Errorf("relocation type %#v: not a 64-bit type of x86-64, AArch64, ppc64 or riscv64", t)
	}
	if m != want {
		return 0, fmt.Errorf("relocation type %v on %v", t, m)
	}
	return code, nil
}

// RelocTypeOf returns the typed relocation type of code on machine m.
func RelocTypeOf(m elf.Machine, code uint32) RelocType {
	switch m {
	case elf.EM_X86_64:
		return elf.R_X86_64(code)
	case elf.EM_AARCH64:
		return elf.R_AARCH64(code)
	case elf.EM_PPC64:
		return elf.R_PPC64(code)
	case elf.EM_RISCV:
		return elf.R_RISCV(code)
	}
	return RawReloc(code)
}

// Section returns the first section named name, or nil.
func (o *Object) Section(name string) *Section {
	for _, s := range o.Sections {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Symbol returns the first symbol named name, or nil.
func (o *Object) Symbol(name string) *Symbol {
	for _, s := range o.Symbols {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// ByteOrder returns the byte order of o's Data (little-endian unless
// ELFDATA2MSB).
func (o *Object) ByteOrder() binary.ByteOrder {
	if o.Data == elf.ELFDATA2MSB {
		return binary.BigEndian
	}
	return binary.LittleEndian
}
