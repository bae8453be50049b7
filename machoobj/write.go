package machoobj

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"

	"github.com/goffload/goffload/internal/iocount"
	"github.com/goffload/goffload/internal/strtab"
)

// ErrInconsistent is the class of errors for an Object that cannot be
// written as given: a relocation outside its section, a symbol in a
// section that is not in the object, an alignment that is not a power of
// two, and the like.
var ErrInconsistent = errors.New("inconsistent object")

func inconsistent(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInconsistent, fmt.Sprintf(format, args...))
}

// plan is everything the writer decides before writing a byte.
type plan struct {
	o       *Object
	number  map[*Section]int // from 1
	addr    []uint64
	offset  []uint32
	reloff  []uint32
	syms    []*Symbol // in table order
	index   map[*Symbol]uint32
	nlocal  int
	nextdef int
	strs    strtab.Table
	strsize uint32
	cmds    uint32 // sizeofcmds
	ncmds   uint32
	dataEnd uint64 // end of the sections' bytes, from the first section's address
	vmsize  uint64
	start   uint32 // of the sections' bytes
	diceOff uint32
	hints   []byte
	hintOff uint32
	indOff  uint32
	symoff  uint32
	stroff  uint32
	delta   []int64   // per section: new address minus its base
	patches [][]patch // per section, nil where nothing moved
}

// Write writes o to w as a 64-bit relocatable Mach-O object, laid out as
// LLVM's MachObjectWriter lays one out: the header; the load commands
// (one unnamed LC_SEGMENT_64 with every section, the deployment target,
// LC_DATA_IN_CODE and LC_LINKER_OPTIMIZATION_HINT when there are any,
// LC_SYMTAB, LC_DYSYMTAB, then o.Commands); the sections' bytes at their
// addresses (those with bytes in the file in order, then the zero-fill
// ones); the relocations, section by section; the data-in-code records,
// the hints, the indirect symbols, the symbol table (locals in o's order,
// then the external symbols, defined then undefined, each group sorted by
// name) and the string table (LLVM's, tails shared, padded to 8 bytes).
// Contents given by a Reader are copied straight to w. The same Object
// gives the same bytes, and Write does not modify o. An Object that cannot
// be right gives an error wrapping [ErrInconsistent] before anything is
// written.
func Write(w io.Writer, o *Object) (int64, error) {
	p, err := newPlan(o)
	if err != nil {
		return 0, err
	}
	return iocount.Buffered(w, p.write)
}

func alignUp(v, a uint64) uint64 { return (v + a - 1) &^ (a - 1) }

// Addresses returns the address [Write] gives each section of o, in
// o.Sections order: LLVM's layout, the sections with bytes in the file
// first, in order, each at its alignment, then the zero-fill ones.
func Addresses(o *Object) ([]uint64, error) {
	p, err := layoutPlan(o)
	if err != nil {
		return nil, err
	}
	return p.addr, nil
}

func newPlan(o *Object) (*plan, error) {
	p, err := layoutPlan(o)
	if err != nil {
		return nil, err
	}
	if err := p.symbols(); err != nil {
		return nil, err
	}
	if err := p.checkPlaces(); err != nil {
		return nil, err
	}
	if err := p.fixups(); err != nil {
		return nil, err
	}
	p.linkedit()
	return p, nil
}

// layoutPlan checks o's sections and lays them out.
func layoutPlan(o *Object) (*plan, error) {
	if o == nil {
		return nil, inconsistent("nil object")
	}
	if o.Cpu != CpuAmd64 && o.Cpu != CpuArm64 {
		return nil, inconsistent("cpu %v: this package writes x86-64 and arm64 objects", o.Cpu)
	}
	if len(o.Sections) > maxSections {
		return nil, inconsistent("%d sections: a symbol's n_sect numbers at most %d", len(o.Sections), maxSections)
	}
	p := &plan{o: o, number: map[*Section]int{}, index: map[*Symbol]uint32{}}
	for i, s := range o.Sections {
		if s == nil {
			return nil, inconsistent("section %d is nil", i)
		}
		if _, dup := p.number[s]; dup {
			return nil, inconsistent("section %s,%s is in the object twice", s.Seg, s.Name)
		}
		if len(s.Seg) > 16 || len(s.Name) > 16 {
			return nil, inconsistent("section %s,%s: names are at most 16 bytes", s.Seg, s.Name)
		}
		if s.Align == 0 || s.Align&(s.Align-1) != 0 || s.Align > 1<<maxAlignLog2 {
			return nil, inconsistent("section %s,%s: alignment %d", s.Seg, s.Name, s.Align)
		}
		if s.ContentSize() < 0 || s.Data == nil && s.Reader == nil && !s.ZeroFill() && s.Size != 0 {
			return nil, inconsistent("section %s,%s: %d bytes and no contents", s.Seg, s.Name, s.Size)
		}
		if s.ZeroFill() && s.Data != nil {
			return nil, inconsistent("section %s,%s: zero-fill with contents", s.Seg, s.Name)
		}
		p.number[s] = i + 1
	}
	if err := p.layout(); err != nil {
		return nil, err
	}
	return p, nil
}

