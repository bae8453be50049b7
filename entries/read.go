package entries

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// FileEntry is an offload entry read from a file.
type FileEntry struct {
	offload.Entry
	Section string              // the entries section it is in
	Layout  offload.EntryLayout // detected from the section's name
	Index   int                 // its position in the section
	Raw     offload.RawEntry    // its fields as stored
}

// Read returns every offload entry of f, section by section in file order.
// In a relocatable object the pointers are resolved through the RELA
// relocations to a symbol (a section symbol is named by its section) and an
// addend; in an executable or shared object through the dynamic relocations
// (relative ones, and absolute ones against a symbol) or, without one, the
// stored address, named by the symbol defined there. The name is the string
// the name pointer points to. The layout is detected from the section's name
// (the legacy sections, llvm_offload_entries, and both with the suffix of a
// relocatable link); release r numbers the kinds of 56-byte entries. A file
// without an entries section has no entries, whatever its machine (a device
// object, say, or an EM_NONE object carrying only .llvm.offloading); a machine
// other than x86-64, AArch64, ppc64 and riscv64 is an error only when there
// are entries to decode.
//
// Malformed entries give a [*goffload.FormatError] of Format "offload
// entries" naming the section, its offset in the ELF file f reads (an entries
// section cut short matches [goffload.ErrTruncated], a machine Read does not
// know [goffload.ErrUnsupported]); errors of the ELF file itself are elfobj's.
func Read(f *elfobj.File, r *release.Release) ([]FileEntry, error) {
	var rs *resolver
	var out []FileEntry
	for _, s := range f.Sections[1:] {
		layout, ok := offload.DetectEntryLayout(s.Name)
		if !ok || s.Type == elf.SHT_NOBITS {
			continue
		}
		if rs == nil {
			var err error
			if rs, err = newResolver(f); err != nil {
				return nil, err
			}
		}
		ents, err := rs.section(s, layout, r)
		if err != nil {
			return append(out, ents...), err
		}
		if out == nil {
			out = ents // the one entries section of most files: no copy
		} else {
			out = append(out, ents...)
		}
	}
	return out, nil
}

// resolver turns pointer fields into symbols and strings.
type resolver struct {
	f      *elfobj.File
	mc     machine
	order  binary.ByteOrder
	syms   []elfobj.FileSymbol
	byAddr map[uint64]*elfobj.FileSymbol // linked files: the symbol named at an address
	dyn    map[uint64]elfobj.FileReloc   // linked files: dynamic relocations by address
	data   map[int][]byte
	// strs holds, by section index, one copy of the bytes of each section
	// names point into, and names the names found there by offset: entries
	// that share a name share one string. refs counts the bytes of every
	// name each time an entry names it (see internal/budget).
	strs  map[int]string
	names map[[2]uint64]string
	refs  *budget.Counter
}

func newResolver(f *elfobj.File) (*resolver, error) {
	mc, err := machineOf(f.Machine)
	if err != nil {
		return nil, ferr.New(entriesFormat, eMachineOffset,
			fmt.Sprintf("machine %v (not x86-64, AArch64, ppc64 or riscv64)", f.Machine), nil, goffload.ErrUnsupported)
	}
	rs := &resolver{f: f, mc: mc, order: binary.LittleEndian, data: map[int][]byte{},
		strs: map[int]string{}, names: map[[2]uint64]string{}, refs: budget.For(f.Size())}
	if f.Data == elf.ELFDATA2MSB {
		rs.order = binary.BigEndian
	}
	if rs.syms, err = f.Symbols(); err != nil {
		return nil, err
	}
	if f.Type == elf.ET_REL {
		return rs, nil
	}
	if len(rs.syms) == 0 {
		if rs.syms, err = f.DynamicSymbols(); err != nil {
			return nil, err
		}
	}
	rs.byAddr = map[uint64]*elfobj.FileSymbol{}
	for i := range rs.syms {
		s := &rs.syms[i]
		if s.Section == elf.SHN_UNDEF || s.Type() == elf.STT_SECTION || s.Type() == elf.STT_FILE || s.Name == "" {
			continue
		}
		if old, ok := rs.byAddr[s.Value]; !ok || rank(s) < rank(old) {
			rs.byAddr[s.Value] = s
		}
	}
	dyn, err := f.DynamicRelocations()
	if err != nil {
		return nil, err
	}
	rs.dyn = make(map[uint64]elfobj.FileReloc, len(dyn))
	for _, r := range dyn {
		rs.dyn[r.Offset] = r
	}
	return rs, nil
}

