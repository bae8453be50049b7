package coffobj

import (
	"bufio"
	"debug/pe"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/goffload/goffload/internal/iocount"
	"github.com/goffload/goffload/internal/strtab"
)

// ErrInconsistent is the class of errors for an Object that cannot be
// written as given: a relocation outside its section, a symbol in a section
// that is not in the object, an alignment that is not a power of two, and
// the like.
var ErrInconsistent = errors.New("inconsistent object")

// Sizes of the records of a COFF object.
const (
	fileHeaderSize    = 20
	sectionHeaderSize = 40
	symbolSize        = 18
	relocSize         = 10
	// maxShortNameOffset is the largest string table offset that a section
	// name "/<decimal>" holds in its 8 bytes.
	maxShortNameOffset = 9999999
	maxSections        = 65279 // IMAGE_SYM_SECTION_MAX: section numbers above are special
)

var le = binary.LittleEndian

func inconsistent(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInconsistent, fmt.Sprintf(format, args...))
}

// plan is everything the writer decides before writing a byte.
type plan struct {
	o        *Object
	number   map[*Section]int     // section number, from 1
	symIndex map[*Symbol]uint32   // index in the table, aux records counted
	defOf    map[*Section]*Symbol // definition symbols
	naux     map[*Symbol]int      // aux records of each symbol
	dataOff  []uint32             // per section: PointerToRawData
	relocOff []uint32             // per section: PointerToRelocations
	nrelocs  []uint32             // per section: relocation records, the overflow one included
	symtab   uint32               // PointerToSymbolTable
	nsyms    uint32               // records, aux included
	strs     strtab.Table
}

// Write writes o to w as a relocatable COFF object, laid out as LLVM lays
// it out: the headers, then each section's contents followed by its
// relocations, then the symbol table and the string table. Contents given
// by a Reader are copied straight to w, with memory that does not depend on
// their size; the checksums of the section definitions are computed as the
// contents pass. The same Object gives the same bytes, and Write does not
// modify o. An Object that cannot be right gives an error wrapping
// [ErrInconsistent] before anything is written.
func Write(w io.Writer, o *Object) (int64, error) {
	p, err := newPlan(o)
	if err != nil {
		return 0, err
	}
	return iocount.Buffered(w, p.write)
}

func newPlan(o *Object) (*plan, error) {
	p := &plan{o: o, number: map[*Section]int{}, symIndex: map[*Symbol]uint32{}, defOf: map[*Section]*Symbol{}, naux: map[*Symbol]int{}}
	if len(o.Sections) > maxSections {
		return nil, inconsistent("%d sections, more than %d", len(o.Sections), maxSections)
	}
	var names []string
	for i, s := range o.Sections {
		if s == nil {
			return nil, inconsistent("nil section")
		}
		if _, dup := p.number[s]; dup {
			return nil, inconsistent("section %q listed twice", s.Name)
		}
		if strings.IndexByte(s.Name, 0) >= 0 {
			return nil, inconsistent("section name %q holds a NUL byte", s.Name)
		}
		p.number[s] = i + 1
		if len(s.Name) > 8 {
			names = append(names, s.Name)
		}
	}
	if err := p.indexSymbols(&names); err != nil {
		return nil, err
	}
	for _, s := range o.Sections {
		if err := p.checkSection(s); err != nil {
			return nil, fmt.Errorf("section %q: %w", s.Name, err)
		}
	}
	// Section names first, so that their offsets stay small: a section
	// header holds "/<offset>" in decimal in 7 digits.
	p.strs = strtab.Build(names)
	for _, s := range o.Sections {
		if len(s.Name) > 8 && p.strOffset(s.Name) > maxShortNameOffset {
			return nil, inconsistent("section name %q at string table offset %d: past the %d a section header holds", s.Name, p.strOffset(s.Name), maxShortNameOffset)
		}
	}
	return p, p.layout()
}

// strOffset returns the offset of s in the string table, which starts with
// its 4-byte size where strtab's starts with a NUL.
func (p *plan) strOffset(s string) uint64 { return p.strs.Offset(s) + 3 }

