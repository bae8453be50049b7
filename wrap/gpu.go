package wrap

import (
	"debug/elf"
	"fmt"
	"io"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap/internal/stubs"
)

// fatbin is the device code of a CUDA or HIP wrapper.
type fatbin struct {
	R    io.ReaderAt
	Size int64
}

// gpuNames are the names that differ between CUDA and HIP wrappers
// (docs/registration.md#cuda-hip).
var gpuNames = map[offload.OffloadKind]gpuKindNames{
	offload.OffloadCUDA: {"cuda", ".nv_fatbin", ".nvFatBinSegment", 0x466243B1, stubs.CUDA},
	offload.OffloadHIP:  {"hip", ".hip_fatbin", ".hipFatBinSegment", 0x48495046, stubs.HIP},
}

type gpuKindNames struct {
	prefix, fatbin, segment string
	magic                   uint32
	kind                    stubs.GPUKind
}

// gpuInputs checks what GPU and GPUCOFF are given (a kind with a fatbin
// registration, no relocatable or suffixed wrapper, a fatbin of the kind)
// and returns the fatbin, the release (the default for none) and the
// kind's names.
func gpuInputs(opt Options, kind offload.OffloadKind, data *io.SectionReader) (fatbin, *release.Release, gpuKindNames, error) {
	var fb fatbin
	if data != nil {
		fb = fatbin{R: data, Size: data.Size()}
	}
	r := opt.Release
	if r == nil {
		r = release.Default()
	}
	names, ok := gpuNames[kind]
	if !ok {
		return fb, r, names, fmt.Errorf("wrap: offload kind %v has no fatbin registration: %w", kind, goffload.ErrUnsupported)
	}
	if opt.Relocatable || opt.Suffix != "" {
		return fb, r, names, fmt.Errorf("wrap: relocatable or suffixed %v wrappers: %w", kind, goffload.ErrUnsupported)
	}
	return fb, r, names, checkFatbin(kind, fb)
}

// GPU returns the registration object that clang-linker-wrapper of the chosen
// release (17 to 23) makes for a CUDA or HIP fatbinary on an x86-64 or AArch64
// host (docs/registration.md#cuda-hip): the fatbin in .nv_fatbin or
// .hip_fatbin, the 24-byte wrapper that points to it in .nvFatBinSegment or
// .hipFatBinSegment, the handle in .bss, and the constructor that registers the
// fatbinary, then every entry of the entries section (kernels, variables,
// managed variables, surfaces and textures as that release does), and
// unregisters it at exit, with the machine code, symbols and .eh_frame of
// LLVM's code generator.
//
// The fatbin is checked first as the runtime will read it, and anything else
// is refused with an error matching [ErrNotFatbin] that says what it is: for
// CUDA a fatbinary header (magic 0xBA55ED50, version 1, a header of 16 bytes
// or more and the data it declares inside Size); for HIP a clang offload
// bundle that package bundle reads with device code in it (an entry other
// than the host's that is not empty), or a compressed bundle whose stream
// decompresses completely, within its header's UncompressedSize, into one.
// (Checking a compressed bundle decompresses it once, to nowhere.)
func GPU(opt Options, kind offload.OffloadKind, data *io.SectionReader) (*elfobj.Object, error) {
	fb, r, names, err := gpuInputs(opt, kind, data)
	if err != nil {
		return nil, err
	}
	if MachOHost(opt.triple()) {
		return nil, fmt.Errorf("wrap: host %q: a Mach-O object, which GPUMachO makes: %w", opt.triple(), goffload.ErrUnsupported)
	}
	o, err := elfobj.ForTriple(opt.triple())
	if err != nil {
		return nil, err
	}
	code, err := stubs.GPU(o.Machine, stubs.GPUOptions{LLVM: r.Major, Kind: names.kind})
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	g := &gpuBuilder{o: o, r: r, kind: kind, code: code, entries: offload.EntriesSection(r, kind)}
	g.prefix, g.fatbinName, g.segmentName, g.magic = names.prefix, names.fatbin, names.segment, names.magic
	return g.build(fb)
}

type gpuBuilder struct {
	o       *elfobj.Object
	r       *release.Release
	kind    offload.OffloadKind
	code    *stubs.GPUCode
	entries string

	prefix, fatbinName, segmentName string
	magic                           uint32

	startup, rodata, entrySec, fatbin, segment, bss, initArray, ehFrame *elfobj.Section
	sym                                                                 map[*elfobj.Section]*elfobj.Symbol // section symbols
	funcs                                                               []*elfobj.Symbol
	undef                                                               map[stubs.Target]*elfobj.Symbol
	mapping                                                             bool
}

