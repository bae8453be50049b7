package wrap

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/concat"
	"github.com/goffload/goffload/internal/stubs"
	"github.com/goffload/goffload/offload"
)

// Binary is one OffloadBinary to embed in a registration object: the Size
// bytes of R from offset 0, read each time the object is written (it is never
// held in memory).
type Binary struct {
	R    io.ReaderAt
	Size int64
	// ImageOffset and ImageSize are the binary's first image, where a
	// __tgt_device_image points.
	ImageOffset, ImageSize uint64
}

// check refuses a Binary that the object could not point into: the
// __tgt_device_image's bounds must lie inside the binary embedded.
func (b *Binary) check() error {
	switch {
	case b.Size < 0:
		return fmt.Errorf("negative size %d", b.Size)
	case b.R == nil && b.Size > 0:
		return fmt.Errorf("%d bytes and no reader", b.Size)
	case b.ImageOffset > uint64(b.Size) || b.ImageSize > uint64(b.Size)-b.ImageOffset:
		return fmt.Errorf("image at %#x of %d bytes in a binary of %d: %w", b.ImageOffset, b.ImageSize, b.Size, offload.ErrImageRange)
	}
	return nil
}

// FromBinary returns the OffloadBinary of the size bytes of r for embedding.
func FromBinary(r io.ReaderAt, size int64) (Binary, error) {
	b, err := offload.ReadBinary(r, size, &offload.ReadOptions{MaxVersion: 1})
	if err != nil {
		return Binary{}, err
	}
	if int64(b.Size) != size {
		return Binary{}, fmt.Errorf("wrap: %d bytes after the binary of %d bytes", size-int64(b.Size), b.Size)
	}
	im := b.Images[0]
	bin := Binary{R: r, Size: size, ImageOffset: im.ImageOffset, ImageSize: im.ImageSize}
	if err := bin.check(); err != nil {
		return Binary{}, fmt.Errorf("wrap: %w", err)
	}
	return bin, nil
}

// FromImage returns the binary that clang-linker-wrapper makes of a linked
// device image (the size bytes of data) with metadata im (see
// offload.LinkedImage). The image is read from data each time the object is
// written.
func FromImage(r *offload.Release, im offload.Image, data io.ReaderAt, size int64) (Binary, error) {
	rd, l, err := offload.BinaryReader(r, &im, data, size)
	if err != nil {
		return Binary{}, fmt.Errorf("wrap: %w", err)
	}
	return Binary{R: rd, Size: int64(l.Size), ImageOffset: l.ImageOffset, ImageSize: l.ImageSize}, nil
}

// Options choose the registration object.
type Options struct {
	// Release is the LLVM release whose wrapper to make (nil: offload.Default()).
	Release *offload.Release
	// Triple is the host: x86_64, aarch64, powerpc64le or riscv64 Linux.
	Triple string
	// Suffix is appended to the names of the wrapper's symbols, as LLVM's
	// wrapOpenMPBinaries does for embedders other than clang-linker-wrapper.
	Suffix string
	// Relocatable puts the images in .llvm.offloading.relocatable, for a
	// relocatable link (LLVM 19 and later).
	Relocatable bool
}

// ErrUnsupported: the release, machine or object format cannot make the
// object asked for. It is errors.ErrUnsupported, as are elfobj.ErrUnsupported
// (a triple whose objects are not ELF) and the errors of the machine code
// for a machine or release without it, which this package passes on.
var ErrUnsupported = errors.ErrUnsupported

// names of the wrapper's globals (spec §3.1).
const (
	nameImage   = ".omp_offloading.device_image"
	nameImages  = ".omp_offloading.device_images"
	nameDesc    = ".omp_offloading.descriptor"
	nameReg     = ".omp_offloading.descriptor_reg"
	nameUnreg   = ".omp_offloading.descriptor_unreg"
	imageSize   = offload.DeviceImageSize
	descSize    = offload.BinDescSize
	wrapperFile = "offload.wrapper.module"
)

