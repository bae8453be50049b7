package entries

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// ErrNotInRelease: the release has no entry of that kind (a requires entry
// before LLVM 19, SYCL before 21).
var ErrNotInRelease = errors.New("not in this LLVM release")

// RequiresEntry returns the entry that carries `#pragma omp requires` flags
// (docs/entries.md#requires) in release r: an empty name with the flags in the
// legacy `reserved` field in LLVM 19 and 20, ".requires" with the flags in Data
// from 21. LLVM 15 to 18 have no such entry: they call __tgt_register_requires
// from a constructor.
func RequiresEntry(r *release.Release, flags offload.RequiresFlags) (offload.Entry, error) {
	if r.Entries.Requires == release.RequiresCtor {
		return offload.Entry{}, fmt.Errorf("entries: requires entry in %v, which registers requires with a constructor: %w", r, ErrNotInRelease)
	}
	return offload.Entry{Kind: offload.OffloadOpenMP, Flags: uint32(offload.OMPEntryRequires), Name: r.Entries.RequiresName, Data: uint64(flags)}, nil
}

// RegionID returns the name of the symbol whose address identifies the
// OpenMP target region (kernel) name: ".<name>.region_id".
func RegionID(name string) string { return "." + name + ".region_id" }

// KernelEntry returns the entry of an OpenMP target region as clang emits it:
// its address is the region's ID symbol, which Write defines.
func KernelEntry(name string) offload.Entry {
	return offload.Entry{Kind: offload.OffloadOpenMP, Name: name, Address: offload.SymbolRef{Symbol: RegionID(name)}}
}

// writer adds one table of entries to an object.
type writer struct {
	o       *elfobj.Object
	r       *release.Release
	mc      machine
	abs64   elfobj.RelocType
	order   binary.ByteOrder
	names   map[string]*elfobj.Section // string sections by name
	nameSym map[*elfobj.Section]*elfobj.Symbol
	nNames  int
}

// Write adds entries to o, a relocatable object of a host machine, as clang of
// release r emits them (docs/entries.md#entry-globals): the release's entries
// section for each entry's kind, the name strings in the release's string
// section, a weak symbol per entry, and relocations for the address, the name
// and the aux address. Address and Aux symbols are looked up by name in o, and
// added as undefined globals when o has none; an OpenMP entry whose address is
// the symbol [RegionID] of its name gets that symbol defined in .rodata, as
// clang does for target regions. The entries of one section are written in the
// order given.
func Write(o *elfobj.Object, r *release.Release, ents []offload.Entry) error {
	mc, err := machineOf(o.Machine)
	if err != nil {
		return err
	}
	w := &writer{o: o, r: r, mc: mc, abs64: elfobj.Abs64(o.Machine), names: map[string]*elfobj.Section{}, nameSym: map[*elfobj.Section]*elfobj.Symbol{}}
	if o.Data == elf.ELFDATA2MSB {
		w.order = binary.BigEndian
	} else {
		w.order = binary.LittleEndian
	}
	tables := map[string]*elfobj.Section{}
	var order []string
	for i, e := range ents {
		sec := offload.EntriesSection(r, e.Kind)
		if sec == "" {
			return fmt.Errorf("entries: entry %d %q: %v has no entries section for %v: %w", i, e.Name, r, e.Kind, ErrNotInRelease)
		}
		if e.Flags&uint32(offload.OMPEntryRequires) != 0 && e.Kind == offload.OffloadOpenMP && r.Entries.Requires == release.RequiresCtor {
			return fmt.Errorf("entries: entry %d: requires entry in %v, which registers requires with a constructor: %w", i, r, ErrNotInRelease)
		}
		t, ok := tables[sec]
		if !ok {
			if o.Section(sec) != nil {
				return fmt.Errorf("entries: the object already has a section %q", sec)
			}
			t = &elfobj.Section{Name: sec, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE | r.EntriesFlags(), Addralign: r.Entries.Align, Data: []byte{}}
			tables[sec] = t
			order = append(order, sec)
		}
		if err := w.add(t, e); err != nil {
			return fmt.Errorf("entries: entry %d %q: %w", i, e.Name, err)
		}
	}
	for _, sec := range order {
		o.AddSection(tables[sec], false)
	}
	return nil
}

// add appends entry e to the entries section t.
func (w *writer) add(t *elfobj.Section, e offload.Entry) error {
	raw, err := e.Raw(w.r)
	if err != nil {
		return err
	}
	layout := offload.LayoutOf(w.r)
	off := uint64(len(t.Data))
	t.Data, err = layout.AppendEncode(t.Data, w.order, raw)
	if err != nil {
		return err
	}
	if !e.Address.IsNull() {
		if err := w.pointer(t, off+uint64(layout.AddrOffset()), e.Address, e.Kind == offload.OffloadOpenMP && e.Address.Symbol == RegionID(e.Name)); err != nil {
			return err
		}
	}
	strSec, strOff, strSym := w.nameString(e.Name)
	nameRel := elfobj.Reloc{Offset: off + uint64(layout.NameOffset()), Type: w.abs64, Symbol: w.sectionSymbol(strSec), Addend: int64(strOff)}
	if w.mc.nameBySymbol {
		nameRel.Symbol, nameRel.Addend = strSym, 0
	}
	t.Relocs = append(t.Relocs, nameRel)
	if !e.Aux.IsNull() {
		auxOff, _ := layout.AuxOffset()
		if err := w.pointer(t, off+uint64(auxOff), e.Aux, false); err != nil {
			return err
		}
	}
	w.o.Symbols = append(w.o.Symbols, &elfobj.Symbol{Name: w.r.Entries.SymbolPrefix + e.Name, Type: elf.STT_OBJECT, Bind: elf.STB_WEAK,
		Section: t, Value: off, Size: uint64(layout.Size())})
	return nil
}

