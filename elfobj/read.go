package elfobj

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/ferr"
)

// formatErr is a FormatError matching only goffload.ErrInvalid.
func formatErr(off int64, format string, args ...any) error {
	return elfErr(off, goffload.ErrInvalid, format, args...)
}

// elfErr is a FormatError matching err (goffload.ErrTruncated,
// goffload.ErrUnsupported) besides goffload.ErrInvalid.
func elfErr(off int64, err error, format string, args ...any) error {
	return ferr.New("elf", off, fmt.Sprintf(format, args...), nil, err)
}

// shortRead is the error of a reader that ends at byte off, before the size
// its caller gave, or its own error.
func shortRead(off int64, err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return elfErr(off, goffload.ErrTruncated, "input shorter than its size")
	}
	return fmt.Errorf("elf: reading at byte %#x: %w", off, err)
}

// readAtFull reads len(p) bytes at off of r; io.EOF with a full read is no
// error.
func readAtFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	return shortRead(off+int64(n), err)
}

// Offsets of ELF64 header and section header fields.
const (
	ehdrType   = 16 // e_type
	ehdrShoff  = 40 // e_shoff
	shdrType   = 4  // sh_type
	shdrOffset = 24 // sh_offset
	shdrLink   = 40 // sh_link
	shdrInfo   = 44 // sh_info
)

// File is an ELF64 file (ET_REL, ET_EXEC or ET_DYN) read from an io.ReaderAt.
// Section contents are read only when asked for.
type File struct {
	elf.FileHeader
	// Sections are indexed by section header index; Sections[0] is the null
	// section.
	Sections []*FileSection
	// ShStrNdx is the index of the section-name string table.
	ShStrNdx int

	ef    *elf.File
	r     io.ReaderAt
	size  int64
	order binary.ByteOrder
	shoff int64 // e_shoff, for error offsets
	// symtabs caches decoded symbol tables by section index: relocation
	// sections share one, and decoding it for each would be quadratic.
	symtabs map[int][]FileSymbol
	// refs counts the bytes of the symbol names decoded, each time a
	// symbol names them (see internal/budget).
	refs *budget.Counter
	// byAddr indexes the sections by address (SectionAt).
	byAddr []addrSpan
}

// Size returns the size of the input the file was read from.
func (f *File) Size() int64 { return f.size }

// cudaNoBits is the section type of NVIDIA's .nv.shared.* sections in a
// cubin (EM_CUDA): the kernel's shared memory, sized but holding no file
// bytes, like SHT_NOBITS, its offset and size running past the end of the
// file (ptxas and nvlink of CUDA 13 write them so; nvlink and the CUDA
// driver load them).
const cudaNoBits elf.SectionType = 0x7000000a

// holdsNoBytes reports whether a section of type t in a file for machine m
// holds no bytes in the file, whatever its size.
func holdsNoBytes(m elf.Machine, t elf.SectionType) bool {
	return t == elf.SHT_NOBITS || m == elf.EM_CUDA && t == cudaNoBits
}

// FileSection is one section header of a File.
type FileSection struct {
	elf.SectionHeader
	Index int
	f     *File
}

// Open returns a reader of the section's bytes as stored in the file
// (compressed sections are not decompressed). SHT_NOBITS sections read as
// empty.
func (s *FileSection) Open() *io.SectionReader {
	if s.Type == elf.SHT_NOBITS {
		return io.NewSectionReader(s.f.r, 0, 0)
	}
	return io.NewSectionReader(s.f.r, int64(s.Offset), int64(s.FileSize))
}

// Data returns the section's bytes as stored in the file.
func (s *FileSection) Data() ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	b := make([]byte, s.FileSize) // checked against the file size when read
	if n, err := io.ReadFull(s.Open(), b); err != nil {
		at := int64(s.Offset) + int64(n)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, elfErr(at, goffload.ErrTruncated, "section %q: input shorter than its size", s.Name)
		}
		return nil, fmt.Errorf("elf: section %q: reading at byte %#x: %w", s.Name, at, err)
	}
	return b, nil
}

// headerField returns the file offset of the field at off of section i's
// header.
func (f *File) headerField(i int, off int64) int64 {
	return f.shoff + int64(i)*shdrSize + off
}

