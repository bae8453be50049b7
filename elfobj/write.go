package elfobj

import (
	"bufio"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/goffload/goffload/internal/iocount"
	"github.com/goffload/goffload/internal/strtab"
)

// ErrInconsistent is the class of errors for an Object that cannot be written
// as given: a relocation outside its section, a symbol in a section that is not
// in the object, an alignment that is not a power of two, and the like.
var ErrInconsistent = errors.New("inconsistent object")

const (
	ehdrSize = 64
	shdrSize = 64
	symSize  = 24
	relaSize = 24
	relSize  = 16

	shfInfoLink elf.SectionFlag = 0x40

	// maxFileAlign bounds the alignment of contents in the file. A
	// relocatable file needs none (its sections are placed by the linker by
	// sh_addralign, which is kept); aligning up to 64 KiB, every page size,
	// serves tools that map the file, without megabytes of padding.
	maxFileAlign = 64 << 10
)

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// out is one section header of the file being written.
type out struct {
	s     *Section
	gen   bool // the writer makes the contents: data
	data  []byte
	size  uint64
	off   uint64
	link  uint32
	info  uint32
	flags elf.SectionFlag
	align uint64
	ent   uint64
}

// plan is everything the writer decides before writing a byte.
type plan struct {
	o        *Object
	order    byteOrder
	secs     []*out // file order; section index = position + 1
	index    map[*Section]uint32
	syms     []*Symbol // null symbol excluded; locals first
	symIndex map[*Symbol]uint32
	symtab   *Section
	symstr   *Section
	shstr    *Section
	shndx    *Section // SHT_SYMTAB_SHNDX, made where a symbol's section index needs it
	shoff    uint64
	names    map[*Section]strtab.Table
}

func inconsistent(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInconsistent, fmt.Sprintf(format, args...))
}

// Write writes o to w as an ELF64 relocatable object. Sections given by a
// Reader are copied straight to w, with memory that does not depend on their
// size. The same Object gives the same bytes, however often it is written,
// and Write does not modify o: it may be written from several goroutines at
// once when its readers allow concurrent ReadAt (files, byte slices and the
// readers of this module do). An object of 65,280 sections or more is
// numbered the extended way, as LLVM writes one: e_shnum 0 and the count
// in section 0, the symbols of sections from SHN_LORESERVE on SHN_XINDEX
// with their indices in a SHT_SYMTAB_SHNDX section the writer adds.
func Write(w io.Writer, o *Object) (int64, error) {
	p, err := newPlan(o)
	if err != nil {
		return 0, err
	}
	return iocount.Buffered(w, p.write)
}

func newPlan(o *Object) (*plan, error) {
	p := &plan{o: o, index: map[*Section]uint32{}, symIndex: map[*Symbol]uint32{}, names: map[*Section]strtab.Table{}}
	switch o.Data {
	case elf.ELFDATA2LSB:
		p.order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		p.order = binary.BigEndian
	default:
		return nil, inconsistent("byte order %v", o.Data)
	}
	if err := p.placeSections(); err != nil {
		return nil, err
	}
	if err := p.orderSymbols(); err != nil {
		return nil, err
	}
	if err := p.fillGenerated(); err != nil {
		return nil, err
	}
	return p, p.layout()
}