// OpenMP returns the registration object that clang-linker-wrapper of the
// chosen release makes for the OpenMP device binaries bins on the host (spec
// §3.1, §3.2): the binaries in .llvm.offloading, one __tgt_device_image each in
// .omp_offloading.device_images, the __tgt_bin_desc, the entries section's
// __start_/__stop_ symbols and dummy, and the constructor that registers the
// descriptor with __tgt_register_lib (and unregisters it at exit), with the
// machine code, symbols and .eh_frame that LLVM's code generator gives them on
// that host. Two things differ on purpose: on riscv64 LLVM writes a
// soft-float object (e_flags 0) that no Linux linker accepts next to a
// double-float libc, and this one has the flags of the triple (RVC,
// double-float); and LLVM 15 and 16 describe the riscv64 frames with
// relocation pairs (R_RISCV_ADD32/SUB32, SET6/SUB6) between unnamed symbols,
// where this .eh_frame holds the values they resolve to, which is the same
// since the code is not relaxed.
func OpenMP(opt Options, bins []Binary) (*elfobj.Object, error) {
	r := opt.Release
	if r == nil {
		r = offload.Default()
	}
	if len(bins) == 0 {
		return nil, fmt.Errorf("wrap: no device binary")
	}
	for i, bin := range bins {
		if err := bin.check(); err != nil {
			return nil, fmt.Errorf("wrap: binary %d: %w", i, err)
		}
	}
	if opt.Relocatable && r.RelocatableSection == "" {
		return nil, fmt.Errorf("wrap: relocatable wrapper in %v: %w", r, ErrUnsupported)
	}
	o, err := elfobj.ForTriple(opt.Triple)
	if err != nil {
		return nil, err
	}
	code, err := stubs.OpenMPWith(o.Machine, stubs.Options{LLVM: r.Major, Atexit: r.UnregisterAtexit, Images: len(bins)})
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	if code.DescriptorOffset != uint64(imageSize*len(bins)) {
		// ppc64le from LLVM 20 merges the globals into one block.
		return nil, fmt.Errorf("wrap: %v on %v lays out .data.rel.ro by merging globals: %w", r, o.Machine, ErrUnsupported)
	}
	b := &builder{o: o, r: r, opt: opt, code: code, entries: r.EntriesSection(offload.OffloadOpenMP), mapping: map[*elfobj.Section]bool{}}
	b.style()
	return b.build(bins)
}

// builder assembles one wrapper object.
type builder struct {
	o       *elfobj.Object
	r       *offload.Release
	opt     Options
	code    *stubs.Code
	entries string

	// What the machine's code generator does around the code (see package
	// internal/stubs): section symbols or the objects' own symbols as
	// relocation targets, and mapping symbols ($x, $d) for data sections.
	sectionSymbols, dataMapping bool

	strtab, text, startup, entrySec, images, dataRelRo *elfobj.Section
	arrays                                             []*elfobj.Section // .init_array.N (and .fini_array.N)
	attributes, ehFrame                                *elfobj.Section
	symStartup, symImages, symData, desc, devImages    *elfobj.Symbol
	imageSyms                                          []*elfobj.Symbol
	start, stop, regLib, unregLib, atexit, toc         *elfobj.Symbol
	funcs                                              []*elfobj.Symbol
	labels                                             map[string]*elfobj.Symbol // by name@offset
	mapping                                            map[*elfobj.Section]bool
	// mappingNumber is the number of the next data mapping symbol when the
	// code generator numbers them through the object ($x.0, $d.1, $d.2, ...:
	// AArch64 in LLVM 15 and 16), or -1.
	mappingNumber int
}

func (b *builder) style() {
	b.sectionSymbols = b.o.Machine != elf.EM_RISCV
	b.mappingNumber = -1
	for _, l := range b.code.Labels {
		switch l.Name {
		case "$x":
			b.dataMapping = true
		case "$x.0":
			b.dataMapping, b.mappingNumber = true, 1
		}
	}
}

func (b *builder) build(bins []Binary) (*elfobj.Object, error) {
	b.sections(bins)
	b.symbols(bins)
	if err := b.data(bins); err != nil {
		return nil, err
	}
	b.ctors()
	if err := b.unwind(); err != nil {
		return nil, err
	}
	b.mappingSymbols()
	b.o.Sections = append(b.o.Sections, &elfobj.Section{Name: ".symtab", Type: elf.SHT_SYMTAB, Addralign: 8, Entsize: 24, Link: b.strtab})
	return b.o, nil
}