// pointer adds the relocation of a pointer field at off of t to ref.
func (w *writer) pointer(t *elfobj.Section, off uint64, ref offload.SymbolRef, region bool) error {
	var sym *elfobj.Symbol
	if ref.Symbol != "" {
		sym = w.symbol(ref.Symbol, region)
	}
	t.Relocs = append(t.Relocs, elfobj.Reloc{Offset: off, Type: w.abs64, Symbol: sym, Addend: ref.Addend})
	return nil
}

// symbol returns the symbol named name: a defined one of the object first,
// else an undefined one, made if needed (a region ID is defined instead).
func (w *writer) symbol(name string, region bool) *elfobj.Symbol {
	var undef *elfobj.Symbol
	for _, s := range w.o.Symbols {
		if s.Name != name || s.Type == elf.STT_SECTION || s.Type == elf.STT_FILE {
			continue
		}
		if s.Section != nil || s.Index == elf.SHN_ABS || s.Index == elf.SHN_COMMON {
			return s
		}
		undef = s
	}
	if region {
		ro := w.section(".rodata", elf.SHF_ALLOC, w.mc.minGlobalAlign, 0)
		for uint64(len(ro.Data))%w.mc.minGlobalAlign != 0 {
			ro.Data = append(ro.Data, 0)
		}
		off := uint64(len(ro.Data))
		ro.Data = append(ro.Data, 0)
		if undef != nil {
			undef.Type, undef.Bind, undef.Section, undef.Value, undef.Size = elf.STT_OBJECT, elf.STB_WEAK, ro, off, 1
			return undef
		}
		s := &elfobj.Symbol{Name: name, Type: elf.STT_OBJECT, Bind: elf.STB_WEAK, Section: ro, Value: off, Size: 1}
		w.o.Symbols = append(w.o.Symbols, s)
		return s
	}
	if undef != nil {
		return undef
	}
	s := &elfobj.Symbol{Name: name, Bind: elf.STB_GLOBAL}
	w.o.Symbols = append(w.o.Symbols, s)
	return s
}

// nameString places the NUL-terminated name in the release's string section and
// returns the section, the offset (docs/entries.md#object-level), and the local
// symbol `.offloading.entry_name[.N]` made over it.
func (w *writer) nameString(name string) (*elfobj.Section, uint64, *elfobj.Symbol) {
	size := uint64(len(name) + 1)
	var sec *elfobj.Section
	var align uint64 = 1
	switch {
	case w.r.Entries.NameSection != "":
		sec = w.section(w.r.Entries.NameSection, elf.SHF_ALLOC|elf.SHF_MERGE|elf.SHF_STRINGS, 1, 1)
	default:
		// No section in the IR: the backend picks .rodata.str1.N by the
		// string's alignment, 16 for arrays of more than 16 bytes.
		align = w.mc.minGlobalAlign
		if size > 16 {
			align = 16
		}
		sec = w.section(".rodata.str1."+strconv.FormatUint(align, 10), elf.SHF_ALLOC|elf.SHF_MERGE|elf.SHF_STRINGS, align, 1)
	}
	for uint64(len(sec.Data))%align != 0 {
		sec.Data = append(sec.Data, 0)
	}
	off := uint64(len(sec.Data))
	sec.Data = append(append(sec.Data, name...), 0)
	symName := w.r.Entries.NameSymbol
	if w.nNames > 0 {
		symName += "." + strconv.Itoa(w.nNames)
	}
	w.nNames++
	sym := &elfobj.Symbol{Name: symName, Type: elf.STT_OBJECT, Bind: elf.STB_LOCAL, Section: sec, Value: off, Size: size}
	w.o.Symbols = append(w.o.Symbols, sym)
	return sec, off, sym
}

// section returns the object's section named name, made (and added) if it is
// not there.
func (w *writer) section(name string, flags elf.SectionFlag, align, entsize uint64) *elfobj.Section {
	if s, ok := w.names[name]; ok {
		return s
	}
	s := w.o.Section(name)
	if s == nil || s.Data == nil {
		s = &elfobj.Section{Name: name, Type: elf.SHT_PROGBITS, Flags: flags, Addralign: align, Entsize: entsize, Data: []byte{}}
		w.o.AddSection(s, false)
	}
	w.names[name] = s
	return s
}

// sectionSymbol returns the section symbol of s, made if needed.
func (w *writer) sectionSymbol(s *elfobj.Section) *elfobj.Symbol {
	if sym, ok := w.nameSym[s]; ok {
		return sym
	}
	for _, sym := range w.o.Symbols {
		if sym.Type == elf.STT_SECTION && sym.Section == s {
			w.nameSym[s] = sym
			return sym
		}
	}
	sym := &elfobj.Symbol{Type: elf.STT_SECTION, Bind: elf.STB_LOCAL, Section: s}
	w.o.Symbols = append(w.o.Symbols, sym)
	w.nameSym[s] = sym
	return sym
}
