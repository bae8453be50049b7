package coffobj

import (
	"bytes"
	"debug/pe"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/ferr"
)

// formatErr is a FormatError matching err (goffload.ErrTruncated,
// goffload.ErrUnsupported, goffload.ErrLimit, or nil) besides
// goffload.ErrInvalid.
func formatErr(off int64, err error, format string, args ...any) error {
	return ferr.New("coff", off, fmt.Sprintf(format, args...), nil, err)
}

// readAtFull reads len(p) bytes at off of r.
func readAtFull(r io.ReaderAt, p []byte, off int64) error { return ferr.ReadAt("coff", r, p, off) }

// File is a COFF file read from an io.ReaderAt: a relocatable object, or a
// PE image (an executable or a DLL). Section contents are read only when
// asked for.
type File struct {
	pe.FileHeader
	// Image is set for a PE image (a file that starts with an MS-DOS
	// header), clear for an object.
	Image bool
	// Sections are in header order: Sections[i] is section number i+1.
	Sections []*FileSection

	r       io.ReaderAt
	size    int64
	headers int64 // where the section headers start
	refs    *budget.Counter
	syms    []FileSymbol
	symErr  error
	symRead bool
}

// Size returns the size of the input the file was read from.
func (f *File) Size() int64 { return f.size }

// FileSection is one section header of a File.
type FileSection struct {
	// Name is the full name: one of more than 8 bytes read from the string
	// table, `$` suffixes kept as written.
	Name   string
	Number int // from 1
	pe.SectionHeader
	f *File
}

// Align returns the section's alignment from its IMAGE_SCN_ALIGN_* bits, 0
// for none (PE images have none).
func (s *FileSection) Align() uint32 { return alignOf(s.Characteristics) }

// FileSize returns how many bytes of the section the file holds: none for
// uninitialized data, SizeOfRawData in an object, and in an image the
// smaller of VirtualSize and SizeOfRawData (the rest of the raw data is
// file-alignment padding), as LLVM's COFFObjectFile reads them.
func (s *FileSection) FileSize() int64 {
	if s.Offset == 0 {
		return 0
	}
	n := s.SectionHeader.Size
	if s.f.Image && s.VirtualSize != 0 && s.VirtualSize < n {
		n = s.VirtualSize
	}
	return int64(n)
}

// Open returns a reader of the section's bytes in the file.
func (s *FileSection) Open() *io.SectionReader {
	return io.NewSectionReader(s.f.r, int64(s.Offset), s.FileSize())
}

// Data returns the section's bytes in the file.
func (s *FileSection) Data() ([]byte, error) {
	b := make([]byte, s.FileSize()) // checked against the file's size by Read
	if err := readAtFull(s.f.r, b, int64(s.Offset)); err != nil {
		return nil, fmt.Errorf("section %q: %w", s.Name, err)
	}
	return b, nil
}

// headerAt returns the file offset of section i's header (from 0).
func (f *File) headerAt(i int) int64 { return f.headers + int64(i)*sectionHeaderSize }