// placeSections builds the final section list: the object's sections, a
// relocation section after each section with relocations that has none, and
// the symbol and name tables when the object has none.
func (p *plan) placeSections() error {
	hasRel := map[*Section]bool{}
	for _, s := range p.o.Sections {
		if s == nil {
			return inconsistent("nil section")
		}
		if s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL {
			if s.Target == nil {
				return inconsistent("relocation section %q has no target", s.Name)
			}
			if hasRel[s.Target] {
				return inconsistent("section %q has two relocation sections", s.Target.Name)
			}
			hasRel[s.Target] = true
		}
		if s.Type == elf.SHT_SYMTAB {
			if p.symtab != nil {
				return inconsistent("two symbol tables")
			}
			p.symtab = s
		}
	}
	add := func(s *Section) {
		p.index[s] = uint32(len(p.secs) + 1)
		p.secs = append(p.secs, &out{s: s})
	}
	for _, s := range p.o.Sections {
		if strings.IndexByte(s.Name, 0) >= 0 {
			return inconsistent("section name %q holds a NUL byte", s.Name)
		}
		if _, dup := p.index[s]; dup {
			return inconsistent("section %q listed twice", s.Name)
		}
		add(s)
		if len(s.Relocs) > 0 && !hasRel[s] {
			add(&Section{Name: ".rela" + s.Name, Type: elf.SHT_RELA, Flags: shfInfoLink, Addralign: 8, Entsize: relaSize, Target: s})
		}
	}
	if p.symtab == nil {
		p.symtab = &Section{Name: ".symtab", Type: elf.SHT_SYMTAB, Addralign: 8, Entsize: symSize}
		add(p.symtab)
	}
	p.symstr = p.symtab.Link
	if p.symstr == nil {
		p.symstr = &Section{Name: ".strtab", Type: elf.SHT_STRTAB, Addralign: 1}
		add(p.symstr)
	}
	p.shstr = p.o.SectionNames
	if p.shstr == nil {
		p.shstr = &Section{Name: ".shstrtab", Type: elf.SHT_STRTAB, Addralign: 1}
		add(p.shstr)
	}
	for _, s := range []*Section{p.symstr, p.shstr} {
		if _, ok := p.index[s]; !ok {
			return inconsistent("string table %q is not in the object", s.Name)
		}
	}
	// Section indices from SHN_LORESERVE on do not fit st_shndx: such a
	// symbol's is SHN_XINDEX, and its index is in SHT_SYMTAB_SHNDX (made
	// here; an object's own is not kept: Object leaves it out).
	for _, sym := range p.o.Symbols {
		if sym != nil && sym.Section != nil && p.index[sym.Section] >= uint32(elf.SHN_LORESERVE) {
			p.shndx = &Section{Name: ".symtab_shndx", Type: elf.SHT_SYMTAB_SHNDX, Addralign: 4, Entsize: 4}
			add(p.shndx)
			break
		}
	}
	if uint64(len(p.secs)) >= math.MaxUint32 {
		return inconsistent("%d sections: more than ELF section indices hold", len(p.secs))
	}
	return nil
}

// extended reports whether the object numbers its sections the extended
// way: e_shnum 0 and the count in section 0's sh_size, and e_shstrndx
// SHN_XINDEX with the index in its sh_link where it does not fit.
func (p *plan) extended() bool { return len(p.secs)+1 >= int(elf.SHN_LORESERVE) }

// shndxData is the SHT_SYMTAB_SHNDX table: for each symbol of the symbol
// table, the index of its section where st_shndx is SHN_XINDEX, else 0.
func (p *plan) shndxData() []byte {
	b := make([]byte, 4, 4*(len(p.syms)+1))
	for _, s := range p.syms {
		var idx uint32
		if s.Section != nil && p.index[s.Section] >= uint32(elf.SHN_LORESERVE) {
			idx = p.index[s.Section]
		}
		b = p.order.AppendUint32(b, idx)
	}
	return b
}

// orderSymbols puts the local symbols first, keeping the order of each kind.
func (p *plan) orderSymbols() error {
	for _, local := range []bool{true, false} {
		for _, s := range p.o.Symbols {
			if s == nil {
				return inconsistent("nil symbol")
			}
			if s.IsLocal() != local {
				continue
			}
			if _, dup := p.symIndex[s]; dup {
				return inconsistent("symbol %q listed twice", s.Name)
			}
			if strings.IndexByte(s.Name, 0) >= 0 {
				return inconsistent("symbol name %q holds a NUL byte", s.Name)
			}
			if s.Section != nil {
				if _, ok := p.index[s.Section]; !ok {
					return inconsistent("symbol %q is in section %q, which is not in the object", s.Name, s.Section.Name)
				}
			}
			p.syms = append(p.syms, s)
			p.symIndex[s] = uint32(len(p.syms))
		}
	}
	return nil
}

func (p *plan) symRef(s *Symbol, where string) (uint32, error) {
	if s == nil {
		return 0, nil
	}
	i, ok := p.symIndex[s]
	if !ok {
		return 0, inconsistent("%s: symbol %q is not in the symbol table", where, s.Name)
	}
	return i, nil
}