// sections lays out the sections in LLVM's order: .strtab (the names of
// sections and symbols alike), .text, .text.startup, the entries section, the
// images, .data.rel.ro, the constructor arrays, .note.GNU-stack,
// .riscv.attributes, .eh_frame, .symtab.
func (b *builder) sections(bins []Binary) {
	b.strtab = &elfobj.Section{Name: ".strtab", Type: elf.SHT_STRTAB, Addralign: 1}
	b.o.SectionNames = b.strtab
	b.text = &elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 4, Data: []byte{}}
	b.startup = &elfobj.Section{Name: ".text.startup", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR,
		Addralign: b.code.Align, Data: b.code.Text}
	b.entrySec = &elfobj.Section{Name: b.entries, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addralign: 8, Data: []byte{}}
	name := ".llvm.offloading"
	if b.opt.Relocatable {
		name = b.r.RelocatableSection
	}
	images := &concat.ReaderAt{}
	for _, bin := range bins {
		images.Add(bin.R, 0, bin.Size)
	}
	b.images = &elfobj.Section{Name: name, Type: elfobj.SHT_LLVM_OFFLOADING, Flags: elf.SHF_ALLOC, Addralign: 8,
		Reader: images, Size: images.Size()}
	b.dataRelRo = &elfobj.Section{Name: ".data.rel.ro", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 16}
	b.o.Sections = append(b.o.Sections, b.strtab, b.text, b.startup, b.entrySec, b.images, b.dataRelRo)
	array := func(name string, typ elf.SectionType) *elfobj.Section {
		s := &elfobj.Section{Name: fmt.Sprintf("%s.%d", name, b.r.CtorPriority), Type: typ, Flags: elf.SHF_ALLOC | elf.SHF_WRITE,
			Addralign: 8, Data: make([]byte, 8)}
		b.arrays = append(b.arrays, s)
		return s
	}
	array(".init_array", elf.SHT_INIT_ARRAY)
	if !b.r.UnregisterAtexit {
		array(".fini_array", elf.SHT_FINI_ARRAY)
	}
	b.o.Sections = append(b.o.Sections, b.arrays...)
	b.o.Sections = append(b.o.Sections, &elfobj.Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS, Addralign: 1})
	if b.code.Attributes != nil {
		b.attributes = &elfobj.Section{Name: ".riscv.attributes", Type: shtRISCVAttributes, Addralign: 1, Data: b.code.Attributes}
		b.o.Sections = append(b.o.Sections, b.attributes)
	}
}

// shtRISCVAttributes is SHT_RISCV_ATTRIBUTES.
const shtRISCVAttributes elf.SectionType = 0x70000003

func (b *builder) local(name string, typ elf.SymType, sec *elfobj.Section, value, size uint64) *elfobj.Symbol {
	s := &elfobj.Symbol{Name: name, Type: typ, Bind: elf.STB_LOCAL, Section: sec, Value: value, Size: size}
	b.o.Symbols = append(b.o.Symbols, s)
	return s
}

// section returns the section symbol of sec, if the machine's code generator
// uses them.
func (b *builder) section(sec *elfobj.Section) *elfobj.Symbol {
	if !b.sectionSymbols {
		return nil
	}
	return b.local("", elf.STT_SECTION, sec, 0, 0)
}

// mapData adds the `$d` mapping symbol of sec where the machine uses them.
func (b *builder) mapData(sec *elfobj.Section) {
	if b.dataMapping && !b.mapping[sec] {
		b.mapping[sec] = true
		name := "$d"
		if b.mappingNumber >= 0 {
			name = fmt.Sprintf("$d.%d", b.mappingNumber)
			b.mappingNumber++
		}
		b.local(name, elf.STT_NOTYPE, sec, 0, 0)
	}
}

func (b *builder) undefined(name string, vis elf.SymVis) *elfobj.Symbol {
	s := &elfobj.Symbol{Name: name, Bind: elf.STB_GLOBAL, Visibility: vis}
	b.o.Symbols = append(b.o.Symbols, s)
	return s
}

