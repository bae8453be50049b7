package wrap

import (
	"debug/elf"
	"fmt"
	"io"
	"io/fs"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/internal/concat"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap/internal/stubs"
)

// Binary is one OffloadBinary to embed in a registration object: the bytes
// of Data, read each time the object is written (it is never held in
// memory; nil is an empty image). For LLVM 13 and 14, whose
// clang-offload-wrapper embeds device images as they are, it is a raw device
// image instead (see [RawImage]).
type Binary struct {
	Data *io.SectionReader
	// ImageOffset and ImageSize are the binary's first image, where a
	// __tgt_device_image points.
	ImageOffset, ImageSize uint64
	// Raw says that Data holds a device image itself, not an OffloadBinary:
	// what a release whose Wrapper is release.WrapperOffloadWrapper embeds.
	Raw bool
}

// check refuses a Binary that the object could not point into: the
// __tgt_device_image's bounds must lie inside the binary embedded.
func (b *Binary) check() error {
	if size := uint64(b.size()); b.ImageOffset > size || b.ImageSize > size-b.ImageOffset {
		return fmt.Errorf("image at %#x of %d bytes in a binary of %d: %w", b.ImageOffset, b.ImageSize, size, offloadbinary.ErrImageRange)
	}
	return nil
}

// size is the number of bytes of the binary.
func (b *Binary) size() int64 {
	if b.Data == nil {
		return 0
	}
	return b.Data.Size()
}

// FromBinary returns the OffloadBinary of the size bytes of r for embedding;
// a compressed one (version 3) inflated.
func FromBinary(r io.ReaderAt, size int64) (Binary, error) {
	b, err := offloadbinary.ReadBinary(r, size, nil) // v1 to v3: the caller reads as its release does
	if err != nil {
		return Binary{}, err
	}
	if b.InflatedSize != 0 && size-int64(b.Size) < offloadbinary.Alignment {
		// A compressed binary (its Size not padded to 8) is embedded
		// inflated, as the runtime reads it, so that ImageStart and
		// ImageEnd point at its image.
		in := b.Inflated()
		return FromBinary(in, in.Size())
	}
	if int64(b.Size) != size {
		return Binary{}, fmt.Errorf("wrap: %d bytes after the binary of %d bytes", size-int64(b.Size), b.Size)
	}
	if len(b.Images) == 0 {
		// Version 2 and later count their entries; LLVM main's reader gives
		// no OffloadBinary for a count of 0, so there is no image to register.
		return Binary{}, fmt.Errorf("wrap: a binary of version %d with no entries holds no image: %w", b.Version, goffload.ErrInvalid)
	}
	im := b.Images[0]
	bin := Binary{Data: io.NewSectionReader(r, 0, size), ImageOffset: im.ImageOffset, ImageSize: im.ImageSize}
	if err := bin.check(); err != nil {
		return Binary{}, fmt.Errorf("wrap: %w", err)
	}
	return bin, nil
}

// ReadBinaries returns the OffloadBinaries of data (one, or several back to
// back, as clang-offload-packager writes them) ready to embed, read as
// release rel's tools read them (nil: each as the release that made it). A
// compressed binary is embedded inflated, as the runtime reads it, so that
// its __tgt_device_image points at its image. Data that holds no binary is
// an error matching goffload.ErrInvalid.
func ReadBinaries(data *io.SectionReader, rel *release.Release) ([]Binary, error) {
	if data == nil {
		return nil, fmt.Errorf("wrap: no data: %w", fs.ErrInvalid)
	}
	var opt *offloadbinary.ReadOptions
	if rel != nil {
		opt = &offloadbinary.ReadOptions{Release: rel}
	}
	all, err := offloadbinary.ReadAll(data, data.Size(), opt)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("holds no offload binary: %w", goffload.ErrInvalid)
	}
	var bins []Binary
	for _, b := range all {
		in := b.Inflated()
		bin, err := FromBinary(in, in.Size())
		if err != nil {
			return nil, fmt.Errorf("binary at %#x: %w", b.Offset, err)
		}
		bins = append(bins, bin)
	}
	return bins, nil
}

