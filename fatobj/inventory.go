package fatobj

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// Object is a file, or a member of an archive, that can hold device code,
// with the device code it holds.
type Object struct {
	// Name is the file's name, or "lib.a(k.o)" for a member (nested:
	// "lib.a(inner.a)(k.o)").
	Name string
	// Member is the member's own name ("k.o"), "" for a file.
	Member string
	Format Format
	// Offset is where the object's bytes start in the file that was opened
	// (0 for the file itself and for the file of a thin member).
	Offset int64
	// COFF is the COFF file of a FormatCOFF object, else nil.
	COFF *coffobj.File
	// MachO is the Mach-O file of a FormatMachO object, else nil.
	MachO *machoobj.File
	// ELF is the ELF file of a FormatELF object, else nil (a FormatBitcode
	// object's symbols are [Object.BitcodeSymbols]).
	ELF *elfobj.File
	// Release is the release the object was read as: the one asked for, or
	// else the newest verified release among those that made it (see
	// [Object.Made]), [release.DefaultMajor] where it is one of them.
	Release *release.Release

	// Binaries are the OffloadBinaries of the object: those of its
	// SHT_LLVM_OFFLOADING sections in section order, those of a raw
	// binary file, or those embedded in a bitcode module, in the order of
	// its llvm.embedded.objects.
	Binaries []*Binary
	// Bundles are the clang offload bundles of the object: those of its
	// .hip_fatbin section (one after the other in a linked program), or
	// the bundle file itself.
	Bundles []*Bundle
	// Bundled are the sections of a bundled object
	// (__CLANG_OFFLOAD_BUNDLE__<ID>), the host's entry included.
	Bundled []*BundledSection
	// Images is every device image the object holds, in the order above
	// (see [Source]).
	Images []*Image
	// Entries are the offload entries of an ELF object, section by section.
	Entries []entries.FileEntry

	r         *io.SectionReader
	depth     int   // 0 for the file, 1 for a member, 2 for a member of a nested archive, ...
	file      *File // the file it is in
	origin    *entries.Origin
	originErr error
	symbols   []bitcode.Symbol
	symErr    error
	symRead   bool
	budget    *offloadbinary.Budget // of the reads of its binaries, nested ones too
}

// BitcodeSymbols returns the symbols of the IR symbol table of a
// FormatBitcode object, read on the first call, as llvm-ar and the
// linker's archive member resolution read them ([bitcode.Symbols]); nil
// for an object of another format.
func (o *Object) BitcodeSymbols() ([]bitcode.Symbol, error) {
	if o.Format != FormatBitcode {
		return nil, nil
	}
	if !o.symRead {
		o.symRead = true
		o.symbols, o.symErr = bitcode.Symbols(o.r, o.r.Size())
		if o.symErr != nil {
			o.symErr = fmt.Errorf("%s: %w", o.Name, ferr.Rebase(o.symErr, o.Offset))
		}
	}
	return o.symbols, o.symErr
}

// Open returns a reader of the object's bytes.
func (o *Object) Open() *io.SectionReader { return io.NewSectionReader(o.r, 0, o.r.Size()) }

// Origin returns what the object shows of the LLVM releases that made it,
// for an ELF object (see [entries.Mixing]); nil for another format.
func (o *Object) Origin() (*entries.Origin, error) {
	if o.ELF == nil {
		return nil, nil
	}
	if o.origin == nil && o.originErr == nil {
		o.origin, o.originErr = entries.Mixing(o.ELF, release.Default())
		if o.originErr != nil {
			o.originErr = fmt.Errorf("%s: %w", o.Name, o.originErr)
		}
	}
	return o.origin, o.originErr
}

// Made returns the releases whose formats are all the object holds: every
// release when nothing in it differs between releases, none when it mixes
// releases.
func (o *Object) Made() (release.Set, error) {
	made := release.Known()
	if o.ELF != nil && hasOffloading(o.ELF) {
		origin, err := o.Origin()
		if err != nil {
			return 0, err
		}
		made &= origin.Made()
	}
	for _, b := range o.Binaries {
		made &= b.Releases()
	}
	if o.MachO != nil && o.MachO.Section(offload.MachOEntriesSegment, offload.MachOEntriesSection) != nil {
		// Entries of a Mach-O host: LLVM main's (#183991).
		made &= release.Where(func(r *release.Release) bool { return r.Wrapper.MachO })
	}
	ids := func(id string) {
		// An ID only the arch-suffix rule reads: LLVM 19 or before made it.
		if _, err := bundle.ParseID(id, release.Default()); err != nil {
			made &= release.Where(func(r *release.Release) bool { return r.Bundle.IDs == release.BundleIDArchSuffix })
		}
	}
	for _, b := range o.Bundles {
		if b.Compressed != nil {
			v := b.Compressed.Version
			made &= release.Where(func(r *release.Release) bool { return r.Bundle.HIPFatbin.CompressedVersion == v })
		}
		for _, e := range b.Entries {
			ids(e.ID)
		}
	}
	if o.ELF != nil {
		ents, err := bundle.ObjectEntries(o.ELF)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", o.Name, err)
		}
		for _, e := range ents {
			ids(e.ID)
		}
	}
	return made, nil
}