// symbols makes the symbols in the order LLVM writes them (see package
// internal/stubs): the file, the functions each followed by its labels (and
// reg by the descriptor), the dummy, the images, the device images, each
// section symbol after the first symbol of its section, then the globals.
func (b *builder) symbols(bins []Binary) {
	b.local(wrapperFile, elf.STT_FILE, nil, 0, 0).Index = elf.SHN_ABS
	b.symStartup = b.section(b.startup)
	descOff := uint64(imageSize * len(bins))
	b.labels = map[string]*elfobj.Symbol{}
	for i, f := range b.code.Funcs {
		s := b.local(f.Name+b.opt.Suffix, elf.STT_FUNC, b.startup, f.Offset, f.Size)
		s.Other = f.Other
		b.funcs = append(b.funcs, s)
		for _, l := range b.code.Labels {
			if l.Func == i {
				b.labels[labelKey(l.Name, l.Offset)] = b.local(l.Name, elf.STT_NOTYPE, b.startup, l.Offset, 0)
			}
		}
		if i == 0 {
			b.desc = b.local(nameDesc+b.opt.Suffix, elf.STT_OBJECT, b.dataRelRo, descOff, descSize)
		}
	}
	if b.r.Dummy == offload.DummyLocalUsed {
		b.local(b.r.DummySymbol(offload.OffloadOpenMP), elf.STT_OBJECT, b.entrySec, 0, 0)
	}
	var off uint64
	for i, bin := range bins {
		name := nameImage + b.opt.Suffix
		if i > 0 {
			name += fmt.Sprintf(".%d", i)
		}
		b.imageSyms = append(b.imageSyms, b.local(name, elf.STT_OBJECT, b.images, off, uint64(bin.Size)))
		off += uint64(bin.Size)
		if i == 0 {
			b.symImages = b.section(b.images)
			b.mapData(b.images)
		}
	}
	b.devImages = b.local(nameImages+b.opt.Suffix, elf.STT_OBJECT, b.dataRelRo, 0, descOff)
	b.symData = b.section(b.dataRelRo)
	b.mapData(b.dataRelRo)
	b.globals()
}

func labelKey(name string, off uint64) string { return fmt.Sprintf("%s@%d", name, off) }

// globals makes the undefined functions and the entries bounds, in LLVM's
// order, and the hidden dummy of LLVM 15 to 18.
func (b *builder) globals() {
	for _, rel := range b.code.Relocs {
		if rel.Target == stubs.TOC && b.toc == nil {
			b.toc = b.undefined(".TOC.", elf.STV_DEFAULT)
		}
	}
	b.regLib = b.undefined("__tgt_register_lib", elf.STV_DEFAULT)
	if b.r.UnregisterAtexit {
		b.atexit = b.undefined("atexit", elf.STV_DEFAULT)
	}
	b.unregLib = b.undefined("__tgt_unregister_lib", elf.STV_DEFAULT)
	b.start = b.undefined("__start_"+b.entries, elf.STV_HIDDEN)
	b.stop = b.undefined("__stop_"+b.entries, elf.STV_HIDDEN)
	if b.r.Dummy == offload.DummyHiddenGlobal {
		b.o.Symbols = append(b.o.Symbols, &elfobj.Symbol{Name: b.r.DummySymbol(offload.OffloadOpenMP), Type: elf.STT_OBJECT,
			Bind: elf.STB_GLOBAL, Visibility: elf.STV_HIDDEN, Section: b.entrySec})
	}
}

// ref returns the relocation target for a place in a section: the section
// symbol plus the offset, or the object's own symbol plus the offset from it.
func (b *builder) ref(secSym, own *elfobj.Symbol, off uint64) (*elfobj.Symbol, int64) {
	if secSym != nil {
		return secSym, int64(off)
	}
	return own, int64(off - own.Value)
}

// data fills .data.rel.ro, the device images then the descriptor (spec
// §3.2), and the relocations of the data and the code.
func (b *builder) data(bins []Binary) error {
	order := b.o.ByteOrder()
	n := len(bins)
	descOff := uint64(imageSize * n)
	b.dataRelRo.Data = make([]byte, descOff+descSize)
	order.PutUint32(b.dataRelRo.Data[descOff:], uint32(n))
	abs := elfobj.Abs64(b.o.Machine)
	var off uint64
	for i, bin := range bins {
		start, end := b.bounds(off, bin)
		base := uint64(i * imageSize)
		ss, sa := b.ref(b.symImages, b.imageSyms[i], start)
		es, ea := b.ref(b.symImages, b.imageSyms[i], end)
		b.dataRelRo.Relocs = append(b.dataRelRo.Relocs,
			elfobj.Reloc{Offset: base + offload.DeviceImageStartOffset, Type: abs, Symbol: ss, Addend: sa},
			elfobj.Reloc{Offset: base + offload.DeviceImageEndOffset, Type: abs, Symbol: es, Addend: ea},
			elfobj.Reloc{Offset: base + offload.DeviceImageEntriesBeginOffset, Type: abs, Symbol: b.start},
			elfobj.Reloc{Offset: base + offload.DeviceImageEntriesEndOffset, Type: abs, Symbol: b.stop})
		off += uint64(bin.Size)
	}
	ds, da := b.ref(b.symData, b.devImages, 0)
	b.dataRelRo.Relocs = append(b.dataRelRo.Relocs,
		elfobj.Reloc{Offset: descOff + offload.BinDescDeviceImagesOffset, Type: abs, Symbol: ds, Addend: da},
		elfobj.Reloc{Offset: descOff + offload.BinDescHostEntriesBeginOffset, Type: abs, Symbol: b.start},
		elfobj.Reloc{Offset: descOff + offload.BinDescHostEntriesEndOffset, Type: abs, Symbol: b.stop})
	return b.codeRelocs(descOff)
}

