package wrap

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"strconv"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/internal/concat"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap/internal/stubs"
)

// The SYCL wrapper object is laid out as LLVM's code generator lays out
// wrapSYCLBinaries' module: its globals in module order, each section made
// when the first global goes into it, the globals' symbols (and each
// section's symbol, and on AArch64 its `$d`) in the order the assembler
// meets them. This file models those rules; sycl.go says what the globals
// are.

// syclSectionKey tells the sections apart: LLVM puts globals of one name but
// other flags or entry sizes (the kinds of .llvm.offloading) in sections of
// their own, of the same name.
type syclSectionKey struct {
	name    string
	typ     elf.SectionType
	flags   elf.SectionFlag
	entsize uint64
}

// syclGlobal is one global variable of the module.
type syclGlobal struct {
	name  string // after LLVM's renaming of repeated names
	key   syclSectionKey
	size  uint64
	align uint64
	data  []byte      // the bytes; or, when nil,
	r     io.ReaderAt // the size bytes of r
	ptrs  []syclPtr
	weak  bool // a weak global symbol, else a local one

	sec *syclSection
	off uint64
	sym *elfobj.Symbol
}

// syclPtr is a pointer in a global: at its byte at, to the byte add of to.
type syclPtr struct {
	at  uint64
	to  *syclGlobal
	add uint64
}

type syclSection struct {
	s    *elfobj.Section
	data concat.ReaderAt
	// sym is the section symbol, made when a relocation refers to it.
	sym *elfobj.Symbol
	// mapped: the section has its `$d` (AArch64).
	mapped bool
}

type syclModule struct {
	r       *release.Release
	o       *elfobj.Object
	code    *stubs.Code
	entries string
	// binary: the module of LLVM main after 23 (sycl_binary.go), whose
	// one global is the binary: reg is a constructor of priority 101 that
	// calls atexit(unreg), and there is no destructor.
	binary bool

	// taken and last are LLVM's value symbol table: a name in use gets
	// ".N" appended, N from one counter for the whole module.
	taken map[string]bool
	last  int

	globals []*syclGlobal
	desc    *syclGlobal
	secs    map[syclSectionKey]*syclSection
	order   []*syclSection // in the order they were made
}

// name returns the name LLVM gives a new global asked to be named n.
func (m *syclModule) name(n string) string {
	c := n
	for m.taken[c] {
		m.last++
		c = n + "." + strconv.Itoa(m.last)
	}
	m.taken[c] = true
	return c
}

func (m *syclModule) add(g *syclGlobal) *syclGlobal {
	m.globals = append(m.globals, g)
	return g
}

// prefAlign is DataLayout::getPreferredAlign of a global without an
// explicit alignment: the type's preferred alignment, raised to 16 for a
// global larger than 16 bytes.
func prefAlign(natural, size uint64) uint64 {
	if natural < 16 && size > 16 {
		return 16
	}
	return natural
}

// cstring adds a C string global, which goes to .rodata.str1.N for its
// alignment N.
func (m *syclModule) cstring(name, s string) *syclGlobal {
	size := uint64(len(s)) + 1
	align := constantAlign(m.o.Machine, size)
	key := syclSectionKey{".rodata.str1." + strconv.FormatUint(align, 10), elf.SHT_PROGBITS, elf.SHF_ALLOC | elf.SHF_MERGE | elf.SHF_STRINGS, 1}
	return m.add(&syclGlobal{name: m.name(name), key: key, size: size, align: align, data: append([]byte(s), 0)})
}