// hasOffloading reports whether f has a section that differs between
// releases: entries, OffloadBinaries, bundles, clang 14's image sections.
func hasOffloading(f *elfobj.File) bool {
	for _, s := range f.Sections {
		if s.Type == elfobj.SHT_LLVM_OFFLOADING || strings.HasPrefix(s.Name, "omp_offloading_entries") ||
			strings.HasPrefix(s.Name, "cuda_offloading_entries") || strings.HasPrefix(s.Name, "hip_offloading_entries") ||
			strings.HasPrefix(s.Name, "llvm_offload_entries") || strings.HasPrefix(s.Name, bundle.SectionPrefix) ||
			strings.HasPrefix(s.Name, ".llvm.offloading") || s.Name == hipFatbinSection || s.Name == cudaFatbinSection || s.Name == cudaRelFatbinSection {
			return true
		}
	}
	return false
}

// Binary is an OffloadBinary of an object.
type Binary struct {
	*offloadbinary.Binary
	// Section is the ELF section holding it, "" in a raw binary file; in
	// a bitcode module, the section its global goes to (.llvm.offloading).
	Section string
	// FileOffset is where its header is in the file that was opened, -1
	// for a binary of a bitcode module, whose bytes are decoded from the
	// bitstream.
	FileOffset int64
	// Global is the bitcode global variable whose initializer holds it
	// ("llvm.embedded.object"), "" outside bitcode.
	Global string
}

// Bundle is a clang offload bundle of an object. A compressed one is read
// in place: its entries come from its header alone, and an entry's data is
// decompressed when it is read.
type Bundle struct {
	// Section is the ELF section holding it, "" for a bundle file.
	Section string
	// Offset is where it starts in the file that was opened, Size how many
	// bytes it takes there.
	Offset, Size int64
	// Entries are its entries in the order of its header, the host's
	// included; their offsets are in the uncompressed bundle.
	Entries []bundle.Entry
	// Compressed is the header of a compressed bundle (CCOB), else nil.
	Compressed *bundle.CompressedHeader

	plain *bundle.Bundle
	data  *io.SectionReader // what plain was read from
	comp  *bundle.Compressed
	file  *File

	inflated     *bundle.Bundle // Uncompressed's, of a compressed bundle
	inflatedData *io.SectionReader
}

// Uncompressed returns the bundle as it reads uncompressed: in place, or
// for a compressed one decompressed into a scratch file (which has no name,
// and is closed with the File) and read as a bundle.
func (b *Bundle) Uncompressed() (*bundle.Bundle, *io.SectionReader, error) {
	if b.plain != nil {
		return b.plain, b.data, nil
	}
	if b.inflated == nil {
		f, err := atomicfile.Scratch()
		if err != nil {
			return nil, nil, err
		}
		b.file.closers = append(b.file.closers, f)
		n, err := io.Copy(f, b.comp.Open())
		if err != nil {
			return nil, nil, fmt.Errorf("bundle at %#x: %w", b.Offset, err)
		}
		data := io.NewSectionReader(f, 0, n)
		pb, err := bundle.Read(data, n)
		if err != nil {
			return nil, nil, fmt.Errorf("bundle at %#x, decompressed: %w", b.Offset, err)
		}
		b.inflated, b.inflatedData = pb, data
	}
	return b.inflated, b.inflatedData, nil
}

// open returns a reader of the data of entry i, decompressing a compressed
// bundle as it is read.
func (b *Bundle) open(i int) io.Reader {
	if b.comp != nil {
		return b.comp.OpenEntry(b.Entries[i])
	}
	return b.plain.Open(i)
}

// BundledSection is a section of a bundled object: one bundle entry of what
// clang-offload-bundler -type=o made (OpenMP up to LLVM 14, HIP -fgpu-rdc
// through 22).
type BundledSection struct {
	Section string
	// ID is the bundle entry ID: the section name without the prefix.
	ID string
	// Image describes the contents as an image: kind, offload kind (none
	// for the host's), triple and target ID as arch.
	offloadbinary.Image
	Contents bundle.Contents
	// Offset and Size locate the section's bytes in the file.
	Offset, Size int64

	r *io.SectionReader
}

