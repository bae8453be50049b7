package machoobj

import (
	"io"
	"sort"

	"github.com/goffload/goffload"
)

// Object loads f, a relocatable object, as an Object for editing: every
// section, symbol, relocation, data-in-code record, hint and indirect
// symbol, in its order, each place made relative to its section; the
// contents stay in the file and are streamed from it when written. Load
// commands that this package does not model are kept as read if they point
// nowhere into the file (LC_LINKER_OPTION); any other gives an error
// matching goffload.ErrUnsupported.
func (f *File) Object() (*Object, error) {
	if f.Type != MH_OBJECT {
		return nil, formatErr(12, goffload.ErrUnsupported, "file type %d: only a relocatable object (MH_OBJECT) is edited", f.Type)
	}
	o := &Object{Cpu: f.Cpu, SubCpu: f.SubCpu, Flags: f.Flags, Version: f.version}
	segs := 0
	for _, l := range f.Loads {
		switch l.Cmd {
		case LC_SEGMENT_64:
			if segs++; segs > 1 {
				return nil, formatErr(l.Offset, goffload.ErrUnsupported, "an object of several segments")
			}
		case LC_SYMTAB, LC_DYSYMTAB, LC_DATA_IN_CODE, LC_LINKER_OPTIMIZATION_HINT,
			LC_BUILD_VERSION, LC_VERSION_MIN_MACOSX, LC_VERSION_MIN_IPHONEOS, LC_VERSION_MIN_TVOS, LC_VERSION_MIN_WATCHOS:
		case LC_LINKER_OPTION:
			b, err := f.LoadBytes(l)
			if err != nil {
				return nil, err
			}
			o.Commands = append(o.Commands, b)
		default:
			return nil, formatErr(l.Offset, goffload.ErrUnsupported, "load command %#x in an object", l.Cmd)
		}
	}
	if f.Version() != nil {
		v := *f.version
		o.Version = &v
	}
	secs := make([]*Section, len(f.Sections))
	for i, s := range f.Sections {
		if s.AlignLog2 > maxAlignLog2 {
			return nil, formatErr(s.Header+52, goffload.ErrUnsupported, "section %s,%s: alignment 2^%d", s.Seg, s.Name, s.AlignLog2)
		}
		secs[i] = &Section{Seg: s.Seg, Name: s.Name, Align: 1 << s.AlignLog2, Flags: s.Flags,
			Reserved1: s.Reserved1, Reserved2: s.Reserved2, Reserved3: s.Reserved3, Base: s.Addr}
		if s.ZeroFill() {
			secs[i].Size = int64(s.Size)
		} else {
			secs[i].Reader, secs[i].Size = io.NewSectionReader(f.r, int64(s.Offset), int64(s.Size)), int64(s.Size)
		}
	}
	o.Sections = secs
	fsyms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	syms := make([]*Symbol, len(fsyms))
	for i, fs := range fsyms {
		s := &Symbol{Name: fs.Name, Type: fs.Type, Desc: fs.Desc, Value: fs.Value}
		if fs.Type&N_STAB == 0 && fs.Type&N_TYPE == N_SECT {
			s.Section = secs[fs.Sect-1] // checked by Symbols
			s.Value -= f.Sections[fs.Sect-1].Addr
		} else if fs.Sect != 0 && fs.Type&N_STAB == 0 {
			return nil, formatErr(f.symoff+int64(i)*nlistSize+5, goffload.ErrUnsupported, "symbol %d: n_sect %d on a symbol of type %#x", i, fs.Sect, fs.Type)
		} else if fs.Type&N_STAB != 0 && fs.Sect != 0 {
			// A stab keeps its n_sect and n_value raw, which a move of the
			// section would make wrong.
			return nil, formatErr(f.symoff+int64(i)*nlistSize, goffload.ErrUnsupported, "symbol %d: a debugging stab of a section", i)
		}
		syms[i] = s
	}
	o.Symbols = syms
	for i, s := range f.Sections {
		rs, err := f.Relocations(s)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			rel := Reloc{Offset: r.Offset, Type: r.Type, PCRel: r.PCRel, Length: r.Length}
			switch {
			case r.Extern:
				rel.Symbol = syms[r.Num]
			case isAddend(f.Cpu, r.Type) || r.Num == 0:
				rel.Num = r.Num
			default:
				rel.Section = secs[r.Num-1]
			}
			secs[i].Relocs = append(secs[i].Relocs, rel)
		}
	}
	if o.DataInCode, err = f.loadDataInCode(secs); err != nil {
		return nil, err
	}
	if o.Hints, err = f.loadHints(secs); err != nil {
		return nil, err
	}
	ind, err := f.Indirect()
	if err != nil {
		return nil, err
	}
	for _, v := range ind {
		if v&(INDIRECT_SYMBOL_LOCAL|INDIRECT_SYMBOL_ABS) != 0 || int64(v) >= int64(len(syms)) {
			o.Indirect = append(o.Indirect, Indirect{Raw: v})
		} else {
			o.Indirect = append(o.Indirect, Indirect{Symbol: syms[v]})
		}
	}
	return o, nil
}