// fillGenerated makes the contents and the link and info fields of every
// section whose contents the writer owns.
func (p *plan) fillGenerated() error {
	symtabIdx := p.index[p.symtab]
	for _, os := range p.secs {
		s := os.s
		os.flags, os.align, os.ent, os.info = s.Flags, s.Addralign, s.Entsize, s.Info
		if s.Link != nil {
			li, ok := p.index[s.Link]
			if !ok {
				return inconsistent("section %q links to %q, which is not in the object", s.Name, s.Link.Name)
			}
			os.link = li
		}
		var err error
		os.gen = true
		switch {
		case s == p.symtab:
			os.data, err = p.symtabData()
			os.link, os.info, os.ent = p.index[p.symstr], p.firstGlobal(), symSize
		case s == p.shndx:
			os.data = p.shndxData()
			os.link, os.ent = symtabIdx, 4
		case s == p.symstr || s == p.shstr:
			os.data = p.stringTable(s).Data
		case s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL:
			ti, ok := p.index[s.Target]
			if !ok {
				return inconsistent("relocation section %q applies to %q, which is not in the object", s.Name, s.Target.Name)
			}
			os.data, err = p.relocData(s)
			os.link, os.info = symtabIdx, ti
			os.ent = relaSize
			if s.Type == elf.SHT_REL {
				os.ent = relSize
			}
		case s.Type == elf.SHT_GROUP:
			os.data, os.info, err = p.groupData(s)
			os.link, os.ent = symtabIdx, 4
		case s.Type == SHT_LLVM_ADDRSIG && s.Addrsig == nil && s.ContentSize() > 0:
			os.gen = false // data, not linked to the symbol table (see Section.Addrsig)
		case s.Type == SHT_LLVM_ADDRSIG:
			os.data, err = p.addrsigData(s)
			os.link = symtabIdx
		default:
			os.gen = false
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *plan) firstGlobal() uint32 {
	n := uint32(1)
	for _, s := range p.syms {
		if s.IsLocal() {
			n++
		}
	}
	return n
}

// stringTable returns the table of the names that s holds: symbol names,
// section names, or both when one section holds both.
func (p *plan) stringTable(s *Section) strtab.Table {
	if t, ok := p.names[s]; ok {
		return t
	}
	var strs []string
	if s == p.symstr {
		for _, sym := range p.syms {
			strs = append(strs, sym.Name)
		}
	}
	if s == p.shstr {
		for _, os := range p.secs {
			strs = append(strs, os.s.Name)
		}
	}
	t := strtab.Build(strs)
	p.names[s] = t
	return t
}

func (p *plan) symtabData() ([]byte, error) {
	names := p.stringTable(p.symstr)
	b := make([]byte, symSize, symSize*(len(p.syms)+1))
	for _, s := range p.syms {
		shndx := uint32(s.Index)
		if s.Section != nil {
			shndx = p.index[s.Section]
			if shndx >= uint32(elf.SHN_LORESERVE) {
				shndx = uint32(elf.SHN_XINDEX) // in SHT_SYMTAB_SHNDX
			}
		}
		name := names.Offset(s.Name)
		if name > 0xffffffff {
			return nil, inconsistent("symbol names exceed 4 GiB")
		}
		b = p.order.AppendUint32(b, uint32(name))
		b = append(b, byte(s.Bind)<<4|byte(s.Type)&0xf, byte(s.Visibility)&3|s.Other&^3)
		b = p.order.AppendUint16(b, uint16(shndx))
		b = p.order.AppendUint64(b, s.Value)
		b = p.order.AppendUint64(b, s.Size)
	}
	return b, nil
}

func (p *plan) relocData(rs *Section) ([]byte, error) {
	t := rs.Target
	size := uint64(t.ContentSize())
	if t.Type == elf.SHT_NOBITS && len(t.Relocs) > 0 {
		return nil, inconsistent("relocations in SHT_NOBITS section %q", t.Name)
	}
	ent := relaSize
	if rs.Type == elf.SHT_REL {
		ent = relSize
	}
	b := make([]byte, 0, ent*len(t.Relocs))
	for i, r := range t.Relocs {
		where := fmt.Sprintf("relocation %d of %q", i, t.Name)
		code, err := relocCode(p.o.Machine, r.Type)
		if err != nil {
			return nil, inconsistent("%s: %v", where, err)
		}
		w := relocWidth(p.o.Machine, code)
		if r.Offset > size || w > size-r.Offset {
			return nil, inconsistent("%s at %#x (%d bytes) is outside the section's %d bytes", where, r.Offset, w, size)
		}
		sym, err := p.symRef(r.Symbol, where)
		if err != nil {
			return nil, err
		}
		b = p.order.AppendUint64(b, r.Offset)
		b = p.order.AppendUint64(b, uint64(sym)<<32|uint64(code))
		if rs.Type == elf.SHT_RELA {
			b = p.order.AppendUint64(b, uint64(r.Addend))
		} else if r.Addend != 0 {
			return nil, inconsistent("%s: addend %d in a SHT_REL section", where, r.Addend)
		}
	}
	return b, nil
}

func (p *plan) groupData(s *Section) ([]byte, uint32, error) {
	g := s.Group
	if g == nil {
		return nil, 0, inconsistent("group section %q has no Group", s.Name)
	}
	if g.Signature == nil {
		return nil, 0, inconsistent("group section %q has no signature symbol", s.Name)
	}
	sig, err := p.symRef(g.Signature, "group "+s.Name)
	if err != nil {
		return nil, 0, err
	}
	b := p.order.AppendUint32(nil, g.Flags)
	for _, m := range g.Members {
		mi, ok := p.index[m]
		if !ok {
			return nil, 0, inconsistent("group %q: member is not in the object", s.Name)
		}
		if m.Flags&elf.SHF_GROUP == 0 {
			return nil, 0, inconsistent("group %q: member %q lacks SHF_GROUP", s.Name, m.Name)
		}
		if mi < p.index[s] {
			return nil, 0, inconsistent("group %q: member %q comes before the group", s.Name, m.Name)
		}
		b = p.order.AppendUint32(b, mi)
	}
	return b, sig, nil
}

func (p *plan) addrsigData(s *Section) ([]byte, error) {
	var b []byte
	for _, sym := range s.Addrsig {
		i, err := p.symRef(sym, "address-significance table")
		if err != nil {
			return nil, err
		}
		b = binary.AppendUvarint(b, uint64(i))
	}
	return b, nil
}

// layout places the contents after the ELF header and the section header
// table after them.
// mcRank is where LLVM's assembler writes the contents of section s, by
// its type: the others, the symbol table, the relocations, the string
// tables.
func mcRank(s *Section) int {
	switch s.Type {
	case elf.SHT_SYMTAB, elf.SHT_SYMTAB_SHNDX:
		return 1
	case elf.SHT_RELA, elf.SHT_REL:
		return 2
	case elf.SHT_STRTAB:
		return 3
	}
	return 0
}

func (p *plan) layout() error {
	off := uint64(ehdrSize)
	order := p.secs
	if p.o.KeepLayout {
		// fileOffset is the offset plus one, 0 for a section made since.
		order = slices.Clone(p.secs)
		slices.SortStableFunc(order, func(a, b *out) int {
			ka, kb := a.s.fileOffset-1, b.s.fileOffset-1
			if ka < 0 {
				ka = math.MaxInt64
			}
			if kb < 0 {
				kb = math.MaxInt64
			}
			return cmp.Compare(ka, kb)
		})
	} else if p.o.AssemblerLayout {
		order = slices.Clone(p.secs)
		slices.SortStableFunc(order, func(a, b *out) int { return cmp.Compare(mcRank(a.s), mcRank(b.s)) })
	}
	for _, os := range order {
		if os.align > 1 && bits.OnesCount64(os.align) != 1 {
			return inconsistent("section %q: alignment %d is not a power of two", os.s.Name, os.align)
		}
		os.size = uint64(os.s.ContentSize())
		if os.gen {
			os.size = uint64(len(os.data))
		} else if os.s.Data == nil && os.s.Reader == nil && os.s.Size != 0 && os.s.Type != elf.SHT_NOBITS {
			return inconsistent("section %q: size %d but no contents", os.s.Name, os.s.Size)
		}
		if os.s.Size < 0 {
			return inconsistent("section %q: negative size", os.s.Name)
		}
		if a := min(os.align, maxFileAlign); a > 1 {
			off = (off + a - 1) &^ (a - 1)
		}
		os.off = off
		if os.s.Type != elf.SHT_NOBITS {
			off += os.size
		}
	}
	p.shoff = (off + 7) &^ 7
	return nil
}

func (p *plan) write(w *bufio.Writer) error {
	if _, err := w.Write(p.ehdr()); err != nil {
		return err
	}
	pos := uint64(ehdrSize)
	order := slices.Clone(p.secs)
	slices.SortStableFunc(order, func(a, b *out) int { return cmp.Compare(a.off, b.off) })
	for _, os := range order {
		if os.s.Type == elf.SHT_NOBITS {
			continue
		}
		if err := iocount.Zeros(w, os.off-pos); err != nil {
			return err
		}
		if err := p.writeContents(w, os); err != nil {
			return fmt.Errorf("section %q: %w", os.s.Name, err)
		}
		pos = os.off + os.size
	}
	if err := iocount.Zeros(w, p.shoff-pos); err != nil {
		return err
	}
	_, err := w.Write(p.shdrs())
	return err
}

func (p *plan) writeContents(w *bufio.Writer, os *out) error {
	switch {
	case os.gen:
		_, err := w.Write(os.data)
		return err
	case os.s.Data != nil:
		_, err := w.Write(os.s.Data)
		return err
	case os.s.Reader != nil:
		// Flush first so that the copy can reach the destination's ReadFrom.
		if err := w.Flush(); err != nil {
			return err
		}
		n, err := io.Copy(w, io.NewSectionReader(os.s.Reader, 0, os.s.Size))
		if err == nil && n < os.s.Size {
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return fmt.Errorf("contents: got %d of %d bytes: %w", n, os.s.Size, err)
		}
		return nil
	}
	return nil
}

func (p *plan) ehdr() []byte {
	o := p.o
	b := []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(o.Data), byte(elf.EV_CURRENT), byte(o.OSABI), o.ABIVersion}
	b = append(b, make([]byte, 16-len(b))...)
	b = p.order.AppendUint16(b, uint16(elf.ET_REL))
	b = p.order.AppendUint16(b, uint16(o.Machine))
	b = p.order.AppendUint32(b, uint32(elf.EV_CURRENT))
	b = p.order.AppendUint64(b, 0) // e_entry
	b = p.order.AppendUint64(b, 0) // e_phoff
	b = p.order.AppendUint64(b, p.shoff)
	b = p.order.AppendUint32(b, o.Flags)
	b = p.order.AppendUint16(b, ehdrSize)
	b = p.order.AppendUint16(b, 0) // e_phentsize
	b = p.order.AppendUint16(b, 0) // e_phnum
	b = p.order.AppendUint16(b, shdrSize)
	shnum, shstrndx := len(p.secs)+1, p.index[p.shstr]
	if p.extended() {
		shnum = 0 // in section 0's sh_size
	}
	if shstrndx >= uint32(elf.SHN_LORESERVE) {
		shstrndx = uint32(elf.SHN_XINDEX) // in section 0's sh_link
	}
	b = p.order.AppendUint16(b, uint16(shnum))
	return p.order.AppendUint16(b, uint16(shstrndx))
}

func (p *plan) shdrs() []byte {
	names := p.stringTable(p.shstr)
	b := make([]byte, shdrSize, shdrSize*(len(p.secs)+1))
	if p.extended() {
		// Section 0 holds the count, and the name table's index where
		// e_shstrndx cannot.
		p.order.PutUint64(b[32:], uint64(len(p.secs)+1))
		if i := p.index[p.shstr]; i >= uint32(elf.SHN_LORESERVE) {
			p.order.PutUint32(b[40:], i)
		}
	}
	for _, os := range p.secs {
		s := os.s
		b = p.order.AppendUint32(b, uint32(names.Offset(s.Name)))
		b = p.order.AppendUint32(b, uint32(s.Type))
		b = p.order.AppendUint64(b, uint64(os.flags))
		b = p.order.AppendUint64(b, s.Addr)
		b = p.order.AppendUint64(b, os.off)
		b = p.order.AppendUint64(b, os.size)
		b = p.order.AppendUint32(b, os.link)
		b = p.order.AppendUint32(b, os.info)
		b = p.order.AppendUint64(b, os.align)
		b = p.order.AppendUint64(b, os.ent)
	}
	return b
}