// RawImage returns the linked device image of data (a device ELF shared
// object, as the driver's device link makes it) as clang-offload-wrapper of
// LLVM 13 and 14 embeds it: as it is, with no OffloadBinary around it.
func RawImage(data *io.SectionReader) Binary {
	b := Binary{Data: data, Raw: true}
	b.ImageSize = uint64(b.size())
	return b
}

// ReadRawImage returns the linked device image data as clang-offload-wrapper
// of LLVM 13 and 14 embeds it ([RawImage]), after checking that it is one:
// an empty file, or an OffloadBinary (the image of one is what those
// releases wrap: extract it first), is an error matching goffload.ErrInvalid.
func ReadRawImage(data *io.SectionReader) (Binary, error) {
	var head [4]byte
	n, _ := data.ReadAt(head[:], 0)
	switch {
	case data.Size() == 0:
		return Binary{}, fmt.Errorf("holds no device image: %w", goffload.ErrInvalid)
	case n == len(head) && head == offloadbinary.Magic:
		return Binary{}, fmt.Errorf("an offload binary, where LLVM 13 and 14 wrap the device image itself: %w", goffload.ErrInvalid)
	}
	return RawImage(data), nil
}

// FromImage returns the binary that clang-linker-wrapper makes of a linked
// device image data with metadata im (see offloadbinary.LinkedImage). The image is
// read from data each time the object is written. For a release whose
// wrapper embeds raw images (LLVM 13 and 14) it is RawImage(data), and im is
// not used.
func FromImage(r *release.Release, im offloadbinary.Image, data *io.SectionReader) (Binary, error) {
	if r.Wrapper.Form == release.WrapperOffloadWrapper {
		bin := RawImage(data)
		if err := bin.check(); err != nil {
			return Binary{}, fmt.Errorf("wrap: %w", err)
		}
		return bin, nil
	}
	rd, l, err := offloadbinary.BinaryReader(r, &im, data, data.Size())
	if err != nil {
		return Binary{}, fmt.Errorf("wrap: %w", err)
	}
	return Binary{Data: rd, ImageOffset: l.ImageOffset, ImageSize: l.ImageSize}, nil
}

// DefaultTriple is the host of a registration object whose Options name
// none.
const DefaultTriple = "x86_64-unknown-linux-gnu"

// Options choose the registration object. The zero value makes LLVM 22's
// (release.DefaultMajor) for an x86-64 Linux host.
type Options struct {
	// Release is the LLVM release whose wrapper to make (nil: release.Default()).
	Release *release.Release
	// Triple is the host: x86_64, aarch64, powerpc64le or riscv64 Linux
	// ("": DefaultTriple).
	Triple string
	// Suffix is appended to the names of the wrapper's symbols, as LLVM's
	// wrapOpenMPBinaries does for embedders other than clang-linker-wrapper.
	Suffix string
	// Relocatable puts the images in .llvm.offloading.relocatable, for a
	// relocatable link (LLVM 19 and later).
	Relocatable bool
}

// triple returns the host triple, DefaultTriple when none is given.
func (o Options) triple() string {
	if o.Triple == "" {
		return DefaultTriple
	}
	return o.Triple
}

// names of the wrapper's globals (docs/registration.md#openmp-module).
const (
	nameImage  = ".omp_offloading.device_image"
	nameImages = ".omp_offloading.device_images"
	nameDesc   = ".omp_offloading.descriptor"
	nameReg    = ".omp_offloading.descriptor_reg"
	nameUnreg  = ".omp_offloading.descriptor_unreg"
	imageSize  = offload.DeviceImageSize
	descSize   = offload.BinDescSize
	// The source file names of the modules of clang-linker-wrapper and of
	// clang-offload-wrapper.
	wrapperFile       = "offload.wrapper.module"
	legacyWrapperFile = "offload.wrapper.object"
)