// places finds the section of an address: the one whose bytes hold it,
// else the first whose end it is; in O(log n) however many sections a
// file has.
type places struct {
	secs  []*Section
	f     *File
	order []int          // sections with bytes, by address
	ends  map[uint64]int // end address -> first section ending there
}

func (f *File) places(secs []*Section) *places {
	p := &places{secs: secs, f: f, ends: map[uint64]int{}}
	for i, s := range f.Sections {
		if s.Size > 0 {
			p.order = append(p.order, i)
		}
		if _, ok := p.ends[s.Addr+s.Size]; !ok {
			p.ends[s.Addr+s.Size] = i
		}
	}
	sort.SliceStable(p.order, func(a, b int) bool { return f.Sections[p.order[a]].Addr < f.Sections[p.order[b]].Addr })
	return p
}

// at returns the place of addr.
func (p *places) at(addr uint64) (Place, bool) {
	k := sort.Search(len(p.order), func(j int) bool { return p.f.Sections[p.order[j]].Addr > addr })
	if k > 0 {
		i := p.order[k-1]
		if s := p.f.Sections[i]; addr-s.Addr < s.Size {
			return Place{p.secs[i], addr - s.Addr}, true
		}
	}
	if i, ok := p.ends[addr]; ok {
		return Place{p.secs[i], addr - p.f.Sections[i].Addr}, true
	}
	return Place{}, false
}

func (f *File) loadDataInCode(secs []*Section) ([]DataInCode, error) {
	recs, err := f.DataInCode()
	if err != nil {
		return nil, err
	}
	var out []DataInCode
	pl := f.places(secs)
	for i, r := range recs {
		p, ok := pl.at(uint64(r[0]))
		if !ok {
			return nil, formatErr(int64(f.dice.DataOff)+int64(i)*diceSize, nil, "data-in-code record %d at address %#x, in no section", i, r[0])
		}
		out = append(out, DataInCode{Section: p.Section, Offset: uint32(p.Offset), Length: uint16(r[1]), Kind: uint16(r[2])})
	}
	return out, nil
}

func (f *File) loadHints(secs []*Section) ([]Hint, error) {
	b, err := f.HintData()
	if err != nil {
		return nil, err
	}
	var out []Hint
	pl := f.places(secs)
	base := int64(f.hints.DataOff)
	for i := 0; i < len(b); {
		at := base + int64(i)
		kind, n := uleb(b[i:])
		if n == 0 {
			return nil, formatErr(at, goffload.ErrTruncated, "linker optimization hint")
		}
		if kind == 0 {
			// Padding to 8 bytes ends the records.
			break
		}
		i += n
		nargs, n := uleb(b[i:])
		if n == 0 || nargs > uint64(len(b)) {
			return nil, formatErr(at, nil, "linker optimization hint: argument count")
		}
		i += n
		h := Hint{Kind: kind}
		for j := uint64(0); j < nargs; j++ {
			a, n := uleb(b[i:])
			if n == 0 {
				return nil, formatErr(base+int64(i), goffload.ErrTruncated, "linker optimization hint argument")
			}
			i += n
			p, ok := pl.at(a)
			if !ok {
				return nil, formatErr(base+int64(i), nil, "linker optimization hint argument %#x, in no section", a)
			}
			h.Args = append(h.Args, p)
		}
		out = append(out, h)
	}
	return out, nil
}

// uleb decodes an unsigned LEB128 number, returning it and its length (0
// when b ends first or it does not fit 64 bits).
func uleb(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		if i == 10 {
			return 0, 0
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// appendULEB appends v as unsigned LEB128.
func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		b = append(b, c)
		if v == 0 {
			return b
		}
	}
}