// Open returns a reader of the section's bytes.
func (s *BundledSection) Open() *io.SectionReader { return io.NewSectionReader(s.r, 0, s.r.Size()) }

// Host reports whether s is the host's entry.
func (s *BundledSection) Host() bool { return strings.HasPrefix(s.ID, "host-") }

// Source says where in an object an [Image] was found.
type Source uint8

const (
	// SourceBinary: an image of an OffloadBinary (.llvm.offloading, or a
	// raw binary file).
	SourceBinary Source = iota + 1
	// SourceNested: an image of an OffloadBinary that is itself the image
	// of another (LLVM 23 and later list and extract them).
	SourceNested
	// SourceBundle: the code object of a clang offload bundle: a HIP fatbin
	// (.hip_fatbin, or a bundle file).
	SourceBundle
	// SourceBundled: the device entry of a bundled object (a section
	// __CLANG_OFFLOAD_BUNDLE__<ID>).
	SourceBundled
	// SourceImageSection: a device image of clang 14's -fopenmp-new-driver
	// (a section .llvm.offloading.<triple>.<arch>.<stem>).
	SourceImageSection
	// SourceFatbinary: the CUDA fat binary of .nv_fatbin (clang's and nvcc's
	// whole-program objects) or __nv_relfatbin (nvcc -rdc; NVIDIA's format).
	SourceFatbinary
	// SourceRegistered: a raw device image that an LLVM 13 or 14 wrapper
	// (clang-offload-wrapper) registers in a linked program.
	SourceRegistered
	// SourceBitcode: an image of an OffloadBinary embedded in a bitcode
	// module (`clang -flto -c`), the initializer of a global listed in
	// llvm.embedded.objects: its bytes are not in place in the file
	// (Offset -1), they are decoded from the bitstream.
	SourceBitcode
)

var sourceNames = [...]string{"unknown", "binary", "nested", "bundle", "bundled-object", "image-section", "cuda-fatbinary", "registered", "bitcode"}

func (s Source) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return fmt.Sprintf("Source(%d)", s)
}

// Image is one device image of an object.
type Image struct {
	// Image holds the image's kind, offload kind, flags and strings (its
	// triple and arch). For device code outside OffloadBinaries it is what
	// an OffloadBinary holding it would say.
	offloadbinary.Image
	Object *Object
	Source Source
	// Section is the ELF section holding the image (or its container), ""
	// for a raw binary file or a bundle file.
	Section string
	// Offset is where the image's bytes are in the file that was opened,
	// or -1 where they are stored compressed or are not in place (in a
	// bitcode module); Size is how many bytes it has.
	Offset, Size int64

	// Binary is the OffloadBinary holding a SourceBinary, SourceBitcode or
	// SourceNested image, and Index the image's index in it; Path numbers the image as
	// llvm-objdump --offloading does ([1], [1.0] for the first image nested
	// in image 1).
	Binary *offloadbinary.Binary
	Index  int
	Path   []int
	// Parent is the image whose bytes are the binary holding a
	// SourceNested image.
	Parent *Image
	// NestedErr is set where the release reads nested binaries and the
	// image's bytes start as an OffloadBinary that does not read (or nests
	// deeper than [MaxNesting]): LLVM main's llvm-objdump lists the image,
	// then warns; its images are not known.
	NestedErr error
	// Bundle is the bundle holding a SourceBundle image, and Index its
	// entry; BundleID is the entry's ID (also for SourceBundled).
	Bundle   *Bundle
	BundleID string

	open func() (io.Reader, error)
	at   func() (*io.SectionReader, error)
}

// KindName returns the name of the image's kind as the release it was read
// as names it (llvm-objdump's: "elf", "llvm ir", "spir-v" from LLVM main
// after 22, ...).
func (im *Image) KindName() string { return offload.ImageKindName(im.Object.Release, im.Kind) }

// Reader returns a reader of the image's bytes. A code object of a
// compressed bundle is decompressed as it is read, in bounded memory.
func (im *Image) Reader() (io.Reader, error) {
	if im.open != nil {
		return im.open()
	}
	return im.Open()
}

// Open returns the image's bytes as a section of the file (or of the
// binary a compressed OffloadBinary inflated to). The code object of a
// compressed bundle, which exists only decompressed, gives an error
// matching goffload.ErrUnsupported: read it with [Image.Reader].
func (im *Image) Open() (*io.SectionReader, error) {
	if im.at == nil {
		return nil, fmt.Errorf("%s: the %s image of a compressed bundle (%s) has no bytes in place: %w", im.Object.Name, im.Triple(), im.BundleID, goffload.ErrUnsupported)
	}
	return im.at()
}

