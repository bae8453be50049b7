package fatobj

import (
	"bytes"
	"debug/elf"
	endian "encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/concat"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// ErrConvert marks an object that cannot be converted to the release asked
// for without losing meaning: a field or construct the target release has no
// place for, or a form goffload does not rewrite. The message names the entry
// or section.
var ErrConvert = errors.New("cannot convert")

// Conversion is what [Convert] changed, a line for each change.
type Conversion struct {
	From, To int // the releases
	Changes  []string
}

// Changed reports whether the object was changed.
func (c *Conversion) Changed() bool { return len(c.Changes) > 0 }

func (c *Conversion) note(format string, args ...any) {
	c.Changes = append(c.Changes, fmt.Sprintf(format, args...))
}

// maxConvertSection bounds the sections Convert reads whole: entries
// sections, constructor tables and device objects it rewrites.
const maxConvertSection = 1 << 30

// maxRewrittenInMemory is what Convert may hold of the images of a binary it
// rewrites, whatever the binary's size (a compressed one inflates).
const maxRewrittenInMemory = 64 << 20

// Convert rewrites o, a relocatable host object that release from made, into
// what release to makes of the same source, so that the driver and runtime of
// release to link and run it (docs/releases.md#mixing-releases):
//
//   - entries sections are renamed (omp_, cuda_, hip_offloading_entries ↔
//     llvm_offload_entries, with their relocation sections), their entries
//     re-laid (32 ↔ 56 bytes, the relocations moved with their fields), the
//     section aligned as the release aligns it, the entries' symbols moved,
//     resized and renamed (.omp_offloading.entry. ↔ .offloading.entry.), the
//     name strings' symbols renamed; a 56-byte entry's kind is numbered as
//     the target release numbers it;
//   - `#pragma omp requires`: the constructor of LLVM 13 to 18 (read from
//     its machine code on x86-64 and AArch64) becomes the requires entry of
//     LLVM 19 (name "", flags in `reserved`) or 21 and later (".requires",
//     flags in Data), and the one entry becomes the other; the constructor's
//     .init_array.0 slot goes;
//   - C++ constructors and destructors of declare-target globals: their
//     entries (LLVM 13 to 17) go when the target release has none, and in a
//     device object their functions are put in .init_array and .fini_array,
//     where LLVM 18 and later put them (the host plugin's dlopen runs them);
//   - HIP managed variables: LLVM 21 and later's Data (the alignment, taken
//     from the variable's symbol: the largest power of two dividing its
//     offset and size, at most the section's alignment) and AuxAddr (the
//     shadow variable: the `<name>.managed` symbol's `<name>`) are added,
//     and dropped going back;
//   - OffloadBinaries of another version than release to writes are
//     written again as it writes them (version 3 or 2: one binary of all the
//     images, inflated; version 1: one binary an image), and entries
//     sections get its SHF_GNU_RETAIN flag or lose it;
//   - OffloadBinaries: the offload kind of HIP images is renumbered (3 ↔ 4),
//     in place; device images that are ELF relocatable objects (OpenMP for a
//     CPU) are converted as host objects are, and their binaries rewritten
//     with the same metadata;
//   - the OpenMP bundles of LLVM 13 and 14 (sections
//     __CLANG_OFFLOAD_BUNDLE__openmp-<triple>) become OffloadBinaries in
//     .llvm.offloading, with the metadata the target release's packager
//     writes; the host bundle goes with them. HIP bundles (the -fgpu-rdc
//     form of every release) stay;
//   - the host code of LLVM 15 gives __tgt_target_kernel a version-1
//     argument struct, which libomptarget 19 and 22 misread (the program
//     crashes): on x86-64 its calls go through a function added to the
//     object that passes version 2 (Release.KernelArgsVersion).
//
// Everything else in o stays as it is: section contents byte for byte. A
// conversion that would lose meaning is refused with an error wrapping
// ErrConvert that names the entry: a `declare target indirect` function for
// a release before 18, a C++ constructor entry whose device code is not an
// ELF object that goffload can give an .init_array, a requires entry for a
// release that registers requires with a constructor, a Data above 32 bits
// or an AuxAddr (other than a HIP managed variable's) in a 32-byte entry.
// An object that holds a registration (a wrapper, or the output of a
// relocatable link whose entries sections were renamed) is refused too: it
// is converted by linking again from its inputs.
//
// Converting to the release that made o changes nothing. On error o may be
// partly changed and should be dropped. Only releases with OffloadBinaries
// (15 and later) are targets.
func Convert(o *elfobj.Object, from, to *release.Release) (*Conversion, error) {
	c := &converter{o: o, from: from, to: to, conv: &Conversion{From: from.Major, To: to.Major}}
	if to.BinaryVersion == 0 {
		return nil, fmt.Errorf("%w: to %v: the old offloading driver's objects are not written (targets: LLVM 15 and later)", ErrConvert, to)
	}
	c.bo = o.ByteOrder()
	c.abs = elfobj.Abs64(o.Machine)
	if err := c.refuseRegistration(); err != nil {
		return nil, err
	}
	if from.Major == to.Major {
		return c.conv, nil
	}
	c.deviceOK = true
	if err := c.binaries(); err != nil {
		return nil, err
	}
	if err := c.bundles(); err != nil {
		return nil, err
	}
	if err := c.entries(); err != nil {
		return nil, err
	}
	if err := c.requiresCtor(); err != nil {
		return nil, err
	}
	if err := c.hostCtorsChecked(); err != nil {
		return nil, err
	}
	if err := c.kernelArgs(); err != nil {
		return nil, err
	}
	c.renameNameSymbols()
	return c.conv, nil
}

type converter struct {
	// rewritten counts the image bytes of the binaries rewritten, of
	// rewrittenFrom bytes.
	rewritten, rewrittenFrom int64

	o        *elfobj.Object
	from, to *release.Release
	conv     *Conversion
	bo       endian.ByteOrder
	abs      elfobj.RelocType

	// device is true while converting a device image: the functions of
	// constructor entries dropped are put in .init_array.
	device bool
	// hostCtors names the first constructor or destructor entry dropped from
	// a host object; deviceOK is true when every OpenMP device image was an
	// ELF object converted (so its constructors run from .init_array).
	hostCtors string
	deviceOK  bool
	// requires is the entries section that got a requires entry, and
	// openmp the OpenMP entries section after conversion.
	openmp *elfobj.Section
}

// refuseRegistration refuses objects that hold a wrapper's registration or
// renamed entries sections.
func (c *converter) refuseRegistration() error {
	for _, s := range c.o.Symbols {
		for _, p := range []string{"__start_", "__stop_"} {
			if sec, ok := strings.CutPrefix(s.Name, p); ok {
				if _, isEntries := offload.DetectEntryLayout(sec); isEntries {
					return fmt.Errorf("%w: symbol %q: the object registers offload entries (a wrapper or a linked object): convert the objects it was made from", ErrConvert, s.Name)
				}
			}
		}
		switch s.Name {
		case "__tgt_register_lib", "__cudaRegisterFatBinary", "__hipRegisterFatBinary":
			return fmt.Errorf("%w: symbol %q: the object registers device code (a wrapper or a linked object): convert the objects it was made from", ErrConvert, s.Name)
		}
	}
	for _, s := range c.o.Sections {
		if _, ok := offload.DetectEntryLayout(s.Name); ok && !isEntriesSection(s.Name) {
			return fmt.Errorf("%w: section %q: entries renamed by a relocatable link: convert the objects it was made from", ErrConvert, s.Name)
		}
	}
	return nil
}

// isEntriesSection reports whether name is an entries section of some
// release (not renamed by a relocatable link).
func isEntriesSection(name string) bool {
	switch name {
	case "omp_offloading_entries", "cuda_offloading_entries", "hip_offloading_entries", "llvm_offload_entries":
		return true
	}
	return false
}

// contents returns the bytes of s, read whole (at most maxConvertSection).
func contents(s *elfobj.Section) ([]byte, error) {
	if s.Data != nil {
		return s.Data, nil
	}
	if s.Type == elf.SHT_NOBITS || s.Size == 0 {
		return []byte{}, nil
	}
	return readWhole(s.Reader, s.Size, fmt.Sprintf("section %q", s.Name))
}

// readWhole reads the size bytes of r (at most maxConvertSection); what
// names them in errors.
func readWhole(r io.ReaderAt, size int64, what string) ([]byte, error) {
	if size < 0 || size > maxConvertSection {
		return nil, fmt.Errorf("%w: %s: %d bytes (at most %d are rewritten)", ErrConvert, what, size, maxConvertSection)
	}
	b := make([]byte, size)
	if n, err := r.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && int64(n) == size) {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b, nil
}

func setContents(s *elfobj.Section, b []byte) {
	s.Data, s.Reader, s.Size = b, nil, 0
	if b == nil {
		s.Data = []byte{}
	}
}

// sectionReader returns s's contents as a reader.
func sectionReader(s *elfobj.Section) (io.ReaderAt, int64) {
	if s.Data != nil {
		return bytes.NewReader(s.Data), int64(len(s.Data))
	}
	return s.Reader, s.Size
}

// ---- bundles (LLVM 13 and 14) ----

const bundlePrefix = "__CLANG_OFFLOAD_BUNDLE__"

// bundles turns the OpenMP entries of a bundled object into OffloadBinaries.
func (c *converter) bundles() error {
	var omp, host []*elfobj.Section
	others := 0
	for _, s := range c.o.Sections {
		idText, ok := strings.CutPrefix(s.Name, bundlePrefix)
		if !ok {
			continue
		}
		id, err := bundle.ParseID(idText, c.from)
		if err != nil {
			return fmt.Errorf("section %q: %w", s.Name, err)
		}
		switch id.Kind {
		case "openmp":
			omp = append(omp, s)
		case "host":
			host = append(host, s)
		default:
			others++
		}
	}
	if len(omp) == 0 {
		return nil
	}
	var bins concat.ReaderAt
	for _, s := range omp {
		idText := strings.TrimPrefix(s.Name, bundlePrefix)
		id, _ := bundle.ParseID(idText, c.from)
		r, size := sectionReader(s)
		kind := bundle.Classify(r, size)
		im := id.Image(kind, c.to)
		data, err := c.deviceImage(s.Name, r, size, &im)
		if err != nil {
			return err
		}
		ext := offload.ImageObject.Extension()
		if im.Kind != offload.ImageObject {
			ext = im.Kind.Extension()
		}
		arch := im.Arch()
		if arch == "" {
			arch = c.to.Packager.OpenMPHostArch
		}
		imgs, err := offloadbinary.ParseImageArg(c.to, "file=image."+ext+",triple="+im.Triple()+",arch="+arch+",kind=openmp")
		if err != nil || len(imgs) != 1 {
			return fmt.Errorf("%w: section %q: %v", ErrConvert, s.Name, err)
		}
		pi := imgs[0].Image
		pi.Kind = im.Kind
		b, err := offloadbinary.MarshalBinary(c.to, &pi, data)
		if err != nil {
			return fmt.Errorf("section %q: %w", s.Name, err)
		}
		bins.AddBytes(b)
		c.conv.note("bundle %s: an OffloadBinary in .llvm.offloading (%s, triple %s, arch %q)", idText, im.Kind, im.Triple(), arch)
	}
	gone := omp
	if others == 0 {
		gone = append(gone, host...)
	}
	for _, s := range gone {
		if err := c.o.RemoveSection(s); err != nil {
			return fmt.Errorf("%w: %v", ErrConvert, err)
		}
	}
	sec := &elfobj.Section{Name: ".llvm.offloading", Type: elfobj.SHT_LLVM_OFFLOADING, Flags: elfobj.SHF_EXCLUDE,
		Addralign: 8, Reader: bins.Section(), Size: bins.Size()}
	if old := c.o.Section(".llvm.offloading"); old != nil {
		r, size := sectionReader(old)
		var all concat.ReaderAt
		all.Add(r, 0, size)
		all.Add(sec.Reader, 0, sec.Size)
		old.Data, old.Reader, old.Size = nil, all.Section(), all.Size()
		return nil
	}
	c.o.AddSection(sec, false)
	return nil
}

// deviceImage returns the bytes of a device image: a device ELF relocatable
// object converted as a device object, else the image as it is. im tells
// its kind; it is marked converted in c.deviceOK.
func (c *converter) deviceImage(where string, r io.ReaderAt, size int64, im *offloadbinary.Image) ([]byte, error) {
	data, err := readWhole(r, size, where)
	if err != nil {
		return nil, err
	}
	out, converted, err := c.convertDevice(where, data, im)
	if err != nil {
		return nil, err
	}
	if !converted && im.OffloadKind == offload.OffloadOpenMP {
		c.deviceOK = false
	}
	return out, nil
}

// convertDevice converts data when it is a device ELF relocatable object
// of a machine goffload edits; it returns the new bytes and true, or data
// and false.
func (c *converter) convertDevice(where string, data []byte, im *offloadbinary.Image) ([]byte, bool, error) {
	if im.Kind != offload.ImageObject || !bytes.HasPrefix(data, []byte(elf.ELFMAG)) {
		return data, false, nil
	}
	f, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil || f.Type != elf.ET_REL || elfobj.Abs64(f.Machine) == nil || f.Class != elf.ELFCLASS64 {
		return data, false, nil
	}
	do, err := f.Object()
	if err != nil {
		return nil, false, fmt.Errorf("%s: device object: %w", where, err)
	}
	dc := &converter{o: do, from: c.from, to: c.to, conv: &Conversion{}, bo: do.ByteOrder(), abs: elfobj.Abs64(do.Machine), device: true}
	if err := dc.entries(); err != nil {
		return nil, false, fmt.Errorf("%s: device object: %w", where, err)
	}
	dc.renameNameSymbols()
	if !dc.conv.Changed() {
		return data, true, nil
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, do); err != nil {
		return nil, false, fmt.Errorf("%s: device object: %w", where, err)
	}
	for _, ch := range dc.conv.Changes {
		c.conv.note("%s: device object: %s", where, ch)
	}
	return buf.Bytes(), true, nil
}

// ---- OffloadBinaries ----

// binaries renumbers HIP images and converts device objects in the
// .llvm.offloading sections.
func (c *converter) binaries() error {
	for _, s := range c.o.Sections {
		if s.Type != elfobj.SHT_LLVM_OFFLOADING && s.Name != ".llvm.offloading" {
			continue
		}
		r, size := sectionReader(s)
		if size == 0 {
			continue
		}
		bins, err := offloadbinary.ReadAll(r, size, &offloadbinary.ReadOptions{Release: c.from})
		if err != nil {
			return fmt.Errorf("section %q: %w", s.Name, err)
		}
		var out concat.ReaderAt
		changed := false
		for bi, b := range bins {
			if b.Version != max(c.to.BinaryVersion, 1) {
				nb, err := c.rewriteBinary(fmt.Sprintf("%s: binary %d", s.Name, bi), b)
				if err != nil {
					return err
				}
				out.Add(nb, 0, nb.Size())
				changed = true
				continue
			}
			var patch []byte
			for i := range b.Images {
				im := &b.Images[i]
				if im.OffloadKind != offload.OffloadHIP {
					continue
				}
				code, ok := offload.OffloadKindCode(c.to, offload.OffloadHIP)
				if !ok || code == im.OffloadKindCode {
					continue
				}
				if patch == nil {
					var err error
					if patch, err = readWhole(io.NewSectionReader(r, b.Offset, int64(b.Size)), int64(b.Size), fmt.Sprintf("section %q: binary %d", s.Name, bi)); err != nil {
						return err
					}
				}
				entryOff := endian.LittleEndian.Uint64(patch[16:24]) + uint64(i)*offloadbinary.ImageEntrySize
				if entryOff+4 > uint64(len(patch)) {
					return fmt.Errorf("%w: section %q: binary %d: image entry %d outside it", ErrConvert, s.Name, bi, i)
				}
				endian.LittleEndian.PutUint16(patch[entryOff+2:], code)
				c.conv.note("%s: binary %d image %d: HIP offload kind %d -> %d", s.Name, bi, i, im.OffloadKindCode, code)
			}
			if patch == nil && len(b.Images) == 1 && b.Version == 1 {
				sr, err := b.Open(0)
				if err != nil {
					return fmt.Errorf("section %q: %w", s.Name, err)
				}
				im := b.Images[0].Image
				if im.OffloadKind == offload.OffloadOpenMP && im.Kind == offload.ImageObject && sr.Size() <= maxConvertSection {
					where := fmt.Sprintf("%s: binary %d", s.Name, bi)
					data, err := readWhole(sr, sr.Size(), where)
					if err != nil {
						return err
					}
					img, converted, err := c.convertDevice(where, data, &im)
					if err != nil {
						return err
					}
					if !converted {
						c.deviceOK = false
					}
					if converted && !bytes.Equal(img, data) {
						nb, err := offloadbinary.MarshalBinary(c.to, &im, img)
						if err != nil {
							return fmt.Errorf("%s: %w", where, err)
						}
						out.AddBytes(nb)
						changed = true
						continue
					}
				} else if im.OffloadKind == offload.OffloadOpenMP {
					c.deviceOK = false
				}
			} else if patch == nil {
				for _, im := range b.Images {
					if im.OffloadKind == offload.OffloadOpenMP {
						c.deviceOK = false
					}
				}
			}
			if patch != nil {
				out.AddBytes(patch)
				changed = true
			} else {
				out.Add(r, b.Offset, int64(b.Size))
			}
		}
		if changed {
			s.Data, s.Reader, s.Size = nil, out.Section(), out.Size()
		}
	}
	return nil
}

// rewriteBinary returns b written again as release to writes its images:
// version 3 or 2 as one binary of them all (inflated), version 1 as one
// binary each. The images are read as the result is read (a compressed one
// inflated then), not held. The OpenMP device objects among them are
// converted as those of version-1 binaries are, and those are held in
// memory: the device objects of all the binaries a conversion rewrites, at
// most the budget of the binaries' size (budget.Linear), or 64 MiB where
// that is less (what reading holds of inflated binaries,
// offloadbinary.Budget.MaxInflatedMemory); more is refused with an error matching
// goffload.ErrLimit.
func (c *converter) rewriteBinary(where string, b *offloadbinary.Binary) (*io.SectionReader, error) {
	// The binaries of one conversion count together.
	c.rewrittenFrom += int64(b.Size)
	limit := min(max(budget.LinearInt(c.rewrittenFrom), maxRewrittenInMemory), maxConvertSection)
	var ims []offloadbinary.ImageData
	for i := range b.Images {
		sr, err := b.Open(i)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		im := b.Images[i].Image
		ims = append(ims, offloadbinary.ImageData{Image: im, Data: sr, Size: sr.Size()})
		if im.OffloadKind != offload.OffloadOpenMP {
			continue
		}
		var magic [4]byte
		if n, _ := sr.ReadAt(magic[:], 0); im.Kind != offload.ImageObject || n < 4 || string(magic[:]) != elf.ELFMAG {
			c.deviceOK = false
			continue
		}
		if c.rewritten += sr.Size(); c.rewritten > limit {
			return nil, fmt.Errorf("%w: %s: device objects of %d bytes from binaries of %d, over the limit of %d that a conversion holds in memory: %w",
				ErrConvert, where, c.rewritten, c.rewrittenFrom, limit, goffload.ErrLimit)
		}
		iwhere := fmt.Sprintf("%s image %d", where, i)
		data, err := readWhole(sr, sr.Size(), iwhere)
		if err != nil {
			return nil, err
		}
		img, converted, err := c.convertDevice(iwhere, data, &im)
		if err != nil {
			return nil, err
		}
		if !converted {
			c.deviceOK = false
			continue // read again as the result is read
		}
		ims[i] = offloadbinary.ImageData{Image: im, Data: bytes.NewReader(img), Size: int64(len(img))}
	}
	var out concat.ReaderAt
	if c.to.BinaryVersion >= 2 {
		sr, err := offloadbinary.BinariesReader(c.to, ims)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		out.Add(sr, 0, sr.Size())
	} else {
		for i := range ims {
			sr, err := offloadbinary.BinariesReader(c.to, ims[i:i+1])
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			out.Add(sr, 0, sr.Size())
			out.AddZeros((8 - sr.Size()%8) % 8) // each binary 8-aligned, as clang embeds them
		}
	}
	c.conv.note("%s: version %d -> %d, %d images", where, b.Version, max(c.to.BinaryVersion, 1), len(ims))
	return out.Section(), nil
}

// ---- entries ----

// entry is one offload entry being converted.
type entry struct {
	index           int
	kind            offload.OffloadKind
	raw             offload.RawEntry
	addr, name, aux *elfobj.Reloc // the relocations of its pointers, or nil
	nameText        string
	syms            []*elfobj.Symbol
	newName         string // the name the entry gets ("" ↔ ".requires")
}

// entries converts every entries section of the object.
func (c *converter) entries() error {
	var secs []*elfobj.Section
	for _, s := range c.o.Sections {
		if isEntriesSection(s.Name) {
			secs = append(secs, s)
		}
	}
	for _, s := range secs {
		if err := c.section(s); err != nil {
			return err
		}
	}
	return nil
}

// fieldOffsets returns the offsets of the pointer fields of layout l:
// address, name and aux (-1 for none).
func fieldOffsets(l offload.EntryLayout) (int, int, int) {
	aux, ok := l.AuxOffset()
	if !ok {
		aux = -1
	}
	return l.AddrOffset(), l.NameOffset(), aux
}

func (c *converter) section(s *elfobj.Section) error {
	layout, _ := offload.DetectEntryLayout(s.Name)
	secKind, _ := offload.EntrySectionKind(s.Name)
	data, err := contents(s)
	if err != nil {
		return err
	}
	size := layout.Size()
	if len(data)%size != 0 {
		return fmt.Errorf("%w: section %q: %d bytes, not a whole number of %d-byte entries", ErrConvert, s.Name, len(data), size)
	}
	n := len(data) / size
	addrOff, nameOff, auxOff := fieldOffsets(layout)
	ents := make([]*entry, n)
	for i := range ents {
		raw, err := layout.Decode(c.bo, data[i*size:])
		if err != nil {
			return fmt.Errorf("section %q: entry %d: %w", s.Name, i, err)
		}
		e := &entry{index: i, raw: raw, kind: secKind}
		if layout == offload.EntryV1 {
			e.kind = offload.OffloadKindOf(c.from, raw.Kind)
		}
		ents[i] = e
	}
	for i := range s.Relocs {
		r := &s.Relocs[i]
		if r.Offset >= uint64(len(data)) || r.Offset%8 != 0 {
			return fmt.Errorf("%w: section %q: a relocation at %#x is not at a pointer of an entry", ErrConvert, s.Name, r.Offset)
		}
		e := ents[r.Offset/uint64(size)]
		switch int(r.Offset % uint64(size)) {
		case addrOff:
			e.addr = r
		case nameOff:
			e.name = r
		case auxOff:
			e.aux = r
		default:
			return fmt.Errorf("%w: section %q: a relocation at %#x is not at a pointer of an entry", ErrConvert, s.Name, r.Offset)
		}
		if r.Type != c.abs {
			return fmt.Errorf("%w: section %q: relocation %v at %#x (want %v)", ErrConvert, s.Name, r.Type, r.Offset, c.abs)
		}
	}
	for _, sym := range c.o.Symbols {
		if sym.Section != s || sym.Type == elf.STT_SECTION {
			continue
		}
		if sym.Value%uint64(size) != 0 || sym.Value/uint64(size) >= uint64(n) {
			return fmt.Errorf("%w: section %q: symbol %q at %#x is not an entry's", ErrConvert, s.Name, sym.Name, sym.Value)
		}
		e := ents[sym.Value/uint64(size)]
		e.syms = append(e.syms, sym)
	}
	for _, e := range ents {
		e.nameText = c.stringAt(e.name)
		e.newName = e.nameText
	}

	var kept []*entry
	for _, e := range ents {
		keep, err := c.translate(s, layout, e)
		if err != nil {
			return fmt.Errorf("section %q: entry %d %q: %w", s.Name, e.index, e.nameText, err)
		}
		if keep {
			kept = append(kept, e)
		} else if err := c.drop(s, e); err != nil {
			return err
		}
	}
	return c.relay(s, layout, kept, n)
}

// stringAt returns the NUL-terminated string a name relocation points to,
// or "" when it cannot be read.
func (c *converter) stringAt(r *elfobj.Reloc) string {
	if r == nil || r.Symbol == nil || r.Symbol.Section == nil {
		return ""
	}
	b, err := contents(r.Symbol.Section)
	if err != nil {
		return ""
	}
	off := int64(r.Symbol.Value) + r.Addend
	if off < 0 || off >= int64(len(b)) {
		return ""
	}
	if i := bytes.IndexByte(b[off:], 0); i >= 0 {
		return string(b[off : off+int64(i)])
	}
	return ""
}

// translate makes e an entry of the target release; it returns false for an
// entry the target release does not have.
func (c *converter) translate(s *elfobj.Section, from offload.EntryLayout, e *entry) (bool, error) {
	to := offload.LayoutOf(c.to)
	switch e.kind {
	case offload.OffloadOpenMP:
		f := offload.OpenMPFlags(e.raw.Flags)
		switch {
		case f&(offload.OMPEntryCtor|offload.OMPEntryDtor) != 0 && f&offload.OMPEntryRequires == 0 && !c.to.Entries.CtorDtor:
			return false, c.ctorEntry(e, f&offload.OMPEntryCtor != 0)
		case f&offload.OMPEntryIndirect != 0 && !c.to.Entries.Indirect:
			return false, fmt.Errorf("%w: a `declare target indirect` function; %v has no indirect entries", ErrConvert, c.to)
		case f&offload.OMPEntryRequires != 0:
			switch c.to.Entries.Requires {
			case release.RequiresCtor:
				return false, fmt.Errorf("%w: a requires entry; %v registers `#pragma omp requires` with a constructor, which goffload does not write", ErrConvert, c.to)
			case release.RequiresEntryReserved:
				e.newName = ""
			case release.RequiresEntryData:
				e.newName = c.to.Entries.RequiresName
			}
		}
	case offload.OffloadHIP, offload.OffloadCUDA:
		managed := offload.GPUFlags(e.raw.Flags)&7 == 1
		if to == offload.EntryV1 && from == offload.EntryLegacy && managed && e.kind == offload.OffloadHIP {
			if err := c.managed(e); err != nil {
				return false, err
			}
		}
		if to == offload.EntryLegacy && from == offload.EntryV1 && managed {
			e.aux, e.raw.Aux, e.raw.Data = nil, 0, 0
		}
	}
	if to == offload.EntryLegacy {
		if e.aux != nil || e.raw.Aux != 0 {
			return false, fmt.Errorf("%w: an AuxAddr pointer; %v's 32-byte entries have none", ErrConvert, c.to)
		}
		if e.raw.Data>>32 != 0 {
			return false, fmt.Errorf("%w: Data %#x; %v's 32-byte entries keep 32 bits", ErrConvert, e.raw.Data, c.to)
		}
		if offload.EntriesSection(c.to, e.kind) == "" {
			return false, fmt.Errorf("%w: offload kind %v; %v has no entries section for it", ErrConvert, e.kind, c.to)
		}
		e.raw.Reserved, e.raw.Version, e.raw.Kind = 0, 0, 0
	} else {
		code, ok := offload.OffloadKindCode(c.to, e.kind)
		if !ok {
			return false, fmt.Errorf("%w: offload kind %v; %v has no number for it", ErrConvert, e.kind, c.to)
		}
		e.raw.Reserved, e.raw.Version, e.raw.Kind = 0, offload.EntryVersion, code
	}
	return true, nil
}

// managed gives a HIP managed variable's entry the Data and AuxAddr of LLVM
// 21 and later: the alignment and the shadow variable.
func (c *converter) managed(e *entry) error {
	if e.addr == nil || e.addr.Symbol == nil {
		return fmt.Errorf("%w: a managed variable without a symbol", ErrConvert)
	}
	v := e.addr.Symbol
	shadowName, ok := strings.CutSuffix(v.Name, ".managed")
	shadow := c.o.Symbol(shadowName)
	if !ok || shadow == nil {
		return fmt.Errorf("%w: managed variable %q: no shadow variable %q", ErrConvert, v.Name, shadowName)
	}
	align := uint64(16)
	if v.Section != nil && v.Section.Addralign > 0 && v.Section.Addralign < align {
		align = v.Section.Addralign
	}
	for align > 1 && ((v.Value+uint64(e.addr.Addend))%align != 0 || e.raw.Size%align != 0) {
		align /= 2
	}
	e.raw.Data = align
	e.aux = &elfobj.Reloc{Type: c.abs, Symbol: shadow}
	return nil
}

// ctorEntry handles a constructor or destructor entry that goes: in a
// device object its function goes to .init_array or .fini_array.
func (c *converter) ctorEntry(e *entry, ctor bool) error {
	if !c.device {
		if c.hostCtors == "" {
			c.hostCtors = e.nameText
		}
		return nil
	}
	var fn *elfobj.Symbol
	if e.addr != nil {
		fn = c.function(*e.addr)
	}
	if fn == nil || fn.Section == nil {
		return fmt.Errorf("%w: a constructor entry whose address is not a function of the device object", ErrConvert)
	}
	name, flags, typ := ".init_array", elf.SHF_WRITE|elf.SHF_ALLOC, elf.SHT_INIT_ARRAY
	if !ctor {
		name, typ = ".fini_array", elf.SHT_FINI_ARRAY
	}
	arr := c.o.Section(name)
	if arr == nil {
		arr = &elfobj.Section{Name: name, Type: typ, Flags: flags, Addralign: 8, Data: []byte{}}
		c.o.AddSection(arr, false)
	}
	b, err := contents(arr)
	if err != nil {
		return err
	}
	off := uint64(len(b))
	setContents(arr, append(slices.Clone(b), make([]byte, 8)...))
	arr.Relocs = append(arr.Relocs, elfobj.Reloc{Offset: off, Type: c.abs, Symbol: e.addr.Symbol, Addend: e.addr.Addend})
	c.conv.note("%s %q: in %s", map[bool]string{true: "constructor", false: "destructor"}[ctor], fn.Name, name)
	return nil
}

// hostCtorsChecked refuses a host object whose constructor entries went
// while a device image of it could not get them in .init_array.
func (c *converter) hostCtorsChecked() error {
	if c.hostCtors != "" && !c.deviceOK {
		return fmt.Errorf("%w: entry %q: a C++ constructor of a declare-target global; %v runs them from the device image's .init_array, and a device image is not an ELF object goffload rewrites", ErrConvert, c.hostCtors, c.to)
	}
	return nil
}

// drop removes the symbols of an entry that goes.
func (c *converter) drop(s *elfobj.Section, e *entry) error {
	for _, sym := range e.syms {
		for _, x := range c.o.Sections {
			for _, r := range x.Relocs {
				if r.Symbol == sym {
					return fmt.Errorf("%w: section %q: symbol %q of a dropped entry is used by %q", ErrConvert, s.Name, sym.Name, x.Name)
				}
			}
		}
	}
	c.o.Symbols = slices.DeleteFunc(c.o.Symbols, func(x *elfobj.Symbol) bool { return slices.Contains(e.syms, x) })
	c.conv.note("%s: entry %d %q dropped (flags %v: %v has no such entry)", s.Name, e.index, e.nameText, offload.OpenMPFlags(e.raw.Flags), c.to)
	return nil
}

// relay writes the kept entries in the target layout, renames s, and moves
// its relocations and symbols.
func (c *converter) relay(s *elfobj.Section, from offload.EntryLayout, kept []*entry, n int) error {
	to := offload.LayoutOf(c.to)
	name := s.Name
	kinds := map[offload.OffloadKind]bool{}
	for _, e := range kept {
		kinds[e.kind] = true
	}
	if to == offload.EntryLegacy {
		if len(kinds) > 1 {
			return fmt.Errorf("%w: section %q: entries of %d offload kinds; %v keeps each kind in a section of its own", ErrConvert, s.Name, len(kinds), c.to)
		}
		for k := range kinds {
			name = offload.EntriesSection(c.to, k)
		}
		if len(kinds) == 0 {
			if k, ok := offload.EntrySectionKind(s.Name); ok && k != offload.OffloadNone {
				name = offload.EntriesSection(c.to, k)
			} else {
				name = c.to.Entries.OpenMP
			}
		}
	} else {
		name = c.to.Entries.OpenMP
	}
	for _, e := range kept {
		if e.newName != e.nameText {
			sym, add, err := c.stringRef(e.newName)
			if err != nil {
				return err
			}
			e.name = &elfobj.Reloc{Type: c.abs, Symbol: sym, Addend: add}
		}
	}
	if c.to.Entries.Requires != release.RequiresCtor && name == c.to.Entries.OpenMP && c.openmp == nil {
		c.openmp = s
	}
	flags := s.Flags&^elfobj.SHF_GNU_RETAIN | c.to.EntriesFlags()
	changed := from != to || name != s.Name || len(kept) != n || s.Addralign != c.to.Entries.Align || s.Flags != flags
	size := uint64(to.Size())
	addrOff, nameOff, auxOff := fieldOffsets(to)
	var data []byte
	var relocs []elfobj.Reloc
	for i, e := range kept {
		raw := e.raw
		if e.addr != nil || e.name != nil || e.aux != nil {
			raw.Addr, raw.Name, raw.Aux = 0, 0, 0
		}
		var err error
		if data, err = to.AppendEncode(data, c.bo, raw); err != nil {
			return fmt.Errorf("%w: section %q: entry %d %q: %v", ErrConvert, s.Name, e.index, e.nameText, err)
		}
		base := uint64(i) * size
		for _, f := range []struct {
			r   *elfobj.Reloc
			off int
		}{{e.addr, addrOff}, {e.name, nameOff}, {e.aux, auxOff}} {
			if f.r != nil {
				r := *f.r
				r.Offset = base + uint64(f.off)
				relocs = append(relocs, r)
			}
		}
		if e.index != i {
			changed = true
		}
		for _, sym := range e.syms {
			sym.Value = base
			if sym.Size == uint64(from.Size()) {
				sym.Size = size
			}
			if rest, ok := strings.CutPrefix(sym.Name, c.from.Entries.SymbolPrefix); ok {
				if e.newName != e.nameText && rest == e.nameText {
					rest = e.newName
				}
				sym.Name = c.to.Entries.SymbolPrefix + rest
			}
		}
	}
	if !changed {
		return nil
	}
	if data == nil {
		data = []byte{}
	}
	setContents(s, data)
	s.Relocs = relocs
	s.Addralign = c.to.Entries.Align
	s.Flags = flags
	if name != s.Name {
		c.conv.note("section %s: %s, %d %v entries -> %d %v", s.Name, name, n, from, len(kept), to)
		c.o.RenameSection(s, name)
	} else {
		c.conv.note("section %s: %d %v entries -> %d %v", s.Name, n, from, len(kept), to)
	}
	return nil
}

// nameSymbolPrefixes are the name-string symbols of every release.
func (c *converter) isNameSymbol(name string, prefix string) bool {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	if rest == "" {
		return true
	}
	n, ok := strings.CutPrefix(rest, ".")
	if !ok {
		return false
	}
	_, err := strconv.ParseUint(n, 10, 32)
	return err == nil
}

// stringRef returns where the string text (NUL-terminated) is: a name
// string of an entry already in the object, or one appended to the target
// release's name-string section.
func (c *converter) stringRef(text string) (*elfobj.Symbol, int64, error) {
	for _, sym := range c.o.Symbols {
		if sym.Section == nil || sym.Bind != elf.STB_LOCAL || sym.Size != uint64(len(text)+1) ||
			!(c.isNameSymbol(sym.Name, c.from.Entries.NameSymbol) || c.isNameSymbol(sym.Name, c.to.Entries.NameSymbol)) {
			continue
		}
		b, err := contents(sym.Section)
		if err != nil || sym.Value+sym.Size > uint64(len(b)) || string(b[sym.Value:sym.Value+sym.Size]) != text+"\x00" {
			continue
		}
		return c.sectionSymbol(sym.Section), int64(sym.Value), nil
	}
	secName := c.to.Entries.NameSection
	if secName == "" {
		secName = ".rodata.str1.1"
	}
	sec := c.o.Section(secName)
	if sec == nil || sec.Flags&(elf.SHF_MERGE|elf.SHF_STRINGS) != elf.SHF_MERGE|elf.SHF_STRINGS || sec.Entsize != 1 {
		sec = &elfobj.Section{Name: secName, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_MERGE | elf.SHF_STRINGS,
			Addralign: 1, Entsize: 1, Data: []byte{}}
		c.o.AddSection(sec, false)
	}
	b, err := contents(sec)
	if err != nil {
		return nil, 0, err
	}
	off := uint64(len(b))
	setContents(sec, append(slices.Clone(b), append([]byte(text), 0)...))
	name := c.to.Entries.NameSymbol
	for i := 1; c.o.Symbol(name) != nil; i++ {
		name = c.to.Entries.NameSymbol + "." + strconv.Itoa(i)
	}
	c.o.Symbols = append(c.o.Symbols, &elfobj.Symbol{Name: name, Type: elf.STT_OBJECT, Bind: elf.STB_LOCAL,
		Section: sec, Value: off, Size: uint64(len(text) + 1)})
	return c.sectionSymbol(sec), int64(off), nil
}

// sectionSymbol returns the section symbol of s, made if there is none.
func (c *converter) sectionSymbol(s *elfobj.Section) *elfobj.Symbol {
	for _, sym := range c.o.Symbols {
		if sym.Type == elf.STT_SECTION && sym.Section == s {
			return sym
		}
	}
	sym := &elfobj.Symbol{Type: elf.STT_SECTION, Bind: elf.STB_LOCAL, Section: s}
	c.o.Symbols = append(c.o.Symbols, sym)
	return sym
}

// renameNameSymbols renames the name strings' symbols to the target
// release's (.omp_offloading.entry_name ↔ .offloading.entry_name).
func (c *converter) renameNameSymbols() {
	if c.from.Entries.NameSymbol == c.to.Entries.NameSymbol {
		return
	}
	n := 0
	for _, sym := range c.o.Symbols {
		if sym.Bind == elf.STB_LOCAL && c.isNameSymbol(sym.Name, c.from.Entries.NameSymbol) {
			sym.Name = c.to.Entries.NameSymbol + strings.TrimPrefix(sym.Name, c.from.Entries.NameSymbol)
			n++
		}
	}
	if n > 0 {
		c.conv.note("%d name-string symbols: %s -> %s", n, c.from.Entries.NameSymbol, c.to.Entries.NameSymbol)
	}
}

// ErrMixed: the releases that made an object cannot be told apart because
// it holds the formats of several (see entries.Mixing).
var ErrMixed = errors.New("the object mixes LLVM releases")

// MadeBy returns the releases whose formats are all the object holds
// ([Object.Made]: its entries and registrations, its binaries, its bundle
// IDs), and the one to convert from: the oldest of them measured rather
// than inferred (the object holds nothing that tells them apart; what
// Convert does for the oldest is safe for the others: the kernel-argument
// rewrite of LLVM 15 lets other versions through). It returns nil and an
// empty set when nothing in the object differs between releases (an
// object without offloading, or not ELF), and an error wrapping ErrMixed
// when no one release makes everything in it. An error names the object.
func (o *Object) MadeBy() (*release.Release, release.Set, error) {
	if o.ELF == nil {
		return nil, 0, nil
	}
	made, err := o.Made()
	if err != nil {
		return nil, 0, err
	}
	origin, err := o.Origin()
	if err != nil {
		return nil, 0, err
	}
	return madeBy(made, origin)
}

func madeBy(made release.Set, o *entries.Origin) (*release.Release, release.Set, error) {
	if made == release.Known() {
		return nil, 0, nil
	}
	ms := made.Majors()
	for i := range ms {
		if r, err := release.Lookup(ms[i]); err == nil && !r.Inferred {
			return r, made, nil
		}
	}
	if len(ms) == 0 {
		var facts []string
		if o != nil {
			for _, x := range o.Facts {
				facts = append(facts, x.What+" ("+x.Made.String()+")")
			}
		}
		if len(facts) == 0 {
			facts = append(facts, "its binaries or bundle IDs and its entries")
		}
		return nil, 0, fmt.Errorf("%w: %s", ErrMixed, strings.Join(facts, "; "))
	}
	r, err := release.Lookup(ms[len(ms)-1])
	return r, made, err
}