// rank orders the symbols at one address: global, weak, then local.
func rank(s *elfobj.FileSymbol) int {
	switch s.Bind() {
	case elf.STB_GLOBAL:
		return 0
	case elf.STB_WEAK:
		return 1
	}
	return 2
}

func (rs *resolver) sectionData(i int) ([]byte, error) {
	if d, ok := rs.data[i]; ok {
		return d, nil
	}
	d, err := rs.f.Sections[i].Data()
	rs.data[i] = d
	return d, err
}

// entriesFormat is the Format of the errors about entries.
const entriesFormat = "offload entries"

// eMachineOffset is the offset of e_machine in an ELF header.
const eMachineOffset = 18

// section reads the entries of s. Its errors name s: a FormatError of the
// entries in its Field, with its offset in the file; others in a prefix.
func (rs *resolver) section(s *elfobj.FileSection, layout offload.EntryLayout, r *release.Release) ([]FileEntry, error) {
	data, err := rs.sectionData(s.Index)
	if err != nil {
		return nil, fmt.Errorf("%s: section %q: %w", entriesFormat, s.Name, err)
	}
	raws, err := decodeSection(layout, rs.order, data, s.Name, int64(s.Offset))
	if err != nil {
		return nil, err
	}
	kind, _ := offload.EntrySectionKind(s.Name)
	var relocs map[uint64]elfobj.FileReloc
	if rs.f.Type == elf.ET_REL {
		if relocs, err = rs.relocsOf(s); err != nil {
			return nil, fmt.Errorf("%s: section %q: %w", entriesFormat, s.Name, err)
		}
	}
	size := uint64(layout.Size())
	out := make([]FileEntry, len(raws))
	for i, raw := range raws {
		base := uint64(i) * size
		e := FileEntry{Entry: offload.EntryFromRaw(r, layout, kind, raw), Section: s.Name, Layout: layout, Index: i, Raw: raw}
		var name location
		e.Address, _ = rs.pointer(s, relocs, base+uint64(layout.AddrOffset()), raw.Addr)
		nameOff := base + uint64(layout.NameOffset())
		_, name = rs.pointer(s, relocs, nameOff, raw.Name)
		if e.Name, err = rs.cString(name); err != nil {
			return nil, nameErr(err, s.Name, i, int64(s.Offset+nameOff))
		}
		if auxOff, ok := layout.AuxOffset(); ok {
			e.Aux, _ = rs.pointer(s, relocs, base+uint64(auxOff), raw.Aux)
		}
		out[i] = e
	}
	return out, nil
}

// relocsOf returns the relocations that apply to s, by offset.
func (rs *resolver) relocsOf(s *elfobj.FileSection) (map[uint64]elfobj.FileReloc, error) {
	m := map[uint64]elfobj.FileReloc{}
	for _, rsec := range rs.f.Sections[1:] {
		if (rsec.Type != elf.SHT_RELA && rsec.Type != elf.SHT_REL) || int(rsec.Info) != s.Index {
			continue
		}
		rels, err := rs.f.Relocations(rsec)
		if err != nil {
			return nil, err
		}
		for _, r := range rels {
			m[r.Offset] = r
		}
	}
	return m, nil
}

// location is where a pointer points: a section and an offset in it (for a
// relocatable object), or an address (for a linked file).
type location struct {
	section int // 0: unknown
	offset  uint64
	addr    uint64
	linked  bool
}