// FileSymbol is one entry of a symbol table with its true index (0 is the
// null symbol, which debug/elf leaves out).
type FileSymbol struct {
	Index int
	Name  string
	Info  byte
	Other byte
	// Section is st_shndx, or, where st_shndx is SHN_XINDEX, the symbol's
	// entry of the SHT_SYMTAB_SHNDX table that extends it (objects of
	// more than 65,279 sections): then XIndex is set, and Section is a
	// section's index even where it equals a reserved value (SHN_ABS...).
	Section elf.SectionIndex
	XIndex  bool
	Value   uint64
	Size    uint64
}

// Type returns the symbol's type.
func (s *FileSymbol) Type() elf.SymType { return elf.ST_TYPE(s.Info) }

// Bind returns the symbol's binding.
func (s *FileSymbol) Bind() elf.SymBind { return elf.ST_BIND(s.Info) }

// FileReloc is one relocation with its symbol resolved.
type FileReloc struct {
	Offset    uint64
	Type      uint32
	SymIndex  uint32
	Symbol    *FileSymbol // nil for symbol index 0
	Addend    int64
	HasAddend bool // false for SHT_REL: the addend is in the relocated bytes
}

// Read reads the ELF headers of the size bytes of r. Every size is checked
// against the input before anything is allocated for it, and a panic of
// debug/elf on malformed input becomes an error matching [goffload.ErrInvalid].
// Malformed input gives a [*goffload.FormatError] (Format "elf", the offset
// in r): a header, table or section past the end of the input matches
// [goffload.ErrTruncated], an ELF32 file [goffload.ErrUnsupported]. Files
// of more sections than the ELF header's fields hold (65,280 and more) are
// read as LLVM writes them: the count in section 0's sh_size, the name
// table's index in its sh_link where e_shstrndx is SHN_XINDEX, and each
// symbol's section from SHT_SYMTAB_SHNDX ([FileSymbol.XIndex]); [Write]
// writes them so. A nil r or a negative size is an argument error
// matching fs.ErrInvalid.
func Read(r io.ReaderAt, size int64) (*File, error) {
	if err := ferr.CheckInput("elf", r, size); err != nil {
		return nil, err
	}
	shoff, h, err := checkHeader(r, size)
	if err != nil {
		return nil, err
	}
	// debug/elf copies the name of each section: their bytes, counted for
	// each section, come out of the file's budget.
	refs := budget.For(size)
	names, strndx, err := checkTables(r, size, h)
	if err != nil {
		return nil, err
	}
	if !refs.Take(names) {
		return nil, elfErr(ehdrShoff, goffload.ErrLimit, "the section names take %d bytes, more than %d times the file's %d bytes plus %d", names, budget.Factor, size, budget.Slack)
	}
	ef, err := newFile(r, size)
	if err != nil {
		return nil, err
	}
	if ef.Class != elf.ELFCLASS64 {
		return nil, elfErr(4, goffload.ErrUnsupported, "class %v (only ELF64 is read)", ef.Class)
	}
	f := &File{FileHeader: ef.FileHeader, ef: ef, r: r, size: size, order: ef.ByteOrder, shoff: shoff, symtabs: map[int][]FileSymbol{}, refs: refs}
	f.Sections = make([]*FileSection, len(ef.Sections))
	for i, s := range ef.Sections {
		if holdsNoBytes(ef.Machine, s.Type) {
			s.FileSize = 0
		}
		if s.Type != elf.SHT_NOBITS && (s.Offset > uint64(size) || s.FileSize > uint64(size)-s.Offset) {
			return nil, elfErr(f.headerField(i, shdrOffset), goffload.ErrTruncated, "section %d %q: %d bytes at %#x past the end of the file (%d bytes)", i, s.Name, s.FileSize, s.Offset, size)
		}
		f.Sections[i] = &FileSection{SectionHeader: s.SectionHeader, Index: i, f: f}
	}
	if len(f.Sections) == 0 {
		f.Sections = []*FileSection{{Index: 0, f: f}}
	}
	f.ShStrNdx = strndx
	return f, nil
}