// describe adds the module's globals in wrapSYCLBinaries' order.
func (m *syclModule) describe(images []SYCLImage) error {
	order := m.o.ByteOrder()
	raw, err := offload.Entry{Kind: offload.OffloadSYCL}.Raw(m.r)
	if err != nil {
		return fmt.Errorf("wrap: %w", err)
	}
	entry, err := offload.LayoutOf(m.r).Encode(order, raw)
	if err != nil {
		return fmt.Errorf("wrap: %w", err)
	}
	code, _ := offload.OffloadKindCode(m.r, offload.OffloadSYCL)
	nameAt, entrySize := uint64(offload.LayoutOf(m.r).NameOffset()), uint64(len(entry))
	dataRelRo := syclSectionKey{".data.rel.ro", elf.SHT_PROGBITS, elf.SHF_ALLOC | elf.SHF_WRITE, 0}
	devImages := make([]byte, syclImageSize*len(images))
	var devPtrs []syclPtr
	for i := range images {
		im := &images[i]
		id := strconv.Itoa(i)
		target := m.cstring(syclTag+"target."+id, im.Triple)
		compile := m.cstring(syclTag+"opts.compile."+id, im.CompileOptions)
		link := m.cstring(syclTag+"opts.link."+id, im.LinkOptions)
		raw := im.Data
		if raw == nil {
			raw = io.NewSectionReader(bytes.NewReader(nil), 0, 0)
		}
		flags, entsize, err := syclClass(raw, raw.Size())
		if err != nil {
			return fmt.Errorf("wrap: SYCL image %d: %w", i, err)
		}
		size := uint64(raw.Size())
		data := m.add(&syclGlobal{name: m.name(syclTag + id + ".data"),
			key:  syclSectionKey{".llvm.offloading", elfobj.SHT_LLVM_OFFLOADING, flags, entsize},
			size: size, align: constantAlign(m.o.Machine, size), r: raw})
		names := im.Names()
		arr := make([]byte, 0, entrySize*uint64(len(names)))
		var arrPtrs []syclPtr
		for k, n := range names {
			str := m.add(&syclGlobal{name: m.name(m.r.Entries.NameSymbol),
				key:  syclSectionKey{m.r.Entries.NameSection, elf.SHT_PROGBITS, elf.SHF_ALLOC | elf.SHF_MERGE | elf.SHF_STRINGS, 1},
				size: uint64(len(n)) + 1, align: 1, data: append([]byte(n), 0)})
			m.add(&syclGlobal{name: m.name(m.r.Entries.SymbolPrefix + n),
				key:  syclSectionKey{m.entries, elf.SHT_PROGBITS, elf.SHF_ALLOC | elf.SHF_WRITE | m.r.EntriesFlags(), 0},
				size: entrySize, align: m.r.Entries.Align, data: entry, ptrs: []syclPtr{{at: nameAt, to: str}}, weak: true})
			arr = append(arr, entry...)
			arrPtrs = append(arrPtrs, syclPtr{at: uint64(k)*entrySize + nameAt, to: str})
		}
		// An empty array has no relocations and no unnamed_addr: .rodata.
		arrKey := dataRelRo
		if len(names) == 0 {
			arrKey = syclSectionKey{".rodata", elf.SHT_PROGBITS, elf.SHF_ALLOC, 0}
		}
		entries := m.add(&syclGlobal{name: m.name(syclTag + "entries_arr"), key: arrKey,
			size: uint64(len(arr)), align: prefAlign(8, uint64(len(arr))), data: arr, ptrs: arrPtrs})
		at := uint64(syclImageSize * i)
		d := devImages[at:]
		order.PutUint16(d, syclImageVersion)
		d[2], d[3] = uint8(code), uint8(im.Kind) // LLVM stores the low bytes
		devPtrs = append(devPtrs,
			syclPtr{at: at + 8, to: target}, syclPtr{at: at + 16, to: compile}, syclPtr{at: at + 24, to: link},
			syclPtr{at: at + 32, to: data}, syclPtr{at: at + 40, to: data, add: size},
			syclPtr{at: at + 48, to: entries}, syclPtr{at: at + 56, to: entries, add: entries.size})
		// PropertiesBegin and PropertiesEnd (at 64 and 72) are null.
	}
	devs := m.add(&syclGlobal{name: m.name(syclTag + "device_images"), key: dataRelRo,
		size: uint64(len(devImages)), align: prefAlign(8, uint64(len(devImages))), data: devImages, ptrs: devPtrs})
	desc := make([]byte, syclDescSize)
	order.PutUint16(desc, syclDescVersion)
	order.PutUint16(desc[2:], uint16(len(images)))
	m.desc = m.add(&syclGlobal{name: m.name(syclTag + "descriptor"), key: dataRelRo,
		size: syclDescSize, align: prefAlign(8, syclDescSize), data: desc, ptrs: []syclPtr{{at: 8, to: devs}}})
	return nil
}

// layout places each global in its section, making the sections in the
// order the globals first need them.
func (m *syclModule) layout() {
	m.secs = map[syclSectionKey]*syclSection{}
	for _, g := range m.globals {
		sec := m.secs[g.key]
		if sec == nil {
			sec = &syclSection{s: &elfobj.Section{Name: g.key.name, Type: g.key.typ, Flags: g.key.flags, Entsize: g.key.entsize, Addralign: 1}}
			m.secs[g.key] = sec
			m.order = append(m.order, sec)
		}
		g.sec = sec
		g.off = alignUp(uint64(sec.data.Size()), g.align)
		sec.data.AddZeros(int64(g.off) - sec.data.Size())
		if g.data != nil {
			sec.data.AddBytes(g.data)
		} else if g.size > 0 {
			sec.data.Add(g.r, 0, int64(g.size))
		}
		sec.s.Addralign = max(sec.s.Addralign, g.align)
	}
	for _, sec := range m.order {
		sec.s.Reader, sec.s.Size = &sec.data, sec.data.Size()
	}
}

