package entries

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// ReadMachO returns every offload entry of f, a Mach-O object of an Apple
// host, as [Read] does for ELF: the entries of __LLVM,offload_entries
// (56 bytes each, as llvm_offload_entries). A pointer is its relocation's
// symbol plus the bytes stored in the field, or, for a section-relative
// relocation (r_extern 0), the address stored, named by the symbol
// defined there; the name is read from the section the name pointer
// points into. A linked image gives none (the linker resolved the
// pointers).
func ReadMachO(f *machoobj.File, r *release.Release) ([]FileEntry, error) {
	if f.Type != machoobj.MH_OBJECT {
		return nil, nil
	}
	var out []FileEntry
	var rs *machoResolver
	for _, s := range f.Sections {
		if s.Seg != offload.MachOEntriesSegment || s.Name != offload.MachOEntriesSection || s.FileSize() == 0 {
			continue
		}
		if rs == nil {
			syms, err := f.Symbols()
			if err != nil {
				return nil, err
			}
			rs = &machoResolver{f: f, syms: syms, strs: map[int]string{}, refs: budget.For(f.Size())}
		}
		ents, err := rs.section(s, r)
		if err != nil {
			return out, err
		}
		out = append(out, ents...)
	}
	return out, nil
}

type machoResolver struct {
	f    *machoobj.File
	syms []machoobj.FileSymbol
	strs map[int]string // the bytes of each section names point into, by index
	refs *budget.Counter
	at   map[[2]uint64]string // (section index, address) -> the symbol defined there
}

// target is what a field's relocation points to: a symbol, or a section
// and an address.
type machoTarget struct {
	sym  *machoobj.FileSymbol
	sect int // section index, -1 for none
}

func (rs *machoResolver) section(s *machoobj.FileSection, r *release.Release) ([]FileEntry, error) {
	name := s.Seg + "," + s.Name
	layout, _ := offload.DetectEntryLayout("llvm_offload_entries")
	kind, _ := offload.EntrySectionKind("llvm_offload_entries")
	data, err := s.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: section %q: %w", entriesFormat, name, err)
	}
	if uint64(len(data)) < uint64(layout.Size()) && !bytes.ContainsFunc(data, func(r rune) bool { return r != 0 }) {
		// The wrapper's zero-sized dummy, to which LLVM gives a byte on
		// Mach-O (as every global): no entry.
		return nil, nil
	}
	raws, err := decodeSection(layout, binary.LittleEndian, data, name, int64(s.Offset))
	if err != nil {
		return nil, err
	}
	relocs, err := rs.f.Relocations(s)
	if err != nil {
		return nil, fmt.Errorf("%s: section %q: %w", entriesFormat, name, err)
	}
	byOff := make(map[uint64]machoTarget, len(relocs))
	for _, rel := range relocs {
		t := machoTarget{sect: -1}
		switch {
		case rel.Extern:
			t.sym = &rs.syms[rel.Num] // checked by Relocations
		case rel.Num > 0:
			t.sect = int(rel.Num) - 1
		}
		byOff[uint64(rel.Offset)] = t
	}
	size := uint64(layout.Size())
	at := func(off uint64) machoTarget {
		if t, ok := byOff[off]; ok {
			return t
		}
		return machoTarget{sect: -1} // no relocation
	}
	out := make([]FileEntry, len(raws))
	for i, raw := range raws {
		base := uint64(i) * size
		e := FileEntry{Entry: offload.EntryFromRaw(r, layout, kind, raw), Section: name, Layout: layout, Index: i, Raw: raw}
		e.Address = rs.pointer(at(base+uint64(layout.AddrOffset())), raw.Addr)
		nameOff := base + uint64(layout.NameOffset())
		if e.Name, err = rs.name(at(nameOff), raw.Name); err != nil {
			return nil, nameErr(err, name, i, int64(s.Offset)+int64(nameOff))
		}
		if auxOff, ok := layout.AuxOffset(); ok {
			e.Aux = rs.pointer(at(base+uint64(auxOff)), raw.Aux)
		}
		out[i] = e
	}
	return out, nil
}

// pointer is the symbol a field's relocation names plus the stored
// addend; for a section-relative one, the symbol defined at the stored
// address, or none with the address as the addend.
func (rs *machoResolver) pointer(t machoTarget, stored uint64) offload.SymbolRef {
	if t.sym != nil {
		return offload.SymbolRef{Symbol: t.sym.Name, Addend: int64(stored)}
	}
	if t.sect >= 0 {
		if rs.at == nil {
			rs.at = map[[2]uint64]string{}
			for _, s := range rs.syms {
				k := [2]uint64{uint64(s.Sect) - 1, s.Value}
				if _, dup := rs.at[k]; !dup && s.Type&machoobj.N_STAB == 0 && s.Type&machoobj.N_TYPE == machoobj.N_SECT && !strings.HasPrefix(s.Name, "ltmp") {
					rs.at[k] = s.Name
				}
			}
		}
		if name, ok := rs.at[[2]uint64{uint64(t.sect), stored}]; ok {
			return offload.SymbolRef{Symbol: name}
		}
	}
	return offload.SymbolRef{Addend: int64(stored)}
}

// name reads the NUL-terminated string the name field points to.
func (rs *machoResolver) name(t machoTarget, stored uint64) (string, error) {
	sect, addr := t.sect, stored
	if t.sym != nil {
		if t.sym.Type&machoobj.N_TYPE != machoobj.N_SECT || t.sym.Sect == 0 {
			return "", ferr.New(entriesFormat, -1, "name pointer points to no section", nil, nil)
		}
		sect, addr = int(t.sym.Sect)-1, t.sym.Value+stored
	}
	if sect < 0 || sect >= len(rs.f.Sections) {
		return "", ferr.New(entriesFormat, -1, "name pointer points to no section", nil, nil)
	}
	sec := rs.f.Sections[sect]
	str, ok := rs.strs[sect]
	if !ok {
		data, err := sec.Data()
		if err != nil {
			return "", err
		}
		str = string(data)
		rs.strs[sect] = str
	}
	off := addr - sec.Addr
	if addr < sec.Addr || off >= uint64(len(str)) {
		return "", ferr.New(entriesFormat, -1, fmt.Sprintf("name pointer %#x outside %s,%s", addr, sec.Seg, sec.Name), nil, nil)
	}
	end := strings.IndexByte(str[off:], 0)
	if end < 0 {
		return "", ferr.New(entriesFormat, -1, fmt.Sprintf("name at %s,%s+%#x not NUL-terminated", sec.Seg, sec.Name, off), nil, nil)
	}
	name := str[off : off+uint64(end)]
	if !rs.refs.Take(uint64(len(name))) {
		return "", ferr.New(entriesFormat, -1, fmt.Sprintf("the names of the entries up to this one take more than %d times the file's %d bytes plus %d", budget.Factor, rs.f.Size(), budget.Slack), nil, goffload.ErrLimit)
	}
	return name, nil
}