// String names the image for messages: `k.o: openmp image [1] for
// x86_64-unknown-linux-gnu (arch "generic")`.
func (im *Image) String() string {
	where := im.Source.String()
	switch im.Source {
	case SourceBinary, SourceNested, SourceBitcode:
		where = "image [" + im.Number() + "]"
	case SourceBundle, SourceBundled:
		where = "bundle entry " + im.BundleID
	case SourceImageSection, SourceFatbinary, SourceRegistered:
		where = "section " + im.Section
	}
	return fmt.Sprintf("%s: %v %s for %s (arch %q)", im.Object.Name, im.OffloadKind, where, im.Triple(), im.Arch())
}

// Number returns the image's Path as llvm-objdump prints it ("1", "1.0"),
// "" for an image of no OffloadBinary.
func (im *Image) Number() string {
	var sb strings.Builder
	for i, n := range im.Path {
		if i > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(strconv.Itoa(n))
	}
	return sb.String()
}

// The sections in which the CUDA and HIP wrappers put the device code they
// register (docs/registration.md#cuda-hip).
const (
	hipFatbinSection  = ".hip_fatbin"
	cudaFatbinSection = ".nv_fatbin"
	// cudaRelFatbinSection holds the fat binary of an object nvcc compiled
	// for separate compilation (-rdc), which nvlink reads: the same format.
	cudaRelFatbinSection = "__nv_relfatbin"
)

// MaxNesting bounds how deep binaries nested in images are read.
const MaxNesting = 16

// maxBundles bounds the bundles read in one .hip_fatbin section.
const maxBundles = 1 << 16

// read reads the device code of o, as release opt.Release, or as the
// releases that made it.
func (o *Object) read(opt *offloadbinary.ReadOptions) error {
	strict := opt != nil && opt.Release != nil
	readOpt := &offloadbinary.ReadOptions{}
	if opt != nil {
		*readOpt = *opt
	}
	if readOpt.Budget == nil {
		readOpt.Budget = &offloadbinary.Budget{}
	}
	o.budget = readOpt.Budget
	switch o.Format {
	case FormatELF:
		f, err := readELF(o.r, o.Offset)
		if err != nil {
			return err
		}
		o.ELF = f
		if err := o.readBinariesELF(readOpt); err != nil {
			return err
		}
	case FormatCOFF:
		f, err := readCOFF(o.r, o.Offset)
		if err != nil {
			return err
		}
		o.COFF = f
		if err := o.readBinariesCOFF(readOpt); err != nil {
			return err
		}
	case FormatMachO:
		f, err := readMachO(o.r, o.Offset)
		if err != nil {
			return err
		}
		o.MachO = f
		if s := f.Section(MachOSegment, MachOSection); s != nil && !s.ZeroFill() {
			if err := o.readBinariesOf(s.Seg+","+s.Name, int64(s.Offset), s.Open(), readOpt); err != nil {
				return err
			}
		}
	case FormatBinary:
		bins, err := offloadbinary.ReadAll(o.r, o.r.Size(), readOpt)
		if err != nil {
			return ferr.Rebase(err, o.Offset)
		}
		for _, b := range bins {
			o.Binaries = append(o.Binaries, &Binary{Binary: b, FileOffset: o.Offset + b.Offset})
		}
	case FormatBundle:
		if err := o.readBundles("", o.r, 0); err != nil {
			return err
		}
	case FormatFatbin:
		im := offloadbinary.LinkedImage(offload.OffloadCUDA, "nvptx64-nvidia-cuda", "")
		im.Kind = offload.ImageFatbinary
		sr := io.NewSectionReader(o.r, 0, o.r.Size())
		o.Images = append(o.Images, &Image{Image: im, Object: o, Source: SourceFatbinary, Offset: o.Offset, Size: sr.Size(),
			at: func() (*io.SectionReader, error) { return sr, nil }})
	case FormatBitcode:
		if err := o.readBitcode(readOpt); err != nil {
			return err
		}
	}
	o.Release = readOpt.Release
	if !strict {
		rel, err := o.chooseRelease()
		if err != nil {
			return err
		}
		o.Release = rel
	}
	if err := o.binaryImages(); err != nil {
		return err
	}
	if o.ELF != nil {
		if err := o.readELFCode(); err != nil {
			return err
		}
		// The names the object's readers handed out join the command's
		// count: one file's bound (16 times it plus 1 MiB) per file would
		// let many small files multiply it.
		names := o.ELF.Referenced()
		for _, e := range o.Entries {
			names += uint64(len(e.Name))
		}
		if err := o.budget.CountNames(uint64(o.r.Size()), names); err != nil {
			return fmt.Errorf("%s: %w", o.Name, err)
		}
	}
	if o.COFF != nil {
		// clang -c's HIP fatbin of a Windows host (the new driver without
		// -fgpu-rdc), which llvm-objdump-22 refuses to read in COFF.
		if s := o.COFF.Section(hipFatbinSection); s != nil && s.FileSize() > 0 {
			if err := o.readBundles(s.Name, s.Open(), int64(s.Offset)); err != nil {
				return err
			}
		}
		ents, err := entries.ReadCOFF(o.COFF, o.Release)
		if err != nil {
			return fmt.Errorf("%s: %w", o.Name, ferr.Rebase(err, o.Offset))
		}
		o.Entries = ents
		names := o.COFF.Referenced()
		for _, e := range o.Entries {
			names += uint64(len(e.Name))
		}
		if err := o.budget.CountNames(uint64(o.r.Size()), names); err != nil {
			return fmt.Errorf("%s: %w", o.Name, err)
		}
	}
	if o.MachO != nil {
		if err := o.readMachOCode(); err != nil {
			return err
		}
	}
	return o.bundleImages()
}