// indexSymbols numbers the symbols, aux records counted, and adds their
// long names to names.
func (p *plan) indexSymbols(names *[]string) error {
	n := uint32(0)
	for _, s := range p.o.Symbols {
		if s == nil {
			return inconsistent("nil symbol")
		}
		if _, dup := p.symIndex[s]; dup {
			return inconsistent("symbol %q listed twice", s.Name)
		}
		if strings.IndexByte(s.Name, 0) >= 0 {
			return inconsistent("symbol name %q holds a NUL byte", s.Name)
		}
		if s.Section != nil {
			if _, ok := p.number[s.Section]; !ok {
				return inconsistent("symbol %q: section %q is not in the object", s.Name, s.Section.Name)
			}
		}
		aux := len(s.Aux) / symbolSize
		if len(s.Aux)%symbolSize != 0 {
			return inconsistent("symbol %q: %d bytes of aux records, not a multiple of %d", s.Name, len(s.Aux), symbolSize)
		}
		switch {
		case s.SectionDefinition:
			if s.Section == nil {
				return inconsistent("section definition %q has no section", s.Name)
			}
			if p.defOf[s.Section] != nil {
				return inconsistent("section %q has two definition symbols", s.Section.Name)
			}
			p.defOf[s.Section] = s
			aux++
		case s.Weak != nil:
			aux++
		case s.StorageClass == IMAGE_SYM_CLASS_FILE && s.File != "":
			aux += (len(s.File) + symbolSize - 1) / symbolSize
		}
		if aux > 255 {
			return inconsistent("symbol %q: %d aux records, more than 255", s.Name, aux)
		}
		p.symIndex[s] = n
		p.naux[s] = aux
		n += 1 + uint32(aux)
		if len(s.Name) > 8 {
			*names = append(*names, s.Name)
		}
	}
	p.nsyms = n
	for _, s := range p.o.Symbols {
		if s.Weak != nil {
			if _, ok := p.symIndex[s.Weak.Default]; !ok {
				return inconsistent("weak external %q: its default is not in the object", s.Name)
			}
		}
	}
	return nil
}

// checkSection checks what the writer cannot derive for s.
func (p *plan) checkSection(s *Section) error {
	if _, ok := alignBits(s.Align); !ok {
		return inconsistent("alignment %d is not a power of two up to 8192", s.Align)
	}
	if s.Align != 0 && s.Characteristics&IMAGE_SCN_ALIGN_MASK != 0 {
		return inconsistent("both Align and IMAGE_SCN_ALIGN bits %#x", s.Characteristics&IMAGE_SCN_ALIGN_MASK)
	}
	if s.Size < 0 || s.ContentSize() > math.MaxUint32 {
		return inconsistent("size %d", s.ContentSize())
	}
	if s.Data == nil && s.Reader == nil && s.Size != 0 && s.Characteristics&IMAGE_SCN_CNT_UNINITIALIZED_DATA == 0 {
		return inconsistent("size %d but no contents", s.Size)
	}
	if s.Selection != 0 || s.Characteristics&IMAGE_SCN_LNK_COMDAT != 0 {
		if s.Selection == 0 || s.Selection > 6 {
			return inconsistent("COMDAT selection %v", s.Selection)
		}
		if p.defOf[s] == nil {
			return inconsistent("COMDAT section without a definition symbol")
		}
		if s.Selection == pe.IMAGE_COMDAT_SELECT_ASSOCIATIVE {
			if _, ok := p.number[s.Associative]; !ok || s.Associative == s {
				return inconsistent("associative COMDAT section's section is not another section of the object")
			}
		} else if !p.leaderFollows(s) {
			return inconsistent("COMDAT section: the symbol after its definition is not one it defines")
		}
	}
	size := uint64(s.ContentSize())
	for i, r := range s.Relocs {
		if _, ok := p.symIndex[r.Symbol]; !ok {
			return inconsistent("relocation %d: symbol is not in the object", i)
		}
		if _, err := relocCode(p.o.Machine, r.Type); err != nil {
			return inconsistent("relocation %d: %v", i, err)
		}
		if uint64(r.Offset) >= size {
			return inconsistent("relocation %d at %#x: outside the section's %d bytes", i, r.Offset, size)
		}
	}
	return nil
}