// Section returns the first section named name, or nil.
func (f *File) Section(name string) *FileSection {
	for _, s := range f.Sections {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// FileSymbol is one record of the symbol table with its aux records.
type FileSymbol struct {
	// Index is the record's index in the table (aux records count: the
	// index relocations use).
	Index         int
	Name          string
	Value         uint32
	SectionNumber int16
	Type          uint16
	StorageClass  StorageClass
	// Aux holds the aux records, 18 bytes each.
	Aux []byte
}

// AuxSection is the aux record of a section definition (format 5).
type AuxSection struct {
	Length              uint32
	NumberOfRelocations uint16
	NumberOfLinenumbers uint16
	Checksum            uint32
	// Number is the section an associative COMDAT section goes with.
	Number    uint16
	Selection Selection
}

// SectionDefinition returns the aux record of a section definition: a
// static symbol with aux records (LLVM's COFFSymbolRef::isSectionDefinition
// also takes external absolute ones, which C++/CLI makes).
func (s *FileSymbol) SectionDefinition() (AuxSection, bool) {
	if len(s.Aux) < symbolSize || !(s.StorageClass == IMAGE_SYM_CLASS_STATIC || s.StorageClass == IMAGE_SYM_CLASS_EXTERNAL && s.SectionNumber == IMAGE_SYM_ABSOLUTE) {
		return AuxSection{}, false
	}
	a := s.Aux
	return AuxSection{Length: le.Uint32(a), NumberOfRelocations: le.Uint16(a[4:]), NumberOfLinenumbers: le.Uint16(a[6:]),
		Checksum: le.Uint32(a[8:]), Number: le.Uint16(a[12:]), Selection: Selection(a[14])}, true
}

// WeakExternal returns the aux record of a weak external: the index of its
// default symbol and its search kind.
func (s *FileSymbol) WeakExternal() (tag, search uint32, ok bool) {
	if s.StorageClass != IMAGE_SYM_CLASS_WEAK_EXTERNAL || len(s.Aux) < symbolSize {
		return 0, 0, false
	}
	return le.Uint32(s.Aux), le.Uint32(s.Aux[4:]), true
}

// FileName returns the name in the aux records of a .file symbol.
func (s *FileSymbol) FileName() string {
	if s.StorageClass != IMAGE_SYM_CLASS_FILE {
		return ""
	}
	return strings.TrimRight(string(s.Aux), "\x00")
}

// FileReloc is one relocation with its symbol resolved.
type FileReloc struct {
	Offset   uint32
	SymIndex uint32
	Type     uint16
	Symbol   *FileSymbol
}

// Read reads the COFF headers of the size bytes of r: a relocatable object
// (x86-64, AArch64, or any machine debug/pe knows) or a PE image. Every
// size is checked against the input before anything is allocated for it,
// and a panic of debug/pe on malformed input becomes an error matching
// [goffload.ErrInvalid]. Malformed input gives a [*goffload.FormatError]
// (Format "coff", the offset in r): a table or section past the end of
// the input matches [goffload.ErrTruncated]; a big object (/bigobj) or a
// short import object [goffload.ErrUnsupported]; names and relocations that
// would take more than the input's budget (see the package's Security)
// [goffload.ErrLimit]. A nil r or a negative size is an argument error
// matching fs.ErrInvalid.
func Read(r io.ReaderAt, size int64) (*File, error) {
	if err := ferr.CheckInput("coff", r, size); err != nil {
		return nil, err
	}
	f := &File{r: r, size: size, refs: budget.For(size)}
	if err := f.check(); err != nil {
		return nil, err
	}
	pf, err := newFile(r, size)
	if err != nil {
		return nil, err
	}
	f.FileHeader = pf.FileHeader
	f.Sections = make([]*FileSection, len(pf.Sections))
	for i, s := range pf.Sections {
		f.Sections[i] = &FileSection{Name: s.Name, Number: i + 1, SectionHeader: s.SectionHeader, f: f}
	}
	return f, nil
}

// newFile runs pe.NewFile, taking only its panics for bad input.
func newFile(r io.ReaderAt, size int64) (pf *pe.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			pf, err = nil, formatErr(-1, nil, "debug/pe: %v", p)
		}
	}()
	pf, err = pe.NewFile(io.NewSectionReader(r, 0, size))
	if err != nil {
		sentinel := error(nil)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			sentinel = goffload.ErrTruncated
		}
		return nil, formatErr(-1, sentinel, "%s", err)
	}
	return pf, nil
}