// readMachOCode reads a Mach-O object's HIP fatbin, CUDA fatbinary and
// entries.
func (o *Object) readMachOCode() error {
	f := o.MachO
	hipFatbin, _, _ := offload.MachOFatbinSections(offload.OffloadHIP)
	cudaFatbin, _, _ := offload.MachOFatbinSections(offload.OffloadCUDA)
	for _, s := range f.Sections {
		if s.ZeroFill() || s.Size == 0 {
			continue
		}
		switch s.Seg + "," + s.Name {
		case hipFatbin:
			if err := o.readBundles(hipFatbin, s.Open(), int64(s.Offset)); err != nil {
				return err
			}
		case cudaFatbin:
			im := offloadbinary.LinkedImage(offload.OffloadCUDA, "nvptx64-nvidia-cuda", "")
			im.Kind = offload.ImageFatbinary
			sr := s.Open()
			o.Images = append(o.Images, &Image{Image: im, Object: o, Source: SourceFatbinary, Section: cudaFatbin,
				Offset: o.Offset + int64(s.Offset), Size: sr.Size(), at: func() (*io.SectionReader, error) { return sr, nil }})
		}
	}
	ents, err := entries.ReadMachO(f, o.Release)
	if err != nil {
		return fmt.Errorf("%s: %w", o.Name, ferr.Rebase(err, o.Offset))
	}
	o.Entries = ents
	names := f.Referenced()
	for _, e := range o.Entries {
		names += uint64(len(e.Name))
	}
	if err := o.budget.CountNames(uint64(o.r.Size()), names); err != nil {
		return fmt.Errorf("%s: %w", o.Name, err)
	}
	return nil
}

// chooseRelease returns the release to read o as: the default where it is
// one of those that made o, else the newest verified one of them, else the
// newest of them; the default when none made it (o mixes releases).
func (o *Object) chooseRelease() (*release.Release, error) {
	made, err := o.Made()
	if err != nil {
		return nil, err
	}
	if made.Has(release.DefaultMajor) || made == 0 {
		return release.Default(), nil
	}
	rows := made.Rows()
	for i := len(rows) - 1; i >= 0; i-- {
		if !rows[i].Inferred {
			return rows[i], nil
		}
	}
	return rows[len(rows)-1], nil
}

// readBinariesELF reads the OffloadBinaries of every SHT_LLVM_OFFLOADING
// section.
func (o *Object) readBinariesELF(opt *offloadbinary.ReadOptions) error {
	for _, s := range o.ELF.SectionsByType(elfobj.SHT_LLVM_OFFLOADING) {
		if err := o.readBinariesOf(s.Name, int64(s.Offset), s.Open(), opt); err != nil {
			return err
		}
	}
	return nil
}

// readBinariesOf reads the OffloadBinaries of section name, at offset in
// the object.
func (o *Object) readBinariesOf(name string, offset int64, sr *io.SectionReader, opt *offloadbinary.ReadOptions) error {
	bins, err := offloadbinary.ReadAll(sr, sr.Size(), opt)
	if err != nil {
		return fmt.Errorf("%s: while extracting offloading files: section %q: %w", o.Name, name, ferr.Rebase(err, o.Offset+offset))
	}
	for _, b := range bins {
		o.Binaries = append(o.Binaries, &Binary{Binary: b, Section: name, FileOffset: o.Offset + offset + b.Offset})
	}
	return nil
}