// OpenMP returns the registration object that clang-linker-wrapper of the
// chosen release makes for the OpenMP device binaries bins on the host
// (docs/registration.md#openmp-module, docs/registration.md#openmp-object): the
// binaries in .llvm.offloading, one __tgt_device_image each in
// .omp_offloading.device_images, the __tgt_bin_desc, the entries section's
// __start_/__stop_ symbols and dummy, and the constructor that registers the
// descriptor with __tgt_register_lib (and unregisters it at exit), with the
// machine code, symbols and .eh_frame that LLVM's code generator gives them on
// that host. Two things differ on purpose: on riscv64 LLVM writes a soft-float
// object (e_flags 0) that no Linux linker accepts next to a double-float libc,
// and this one has the flags of the triple (RVC, double-float); and LLVM 15 and
// 16 describe the riscv64 frames with relocation pairs (R_RISCV_ADD32/SUB32,
// SET6/SUB6) between unnamed symbols, where this .eh_frame holds the values
// they resolve to, which is the same since the code is not relaxed.
//
// For a release whose Wrapper is release.WrapperOffloadWrapper (LLVM 13 and
// 14), bins are raw device images ([RawImage]) and the object is the one that
// clang-offload-wrapper and `clang -cc1 -emit-obj` make with the flags of that
// release's driver (docs/old-driver.md#legacy-wrapper-object): each image in
// .rodata, aligned to 16 when it is longer than 16 bytes, the module named
// offload.wrapper.object, .init_array.1 and .fini_array.1, the hidden
// __dummy.omp_offloading.entry, and .llvm_addrsig; LLVM 14 on x86-64, AArch64
// and ppc64le (its riscv64 object is compiled rv64gc, which this package does
// not write), LLVM 13 on x86-64, where its driver compiles the module static,
// with the tables in .rodata too. One thing differs: LLVM puts an image of 4,
// 8, 16 or 32 bytes, or one that is a C string (a NUL at the end and none
// before), in a mergeable section (.rodata.cstN, .rodata.str1.N); this package
// puts every image in .rodata. No device image, an ELF file, is either. Suffix
// and Relocatable are not for these releases.
func OpenMP(opt Options, bins []Binary) (*elfobj.Object, error) {
	r := opt.Release
	if r == nil {
		r = release.Default()
	}
	if len(bins) == 0 {
		return nil, fmt.Errorf("wrap: no device binary")
	}
	legacy := r.Wrapper.Form == release.WrapperOffloadWrapper
	for i, bin := range bins {
		if err := bin.check(); err != nil {
			return nil, fmt.Errorf("wrap: binary %d: %w", i, err)
		}
		if err := checkForm(r, bin); err != nil {
			return nil, fmt.Errorf("wrap: binary %d: %w", i, err)
		}
	}
	if opt.Relocatable && r.Wrapper.RelocatableSection == "" {
		return nil, fmt.Errorf("wrap: relocatable wrapper in %v: %w", r, goffload.ErrUnsupported)
	}
	if legacy && opt.Suffix != "" {
		return nil, fmt.Errorf("wrap: symbol suffix in %v (clang-offload-wrapper has none): %w", r, goffload.ErrUnsupported)
	}
	if MachOHost(opt.triple()) {
		return nil, fmt.Errorf("wrap: OpenMP for the Apple host %q: %w: LLVM main's wrapper puts the images in .llvm.offloading whatever the host, which is no Mach-O section (llc: \"mach-o section specifier requires a segment and section separated by a comma\"); its CUDA and HIP wrappers write Mach-O (GPUMachO)", opt.triple(), goffload.ErrUnsupported)
	}
	o, err := elfobj.ForTriple(opt.triple())
	if err != nil {
		return nil, err
	}
	code, err := stubs.OpenMPWith(o.Machine, stubs.Options{LLVM: r.Major, Atexit: r.Wrapper.UnregisterAtexit, Static: r.Wrapper.Static, Images: len(bins)})
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	if code.DescriptorOffset != uint64(imageSize*len(bins)) {
		// ppc64le from LLVM 20 merges the globals into one block.
		return nil, fmt.Errorf("wrap: %v on %v lays out .data.rel.ro by merging globals: %w", r, o.Machine, goffload.ErrUnsupported)
	}
	b := &builder{o: o, r: r, opt: opt, code: code, entries: offload.EntriesSection(r, offload.OffloadOpenMP), mapping: map[*elfobj.Section]bool{},
		legacy: legacy}
	b.style()
	return b.build(bins)
}