// sectionSymbol returns the symbol of sec, made on first use: LLVM writes
// the symbol of a section only when a relocation refers to it.
func sectionSymbol(s *elfobj.Section, sym **elfobj.Symbol) *elfobj.Symbol {
	if *sym == nil {
		*sym = &elfobj.Symbol{Type: elf.STT_SECTION, Bind: elf.STB_LOCAL, Section: s}
	}
	return *sym
}

func (m *syclModule) build() (*elfobj.Object, error) {
	o := m.o
	strtab := &elfobj.Section{Name: ".strtab", Type: elf.SHT_STRTAB, Addralign: 1}
	o.SectionNames = strtab
	startup := &elfobj.Section{Name: ".text.startup", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR,
		Addralign: m.code.Align, Data: m.code.Text}
	var startupSym *elfobj.Symbol
	o.Sections = append(o.Sections, strtab,
		&elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 4, Data: []byte{}},
		startup)
	m.layout()
	for _, sec := range m.order {
		o.Sections = append(o.Sections, sec.s)
	}
	abs := elfobj.Abs64(o.Machine)
	for _, g := range m.globals {
		g.sym = &elfobj.Symbol{Name: g.name, Type: elf.STT_OBJECT, Bind: elf.STB_LOCAL, Section: g.sec.s, Value: g.off, Size: g.size}
		if g.weak {
			g.sym.Bind = elf.STB_WEAK
		}
	}
	for _, g := range m.globals {
		for _, p := range g.ptrs {
			rel := elfobj.Reloc{Offset: g.off + p.at, Type: abs}
			// Into a mergeable section, a pointer past a global's start is
			// relocated against the global's symbol, which the linker can
			// follow when it merges (ELFObjectWriter::shouldRelocateWithSymbol).
			if t := p.to; t.sec.s.Flags&elf.SHF_MERGE != 0 && p.add != 0 {
				rel.Symbol, rel.Addend = t.sym, int64(p.add)
			} else {
				rel.Symbol, rel.Addend = sectionSymbol(t.sec.s, &t.sec.sym), int64(t.off+p.add)
			}
			g.sec.s.Relocs = append(g.sec.s.Relocs, rel)
		}
	}
	undef := map[stubs.Target]*elfobj.Symbol{
		stubs.RegisterLib:   {Name: syclRegisterLib, Bind: elf.STB_GLOBAL},
		stubs.UnregisterLib: {Name: syclUnregLib, Bind: elf.STB_GLOBAL},
		stubs.Atexit:        {Name: stubs.Atexit.Symbol(), Bind: elf.STB_GLOBAL},
	}
	var globals []*elfobj.Symbol
	for _, rel := range m.code.Relocs {
		r := elfobj.Reloc{Offset: rel.Offset, Type: rel.Type, Addend: rel.Addend}
		switch rel.Target {
		case stubs.Descriptor:
			r.Symbol = m.desc.sym
			if m.code.DescriptorViaSection {
				r.Symbol, r.Addend = sectionSymbol(m.desc.sec.s, &m.desc.sec.sym), rel.Addend+int64(m.desc.off)
			}
		case stubs.RegisterLib, stubs.UnregisterLib, stubs.Atexit:
			r.Symbol = undef[rel.Target]
			if !slicesContains(globals, r.Symbol) {
				globals = append(globals, r.Symbol)
			}
		case stubs.Unreg:
			// atexit's argument, against .text.startup (Code.UnregViaSection).
			r.Symbol, r.Addend = sectionSymbol(startup, &startupSym), rel.Addend+int64(m.code.Funcs[1].Offset)
		default:
			return nil, fmt.Errorf("wrap: SYCL wrapper code: relocation %v at %#x: %w", rel.Target, rel.Offset, goffload.ErrUnsupported)
		}
		startup.Relocs = append(startup.Relocs, r)
	}
	startupSym = sectionSymbol(startup, &startupSym)
	arrays := m.ctors(startup, startupSym)
	o.Sections = append(o.Sections, arrays...)
	o.Sections = append(o.Sections, &elfobj.Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS, Addralign: 1})
	ehFrame, err := m.unwind(startupSym)
	if err != nil {
		return nil, err
	}
	o.Sections = append(o.Sections, ehFrame)
	m.symbols(startupSym, globals, append(arrays, ehFrame))
	o.Sections = append(o.Sections, &elfobj.Section{Name: ".symtab", Type: elf.SHT_SYMTAB, Addralign: 8, Entsize: 24, Link: strtab})
	return o, nil
}