func (g *gpuBuilder) build(fb fatbin) (*elfobj.Object, error) {
	o := g.o
	g.sym = map[*elfobj.Section]*elfobj.Symbol{}
	g.undef = map[stubs.Target]*elfobj.Symbol{}
	for _, l := range g.code.Labels {
		g.mapping = g.mapping || l.Name == "$x"
	}
	strtab := &elfobj.Section{Name: ".strtab", Type: elf.SHT_STRTAB, Addralign: 1}
	o.SectionNames = strtab
	g.startup = &elfobj.Section{Name: ".text.startup", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR,
		Addralign: g.code.Align, Data: g.code.Text}
	o.Sections = append(o.Sections, strtab,
		&elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 4, Data: []byte{}},
		g.startup)
	if jt := g.code.JumpTable; jt != nil {
		g.rodata = &elfobj.Section{Name: ".rodata", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addralign: jt.Align, Data: jt.Data}
		o.Sections = append(o.Sections, g.rodata)
	}
	g.entrySec = &elfobj.Section{Name: g.entries, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | g.r.EntriesFlags(), Addralign: 8, Data: []byte{}}
	g.fatbin = &elfobj.Section{Name: g.fatbinName, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC,
		Addralign: stubs.GPUFatbinAlign(o.Machine, uint64(fb.Size)), Reader: fb.R, Size: fb.Size}
	seg := make([]byte, 24)
	o.ByteOrder().PutUint32(seg, g.magic)
	o.ByteOrder().PutUint32(seg[4:], 1)
	g.segment = &elfobj.Section{Name: g.segmentName, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Data: seg}
	g.bss = &elfobj.Section{Name: ".bss", Type: elf.SHT_NOBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Size: 8}
	g.initArray = &elfobj.Section{Name: fmt.Sprintf(".init_array.%d", g.r.Wrapper.CtorPriority), Type: elf.SHT_INIT_ARRAY,
		Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Data: make([]byte, 8)}
	o.Sections = append(o.Sections, g.entrySec, g.fatbin, g.segment, g.bss, g.initArray,
		&elfobj.Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS, Addralign: 1})

	g.symbols(fb)
	if err := g.relocs(); err != nil {
		return nil, err
	}
	if err := g.unwind(); err != nil {
		return nil, err
	}
	if g.mapping {
		g.local("$d", elf.STT_NOTYPE, g.initArray, 0, 0)
		g.local("$d", elf.STT_NOTYPE, g.ehFrame, 0, 0)
	}
	g.globalsInOrder()
	o.Sections = append(o.Sections, &elfobj.Section{Name: ".symtab", Type: elf.SHT_SYMTAB, Addralign: 8, Entsize: 24, Link: strtab})
	return o, nil
}

func (g *gpuBuilder) local(name string, typ elf.SymType, sec *elfobj.Section, value, size uint64) *elfobj.Symbol {
	s := &elfobj.Symbol{Name: name, Type: typ, Bind: elf.STB_LOCAL, Section: sec, Value: value, Size: size}
	g.o.Symbols = append(g.o.Symbols, s)
	return s
}

func (g *gpuBuilder) section(sec *elfobj.Section) {
	g.sym[sec] = g.local("", elf.STT_SECTION, sec, 0, 0)
	if g.mapping && sec != g.startup && sec != g.rodata {
		g.local("$d", elf.STT_NOTYPE, sec, 0, 0)
	}
}

// symbols makes the local symbols in LLVM's order (see package
// internal/stubs).
func (g *gpuBuilder) symbols(fb fatbin) {
	g.local("offload.wrapper.module", elf.STT_FILE, nil, 0, 0).Index = elf.SHN_ABS
	g.section(g.startup)
	for _, f := range g.code.Funcs {
		g.funcs = append(g.funcs, &elfobj.Symbol{Name: f.Name, Type: elf.STT_FUNC, Bind: elf.STB_LOCAL, Section: g.startup,
			Value: f.Offset, Size: f.Size, Other: f.Other})
	}
	// fatbin_reg, its labels, the wrapper and the handle, globals_reg, fatbin_unreg.
	g.o.Symbols = append(g.o.Symbols, g.funcs[0])
	for _, l := range g.code.Labels {
		g.local(l.Name, elf.STT_NOTYPE, g.startup, l.Offset, 0)
	}
	g.local(".fatbin_wrapper", elf.STT_OBJECT, g.segment, 0, 24)
	g.local("."+g.prefix+".binary_handle", elf.STT_OBJECT, g.bss, 0, 8)
	g.o.Symbols = append(g.o.Symbols, g.funcs[2], g.funcs[1])
	if g.rodata != nil {
		g.section(g.rodata)
	}
	if g.r.Wrapper.Dummy == release.DummyLocalUsed {
		g.local(offload.DummySymbol(g.r, g.kind), elf.STT_OBJECT, g.entrySec, 0, 0)
	}
	g.local(".fatbin_image", elf.STT_OBJECT, g.fatbin, 0, uint64(fb.Size))
	g.section(g.fatbin)
	g.section(g.segment)
	g.section(g.bss)
}