// newFile runs elf.NewFile, which has panicked on malformed input (index out
// of range, huge allocations) in past Go releases: only its panics are taken
// for bad input, so that a bug of this package still crashes as one.
func newFile(r io.ReaderAt, size int64) (ef *elf.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			ef, err = nil, formatErr(-1, "debug/elf: %v", p)
		}
	}()
	ef, err = elf.NewFile(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, debugELFErr(err)
	}
	return ef, nil
}

// debugELFErr turns an error of debug/elf into a FormatError of unknown
// offset: checkTables checks every rule debug/elf's NewFile refuses a file
// by, with the offset of the field at fault, so that this is only reached
// where debug/elf gains a rule.
func debugELFErr(err error) error {
	sentinel := goffload.ErrInvalid
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		sentinel = goffload.ErrTruncated
	}
	return elfErr(-1, sentinel, "debug/elf refuses it: %v", err)
}

// checkHeader checks the ELF64 header's table sizes against the input before
// debug/elf allocates anything for them: the program and section header
// tables must have the ELF64 entry sizes and lie inside the input. It
// returns e_shoff and the header.
func checkHeader(r io.ReaderAt, size int64) (shoff int64, h [64]byte, err error) {
	n := min(size, int64(len(h)))
	if err := readAtFull(r, h[:n], 0); err != nil {
		return 0, h, err
	}
	const magic = "\x7fELF"
	if string(h[:min(n, 4)]) != magic[:min(n, 4)] {
		return 0, h, formatErr(0, "bad magic %q", h[:min(n, 4)])
	}
	if n < int64(len(h)) {
		return 0, h, elfErr(0, goffload.ErrTruncated, "ELF64 header cut to %d of %d bytes", n, len(h))
	}
	switch elf.Class(h[4]) {
	case elf.ELFCLASS64:
	case elf.ELFCLASS32:
		return 0, h, elfErr(4, goffload.ErrUnsupported, "class %v (only ELF64 is read)", elf.Class(h[4]))
	default:
		return 0, h, formatErr(4, "class %v", elf.Class(h[4]))
	}
	var order binary.ByteOrder
	switch elf.Data(h[5]) {
	case elf.ELFDATA2LSB:
		order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		order = binary.BigEndian
	default:
		return 0, h, formatErr(5, "byte order %v", elf.Data(h[5]))
	}
	tables := []struct {
		what          string
		off           uint64
		entsize, want uint64
		num           uint64
		at, entsizeAt int64 // of the table's offset and entry size fields
	}{
		{"program header", order.Uint64(h[32:]), uint64(order.Uint16(h[54:])), 56, uint64(order.Uint16(h[56:])), 32, 54},
		{"section header", order.Uint64(h[40:]), uint64(order.Uint16(h[58:])), shdrSize, uint64(order.Uint16(h[60:])), 40, 58},
	}
	for i, t := range tables {
		if i == 1 && t.num == 0 && t.off != 0 {
			// e_shnum 0: the count is in section 0's sh_size.
			var b [8]byte
			if t.off > uint64(size) || uint64(size)-t.off < shdrSize {
				return 0, h, elfErr(t.at, goffload.ErrTruncated, "section header table at %#x past the end of the file", t.off)
			}
			if err := readAtFull(r, b[:], int64(t.off)+32); err != nil {
				return 0, h, err
			}
			t.num = order.Uint64(b[:])
			if t.num > uint64(size)/shdrSize {
				return 0, h, elfErr(int64(t.off)+32, goffload.ErrTruncated, "%d section headers in a file of %d bytes", t.num, size)
			}
		}
		if t.num == 0 {
			continue
		}
		if t.entsize != t.want {
			return 0, h, formatErr(t.entsizeAt, "%s entry size %d, want %d", t.what, t.entsize, t.want)
		}
		if t.off > uint64(size) || t.num*t.entsize > uint64(size)-t.off {
			return 0, h, elfErr(t.at, goffload.ErrTruncated, "%s table of %d entries at %#x past the end of the file (%d bytes)", t.what, t.num, t.off, size)
		}
	}
	return int64(order.Uint64(h[ehdrShoff:])), h, nil
}