// readBinariesCOFF reads the OffloadBinaries of every section whose name
// starts with .llvm.offloading: COFF has no section types, and LLVM's
// extractFromObject goes by the name. A PE image has none: LLVM's
// extractOffloadBinaries reads COFF objects only (not pecoff_executable),
// and the linker drops .llvm.offloading (IMAGE_SCN_LNK_REMOVE) anyway.
func (o *Object) readBinariesCOFF(opt *offloadbinary.ReadOptions) error {
	if o.COFF.Image {
		return nil
	}
	for _, s := range o.COFF.Sections {
		if !strings.HasPrefix(s.Name, Section) {
			continue
		}
		if err := o.readBinariesOf(s.Name, int64(s.Offset), s.Open(), opt); err != nil {
			return err
		}
	}
	return nil
}

// readBitcode reads the OffloadBinaries embedded in a bitcode module, as
// LLVM's extractFromBitcode: the objects of section .llvm.offloading, each
// binaries back to back.
func (o *Object) readBitcode(opt *offloadbinary.ReadOptions) error {
	objs, err := bitcode.EmbeddedObjects(o.r, o.r.Size())
	if err != nil {
		return ferr.Rebase(err, o.Offset)
	}
	for _, e := range objs {
		if e.Section != bitcode.OffloadingSection {
			continue
		}
		bins, err := offloadbinary.ReadAllBytes(e.Data, opt)
		if err != nil {
			// The offsets are in the global's bytes, not in the file.
			where := "global @" + e.Global
			var fe *goffload.FormatError
			if errors.As(err, &fe) && fe.Offset >= 0 {
				where, fe.Offset = fmt.Sprintf("%s, its byte %#x", where, fe.Offset), -1
			}
			return fmt.Errorf("%s: while extracting offloading files: %s: %w", o.Name, where, err)
		}
		for _, b := range bins {
			o.Binaries = append(o.Binaries, &Binary{Binary: b, Section: e.Section, FileOffset: -1, Global: e.Global})
		}
	}
	return nil
}

// binaryImages adds the images of the binaries, numbered across them as
// llvm-objdump numbers them, and where the release reads nested binaries
// (LLVM 23 and later), the images of an image that is itself a binary.
func (o *Object) binaryImages() error {
	n := 0
	for _, b := range o.Binaries {
		for i := range b.Images {
			im := o.binaryImage(b.Binary, i, b.Section, []int{n}, nil, b.FileOffset)
			o.Images = append(o.Images, im)
			if err := o.nested(im, 1); err != nil {
				return err
			}
			n++
		}
	}
	return nil
}

// binaryImage returns image i of b; base is where b is in the file, -1
// for a binary that exists only inflated.
func (o *Object) binaryImage(b *offloadbinary.Binary, i int, section string, path []int, parent *Image, base int64) *Image {
	bi := &b.Images[i]
	im := &Image{Image: bi.Image, Object: o, Source: SourceBinary, Section: section, Offset: -1, Size: int64(bi.ImageSize),
		Binary: b, Index: i, Path: path, Parent: parent}
	switch {
	case parent != nil:
		im.Source = SourceNested
	case o.Format == FormatBitcode:
		im.Source = SourceBitcode
	}
	if b.Compression == "" && base >= 0 {
		im.Offset = base + int64(bi.ImageOffset)
	}
	im.at = func() (*io.SectionReader, error) {
		r, err := b.Open(i)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", o.Name, err)
		}
		return r, nil
	}
	return im
}

// nested adds the images of im's bytes when they are an OffloadBinary and
// the object's release reads nested binaries; depth counts the binaries
// im is in.
func (o *Object) nested(im *Image, depth int) error {
	if !o.Release.Main.NestedImages {
		return nil
	}
	r, err := im.Open()
	if err != nil {
		if errors.Is(err, offloadbinary.ErrImageRange) {
			return nil // listed; reading it fails
		}
		return err
	}
	if !offloadbinary.StartsWithMagic(r) {
		return nil
	}
	if depth >= MaxNesting {
		im.NestedErr = fmt.Errorf("%s: failed to extract nested OffloadBinary of image [%s]: more than %d levels of nested binaries: %w", o.Name, im.Number(), MaxNesting, goffload.ErrLimit)
		return nil
	}
	inner, err := offloadbinary.ReadAll(r, r.Size(), &offloadbinary.ReadOptions{Release: o.Release, Budget: o.budget, Nested: true})
	if err != nil {
		// main's llvm-objdump: "failed to extract nested OffloadBinary:
		// <the reader's error>".
		im.NestedErr = fmt.Errorf("%s: failed to extract nested OffloadBinary of image [%s]: %w", o.Name, im.Number(), ferr.Rebase(err, im.Offset))
		return nil
	}
	j := 0
	for _, ib := range inner {
		base := int64(-1)
		if im.Offset >= 0 {
			base = im.Offset + ib.Offset
		}
		for k := range ib.Images {
			path := append(append([]int(nil), im.Path...), j)
			nim := o.binaryImage(ib, k, im.Section, path, im, base)
			o.Images = append(o.Images, nim)
			if err := o.nested(nim, depth+1); err != nil {
				return err
			}
			j++
		}
	}
	return nil
}

