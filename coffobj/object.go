package coffobj

import "io"

// Object is a relocatable COFF object: what [Write] writes and what
// [File.Object] loads for editing.
type Object struct {
	// Machine is the IMAGE_FILE_MACHINE_* of the object: [MachineAMD64] or
	// [MachineARM64] for the relocation types this package names.
	Machine uint16
	// TimeDateStamp is 0 in what LLVM writes, for reproducible builds.
	TimeDateStamp uint32
	// Characteristics are the file header's IMAGE_FILE_* flags (0 in what
	// LLVM writes).
	Characteristics uint16

	// Sections in file order; section number i+1 is Sections[i].
	Sections []*Section
	// Symbols in table order. A symbol's aux records are made from its
	// fields (see [Symbol]); a COMDAT section's leader must come right
	// after the section's definition symbol, as COFF requires.
	Symbols []*Symbol
}

// Section is one section. Its contents are Data, or the Size bytes of Reader
// from offset 0, read each time the object is written, or none for a
// section of uninitialized data (IMAGE_SCN_CNT_UNINITIALIZED_DATA, whose
// Size is its size at run time).
type Section struct {
	// Name is the name as written, `$` suffixes included
	// ("llvm_offload_entries$OE"); one longer than 8 bytes goes to the
	// string table.
	Name string
	// Characteristics are the IMAGE_SCN_* flags (debug/pe's and this
	// package's) without the alignment, which is Align.
	Characteristics uint32
	// Align is the alignment, a power of two up to 8192, or 0 for the
	// format's default (16 bytes) and no IMAGE_SCN_ALIGN_* bits.
	Align uint32

	Data []byte
	// Reader holds the contents when Data is nil: Size bytes from offset 0,
	// streamed when the object is written.
	Reader io.ReaderAt
	Size   int64

	Relocs []Reloc

	// Selection makes the section a COMDAT section (the writer sets
	// IMAGE_SCN_LNK_COMDAT): it goes in the aux record of the section's
	// definition symbol, which the object must then have. Associative is
	// the section an IMAGE_COMDAT_SELECT_ASSOCIATIVE section goes with.
	Selection   Selection
	Associative *Section

	fileOffset int64 // where the contents were in the file read, plus one
}

// ContentSize returns the size of s's contents as given (Data, or Size).
func (s *Section) ContentSize() int64 {
	if s.Data != nil {
		return int64(len(s.Data))
	}
	return s.Size
}

// Uninitialized reports whether s holds uninitialized data, which has no
// bytes in the file.
func (s *Section) Uninitialized() bool {
	return s.Characteristics&IMAGE_SCN_CNT_UNINITIALIZED_DATA != 0 && s.Data == nil && s.Reader == nil
}

// IMAGE_SCN_CNT_UNINITIALIZED_DATA and the other flags of debug/pe, typed
// for this package's fields.
const (
	IMAGE_SCN_CNT_CODE               uint32 = 0x00000020
	IMAGE_SCN_CNT_INITIALIZED_DATA   uint32 = 0x00000040
	IMAGE_SCN_CNT_UNINITIALIZED_DATA uint32 = 0x00000080
	IMAGE_SCN_LNK_COMDAT             uint32 = 0x00001000
	IMAGE_SCN_MEM_DISCARDABLE        uint32 = 0x02000000
	IMAGE_SCN_MEM_EXECUTE            uint32 = 0x20000000
	IMAGE_SCN_MEM_READ               uint32 = 0x40000000
	IMAGE_SCN_MEM_WRITE              uint32 = 0x80000000
)

// Symbol is one symbol (a record of the symbol table and its aux records).
type Symbol struct {
	Name string
	// Section defines the symbol; when it is nil, Number says what the
	// symbol is: IMAGE_SYM_UNDEFINED (an external reference, or a common
	// symbol of size Value), IMAGE_SYM_ABSOLUTE or IMAGE_SYM_DEBUG.
	Section      *Section
	Number       int16
	Value        uint32
	Type         uint16 // 0x20 for a function
	StorageClass StorageClass

	// SectionDefinition makes the symbol its Section's definition (a
	// static symbol named after the section, with an aux record that the
	// writer fills: length, relocation count, checksum, COMDAT selection).
	SectionDefinition bool
	// Weak, for an IMAGE_SYM_CLASS_WEAK_EXTERNAL symbol, names its default
	// and search kind (aux format 3).
	Weak *WeakExternal
	// File is the source file name of a .file symbol
	// (IMAGE_SYM_CLASS_FILE), written in its aux records.
	File string
	// Aux holds any other aux records as read, 18 bytes each (function
	// definitions, CLR tokens): written back unchanged.
	Aux []byte
}

// WeakExternal is the aux record of a weak external.
type WeakExternal struct {
	Default *Symbol
	Search  uint32 // IMAGE_WEAK_EXTERN_SEARCH_*
}

// Reloc is one relocation of a section. COFF relocations carry no addend:
// it is in the bytes relocated.
type Reloc struct {
	Offset uint32
	Type   RelocType // IMAGE_REL_AMD64_ADDR64, IMAGE_REL_ARM64_BRANCH26, ...
	Symbol *Symbol
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

// SectionSymbol returns the definition symbol of s, or nil.
func (o *Object) SectionSymbol(s *Section) *Symbol {
	for _, sym := range o.Symbols {
		if sym.SectionDefinition && sym.Section == s {
			return sym
		}
	}
	return nil
}

// AddSection appends s to o's sections and its definition symbol to o's
// symbols, followed by leader (when not nil): the COMDAT symbol of a COMDAT
// section. It returns the definition symbol.
//
// Symbols added this way follow those o has: LLVM puts every section's
// definition symbol before the other symbols, but linkers take them in any
// order.
func (o *Object) AddSection(s *Section, leader *Symbol) *Symbol {
	o.Sections = append(o.Sections, s)
	sym := &Symbol{Name: s.Name, Section: s, StorageClass: IMAGE_SYM_CLASS_STATIC, SectionDefinition: true}
	o.Symbols = append(o.Symbols, sym)
	if leader != nil {
		o.Symbols = append(o.Symbols, leader)
	}
	return sym
}

// Directives returns a `.drectve` section holding the linker options opts
// (such as "/DEFAULTLIB:msvcrt", "/EXPORT:f", "/INCLUDE:sym"), separated
// by spaces, as LLVM writes it: IMAGE_SCN_LNK_INFO | IMAGE_SCN_LNK_REMOVE,
// alignment 1.
func Directives(opts ...string) *Section {
	var b []byte
	for _, o := range opts {
		b = append(b, ' ')
		b = append(b, o...)
	}
	return &Section{Name: ".drectve", Characteristics: IMAGE_SCN_LNK_INFO | IMAGE_SCN_LNK_REMOVE, Align: 1, Data: b}
}