func slicesContains(list []*elfobj.Symbol, s *elfobj.Symbol) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ctors makes .init_array.1 (reg) and .fini_array.1 (unreg); in the binary
// form .init_array.101 (reg) alone.
func (m *syclModule) ctors(startup *elfobj.Section, startupSym *elfobj.Symbol) []*elfobj.Section {
	arrays := []struct {
		name string
		typ  elf.SectionType
	}{{".init_array", elf.SHT_INIT_ARRAY}, {".fini_array", elf.SHT_FINI_ARRAY}}
	priority := syclPriority
	if m.binary {
		arrays, priority = arrays[:1], syclBinaryPriority
	}
	var out []*elfobj.Section
	for i, a := range arrays {
		out = append(out, &elfobj.Section{Name: a.name + "." + strconv.Itoa(priority), Type: a.typ, Flags: elf.SHF_ALLOC | elf.SHF_WRITE,
			Addralign: 8, Data: make([]byte, 8),
			Relocs: []elfobj.Reloc{{Type: elfobj.Abs64(m.o.Machine), Symbol: startupSym, Addend: int64(m.code.Funcs[i].Offset)}}})
	}
	return out
}

func (m *syclModule) unwind(startupSym *elfobj.Symbol) (*elfobj.Section, error) {
	fi, err := ehframe.FrameInfoFor(m.o.Machine)
	if err != nil {
		return nil, err
	}
	var fdes []ehframe.FDE
	for _, f := range m.code.Funcs {
		fdes = append(fdes, ehframe.FDE{Symbol: startupSym, Addend: int64(f.Offset), Size: f.Size, CFI: f.CFI})
	}
	return ehframe.Build(m.o.Machine, m.o.Data, fi, fdes)
}

// symbols writes the symbol table in the order LLVM's assembler meets the
// symbols: the file; the symbol of .text.startup, each function followed by
// its labels (reg by the descriptor, which its code refers to); then each
// global in module order, the first in a section followed by the section's
// symbol, and on AArch64 the first with bytes by the section's `$d`; then
// the `$d` of the constructor arrays and .eh_frame; then the undefined
// functions and the weak entries.
func (m *syclModule) symbols(startupSym *elfobj.Symbol, undefined []*elfobj.Symbol, tail []*elfobj.Section) {
	o := m.o
	local := func(s *elfobj.Symbol) { o.Symbols = append(o.Symbols, s) }
	mapping := false
	for _, l := range m.code.Labels {
		mapping = mapping || l.Name == "$x"
	}
	mapData := func(s *elfobj.Section, at uint64) {
		local(&elfobj.Symbol{Name: "$d", Type: elf.STT_NOTYPE, Bind: elf.STB_LOCAL, Section: s, Value: at})
	}
	file := &elfobj.Symbol{Name: wrapperFile, Type: elf.STT_FILE, Bind: elf.STB_LOCAL, Index: elf.SHN_ABS}
	local(file)
	local(startupSym)
	names := []string{syclRegName, syclUnregName}
	for i, f := range m.code.Funcs {
		local(&elfobj.Symbol{Name: names[i], Type: elf.STT_FUNC, Bind: elf.STB_LOCAL, Section: startupSym.Section, Value: f.Offset, Size: f.Size, Other: f.Other})
		for _, l := range m.code.Labels {
			if l.Func == i {
				local(&elfobj.Symbol{Name: l.Name, Type: elf.STT_NOTYPE, Bind: elf.STB_LOCAL, Section: startupSym.Section, Value: l.Offset})
			}
		}
		if i == 0 {
			local(m.desc.sym)
		}
	}
	var weak []*elfobj.Symbol
	switched := map[*syclSection]bool{}
	for _, g := range m.globals {
		switch {
		case g.weak:
			weak = append(weak, g.sym)
		case g != m.desc:
			local(g.sym)
		}
		if !switched[g.sec] {
			switched[g.sec] = true
			if g.sec.sym != nil {
				local(g.sec.sym)
			}
		}
		if mapping && g.size > 0 && !g.sec.mapped {
			g.sec.mapped = true
			mapData(g.sec.s, g.off)
		}
	}
	if mapping {
		for _, s := range tail {
			mapData(s, 0)
		}
	}
	o.Symbols = append(o.Symbols, undefined...)
	o.Symbols = append(o.Symbols, weak...)
}