// codeRelocs turns the stubs' relocations into the object's.
func (b *builder) codeRelocs(descOff uint64) error {
	for _, rel := range b.code.Relocs {
		r := elfobj.Reloc{Offset: rel.Offset, Type: rel.Type, Addend: rel.Addend}
		switch rel.Target {
		case stubs.Descriptor:
			if b.code.DescriptorViaSection {
				r.Symbol, r.Addend = b.symData, rel.Addend+int64(descOff)
			} else {
				r.Symbol = b.desc
			}
		case stubs.RegisterLib:
			r.Symbol = b.regLib
		case stubs.UnregisterLib:
			r.Symbol = b.unregLib
		case stubs.Atexit:
			r.Symbol = b.atexit
		case stubs.TOC:
			r.Symbol = b.toc
		case stubs.Unreg:
			r.Symbol = b.funcs[1]
			if b.code.UnregViaSection {
				r.Symbol, r.Addend = b.symStartup, rel.Addend+int64(b.code.Funcs[1].Offset)
			}
		case stubs.LocalLabel:
			r.Symbol = b.labels[labelKey(rel.Label, rel.LabelOffset)]
		}
		if r.Symbol == nil {
			return fmt.Errorf("wrap: stub relocation %v at %#x has no symbol: %w", rel.Target, rel.Offset, ErrUnsupported)
		}
		b.startup.Relocs = append(b.startup.Relocs, r)
	}
	return nil
}

// ctors fills the constructor array (and the destructor's up to LLVM 18).
func (b *builder) ctors() {
	abs := elfobj.Abs64(b.o.Machine)
	for i, s := range b.arrays {
		sym, add := b.ref(b.symStartup, b.funcs[i], b.code.Funcs[i].Offset)
		s.Relocs = []elfobj.Reloc{{Type: abs, Symbol: sym, Addend: add}}
	}
}

// unwind describes the two functions in .eh_frame, as LLVM does: against the
// section symbol of .text.startup, or the `.L0 ` label at each function.
func (b *builder) unwind() error {
	fi, err := elfobj.FrameInfoFor(b.o.Machine)
	if err != nil {
		return err
	}
	var fdes []elfobj.FDE
	for i, f := range b.code.Funcs {
		sym, add := b.symStartup, int64(f.Offset)
		if sym == nil {
			if sym = b.labels[labelKey(".L0 ", f.Offset)]; sym == nil {
				sym, add = b.funcs[i], 0
			} else {
				add = 0
			}
		}
		fdes = append(fdes, elfobj.FDE{Symbol: sym, Addend: add, Size: f.Size, CFI: f.CFI})
	}
	b.ehFrame, err = elfobj.BuildEHFrame(b.o.Machine, b.o.Data, fi, fdes)
	if err != nil {
		return err
	}
	b.o.Sections = append(b.o.Sections, b.ehFrame)
	return nil
}

// mappingSymbols adds the `$d` symbols of the sections after .data.rel.ro.
func (b *builder) mappingSymbols() {
	for _, s := range b.arrays {
		b.mapData(s)
	}
	if b.attributes != nil {
		b.mapData(b.attributes)
	}
	b.mapData(b.ehFrame)
}

// bounds returns where ImageStart and ImageEnd point for the binary at off of
// the images section, by the release's rule (spec §3.1, §7).
func (b *builder) bounds(off uint64, bin Binary) (start, end uint64) {
	at := func(rule offload.ImageBound) uint64 {
		switch rule {
		case offload.BoundBinaryStart:
			return off
		case offload.BoundBinaryEnd:
			return off + uint64(bin.Size)
		case offload.BoundImageStart:
			return off + bin.ImageOffset
		}
		return off + bin.ImageOffset + bin.ImageSize
	}
	return at(b.r.ImageStart), at(b.r.ImageEnd)
}