// check checks the headers and tables against the input before debug/pe
// reads them, and counts the names it would copy against the budget.
func (f *File) check() error {
	var h [fileHeaderSize]byte
	base := int64(0)
	var mz [64]byte
	if f.size >= 2 {
		if err := readAtFull(f.r, mz[:2], 0); err != nil {
			return err
		}
	}
	if string(mz[:2]) == "MZ" {
		if err := readAtFull(f.r, mz[:], 0); err != nil {
			return err
		}
		sig := int64(le.Uint32(mz[0x3c:]))
		var pesig [4]byte
		if err := readAtFull(f.r, pesig[:], sig); err != nil {
			return err
		}
		if string(pesig[:]) != "PE\x00\x00" {
			return formatErr(sig, nil, "bad PE signature %q", pesig[:])
		}
		f.Image, base = true, sig+4
	}
	if err := readAtFull(f.r, h[:], base); err != nil {
		return err
	}
	machine, nsec := le.Uint16(h[:]), int64(le.Uint16(h[2:]))
	symtab, nsyms := int64(le.Uint32(h[8:])), int64(le.Uint32(h[12:]))
	opt := int64(le.Uint16(h[16:]))
	if !f.Image && machine == 0 && nsec == 0xFFFF {
		return formatErr(base, goffload.ErrUnsupported, "a big object (/bigobj) or a short import object")
	}
	f.headers = base + fileHeaderSize + opt
	if f.headers+nsec*sectionHeaderSize > f.size {
		return formatErr(base+2, goffload.ErrTruncated, "%d section headers at %#x past the end of the file (%d bytes)", nsec, f.headers, f.size)
	}
	var strs int64 // the string table's offset, 0 for none
	if symtab != 0 {
		if symtab > f.size || nsyms*symbolSize > f.size-symtab {
			return formatErr(base+8, goffload.ErrTruncated, "symbol table of %d records at %#x past the end of the file (%d bytes)", nsyms, symtab, f.size)
		}
		strs = symtab + nsyms*symbolSize
		if strs+4 <= f.size {
			var b [4]byte
			if err := readAtFull(f.r, b[:], strs); err != nil {
				return err
			}
			if n := int64(le.Uint32(b[:])); n > f.size-strs {
				return formatErr(strs, goffload.ErrTruncated, "string table of %d bytes past the end of the file (%d bytes)", n, f.size)
			}
		}
	}
	names := &nameLengths{f: f, strs: strs, seen: map[uint32]int64{}}
	hdrs := make([]byte, nsec*sectionHeaderSize)
	if err := readAtFull(f.r, hdrs, f.headers); err != nil {
		return err
	}
	relocBytes := int64(0)
	for i := range int(nsec) {
		b := hdrs[i*sectionHeaderSize:]
		at := f.headerAt(i)
		if b[0] == '/' {
			if err := names.section(b[:8], at); err != nil {
				return err
			}
		}
		size, ptr := int64(le.Uint32(b[16:])), int64(le.Uint32(b[20:]))
		if ptr != 0 && (ptr > f.size || size > f.size-ptr) {
			return formatErr(at+20, goffload.ErrTruncated, "section %d: %d bytes at %#x past the end of the file (%d bytes)", i+1, size, ptr, f.size)
		}
		rptr, nrel := int64(le.Uint32(b[24:])), int64(le.Uint16(b[32:]))
		if nrel > 0 && (rptr > f.size || nrel*relocSize > f.size-rptr) {
			return formatErr(at+24, goffload.ErrTruncated, "section %d: %d relocations at %#x past the end of the file (%d bytes)", i+1, nrel, rptr, f.size)
		}
		// Sections do not share relocations: more relocation records than
		// the file holds is a file built to multiply them.
		if relocBytes += nrel * relocSize; relocBytes > f.size {
			return formatErr(at+32, goffload.ErrLimit, "section %d: the relocations up to it take %d bytes, more than the file's %d", i+1, relocBytes, f.size)
		}
	}
	return names.symbols(symtab, nsyms)
}

// nameLengths counts the bytes of the long names that debug/pe copies,
// once for each section or symbol that names them, against the budget.
type nameLengths struct {
	f    *File
	strs int64 // the string table's offset
	tab  []byte
	seen map[uint32]int64
}