// checkForm refuses a binary of the other form than the release embeds: a
// raw image where clang-linker-wrapper embeds OffloadBinaries, an
// OffloadBinary where clang-offload-wrapper embeds raw images.
func checkForm(r *release.Release, bin Binary) error {
	if r.Wrapper.Form != release.WrapperOffloadWrapper {
		if bin.Raw {
			return fmt.Errorf("a raw device image, where %v embeds OffloadBinaries (see FromImage): %w", r, fs.ErrInvalid)
		}
		return nil
	}
	if !bin.Raw {
		return fmt.Errorf("an OffloadBinary, where %v embeds raw device images (see RawImage): %w", r, fs.ErrInvalid)
	}
	var head [4]byte
	if bin.Data == nil { // an empty image
		return nil
	}
	if n, _ := bin.Data.ReadAt(head[:], 0); n == len(head) && head == offloadbinary.Magic {
		return fmt.Errorf("an OffloadBinary (magic %x), where %v embeds the device image itself: extract it first: %w", head, r, goffload.ErrInvalid)
	}
	return nil
}

// builder assembles one wrapper object.
type builder struct {
	o       *elfobj.Object
	r       *release.Release
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
	// AArch64 in LLVM 14 to 16), or -1.
	mappingNumber int

	// legacy: clang-offload-wrapper's object (LLVM 13, 14): raw images in
	// .rodata, .llvm_addrsig.
	legacy bool
	// imageOffs are where the images are in their section. tables is the
	// section of device_images and the descriptor, at tablesOff:
	// .data.rel.ro at 0, or, in static code (LLVM 13), the images' .rodata
	// after them.
	imageOffs  []uint64
	tablesOff  uint64
	tables     *elfobj.Section
	imagesData *concat.ReaderAt
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
	b.layout(bins)
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
	b.addrsig()
	b.relocationSections()
	b.o.Sections = append(b.o.Sections, &elfobj.Section{Name: ".symtab", Type: elf.SHT_SYMTAB, Addralign: 8, Entsize: 24, Link: b.strtab})
	return b.o, nil
}

// layout places the images in their section: one after the other (the
// OffloadBinaries of clang-linker-wrapper are multiples of 8 bytes, aligned
// to 8), or as the code generator places clang-offload-wrapper's constants,
// each at its preferred alignment (16 for more than 16 bytes).
func (b *builder) layout(bins []Binary) {
	var off uint64
	for _, bin := range bins {
		if b.legacy {
			off = alignUp(off, constantAlign(b.o.Machine, uint64(bin.size())))
		}
		b.imageOffs = append(b.imageOffs, off)
		off += uint64(bin.size())
	}
	if b.r.Wrapper.Static {
		b.tablesOff = alignUp(off, 16) // [N x __tgt_device_image] is more than 16 bytes
	}
}