// target returns the symbol and addend a stub relocation refers to.
func (g *gpuBuilder) target(rel stubs.Reloc) (*elfobj.Symbol, int64, error) {
	switch rel.Target {
	case stubs.FatbinWrapper:
		return g.sym[g.segment], rel.Addend, nil
	case stubs.BinaryHandle:
		return g.sym[g.bss], rel.Addend, nil
	case stubs.JumpTable:
		return g.sym[g.rodata], rel.Addend, nil
	case stubs.TextStartup:
		return g.sym[g.startup], rel.Addend, nil
	case stubs.FatbinUnreg:
		return g.sym[g.startup], rel.Addend + int64(g.code.Funcs[1].Offset), nil
	}
	name, ok := g.code.Symbols[rel.Target]
	if !ok {
		return nil, 0, fmt.Errorf("wrap: stub relocation %s at %#x: %w", stubs.GPUTargetName(rel.Target), rel.Offset, goffload.ErrUnsupported)
	}
	s, ok := g.undef[rel.Target]
	if !ok {
		vis := elf.STV_DEFAULT
		if rel.Target == stubs.EntriesStart || rel.Target == stubs.EntriesStop {
			vis = elf.STV_HIDDEN
		}
		s = &elfobj.Symbol{Name: name, Bind: elf.STB_GLOBAL, Visibility: vis}
		g.undef[rel.Target] = s
	}
	return s, rel.Addend, nil
}

func (g *gpuBuilder) relocs() error {
	for _, rel := range g.code.Relocs {
		s, add, err := g.target(rel)
		if err != nil {
			return err
		}
		g.startup.Relocs = append(g.startup.Relocs, elfobj.Reloc{Offset: rel.Offset, Type: rel.Type, Symbol: s, Addend: add})
	}
	if jt := g.code.JumpTable; jt != nil {
		for _, rel := range jt.Relocs {
			s, add, err := g.target(rel)
			if err != nil {
				return err
			}
			g.rodata.Relocs = append(g.rodata.Relocs, elfobj.Reloc{Offset: rel.Offset, Type: rel.Type, Symbol: s, Addend: add})
		}
	}
	abs := elfobj.Abs64(g.o.Machine)
	g.segment.Relocs = []elfobj.Reloc{{Offset: 8, Type: abs, Symbol: g.sym[g.fatbin]}}
	g.initArray.Relocs = []elfobj.Reloc{{Type: abs, Symbol: g.sym[g.startup], Addend: int64(g.code.Funcs[0].Offset)}}
	return nil
}

// globalsInOrder appends the undefined symbols in the order of their first
// relocation in .text.startup, as LLVM writes them, and the hidden dummy of
// LLVM 17 and 18.
func (g *gpuBuilder) globalsInOrder() {
	seen := map[*elfobj.Symbol]bool{}
	for _, r := range g.startup.Relocs {
		if r.Symbol != nil && r.Symbol.Bind == elf.STB_GLOBAL && !seen[r.Symbol] {
			seen[r.Symbol] = true
			g.o.Symbols = append(g.o.Symbols, r.Symbol)
		}
	}
	if g.r.Wrapper.Dummy == release.DummyHiddenGlobal {
		g.o.Symbols = append(g.o.Symbols, &elfobj.Symbol{Name: offload.DummySymbol(g.r, g.kind), Type: elf.STT_OBJECT,
			Bind: elf.STB_GLOBAL, Visibility: elf.STV_HIDDEN, Section: g.entrySec})
	}
}

func (g *gpuBuilder) unwind() error {
	fi, err := ehframe.FrameInfoFor(g.o.Machine)
	if err != nil {
		return err
	}
	var fdes []ehframe.FDE
	for _, f := range g.code.Funcs {
		fdes = append(fdes, ehframe.FDE{Symbol: g.sym[g.startup], Addend: int64(f.Offset), Size: f.Size, CFI: f.CFI})
	}
	if g.ehFrame, err = ehframe.Build(g.o.Machine, g.o.Data, fi, fdes); err != nil {
		return err
	}
	g.o.Sections = append(g.o.Sections, g.ehFrame)
	return nil
}