// length returns the length of the string at off of the string table.
func (n *nameLengths) length(off uint32, at int64) (int64, error) {
	if l, ok := n.seen[off]; ok {
		return l, nil
	}
	if n.tab == nil {
		if n.strs == 0 || n.strs+4 > n.f.size {
			return 0, formatErr(at, nil, "name at string table offset %d, and no string table", off)
		}
		var b [4]byte
		if err := readAtFull(n.f.r, b[:], n.strs); err != nil {
			return 0, err
		}
		n.tab = make([]byte, max(le.Uint32(b[:]), 4)) // checked against the file by check
		if err := readAtFull(n.f.r, n.tab, n.strs); err != nil {
			return 0, err
		}
	}
	if int64(off) >= int64(len(n.tab)) || off < 4 {
		return 0, formatErr(at, nil, "name at string table offset %d of %d bytes", off, len(n.tab))
	}
	l := int64(bytes.IndexByte(n.tab[off:], 0))
	if l < 0 {
		l = int64(len(n.tab)) - int64(off)
	}
	n.seen[off] = l
	return l, nil
}

func (n *nameLengths) take(l, at int64, what string) error {
	if !n.f.refs.Take(uint64(l)) {
		return formatErr(at, goffload.ErrLimit, "%s: the names up to it take more than %d times the file's %d bytes plus %d", what, budget.Factor, n.f.size, budget.Slack)
	}
	return nil
}

// section counts a section name "/<offset>".
func (n *nameLengths) section(name []byte, at int64) error {
	digits := strings.TrimRight(string(name[1:]), "\x00")
	off, err := strconv.ParseUint(digits, 10, 32)
	if err != nil {
		if strings.HasPrefix(digits, "/") {
			return formatErr(at, goffload.ErrUnsupported, "section name %q: a base-64 string table offset", name)
		}
		return formatErr(at, nil, "section name %q", name)
	}
	l, err := n.length(uint32(off), at)
	if err != nil {
		return err
	}
	return n.take(l, at, "section name")
}

// symbols counts the long names of the symbol table's records.
func (n *nameLengths) symbols(symtab, nsyms int64) error {
	if symtab == 0 || nsyms == 0 {
		return nil
	}
	buf := make([]byte, 64<<10-(64<<10)%symbolSize)
	aux := 0
	for i := int64(0); i < nsyms; {
		k := min(int64(len(buf)/symbolSize), nsyms-i)
		b := buf[:k*symbolSize]
		if err := readAtFull(n.f.r, b, symtab+i*symbolSize); err != nil {
			return err
		}
		for j := range int(k) {
			rec := b[j*symbolSize:]
			if aux > 0 {
				aux--
				continue
			}
			aux = int(rec[17])
			if le.Uint32(rec) == 0 && le.Uint32(rec[4:]) != 0 {
				at := symtab + (i+int64(j))*symbolSize
				l, err := n.length(le.Uint32(rec[4:]), at)
				if err != nil {
					return err
				}
				// debug/pe copies it, and so does Symbols.
				if err := n.take(2*l, at, "symbol "+strconv.FormatInt(i+int64(j), 10)); err != nil {
					return err
				}
			}
		}
		i += k
	}
	if aux > 0 {
		return formatErr(symtab+nsyms*symbolSize, goffload.ErrTruncated, "the last symbol's %d aux records past the table", aux)
	}
	return nil
}

// Symbols returns the records of the symbol table with their aux records,
// read on the first call. The slice is shared by later calls: do not
// modify it.
func (f *File) Symbols() ([]FileSymbol, error) {
	if !f.symRead {
		f.symRead = true
		f.syms, f.symErr = f.readSymbols()
	}
	return f.syms, f.symErr
}