// layout gives the sections their addresses and file offsets.
func (p *plan) layout() error {
	o := p.o
	p.ncmds, p.cmds = 1, segmentSize+sectionSize*uint32(len(o.Sections))
	if len(o.Symbols) > 0 {
		// LLVM writes the symbol tables' commands only when there are
		// symbols.
		p.ncmds, p.cmds = 3, p.cmds+symtabSize+dysymtabSize
	}
	if v := o.Version; v != nil {
		p.ncmds++
		if v.Cmd == LC_BUILD_VERSION {
			p.cmds += buildSize + 8*uint32(len(v.Tools))
		} else {
			p.cmds += versionSize
		}
	}
	if len(o.DataInCode) > 0 {
		p.ncmds++
		p.cmds += linkeditSize
	}
	if len(o.Hints) > 0 {
		p.ncmds++
		p.cmds += linkeditSize
	}
	for i, c := range o.Commands {
		if len(c) < 8 || len(c)%8 != 0 || le.Uint32(c[4:]) != uint32(len(c)) {
			return inconsistent("command %d: %d bytes, not a load command of its cmdsize", i, len(c))
		}
		p.ncmds++
		p.cmds += uint32(len(c))
	}
	p.start = headerSize + p.cmds
	p.addr = make([]uint64, len(o.Sections))
	p.offset = make([]uint32, len(o.Sections))
	cur := uint64(0)
	for _, pass := range []bool{false, true} {
		for i, s := range o.Sections {
			if s.ZeroFill() != pass {
				continue
			}
			cur = alignUp(cur, uint64(s.Align))
			p.addr[i] = cur
			cur += uint64(s.ContentSize())
			if !pass {
				p.dataEnd = cur
				p.offset[i] = p.start + uint32(p.addr[i])
			}
			if cur >= 1<<32 {
				return inconsistent("section %s,%s ends past 4 GiB", s.Seg, s.Name)
			}
		}
	}
	p.vmsize = cur
	return nil
}

// symbols orders the table and checks what refers to symbols.
func (p *plan) symbols() error {
	var locals, extdef, undef []*Symbol
	seen := map[*Symbol]bool{}
	var names []string
	for i, s := range p.o.Symbols {
		if s == nil {
			return inconsistent("symbol %d is nil", i)
		}
		if seen[s] {
			return inconsistent("symbol %q is in the table twice", s.Name)
		}
		seen[s] = true
		if s.Section != nil {
			if _, ok := p.number[s.Section]; !ok {
				return inconsistent("symbol %q is in section %s,%s, which is not in the object", s.Name, s.Section.Seg, s.Section.Name)
			}
			if s.Type&N_STAB == 0 && s.Type&N_TYPE != N_SECT {
				return inconsistent("symbol %q has a section and type %#x", s.Name, s.Type)
			}
			if s.Value > uint64(s.Section.ContentSize()) {
				return inconsistent("symbol %q at %#x past the end of %s,%s", s.Name, s.Value, s.Section.Seg, s.Section.Name)
			}
		} else if s.Type&N_STAB == 0 && s.Type&N_TYPE == N_SECT {
			return inconsistent("symbol %q of type N_SECT has no section", s.Name)
		}
		switch {
		case !s.External():
			locals = append(locals, s)
		case s.Type&N_TYPE == N_UNDF && s.Value == 0:
			undef = append(undef, s)
		default:
			extdef = append(extdef, s)
		}
		names = append(names, s.Name)
	}
	byName := func(v []*Symbol) {
		sort.SliceStable(v, func(i, j int) bool { return v[i].Name < v[j].Name })
	}
	byName(extdef)
	byName(undef)
	p.syms = append(append(locals, extdef...), undef...)
	p.nlocal, p.nextdef = len(locals), len(extdef)
	for i, s := range p.syms {
		p.index[s] = uint32(i)
	}
	if len(names) > 0 {
		p.strs = strtab.Build(names)
		p.strsize = uint32(alignUp(uint64(len(p.strs.Data)), 8))
	}
	for _, s := range p.o.Sections {
		for j, r := range s.Relocs {
			what := fmt.Sprintf("section %s,%s: relocation %d", s.Seg, s.Name, j)
			if r.Length > 3 {
				return inconsistent("%s: length %d", what, r.Length)
			}
			if uint64(r.Offset)+1<<r.Length > uint64(s.ContentSize()) {
				return inconsistent("%s at %#x past the section's %d bytes", what, r.Offset, s.ContentSize())
			}
			switch {
			case r.Symbol != nil:
				if !seen[r.Symbol] {
					return inconsistent("%s: symbol %q is not in the table", what, r.Symbol.Name)
				}
			case r.Section != nil:
				if _, ok := p.number[r.Section]; !ok {
					return inconsistent("%s: section %s,%s is not in the object", what, r.Section.Seg, r.Section.Name)
				}
			case r.Num >= 1<<24:
				return inconsistent("%s: r_symbolnum %d takes more than 24 bits", what, r.Num)
			}
			if r.Offset&0x80000000 != 0 || r.Type > 15 {
				return inconsistent("%s: offset %#x, type %d", what, r.Offset, r.Type)
			}
		}
	}
	if len(p.syms) >= 1<<24 {
		return inconsistent("%d symbols: relocations number at most 2^24", len(p.syms))
	}
	if len(p.o.Indirect) > 0 && len(p.syms) == 0 {
		return inconsistent("an indirect symbol table and no symbol table")
	}
	for i, ind := range p.o.Indirect {
		if ind.Symbol != nil && !seen[ind.Symbol] {
			return inconsistent("indirect symbol %d: %q is not in the table", i, ind.Symbol.Name)
		}
	}
	return nil
}

