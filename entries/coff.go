package entries

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// ReadCOFF returns every offload entry of f, a COFF object of a Windows
// host, section by section in file order, as [Read] does for ELF. The
// entries are in the sections whose name before a `$` is an entries
// section's (clang writes `llvm_offload_entries$OE`, which the linker
// groups between the wrapper's `$OA` and `$OZ`); COFF relocations carry no
// addend, so a pointer is its relocation's symbol plus the bytes stored in
// the field, and a name pointer is read from the section that symbol is
// defined in. A PE image has no entries to read (the linker merged the
// sections and resolved the pointers): it gives none.
func ReadCOFF(f *coffobj.File, r *release.Release) ([]FileEntry, error) {
	if f.Image {
		return nil, nil
	}
	var out []FileEntry
	var rs *coffResolver
	for _, s := range f.Sections {
		base, _, _ := strings.Cut(s.Name, "$")
		layout, ok := offload.DetectEntryLayout(base)
		if !ok || s.FileSize() == 0 {
			continue
		}
		if rs == nil {
			syms, err := f.Symbols()
			if err != nil {
				return nil, err
			}
			rs = &coffResolver{f: f, syms: syms, strs: map[int]string{}, refs: budget.For(f.Size())}
		}
		ents, err := rs.section(s, base, layout, r)
		if err != nil {
			return out, err
		}
		out = append(out, ents...)
	}
	return out, nil
}

type coffResolver struct {
	f    *coffobj.File
	syms []coffobj.FileSymbol
	strs map[int]string // the bytes of each section names point into, by number
	refs *budget.Counter
}

func (rs *coffResolver) section(s *coffobj.FileSection, base string, layout offload.EntryLayout, r *release.Release) ([]FileEntry, error) {
	data, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: section %q: %w", entriesFormat, s.Name, err)
	}
	raws, err := decodeSection(layout, binary.LittleEndian, data, s.Name, int64(s.Offset))
	if err != nil {
		return nil, err
	}
	relocs, err := rs.f.Relocations(s)
	if err != nil {
		return nil, fmt.Errorf("%s: section %q: %w", entriesFormat, s.Name, err)
	}
	byOff := make(map[uint64]*coffobj.FileSymbol, len(relocs))
	for _, rel := range relocs {
		byOff[uint64(rel.Offset)] = rel.Symbol
	}
	kind, _ := offload.EntrySectionKind(base)
	size := uint64(layout.Size())
	out := make([]FileEntry, len(raws))
	for i, raw := range raws {
		at := uint64(i) * size
		e := FileEntry{Entry: offload.EntryFromRaw(r, layout, kind, raw), Section: s.Name, Layout: layout, Index: i, Raw: raw}
		e.Address = rs.pointer(byOff[at+uint64(layout.AddrOffset())], raw.Addr)
		nameOff := at + uint64(layout.NameOffset())
		if e.Name, err = rs.name(byOff[nameOff], raw.Name); err != nil {
			return nil, nameErr(err, s.Name, i, int64(s.Offset)+int64(nameOff))
		}
		if auxOff, ok := layout.AuxOffset(); ok {
			e.Aux = rs.pointer(byOff[at+uint64(auxOff)], raw.Aux)
		}
		out[i] = e
	}
	return out, nil
}

// pointer is the symbol a field's relocation names, plus the bytes stored
// in the field (the addend); without a relocation, the stored address.
func (rs *coffResolver) pointer(sym *coffobj.FileSymbol, stored uint64) offload.SymbolRef {
	if sym == nil {
		return offload.SymbolRef{Addend: int64(stored)}
	}
	return offload.SymbolRef{Symbol: sym.Name, Addend: int64(stored)}
}

// name reads the NUL-terminated string the name field points to: in the
// section its relocation's symbol is defined in, at the symbol's value plus
// the stored addend.
func (rs *coffResolver) name(sym *coffobj.FileSymbol, stored uint64) (string, error) {
	if sym == nil || sym.SectionNumber <= 0 || int(sym.SectionNumber) > len(rs.f.Sections) {
		return "", ferr.New(entriesFormat, -1, "name pointer points to no section", nil, nil)
	}
	sec := rs.f.Sections[sym.SectionNumber-1]
	str, ok := rs.strs[int(sym.SectionNumber)]
	if !ok {
		data, err := sec.Data()
		if err != nil {
			return "", err
		}
		str = string(data)
		rs.strs[int(sym.SectionNumber)] = str
	}
	off := uint64(sym.Value) + stored
	if off < stored || off >= uint64(len(str)) {
		return "", ferr.New(entriesFormat, -1, fmt.Sprintf("name pointer %s+%#x past the end of its %d bytes", sec.Name, off, len(str)), nil, nil)
	}
	end := strings.IndexByte(str[off:], 0)
	if end < 0 {
		return "", ferr.New(entriesFormat, -1, fmt.Sprintf("name at %s+%#x not NUL-terminated", sec.Name, off), nil, nil)
	}
	name := str[off : off+uint64(end)]
	if !rs.refs.Take(uint64(len(name))) {
		return "", ferr.New(entriesFormat, -1, fmt.Sprintf("the names of the entries up to this one take more than %d times the file's %d bytes plus %d", budget.Factor, rs.f.Size(), budget.Slack), nil, goffload.ErrLimit)
	}
	return name, nil
}