// leaderFollows reports whether the symbol after s's definition symbol is
// defined in s (COFF's COMDAT leader).
func (p *plan) leaderFollows(s *Section) bool {
	def := p.defOf[s]
	for i, sym := range p.o.Symbols {
		if sym == def {
			return i+1 < len(p.o.Symbols) && p.o.Symbols[i+1].Section == s
		}
	}
	return false
}

// layout places each section's contents and relocations after the
// headers, in section order, and the symbol table after them.
func (p *plan) layout() error {
	n := len(p.o.Sections)
	p.dataOff, p.relocOff, p.nrelocs = make([]uint32, n), make([]uint32, n), make([]uint32, n)
	off := uint64(fileHeaderSize + sectionHeaderSize*n)
	for i, s := range p.o.Sections {
		// LLVM points every section with contents in the file at where they
		// would be, empty ones too.
		if !s.Uninitialized() {
			p.dataOff[i] = uint32(off)
			off += uint64(s.ContentSize())
		}
		if k := uint64(len(s.Relocs)); k > 0 {
			if k >= 0xFFFF {
				k++ // the count goes in a first record
			}
			p.relocOff[i], p.nrelocs[i] = uint32(off), uint32(k)
			off += k * relocSize
		}
		if off > math.MaxUint32 {
			return inconsistent("the contents reach past 4 GiB, which COFF offsets do not")
		}
	}
	p.symtab = uint32(off)
	if off+uint64(p.nsyms)*symbolSize > math.MaxUint32 {
		return inconsistent("the symbol table reaches past 4 GiB")
	}
	return nil
}

func (p *plan) write(w *bufio.Writer) error {
	if _, err := w.Write(p.headers()); err != nil {
		return err
	}
	sums := make([]uint32, len(p.o.Sections))
	for i, s := range p.o.Sections {
		if p.dataOff[i] != 0 {
			sum, err := writeContents(w, s)
			if err != nil {
				return fmt.Errorf("section %q: %w", s.Name, err)
			}
			sums[i] = sum
		}
		if p.nrelocs[i] > 0 {
			if _, err := w.Write(p.relocs(s, p.nrelocs[i])); err != nil {
				return err
			}
		}
	}
	if _, err := w.Write(p.symbols(sums)); err != nil {
		return err
	}
	_, err := w.Write(p.stringTable())
	return err
}

// writeContents writes s's contents and returns their checksum: the CRC-32
// that LLVM's WinCOFFObjectWriter computes (JamCRC started at 0, so the
// one of crc32.IEEE's polynomial without its inversions).
func writeContents(w *bufio.Writer, s *Section) (uint32, error) {
	if s.Data != nil {
		_, err := w.Write(s.Data)
		return jamCRC(0, s.Data), err
	}
	sum := uint32(0)
	buf := make([]byte, 64<<10)
	r := io.NewSectionReader(s.Reader, 0, s.Size)
	for done := int64(0); done < s.Size; {
		n, err := r.Read(buf)
		sum = jamCRC(sum, buf[:n])
		if _, werr := w.Write(buf[:n]); werr != nil {
			return 0, werr
		}
		done += int64(n)
		if err == io.EOF && done < s.Size || err != nil && err != io.EOF {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("contents: got %d of %d bytes: %w", done, s.Size, err)
		}
	}
	return sum, nil
}

// jamCRC continues the raw CRC-32 crc (no inversion on entry or exit) over b.
func jamCRC(crc uint32, b []byte) uint32 {
	return ^crc32.Update(^crc, crc32.IEEETable, b)
}