// readELFCode reads the entries and the device code outside OffloadBinaries
// of an ELF object.
func (o *Object) readELFCode() error {
	f := o.ELF
	ents, err := entries.Read(f, o.Release)
	if err != nil {
		return fmt.Errorf("%s: %w", o.Name, ferr.Rebase(err, o.Offset))
	}
	o.Entries = ents
	if s := f.Section(hipFatbinSection); s != nil && s.Type != elf.SHT_NOBITS {
		if err := o.readBundles(s.Name, s.Open(), int64(s.Offset)); err != nil {
			return err
		}
	}
	if err := o.bundledSections(); err != nil {
		return err
	}
	for _, name := range []string{cudaFatbinSection, cudaRelFatbinSection} {
		if s := f.Section(name); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
			im := offloadbinary.LinkedImage(offload.OffloadCUDA, "nvptx64-nvidia-cuda", "")
			im.Kind = offload.ImageFatbinary
			o.Images = append(o.Images, o.sectionImage(s, im, SourceFatbinary))
		}
	}
	if f.Type != elf.ET_REL && hasOffloading(f) {
		origin, err := o.Origin()
		if err != nil {
			return err
		}
		for _, ri := range origin.RawImages {
			s := f.Sections[ri.Section]
			im := offloadbinary.LinkedImage(offload.OffloadOpenMP, ri.Triple, "")
			img := o.sectionImage(s, im, SourceRegistered)
			sr := io.NewSectionReader(s.Open(), ri.Offset, ri.Size)
			img.Offset, img.Size = o.Offset+int64(s.Offset)+ri.Offset, ri.Size
			img.at = func() (*io.SectionReader, error) { return sr, nil }
			o.Images = append(o.Images, img)
		}
	}
	return nil
}

// sectionImage returns an image of the whole of section s.
func (o *Object) sectionImage(s *elfobj.FileSection, im offloadbinary.Image, src Source) *Image {
	sr := s.Open()
	return &Image{Image: im, Object: o, Source: src, Section: s.Name, Offset: o.Offset + int64(s.Offset), Size: sr.Size(),
		at: func() (*io.SectionReader, error) { return sr, nil }}
}

// bundledSections adds the sections of a bundled object, the IDs read as
// the object's release's bundler reads them, and clang 14's image sections.
func (o *Object) bundledSections() error {
	f, r := o.ELF, o.Release
	ents, err := bundle.ObjectEntries(f)
	if err != nil {
		return fmt.Errorf("%s: %w", o.Name, err)
	}
	for _, e := range ents {
		// An ID the release's bundler refuses is listed, but is no device
		// code that release finds.
		id, err := bundle.ParseID(e.ID, r)
		sr := e.Open()
		bs := &BundledSection{Section: e.Section, ID: e.ID, Image: id.Image(e.Contents, r), Contents: e.Contents,
			Offset: o.Offset + int64(e.Offset), Size: int64(e.Size), r: sr}
		o.Bundled = append(o.Bundled, bs)
		if err != nil || bs.Host() {
			continue
		}
		o.Images = append(o.Images, &Image{Image: bs.Image, Object: o, Source: SourceBundled, Section: e.Section,
			Offset: bs.Offset, Size: bs.Size, BundleID: e.ID, at: func() (*io.SectionReader, error) { return sr, nil }})
	}
	for _, s := range f.Sections {
		triple, arch, _, ok := offloadbinary.ParseImageSection(s.Name)
		if !ok || s.Type == elfobj.SHT_LLVM_OFFLOADING {
			continue
		}
		sr := s.Open()
		im := offloadbinary.LinkedImage(offload.OffloadOpenMP, triple, arch)
		im.Kind = bundle.ID{}.Image(bundle.Classify(sr, sr.Size()), r).Kind
		o.Images = append(o.Images, o.sectionImage(s, im, SourceImageSection))
	}
	return nil
}