func (f *File) readSymbols() ([]FileSymbol, error) {
	if f.PointerToSymbolTable == 0 || f.NumberOfSymbols == 0 {
		return nil, nil
	}
	off := int64(f.PointerToSymbolTable)
	tab := make([]byte, int64(f.NumberOfSymbols)*symbolSize) // checked against the file by Read
	if err := readAtFull(f.r, tab, off); err != nil {
		return nil, err
	}
	var strs []byte
	if end := off + int64(len(tab)); end+4 <= f.size {
		var b [4]byte
		if err := readAtFull(f.r, b[:], end); err != nil {
			return nil, err
		}
		strs = make([]byte, max(le.Uint32(b[:]), 4)) // checked against the file by Read
		if err := readAtFull(f.r, strs, end); err != nil {
			return nil, err
		}
	}
	// The names share one copy of the string table.
	strtab := string(strs)
	var syms []FileSymbol
	for i := 0; i < len(tab)/symbolSize; {
		rec := tab[i*symbolSize : (i+1)*symbolSize]
		naux := int(rec[17])
		s := FileSymbol{Index: i, Value: le.Uint32(rec[8:]), SectionNumber: int16(le.Uint16(rec[12:])),
			Type: le.Uint16(rec[14:]), StorageClass: StorageClass(rec[16])}
		if le.Uint32(rec) == 0 {
			if o := le.Uint32(rec[4:]); o != 0 {
				if int64(o) >= int64(len(strtab)) || o < 4 {
					return nil, formatErr(off+int64(i)*symbolSize+4, nil, "symbol %d: name at string table offset %d of %d bytes", i, o, len(strtab))
				}
				s.Name, _, _ = strings.Cut(strtab[o:], "\x00")
			}
		} else {
			s.Name, _, _ = strings.Cut(string(rec[:8]), "\x00")
		}
		end := (i + 1 + naux) * symbolSize
		if end > len(tab) {
			return nil, formatErr(off+int64(i)*symbolSize+17, goffload.ErrTruncated, "symbol %d: %d aux records past the table", i, naux)
		}
		s.Aux = tab[(i+1)*symbolSize : end : end]
		syms = append(syms, s)
		i += 1 + naux
	}
	return syms, nil
}

// symbolAt returns the symbol at table index i.
func symbolAt(syms []FileSymbol, i uint32) *FileSymbol {
	// The records are in index order: a binary search finds it.
	lo, hi := 0, len(syms)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if uint32(syms[m].Index) < i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(syms) && uint32(syms[lo].Index) == i {
		return &syms[lo]
	}
	return nil
}

// Relocations returns the relocations of s, each resolved to its symbol.
// A section with more than 65535 (IMAGE_SCN_LNK_NRELOC_OVFL) gives them
// all, the record holding their number left out.
func (f *File) Relocations(s *FileSection) ([]FileReloc, error) {
	if s.NumberOfRelocations == 0 {
		return nil, nil
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	off := int64(s.PointerToRelocations)
	n := int64(s.NumberOfRelocations)
	first := int64(0)
	if s.Characteristics&IMAGE_SCN_LNK_NRELOC_OVFL != 0 && n == 0xFFFF {
		var b [4]byte
		if err := readAtFull(f.r, b[:], off); err != nil {
			return nil, err
		}
		n, first = int64(le.Uint32(b[:])), 1
		if n < 1 || off > f.size || n*relocSize > f.size-off {
			return nil, formatErr(off, goffload.ErrTruncated, "section %q: %d relocations at %#x past the end of the file (%d bytes)", s.Name, n, off, f.size)
		}
	}
	data := make([]byte, n*relocSize) // checked against the file's size
	if err := readAtFull(f.r, data, off); err != nil {
		return nil, err
	}
	out := make([]FileReloc, 0, n-first)
	for i := first; i < n; i++ {
		b := data[i*relocSize:]
		r := FileReloc{Offset: le.Uint32(b), SymIndex: le.Uint32(b[4:]), Type: le.Uint16(b[8:])}
		if r.Symbol = symbolAt(syms, r.SymIndex); r.Symbol == nil {
			return nil, formatErr(off+i*relocSize+4, nil, "relocation %d of section %q: symbol index %d is not a symbol of the table", i, s.Name, r.SymIndex)
		}
		out = append(out, r)
	}
	return out, nil
}

// Referenced returns the bytes of long names the file has handed out
// (section and symbol names from the string table, each counted every time
// a record names it): what the file bounds by 16 times its size plus 1 MiB.
// A caller reading many files bounds their sum in turn (fatobj counts it
// against its command's offloadbinary.Budget).
func (f *File) Referenced() uint64 { return f.refs.Used() }
