package elfobj

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
)

// Object loads a relocatable file (ET_REL) for editing: every section, symbol,
// relocation and group, in file order. Contents that the writer remakes
// (symbol and string tables, relocations, groups, address-significance tables)
// are decoded; all other contents stay in the file and are streamed from it
// when the Object is written, so the File's reader must stay open until then.
func (f *File) Object() (*Object, error) {
	if f.Type != elf.ET_REL {
		return nil, elfErr(ehdrType, goffload.ErrUnsupported, "type %v (only ET_REL is loaded)", f.Type)
	}
	o := &Object{Data: f.Data, Machine: f.Machine, OSABI: f.OSABI, ABIVersion: f.ABIVersion, Flags: f.flags()}
	secs := make([]*Section, len(f.Sections)) // by file index; [0] stays nil
	for i, fs := range f.Sections[1:] {
		if fs.Type == elf.SHT_SYMTAB_SHNDX {
			// The symbols' extended section indices (FileSymbol.XIndex):
			// the writer makes the table again where it is needed.
			continue
		}
		s := &Section{Name: fs.Name, Type: fs.Type, Flags: fs.Flags, Addr: fs.Addr, Addralign: fs.Addralign,
			Entsize: fs.Entsize, Info: fs.Info, fileOffset: int64(fs.Offset) + 1}
		if fs.Type == elf.SHT_NOBITS {
			s.Size = int64(fs.Size)
		} else {
			s.Reader, s.Size = fs.Open(), int64(fs.FileSize)
		}
		secs[i+1] = s
		o.Sections = append(o.Sections, s)
	}
	o.SectionNames = secs[f.ShStrNdx]

	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	var symtabOff int64
	if tabs := f.SectionsByType(elf.SHT_SYMTAB); len(tabs) > 0 {
		symtabOff = int64(tabs[0].Offset)
	}
	symbols := make([]*Symbol, len(syms)) // by table index; [0] stays nil
	for i, fs := range syms[min(1, len(syms)):] {
		s, err := loadSymbol(fs, symtabOff+int64(fs.Index)*symSize, secs)
		if err != nil {
			return nil, err
		}
		symbols[i+1] = s
		o.Symbols = append(o.Symbols, s)
	}
	for i, fs := range f.Sections[1:] {
		if secs[i+1] == nil {
			continue // SHT_SYMTAB_SHNDX
		}
		if err := f.loadLinks(fs, secs[i+1], secs, symbols); err != nil {
			// Name the section in the Field, unless it names it already.
			var fe *goffload.FormatError
			if !errors.As(err, &fe) || fe.Format != "elf" {
				return nil, fmt.Errorf("elf: section %d %q: %w", i+1, fs.Name, err)
			}
			if !strings.Contains(fe.Field, strconv.Quote(fs.Name)) {
				fe.Field = fmt.Sprintf("section %d %q: %s", i+1, fs.Name, fe.Field)
			}
			return nil, err
		}
	}
	return o, nil
}

// flags returns e_flags, which debug/elf does not keep.
func (f *File) flags() uint32 {
	var b [4]byte
	if _, err := f.r.ReadAt(b[:], 48); err != nil {
		return 0
	}
	return f.order.Uint32(b[:])
}

// symShndx is the offset of st_shndx in an Elf64_Sym.
const symShndx = 6

// loadSymbol loads the symbol fs, whose entry is at byte at of the file.
func loadSymbol(fs FileSymbol, at int64, secs []*Section) (*Symbol, error) {
	s := &Symbol{Name: fs.Name, Type: fs.Type(), Bind: fs.Bind(), Visibility: elf.SymVis(fs.Other & 3),
		Other: fs.Other &^ 3, Value: fs.Value, Size: fs.Size}
	switch idx := fs.Section; {
	case fs.XIndex && int(idx) < len(secs) && secs[idx] != nil:
		s.Section = secs[idx]
	case fs.XIndex:
		return nil, formatErr(at+symShndx, "symbol %d %q: extended section index %d of %d", fs.Index, fs.Name, idx, len(secs))
	case idx == elf.SHN_UNDEF || idx == elf.SHN_ABS || idx == elf.SHN_COMMON:
		s.Index = idx
	case int(idx) < len(secs) && secs[idx] != nil:
		s.Section = secs[idx]
	default:
		return nil, formatErr(at+symShndx, "symbol %d %q: section index %d of %d", fs.Index, fs.Name, idx, len(secs))
	}
	return s, nil
}