// readBundles reads the bundles of sr, the section named section at byte
// base of the object ("" for a bundle file), one after the other with zero
// padding between them (the linker aligns each input's section).
func (o *Object) readBundles(section string, sr *io.SectionReader, base int64) error {
	where := func(off int64) string {
		if section == "" {
			return fmt.Sprintf("%s: bundle at %#x", o.Name, off)
		}
		return fmt.Sprintf("%s: section %s+%#x", o.Name, section, off)
	}
	for off := int64(0); off < sr.Size(); {
		if len(o.Bundles) >= maxBundles {
			return fmt.Errorf("%s: more than %d bundles: %w", where(off), maxBundles, goffload.ErrLimit)
		}
		rest := io.NewSectionReader(sr, off, sr.Size()-off)
		fileOff := o.Offset + base + off
		b := &Bundle{Section: section, Offset: fileOff, file: o.file}
		pb, err := bundle.Read(rest, rest.Size())
		switch {
		case errors.Is(err, bundle.ErrCompressed):
			c, err := bundle.ReadCompressed(rest, rest.Size())
			if err != nil {
				return fmt.Errorf("%s: %w", where(off), ferr.Rebase(err, fileOff))
			}
			b.Size = rest.Size()
			// FileSize locates the next bundle; LLVM ignores it when
			// unbundling, but a size that ends inside the header itself
			// cannot be the bundle's.
			if c.FileSize != 0 && c.FileSize < uint64(c.DataOffset) {
				return fmt.Errorf("%s: %w", where(off), ferr.Rebase(ferr.New("offload bundle", 8, "compressed bundle's file size, smaller than its header", c.FileSize, goffload.ErrInvalid), fileOff))
			}
			if c.FileSize != 0 && c.FileSize <= uint64(rest.Size()) {
				b.Size = int64(c.FileSize)
				if c, err = bundle.ReadCompressed(io.NewSectionReader(rest, 0, b.Size), b.Size); err != nil {
					return fmt.Errorf("%s: %w", where(off), ferr.Rebase(err, fileOff))
				}
			}
			if b.Entries, err = c.Entries(); err != nil {
				return fmt.Errorf("%s: %w", where(off), err)
			}
			b.comp, b.Compressed = c, &c.CompressedHeader
		case err != nil:
			return fmt.Errorf("%s: %w", where(off), ferr.Rebase(err, fileOff))
		default:
			b.Size = int64(pb.End())
			b.plain, b.Entries, b.data = pb, pb.Entries, rest
		}
		o.Bundles = append(o.Bundles, b)
		if off, err = nextNonZero(sr, off+max(b.Size, 1)); err != nil {
			return err
		}
	}
	return nil
}

// bundleImages adds the device code objects of the bundles (not the host's
// entries, nor empty ones), IDs read as the object's release reads them;
// an ID that release refuses is not device code it would find.
func (o *Object) bundleImages() error {
	for _, b := range o.Bundles {
		for i, e := range b.Entries {
			id, err := bundle.ParseID(e.ID, o.Release)
			if err != nil || id.IsHost() || e.Size == 0 || id.OffloadKind(o.Release) == offload.OffloadNone {
				continue
			}
			if e.Size > 1<<62 {
				return fmt.Errorf("%s: bundle entry %s: %d bytes: %w", o.Name, e.ID, e.Size, goffload.ErrInvalid)
			}
			b, i := b, i
			im := &Image{Object: o, Source: SourceBundle, Section: b.Section, Offset: -1, Size: int64(e.Size), Index: i, Bundle: b, BundleID: e.ID}
			im.open = func() (io.Reader, error) { return b.open(i), nil }
			contents := bundle.ContentsELF
			if b.plain != nil {
				code := b.plain.Open(i)
				im.Offset = b.Offset + int64(e.Offset)
				im.at = func() (*io.SectionReader, error) { return code, nil }
				contents = bundle.Classify(code, code.Size())
			}
			im.Image = id.Image(contents, o.Release)
			if im.Kind == offload.ImageNone {
				im.Kind = offload.ImageObject
			}
			o.Images = append(o.Images, im)
		}
	}
	return nil
}

// nextNonZero returns the offset of the first byte at or after off that is
// not zero, or r's size if there is none.
func nextNonZero(r *io.SectionReader, off int64) (int64, error) {
	buf := make([]byte, 32<<10)
	for off < r.Size() {
		n, err := r.ReadAt(buf, off)
		for i, c := range buf[:n] {
			if c != 0 {
				return off + int64(i), nil
			}
		}
		off += int64(n)
		if err != nil && err != io.EOF {
			return 0, err
		}
		if n == 0 {
			break
		}
	}
	return r.Size(), nil
}