func (p *plan) headers() []byte {
	o := p.o
	b := make([]byte, 0, fileHeaderSize+sectionHeaderSize*len(o.Sections))
	b = le.AppendUint16(b, o.Machine)
	b = le.AppendUint16(b, uint16(len(o.Sections)))
	b = le.AppendUint32(b, o.TimeDateStamp)
	b = le.AppendUint32(b, p.symtab)
	b = le.AppendUint32(b, p.nsyms)
	b = le.AppendUint16(b, 0) // SizeOfOptionalHeader
	b = le.AppendUint16(b, o.Characteristics)
	for i, s := range o.Sections {
		var name [8]byte
		if len(s.Name) > 8 {
			copy(name[:], "/"+strconv.FormatUint(p.strOffset(s.Name), 10))
		} else {
			copy(name[:], s.Name)
		}
		b = append(b, name[:]...)
		b = le.AppendUint32(b, 0) // VirtualSize
		b = le.AppendUint32(b, 0) // VirtualAddress
		b = le.AppendUint32(b, uint32(s.ContentSize()))
		b = le.AppendUint32(b, p.dataOff[i])
		b = le.AppendUint32(b, p.relocOff[i])
		b = le.AppendUint32(b, 0) // PointerToLinenumbers
		b = le.AppendUint16(b, uint16(min(p.nrelocs[i], 0xFFFF)))
		b = le.AppendUint16(b, 0) // NumberOfLinenumbers
		b = le.AppendUint32(b, p.characteristics(s))
	}
	return b
}

func (p *plan) characteristics(s *Section) uint32 {
	c := s.Characteristics
	bits, _ := alignBits(s.Align)
	c |= bits
	if s.Selection != 0 {
		c |= IMAGE_SCN_LNK_COMDAT
	}
	if len(s.Relocs) >= 0xFFFF {
		c |= IMAGE_SCN_LNK_NRELOC_OVFL
	}
	return c
}

func (p *plan) relocs(s *Section, n uint32) []byte {
	b := make([]byte, 0, n*relocSize)
	if int(n) > len(s.Relocs) {
		b = le.AppendUint32(b, n)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint16(b, 0)
	}
	for _, r := range s.Relocs {
		code, _ := relocCode(p.o.Machine, r.Type) // checked
		b = le.AppendUint32(b, r.Offset)
		b = le.AppendUint32(b, p.symIndex[r.Symbol])
		b = le.AppendUint16(b, code)
	}
	return b
}

func (p *plan) symbols(sums []uint32) []byte {
	b := make([]byte, 0, p.nsyms*symbolSize)
	for _, s := range p.o.Symbols {
		var name [8]byte
		if len(s.Name) > 8 {
			le.PutUint32(name[4:], uint32(p.strOffset(s.Name)))
		} else {
			copy(name[:], s.Name)
		}
		b = append(b, name[:]...)
		b = le.AppendUint32(b, s.Value)
		num := s.Number
		if s.Section != nil {
			num = int16(p.number[s.Section])
		}
		b = le.AppendUint16(b, uint16(num))
		b = le.AppendUint16(b, s.Type)
		b = append(b, byte(s.StorageClass), byte(p.naux[s]))
		switch {
		case s.SectionDefinition:
			sec := s.Section
			i := p.number[sec] - 1
			b = le.AppendUint32(b, uint32(sec.ContentSize()))
			b = le.AppendUint16(b, uint16(min(p.nrelocs[i], 0xFFFF)))
			b = le.AppendUint16(b, 0) // line numbers
			b = le.AppendUint32(b, sums[i])
			// LLVM puts the section's own number where an associative
			// section puts the one it goes with.
			assoc := p.number[sec]
			if sec.Selection == pe.IMAGE_COMDAT_SELECT_ASSOCIATIVE {
				assoc = p.number[sec.Associative]
			}
			b = le.AppendUint16(b, uint16(assoc))
			b = append(b, byte(sec.Selection), 0, 0, 0)
		case s.Weak != nil:
			b = le.AppendUint32(b, p.symIndex[s.Weak.Default])
			b = le.AppendUint32(b, s.Weak.Search)
			b = append(b, make([]byte, 10)...)
		case s.StorageClass == IMAGE_SYM_CLASS_FILE && s.File != "":
			n := (len(s.File) + symbolSize - 1) / symbolSize
			b = append(b, s.File...)
			b = append(b, make([]byte, n*symbolSize-len(s.File))...)
		}
		b = append(b, s.Aux...)
	}
	return b
}

func (p *plan) stringTable() []byte {
	data := p.strs.Data[1:] // strtab's leading NUL gives way to the size
	b := make([]byte, 0, 4+len(data))
	b = le.AppendUint32(b, uint32(4+len(data)))
	return append(b, data...)
}