// loadLinks fills the fields of s that refer to other sections and symbols,
// and decodes the contents that the writer remakes.
func (f *File) loadLinks(fs *FileSection, s *Section, secs []*Section, syms []*Symbol) error {
	link := func() (*Section, error) {
		if fs.Link == 0 || int(fs.Link) >= len(secs) {
			return nil, formatErr(f.headerField(fs.Index, shdrLink), "link %d of %d sections", fs.Link, len(secs))
		}
		return secs[fs.Link], nil
	}
	// sym returns symbol i, read at byte at of the file (-1: unknown).
	sym := func(i uint64, at int64) (*Symbol, error) {
		if i == 0 {
			return nil, nil
		}
		if i >= uint64(len(syms)) {
			return nil, formatErr(at, "symbol %d of %d", i, len(syms))
		}
		return syms[i], nil
	}
	var err error
	switch fs.Type {
	case elf.SHT_SYMTAB:
		s.Link, err = link()
		s.Reader, s.Size = nil, 0
		return err
	case elf.SHT_REL, elf.SHT_RELA:
		if int(fs.Info) == 0 || int(fs.Info) >= len(secs) {
			return formatErr(f.headerField(fs.Index, shdrInfo), "applies to section %d of %d", fs.Info, len(secs))
		}
		s.Target, s.Reader, s.Size = secs[fs.Info], nil, 0
		rels, err := f.Relocations(fs)
		if err != nil {
			return err
		}
		ent := int64(relSize)
		if fs.Type == elf.SHT_RELA {
			ent = relaSize
		}
		for i, r := range rels {
			rs, err := sym(uint64(r.SymIndex), int64(fs.Offset)+int64(i)*ent+8) // r_info
			if err != nil {
				return err
			}
			s.Target.Relocs = append(s.Target.Relocs, Reloc{Offset: r.Offset, Type: RelocTypeOf(f.Machine, r.Type), Symbol: rs, Addend: r.Addend})
		}
		return nil
	case elf.SHT_GROUP:
		data, err := fs.Data()
		if err != nil {
			return err
		}
		if len(data) < 4 || len(data)%4 != 0 {
			return formatErr(int64(fs.Offset), "group of %d bytes", len(data))
		}
		g := &Group{Flags: f.order.Uint32(data)}
		if g.Signature, err = sym(uint64(fs.Info), f.headerField(fs.Index, shdrInfo)); err != nil {
			return err
		}
		for i := 4; i < len(data); i += 4 {
			m := f.order.Uint32(data[i:])
			if m == 0 || int(m) >= len(secs) {
				return formatErr(int64(fs.Offset)+int64(i), "group member %d of %d sections", m, len(secs))
			}
			g.Members = append(g.Members, secs[m])
		}
		s.Group, s.Reader, s.Size = g, nil, 0
		return nil
	case SHT_LLVM_ADDRSIG:
		if fs.Link == 0 {
			return nil // not linked to the symbol table: data
		}
		data, err := fs.Data()
		if err != nil {
			return err
		}
		rd := bytes.NewReader(data)
		for rd.Len() > 0 {
			at := int64(fs.Offset) + int64(len(data)-rd.Len())
			i, err := binary.ReadUvarint(rd)
			switch {
			case errors.Is(err, io.ErrUnexpectedEOF):
				return elfErr(at, goffload.ErrTruncated, "address-significance table: symbol index cut short")
			case err != nil:
				return formatErr(at, "address-significance table: symbol index overflows 64 bits")
			}
			as, err := sym(i, at)
			if err != nil {
				return err
			}
			s.Addrsig = append(s.Addrsig, as)
		}
		s.Reader, s.Size = nil, 0
		return nil
	}
	if fs.Link != 0 {
		s.Link, err = link()
	}
	return err
}