// constantAlign is the alignment that LLVM's DataLayout prefers for a global
// [size x i8] constant without an explicit one: 16 above 16 bytes, else the
// preferred alignment of i8 (32 bits on AArch64: "i8:8:32").
func constantAlign(m elf.Machine, size uint64) uint64 {
	switch {
	case size > 16:
		return 16
	case m == elf.EM_AARCH64:
		return 4
	}
	return 1
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

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
	b.entrySec = &elfobj.Section{Name: b.entries, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | b.r.EntriesFlags(), Addralign: 8, Data: []byte{}}
	name, typ, align := ".llvm.offloading", elfobj.SHT_LLVM_OFFLOADING, uint64(8)
	if b.opt.Relocatable {
		name = b.r.Wrapper.RelocatableSection
	}
	b.imagesData = &concat.ReaderAt{}
	for i, bin := range bins {
		b.imagesData.AddZeros(int64(b.imageOffs[i]) - b.imagesData.Size())
		b.imagesData.Add(bin.Data, 0, bin.size())
	}
	if b.legacy {
		name, typ, align = ".rodata", elf.SHT_PROGBITS, 1
		for _, bin := range bins {
			align = max(align, constantAlign(b.o.Machine, uint64(bin.size())))
		}
		if b.r.Wrapper.Static {
			align = 16 // the tables' alignment
		}
	}
	b.images = &elfobj.Section{Name: name, Type: typ, Flags: elf.SHF_ALLOC, Addralign: align,
		Reader: b.imagesData, Size: b.imagesData.Size()}
	b.o.Sections = append(b.o.Sections, b.strtab, b.text, b.startup, b.entrySec, b.images)
	b.tables = b.images
	if !b.r.Wrapper.Static {
		b.dataRelRo = &elfobj.Section{Name: ".data.rel.ro", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 16}
		b.tables = b.dataRelRo
		b.o.Sections = append(b.o.Sections, b.dataRelRo)
	}
	array := func(name string, typ elf.SectionType) *elfobj.Section {
		s := &elfobj.Section{Name: fmt.Sprintf("%s.%d", name, b.r.Wrapper.CtorPriority), Type: typ, Flags: elf.SHF_ALLOC | elf.SHF_WRITE,
			Addralign: 8, Data: make([]byte, 8)}
		b.arrays = append(b.arrays, s)
		return s
	}
	array(".init_array", elf.SHT_INIT_ARRAY)
	if !b.r.Wrapper.UnregisterAtexit {
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
	file := wrapperFile
	if b.legacy {
		file = legacyWrapperFile
	}
	b.local(file, elf.STT_FILE, nil, 0, 0).Index = elf.SHN_ABS
	b.symStartup = b.section(b.startup)
	descOff := b.tablesOff + uint64(imageSize*len(bins))
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
			b.desc = b.local(nameDesc+b.opt.Suffix, elf.STT_OBJECT, b.tables, descOff, descSize)
		}
	}
	if b.r.Wrapper.Dummy == release.DummyLocalUsed {
		b.local(offload.DummySymbol(b.r, offload.OffloadOpenMP), elf.STT_OBJECT, b.entrySec, 0, 0)
	}
	for i, bin := range bins {
		name := nameImage + b.opt.Suffix
		if i > 0 {
			name += fmt.Sprintf(".%d", i)
		}
		b.imageSyms = append(b.imageSyms, b.local(name, elf.STT_OBJECT, b.images, b.imageOffs[i], uint64(bin.size())))
		if i == 0 {
			b.symImages = b.section(b.images)
			b.mapData(b.images)
		}
	}
	b.devImages = b.local(nameImages+b.opt.Suffix, elf.STT_OBJECT, b.tables, b.tablesOff, uint64(imageSize*len(bins)))
	if b.tables == b.images {
		b.symData = b.symImages
	} else {
		b.symData = b.section(b.dataRelRo)
		b.mapData(b.dataRelRo)
	}
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
	if b.r.Wrapper.UnregisterAtexit {
		b.atexit = b.undefined("atexit", elf.STV_DEFAULT)
	}
	b.unregLib = b.undefined("__tgt_unregister_lib", elf.STV_DEFAULT)
	b.start = b.undefined("__start_"+b.entries, elf.STV_HIDDEN)
	b.stop = b.undefined("__stop_"+b.entries, elf.STV_HIDDEN)
	if b.r.Wrapper.Dummy == release.DummyHiddenGlobal {
		b.o.Symbols = append(b.o.Symbols, &elfobj.Symbol{Name: offload.DummySymbol(b.r, offload.OffloadOpenMP), Type: elf.STT_OBJECT,
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

// data fills .data.rel.ro, the device images then the descriptor
// (docs/registration.md#openmp-object), and the relocations of the data and the
// code.
func (b *builder) data(bins []Binary) error {
	order := b.o.ByteOrder()
	n := len(bins)
	base, descOff := b.tablesOff, b.tablesOff+uint64(imageSize*n)
	data := make([]byte, imageSize*n+descSize)
	order.PutUint32(data[imageSize*n:], uint32(n))
	abs := elfobj.Abs64(b.o.Machine)
	var relocs []elfobj.Reloc
	for i, bin := range bins {
		start, end := b.bounds(b.imageOffs[i], bin)
		at := base + uint64(i*imageSize)
		ss, sa := b.ref(b.symImages, b.imageSyms[i], start)
		es, ea := b.ref(b.symImages, b.imageSyms[i], end)
		relocs = append(relocs,
			elfobj.Reloc{Offset: at + offload.DeviceImageStartOffset, Type: abs, Symbol: ss, Addend: sa},
			elfobj.Reloc{Offset: at + offload.DeviceImageEndOffset, Type: abs, Symbol: es, Addend: ea},
			elfobj.Reloc{Offset: at + offload.DeviceImageEntriesBeginOffset, Type: abs, Symbol: b.start},
			elfobj.Reloc{Offset: at + offload.DeviceImageEntriesEndOffset, Type: abs, Symbol: b.stop})
	}
	ds, da := b.ref(b.symData, b.devImages, base)
	relocs = append(relocs,
		elfobj.Reloc{Offset: descOff + offload.BinDescDeviceImagesOffset, Type: abs, Symbol: ds, Addend: da},
		elfobj.Reloc{Offset: descOff + offload.BinDescHostEntriesBeginOffset, Type: abs, Symbol: b.start},
		elfobj.Reloc{Offset: descOff + offload.BinDescHostEntriesEndOffset, Type: abs, Symbol: b.stop})
	b.tables.Relocs = append(b.tables.Relocs, relocs...)
	if b.tables == b.dataRelRo {
		b.dataRelRo.Data = data
	} else {
		// After the images in .rodata (static code).
		b.imagesData.AddZeros(int64(base) - b.imagesData.Size())
		b.imagesData.AddBytes(data)
		b.images.Size = b.imagesData.Size()
	}
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
			return fmt.Errorf("wrap: stub relocation %v at %#x has no symbol: %w", rel.Target, rel.Offset, goffload.ErrUnsupported)
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
	fi, err := ehframe.FrameInfoFor(b.o.Machine)
	if err != nil {
		return err
	}
	var fdes []ehframe.FDE
	for i, f := range b.code.Funcs {
		sym, add := b.symStartup, int64(f.Offset)
		if sym == nil {
			if sym = b.labels[labelKey(".L0 ", f.Offset)]; sym == nil {
				sym, add = b.funcs[i], 0
			} else {
				add = 0
			}
		}
		fdes = append(fdes, ehframe.FDE{Symbol: sym, Addend: add, Size: f.Size, CFI: f.CFI})
	}
	b.ehFrame, err = ehframe.Build(b.o.Machine, b.o.Data, fi, fdes)
	if err != nil {
		return err
	}
	b.o.Sections = append(b.o.Sections, b.ehFrame)
	return nil
}

// addrsig adds the .llvm_addrsig section that clang -cc1 writes for the
// module of clang-offload-wrapper (the driver passes -faddrsig): the
// symbols whose address is significant, in module order (functions, then
// variables): reg, __tgt_register_lib, unreg, __tgt_unregister_lib, the
// entries bounds and the descriptor; the unnamed_addr images and
// device_images and the unused dummy are not.
func (b *builder) addrsig() {
	if !b.legacy {
		return
	}
	b.o.Sections = append(b.o.Sections, &elfobj.Section{Name: ".llvm_addrsig", Type: elfobj.SHT_LLVM_ADDRSIG, Flags: elfobj.SHF_EXCLUDE, Addralign: 1,
		Addrsig: []*elfobj.Symbol{b.funcs[0], b.regLib, b.funcs[1], b.unregLib, b.start, b.stop, b.desc}})
}

// relocationSections adds, where the code generator writes relocation
// sections without SHF_INFO_LINK (LLVM 13), each one after the section it
// applies to; otherwise elfobj makes them, with the flag.
func (b *builder) relocationSections() {
	if b.code.InfoLink {
		return
	}
	var out []*elfobj.Section
	for _, s := range b.o.Sections {
		out = append(out, s)
		if len(s.Relocs) > 0 {
			out = append(out, &elfobj.Section{Name: ".rela" + s.Name, Type: elf.SHT_RELA, Addralign: 8, Entsize: 24, Target: s})
		}
	}
	b.o.Sections = out
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
// the images section, by the release's rule (docs/registration.md#image-bounds,
// docs/releases.md#release-table).
func (b *builder) bounds(off uint64, bin Binary) (start, end uint64) {
	at := func(rule release.ImageBound) uint64 {
		switch rule {
		case release.BoundBinaryStart:
			return off
		case release.BoundBinaryEnd:
			return off + uint64(bin.size())
		case release.BoundImageStart:
			return off + bin.ImageOffset
		}
		return off + bin.ImageOffset + bin.ImageSize
	}
	return at(b.r.Wrapper.ImageStart), at(b.r.Wrapper.ImageEnd)
}