// pointer resolves the pointer field at off of section s, whose stored value
// is stored.
func (rs *resolver) pointer(s *elfobj.FileSection, relocs map[uint64]elfobj.FileReloc, off, stored uint64) (offload.SymbolRef, location) {
	if rs.f.Type == elf.ET_REL {
		r, ok := relocs[off]
		if !ok || r.Symbol == nil {
			return offload.SymbolRef{Addend: int64(stored) + r.Addend}, location{}
		}
		ref := offload.SymbolRef{Symbol: r.Symbol.Name, Addend: r.Addend}
		if r.Symbol.Type() == elf.STT_SECTION && int(r.Symbol.Section) < len(rs.f.Sections) {
			ref.Symbol = rs.f.Sections[r.Symbol.Section].Name
		}
		loc := location{}
		if sec := int(r.Symbol.Section); sec > 0 && sec < len(rs.f.Sections) {
			loc = location{section: sec, offset: r.Symbol.Value + uint64(r.Addend)}
		}
		return ref, loc
	}
	addr := stored
	if r, ok := rs.dyn[s.Addr+off]; ok {
		switch {
		case contains(rs.mc.dynRelative, r.Type):
			addr = uint64(r.Addend)
		case contains(rs.mc.dynAbsolute, r.Type) && r.Symbol != nil:
			if r.Symbol.Section == elf.SHN_UNDEF {
				return offload.SymbolRef{Symbol: r.Symbol.Name, Addend: r.Addend}, location{}
			}
			addr = r.Symbol.Value + uint64(r.Addend)
		}
	}
	if addr == 0 {
		return offload.SymbolRef{}, location{}
	}
	if sym, ok := rs.byAddr[addr]; ok {
		return offload.SymbolRef{Symbol: sym.Name}, location{addr: addr, linked: true}
	}
	return offload.SymbolRef{Addend: int64(addr)}, location{addr: addr, linked: true}
}

// cString reads the NUL-terminated string at loc. Its FormatErrors say what
// is wrong with the name pointer; the caller names the entry and its place.
func (rs *resolver) cString(loc location) (string, error) {
	sec, off := loc.section, loc.offset
	if loc.linked {
		sec = 0
		if s, d, ok := rs.f.SectionAt(loc.addr); ok {
			sec, off = s.Index, d
		}
	}
	if sec == 0 {
		if loc.linked {
			return "", ferr.New(entriesFormat, -1, fmt.Sprintf("name pointer %#x points into no section", loc.addr), nil, nil)
		}
		return "", ferr.New(entriesFormat, -1, "name pointer points to no section", nil, nil)
	}
	name, ok := rs.names[[2]uint64{uint64(sec), off}]
	if !ok {
		var err error
		if name, err = rs.findString(sec, off); err != nil {
			return "", err
		}
		rs.names[[2]uint64{uint64(sec), off}] = name
	}
	if !rs.refs.Take(uint64(len(name))) {
		return "", ferr.New(entriesFormat, -1, fmt.Sprintf("the names of the entries up to this one take more than %d times the file's %d bytes plus %d", budget.Factor, rs.f.Size(), budget.Slack), nil, goffload.ErrLimit)
	}
	return name, nil
}

// findString returns the NUL-terminated string at off of section sec.
func (rs *resolver) findString(sec int, off uint64) (string, error) {
	str, ok := rs.strs[sec]
	if !ok {
		data, err := rs.sectionData(sec)
		if err != nil {
			return "", err
		}
		str = string(data)
		rs.strs[sec] = str
	}
	target := rs.f.Sections[sec].Name
	if off >= uint64(len(str)) {
		return "", ferr.New(entriesFormat, -1, fmt.Sprintf("name pointer %s+%#x past the end of its %d bytes", target, off, len(str)), nil, nil)
	}
	end := strings.IndexByte(str[off:], 0)
	if end < 0 {
		return "", ferr.New(entriesFormat, -1, fmt.Sprintf("name at %s+%#x not NUL-terminated", target, off), nil, nil)
	}
	return str[off : off+uint64(end)], nil
}

// decodeSection decodes the entries of section name, at offset in the
// file; a FormatError names the section and has the offset in the file.
func decodeSection(layout offload.EntryLayout, order binary.ByteOrder, data []byte, name string, offset int64) ([]offload.RawEntry, error) {
	raws, err := layout.DecodeAll(order, data)
	if err != nil {
		var fe *goffload.FormatError
		if errors.As(err, &fe) {
			fe.Field = fmt.Sprintf("section %q %s", name, fe.Field)
			return nil, ferr.Rebase(fe, offset)
		}
		return nil, err
	}
	return raws, nil
}

// nameErr names entry i of section sec, whose name field is at offset in
// the file, in err, an error of reading its name.
func nameErr(err error, sec string, i int, offset int64) error {
	var fe *goffload.FormatError
	if errors.As(err, &fe) && fe.Format == entriesFormat {
		fe.Field = fmt.Sprintf("section %q entry %d %s", sec, i, fe.Field)
		fe.Offset = offset
		return fe
	}
	return fmt.Errorf("%s: section %q entry %d name: %w", entriesFormat, sec, i, err)
}