// checkPlaces checks the data-in-code records and the hints, and encodes
// the hints.
func (p *plan) checkPlaces() error {
	check := func(s *Section, off uint64, what string) error {
		if _, ok := p.number[s]; !ok || s == nil {
			return inconsistent("%s: its section is not in the object", what)
		}
		if off > uint64(s.ContentSize()) {
			return inconsistent("%s at %#x past the end of %s,%s", what, off, s.Seg, s.Name)
		}
		return nil
	}
	for i, d := range p.o.DataInCode {
		if err := check(d.Section, uint64(d.Offset), fmt.Sprintf("data-in-code record %d", i)); err != nil {
			return err
		}
	}
	for i, h := range p.o.Hints {
		if h.Kind == 0 {
			return inconsistent("hint %d: kind 0", i)
		}
		p.hints = appendULEB(appendULEB(p.hints, h.Kind), uint64(len(h.Args)))
		for _, a := range h.Args {
			if err := check(a.Section, a.Offset, fmt.Sprintf("hint %d", i)); err != nil {
				return err
			}
			p.hints = appendULEB(p.hints, p.addr[p.number[a.Section]-1]+a.Offset)
		}
	}
	if len(p.hints) > 0 {
		p.hints = append(p.hints, make([]byte, alignUp(uint64(len(p.hints)), 8)-uint64(len(p.hints)))...)
	}
	return nil
}

// linkedit places what follows the sections' bytes.
func (p *plan) linkedit() {
	cur := uint64(p.start) + alignUp(p.dataEnd, 8)
	p.reloff = make([]uint32, len(p.o.Sections))
	for i, s := range p.o.Sections {
		if len(s.Relocs) > 0 {
			p.reloff[i] = uint32(cur)
			cur += relocSize * uint64(len(s.Relocs))
		}
	}
	p.diceOff = uint32(cur)
	cur += diceSize * uint64(len(p.o.DataInCode))
	p.hintOff = uint32(cur)
	cur += uint64(len(p.hints))
	p.indOff = uint32(cur)
	cur += 4 * uint64(len(p.o.Indirect))
	p.symoff = uint32(cur)
	cur += nlistSize * uint64(len(p.syms))
	p.stroff = uint32(cur)
}