// Section returns the first section named name, or nil.
func (f *File) Section(name string) *FileSection {
	for _, s := range f.Sections[1:] {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// SectionsByType returns the sections of type t in index order.
func (f *File) SectionsByType(t elf.SectionType) []*FileSection {
	var out []*FileSection
	for _, s := range f.Sections[1:] {
		if s.Type == t {
			out = append(out, s)
		}
	}
	return out
}

// section returns section i, checked.
func (f *File) section(i uint32, what string) (*FileSection, error) {
	return f.sectionAt(i, -1, what)
}

// sectionAt returns section i, read at byte at of the file, checked.
func (f *File) sectionAt(i uint32, at int64, what string) (*FileSection, error) {
	if i == 0 || int(i) >= len(f.Sections) {
		return nil, formatErr(at, "%s: section index %d of %d", what, i, len(f.Sections))
	}
	return f.Sections[i], nil
}

// Symbols returns the symbol table (SHT_SYMTAB) with the null symbol at index 0,
// or nil if there is none. The slice is shared by later calls: do not modify
// it.
func (f *File) Symbols() ([]FileSymbol, error) {
	tabs := f.SectionsByType(elf.SHT_SYMTAB)
	if len(tabs) == 0 {
		return nil, nil
	}
	return f.symbolsOf(tabs[0])
}

// DynamicSymbols returns the dynamic symbol table (SHT_DYNSYM) with the null
// symbol at index 0, or nil if there is none.
func (f *File) DynamicSymbols() ([]FileSymbol, error) {
	tabs := f.SectionsByType(elf.SHT_DYNSYM)
	if len(tabs) == 0 {
		return nil, nil
	}
	return f.symbolsOf(tabs[0])
}

// symbolsOf decodes the symbol table tab once; the slice is shared, and must
// not be modified.
func (f *File) symbolsOf(tab *FileSection) ([]FileSymbol, error) {
	if syms, ok := f.symtabs[tab.Index]; ok {
		return syms, nil
	}
	if tab.FileSize%symSize != 0 {
		return nil, formatErr(int64(tab.Offset), "symbol table %q: size %d is not a multiple of %d", tab.Name, tab.FileSize, symSize)
	}
	strs, err := f.sectionAt(tab.Link, f.headerField(tab.Index, shdrLink), "symbol table "+tab.Name)
	if err != nil {
		return nil, err
	}
	names, err := strs.Data()
	if err != nil {
		return nil, err
	}
	data, err := tab.Data()
	if err != nil {
		return nil, err
	}
	// The names share one copy of the table, each is looked for once
	// however many symbols name it, and the bytes named, counted for each
	// symbol, stay within the file's budget.
	strtab := string(names)
	seen := map[uint32]string{}
	syms := make([]FileSymbol, len(data)/symSize)
	for i := range syms {
		b := data[i*symSize:]
		off := f.order.Uint32(b)
		name, ok := seen[off]
		if !ok {
			if name, err = cString(strtab, off); err != nil {
				return nil, formatErr(int64(tab.Offset)+int64(i*symSize), "symbol %d: %v", i, err)
			}
			seen[off] = name
		}
		if !f.refs.Take(uint64(len(name))) {
			return nil, elfErr(int64(tab.Offset)+int64(i*symSize), goffload.ErrLimit, "symbol %d: the names of the symbols up to it take more than %d times the file's %d bytes plus %d", i, budget.Factor, f.size, budget.Slack)
		}
		syms[i] = FileSymbol{
			Index: i, Name: name, Info: b[4], Other: b[5],
			Section: elf.SectionIndex(f.order.Uint16(b[6:])),
			Value:   f.order.Uint64(b[8:]), Size: f.order.Uint64(b[16:]),
		}
	}
	if err := f.extendIndices(tab, syms); err != nil {
		return nil, err
	}
	f.symtabs[tab.Index] = syms
	return syms, nil
}

// extendIndices gives the symbols of tab whose st_shndx is SHN_XINDEX their
// section's index from the SHT_SYMTAB_SHNDX section that links to tab: one
// 32-bit index for each symbol, in the file's byte order.
func (f *File) extendIndices(tab *FileSection, syms []FileSymbol) error {
	var ext []byte
	for i := range syms {
		s := &syms[i]
		if s.Section != elf.SHN_XINDEX {
			continue
		}
		at := int64(tab.Offset) + int64(i)*symSize + 6
		if ext == nil {
			for _, x := range f.SectionsByType(elf.SHT_SYMTAB_SHNDX) {
				if int(x.Link) == tab.Index {
					data, err := x.Data()
					if err != nil {
						return err
					}
					if len(data) < 4*len(syms) {
						return elfErr(f.headerField(x.Index, 32), goffload.ErrInvalid, "section %q: %d bytes of extended section indices for %d symbols", x.Name, len(data), len(syms))
					}
					ext = data
					break
				}
			}
			if ext == nil {
				return formatErr(at, "symbol %d %q: SHN_XINDEX, and no SHT_SYMTAB_SHNDX section links to %q", i, s.Name, tab.Name)
			}
		}
		idx := f.order.Uint32(ext[4*i:])
		if idx == 0 || int64(idx) >= int64(len(f.Sections)) {
			return formatErr(at, "symbol %d %q: extended section index %d of %d sections", i, s.Name, idx, len(f.Sections))
		}
		s.Section, s.XIndex = elf.SectionIndex(idx), true
	}
	return nil
}

// cString returns the NUL-terminated string at off of a string table.
func cString(tab string, off uint32) (string, error) {
	if int64(off) >= int64(len(tab)) {
		if off == 0 {
			return "", nil
		}
		return "", fmt.Errorf("name offset %d past the string table's %d bytes", off, len(tab))
	}
	if i := strings.IndexByte(tab[off:], 0); i >= 0 {
		return tab[off : int(off)+i], nil
	}
	return "", fmt.Errorf("name at %d is not NUL-terminated", off)
}

// Relocations returns the relocations of the SHT_RELA or SHT_REL section rs,
// each resolved against the symbol table rs links to.
func (f *File) Relocations(rs *FileSection) ([]FileReloc, error) {
	var ent uint64
	switch rs.Type {
	case elf.SHT_RELA:
		ent = relaSize
	case elf.SHT_REL:
		ent = relSize
	default:
		return nil, fmt.Errorf("elf: section %q of type %v holds no relocations: %w", rs.Name, rs.Type, fs.ErrInvalid)
	}
	if rs.FileSize%ent != 0 {
		return nil, formatErr(int64(rs.Offset), "relocation section %q: size %d is not a multiple of %d", rs.Name, rs.FileSize, ent)
	}
	var syms []FileSymbol
	if rs.Link != 0 {
		tab, err := f.sectionAt(rs.Link, f.headerField(rs.Index, shdrLink), "relocation section "+rs.Name)
		if err != nil {
			return nil, err
		}
		if syms, err = f.symbolsOf(tab); err != nil {
			return nil, err
		}
	}
	data, err := rs.Data()
	if err != nil {
		return nil, err
	}
	out := make([]FileReloc, len(data)/int(ent))
	for i := range out {
		b := data[uint64(i)*ent:]
		info := f.order.Uint64(b[8:])
		r := FileReloc{Offset: f.order.Uint64(b), Type: uint32(info), SymIndex: uint32(info >> 32), HasAddend: ent == relaSize}
		if r.HasAddend {
			r.Addend = int64(f.order.Uint64(b[16:]))
		}
		if r.SymIndex != 0 {
			if int(r.SymIndex) >= len(syms) {
				return nil, formatErr(int64(rs.Offset)+int64(uint64(i)*ent), "relocation %d of %q: symbol %d of %d", i, rs.Name, r.SymIndex, len(syms))
			}
			r.Symbol = &syms[r.SymIndex]
		}
		out[i] = r
	}
	return out, nil
}

// DynamicRelocations returns the relocations that the dynamic loader applies:
// those of every allocated SHT_RELA or SHT_REL section of an executable or
// shared object (.rela.dyn, .rela.plt), resolved against the dynamic symbols.
func (f *File) DynamicRelocations() ([]FileReloc, error) {
	var out []FileReloc
	for _, s := range f.Sections[1:] {
		if (s.Type != elf.SHT_RELA && s.Type != elf.SHT_REL) || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		rs, err := f.Relocations(s)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// Referenced returns the bytes of names the file has decoded so far
// (section names, and each symbol's and DT_NEEDED entry's name, counted
// each time a symbol or entry names them): what the file bounds by 16 times
// its size plus 1 MiB. A caller reading many files bounds their sum in turn
// (fatobj counts it against its command's offloadbinary.Budget).
func (f *File) Referenced() uint64 { return f.refs.Used() }