func (p *plan) write(w *bufio.Writer) error {
	o := p.o
	b := make([]byte, 0, headerSize+int(p.cmds))
	u32 := func(v ...uint32) {
		for _, x := range v {
			b = le.AppendUint32(b, x)
		}
	}
	u64 := func(v ...uint64) {
		for _, x := range v {
			b = le.AppendUint64(b, x)
		}
	}
	name := func(s string) { n := name16(s); b = append(b, n[:]...) }
	u32(uint32(magic64), uint32(o.Cpu), o.SubCpu, MH_OBJECT, p.ncmds, p.cmds, o.Flags, 0)
	u32(LC_SEGMENT_64, segmentSize+sectionSize*uint32(len(o.Sections)))
	name("")
	u64(0, p.vmsize, uint64(p.start), p.dataEnd)
	u32(7, 7, uint32(len(o.Sections)), 0)
	for i, s := range o.Sections {
		name(s.Name)
		name(s.Seg)
		u64(p.addr[i], uint64(s.ContentSize()))
		u32(p.offset[i], uint32(bits.TrailingZeros32(s.Align)), p.reloff[i], uint32(len(s.Relocs)), s.Flags, s.Reserved1, s.Reserved2, s.Reserved3)
	}
	if v := o.Version; v != nil {
		if v.Cmd == LC_BUILD_VERSION {
			u32(LC_BUILD_VERSION, buildSize+8*uint32(len(v.Tools)), v.Platform, v.Min, v.SDK, uint32(len(v.Tools)))
			for _, t := range v.Tools {
				u32(t[0], t[1])
			}
		} else {
			u32(v.Cmd, versionSize, v.Min, v.SDK)
		}
	}
	if len(o.DataInCode) > 0 {
		u32(LC_DATA_IN_CODE, linkeditSize, p.diceOff, diceSize*uint32(len(o.DataInCode)))
	}
	if len(o.Hints) > 0 {
		u32(LC_LINKER_OPTIMIZATION_HINT, linkeditSize, p.hintOff, uint32(len(p.hints)))
	}
	if len(p.syms) > 0 {
		u32(LC_SYMTAB, symtabSize, p.symoff, uint32(len(p.syms)), p.stroff, p.strsize)
		nundef := uint32(len(p.syms) - p.nlocal - p.nextdef)
		u32(LC_DYSYMTAB, dysymtabSize, 0, uint32(p.nlocal), uint32(p.nlocal), uint32(p.nextdef), uint32(p.nlocal+p.nextdef), nundef,
			0, 0, 0, 0, 0, 0)
		if len(o.Indirect) > 0 {
			u32(p.indOff, uint32(len(o.Indirect)))
		} else {
			u32(0, 0)
		}
		u32(0, 0, 0, 0)
	}
	for _, c := range o.Commands {
		b = append(b, c...)
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	// The sections' bytes, at their addresses.
	at := uint64(0)
	for i, s := range o.Sections {
		if s.ZeroFill() {
			continue
		}
		if err := iocount.Zeros(w, p.addr[i]-at); err != nil {
			return err
		}
		var err error
		if p.patches != nil && len(p.patches[i]) > 0 {
			var b []byte
			if b, err = patched(s, p.patches[i]); err == nil {
				_, err = w.Write(b)
			}
		} else {
			err = writeContents(w, s)
		}
		if err != nil {
			return fmt.Errorf("section %s,%s: %w", s.Seg, s.Name, err)
		}
		at = p.addr[i] + uint64(s.ContentSize())
	}
	if err := iocount.Zeros(w, alignUp(p.dataEnd, 8)-at); err != nil {
		return err
	}
	b = b[:0]
	for _, s := range o.Sections {
		for _, r := range s.Relocs {
			num, ext := r.Num, uint32(0)
			switch {
			case r.Symbol != nil:
				num, ext = p.index[r.Symbol], 1
			case r.Section != nil:
				num = uint32(p.number[r.Section])
			}
			pc := uint32(0)
			if r.PCRel {
				pc = 1
			}
			u32(r.Offset, num|pc<<24|uint32(r.Length)<<25|ext<<27|uint32(r.Type)<<28)
		}
	}
	for _, d := range o.DataInCode {
		u32(uint32(p.addr[p.number[d.Section]-1]) + d.Offset)
		b = le.AppendUint16(b, d.Length)
		b = le.AppendUint16(b, d.Kind)
	}
	b = append(b, p.hints...)
	for _, ind := range o.Indirect {
		if ind.Symbol != nil {
			u32(p.index[ind.Symbol])
		} else {
			u32(ind.Raw)
		}
	}
	for _, s := range p.syms {
		u32(uint32(p.strs.Offset(s.Name)))
		sect, v := uint8(0), s.Value
		if s.Section != nil {
			sect = uint8(p.number[s.Section])
			v += p.addr[sect-1]
		}
		b = append(b, s.Type, sect)
		b = le.AppendUint16(b, s.Desc)
		u64(v)
	}
	b = append(b, p.strs.Data...)
	b = append(b, make([]byte, int(p.strsize)-len(p.strs.Data))...)
	_, err := w.Write(b)
	return err
}

// writeContents copies s's bytes to w, checking that a Reader gives Size.
func writeContents(w io.Writer, s *Section) error {
	if s.Data != nil {
		_, err := w.Write(s.Data)
		return err
	}
	if s.Size == 0 {
		return nil
	}
	n, err := io.Copy(w, io.NewSectionReader(s.Reader, 0, s.Size))
	if err == nil && n != s.Size {
		err = fmt.Errorf("contents: %d bytes of %d: %w", n, s.Size, io.ErrUnexpectedEOF)
	}
	return err
}
