package fatobj

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"

	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// Report is what [Check] found in one object.
type Report struct {
	Object *Object
	// Images are the object's device images with the symbols they define;
	// Missing the entries whose name no image of their kind defines.
	Images  []CheckedImage
	Missing []Missing
	// Unlisted counts the (entry, image) pairs without the symbol that
	// Missing does not list: a report lists as many as the budget of the
	// object's size allows (docs/hostile-input.md), and one finding says
	// how many more there are.
	Unlisted int
	// Origin is what the object shows of the releases that made it and
	// can link and run it ([entries.Mixing]).
	Origin *entries.Origin
	// Made is the releases whose formats are all the object holds
	// ([Object.Made]: Origin's, narrowed by its binaries and bundle IDs).
	Made release.Set
	// Findings are the problems found: the missing symbols, the releases
	// mixed in the object, and those mixed across the objects checked
	// together.
	Findings []entries.Finding
}

// Problems returns how many problems r holds: its findings, each pair that
// the finding of the unlisted ones counts standing for one.
func (r *Report) Problems() int {
	n := len(r.Findings) + r.Unlisted
	if r.Unlisted > 0 {
		n-- // the finding that counts them
	}
	return n
}

// CheckedImage is a device image with the names it defines.
type CheckedImage struct {
	*Image
	// Symbols holds the names the image defines; nil when they cannot be
	// read (an image that is not ELF, such as LLVM bitcode), and Skipped
	// then says why.
	Symbols map[string]bool
	Skipped string
}

// Missing is an entry whose name no device image of its kind defines.
type Missing struct {
	Entry entries.FileEntry
	// Image is the image that lacks the symbol, nil when the object
	// carries no image of the entry's kind.
	Image *CheckedImage
}

func (m Missing) String() string {
	if m.Image == nil {
		return fmt.Sprintf("entry %q (%v, %s[%d]): the file carries no %v device image", m.Entry.Name, m.Entry.Kind, m.Entry.Section, m.Entry.Index, m.Entry.Kind)
	}
	return fmt.Sprintf("entry %q (%v, %s[%d]): no such symbol in the %s image for %s (arch %q)", m.Entry.Name, m.Entry.Kind, m.Entry.Section,
		m.Entry.Index, m.Image.Kind, m.Image.Triple(), m.Image.Arch())
}

// Finding returns m as a finding of kind entries.FindMissingSymbol.
func (m Missing) Finding() entries.Finding {
	return entries.Finding{Kind: entries.FindMissingSymbol, Message: m.String(), Section: m.Entry.Section, Entries: 1}
}

// Check finds, before anything runs, what the runtime would fail on in the
// ELF objects given (a linked program, a shared object, fat objects, the
// members of an archive): every offload entry whose name is not a symbol of
// each device image of its kind (requires entries name none; images whose
// symbols cannot be read are skipped, and say why), and the signs of LLVM
// releases mixed in each object and, for the relocatable objects, across
// them as the inputs of one link ([entries.Incompatible]). The COFF objects
// of Windows hosts are checked for their entries the same way (the signs of
// releases are ELF's: their Origin is nil); PE images and objects of other
// formats (raw binaries, bundle files, bitcode) are skipped. The stream of
// every compressed binary, in any object, is inflated whole first, as LLVM
// main's reader does: one that is cut or runs past its InflatedSize is an
// error. It returns one report per host object ([Object.HostObject]), in order. Entries
// times images grow as the square of an object's size: a report counts
// every (entry, image) pair without the symbol, and lists as many as the
// budget of the object's size allows ([Report.Unlisted] counts the rest).
func Check(objs []*Object) ([]*Report, error) {
	return CheckWith(objs, nil)
}

// CheckWith is [Check] with options: opt, if not nil, names the runtime
// release whose refusals of device images are found too
// ([CheckOptions.Runtime]).
func CheckWith(objs []*Object, opt *CheckOptions) ([]*Report, error) {
	if opt == nil {
		opt = &CheckOptions{}
	}
	var reps []*Report
	var set []entries.Input
	var inSet []*Report
	for _, o := range objs {
		if err := verifyStreams(o); err != nil {
			return nil, err
		}
		if !o.HostObject() {
			continue
		}
		rep, err := checkObject(o)
		if err != nil {
			return nil, err
		}
		if opt.Runtime != nil {
			fs, err := runtimeFindings(o, opt.Runtime)
			if err != nil {
				return nil, err
			}
			rep.Findings = append(rep.Findings, fs...)
		}
		reps = append(reps, rep)
		if o.ELF != nil && o.ELF.Type == elf.ET_REL {
			set = append(set, entries.Input{Name: o.Name, Origin: rep.Origin})
			inSet = append(inSet, rep)
		}
	}
	for i, fs := range entries.Incompatible(set) {
		inSet[i].Findings = append(inSet[i].Findings, fs...)
	}
	return reps, nil
}

// verifyStreams inflates the whole stream of each compressed binary of o,
// as LLVM main's reader decompresses it before reading the binary: reading
// a binary inflates only what its entries and strings take (list reads no
// more), so a stream cut or overrunning its InflatedSize after them is
// found here, or when its image is read. What it inflates counts against
// the budget of the read.
func verifyStreams(o *Object) error {
	var buf []byte
	for _, b := range o.Binaries {
		if b.InflatedSize == 0 {
			continue
		}
		if buf == nil {
			buf = make([]byte, 1<<20) // reads this large are inflated straight into it
		}
		// A writer that is not an io.ReaderFrom, so that the copy reads
		// through buf.
		if _, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, b.Inflated(), buf); err != nil {
			return fmt.Errorf("%s: offload binary at %#x: %w", o.Name, b.Offset, err)
		}
	}
	return nil
}

// HostObject reports whether o is a host's file that [Check] reports on:
// an ELF file, a COFF object or a Mach-O file (not a raw binary, a
// bundle, bitcode, nor a PE image).
func (o *Object) HostObject() bool {
	return o.ELF != nil || o.COFF != nil && !o.COFF.Image || o.MachO != nil
}

func checkObject(o *Object) (*Report, error) {
	origin, err := o.Origin()
	if err != nil {
		return nil, err
	}
	made, err := o.Made()
	if err != nil {
		return nil, err
	}
	rep := &Report{Object: o, Origin: origin, Made: made}
	for _, im := range o.Images {
		ci := CheckedImage{Image: im}
		if ci.Symbols, ci.Skipped, err = imageSymbols(im); err != nil {
			if im.Source != SourceBundle {
				return nil, fmt.Errorf("%v: %w", im, err)
			}
			ci.Skipped = fmt.Sprintf("a code object that cannot be read: %v", err)
		}
		rep.Images = append(rep.Images, ci)
	}
	var size int64
	if o.r != nil {
		size = o.r.Size()
	}
	maxListed := missingSymbols(rep, o.Entries, budget.Linear(uint64(max(size, 0))))
	for _, m := range rep.Missing {
		rep.Findings = append(rep.Findings, m.Finding())
	}
	if rep.Unlisted > 0 {
		rep.Findings = append(rep.Findings, entries.Finding{Kind: entries.FindMissingSymbol, Entries: rep.Unlisted,
			Message: fmt.Sprintf("%d more (entry, image) pairs without the symbol, not listed: an object of %d bytes lists up to %d", rep.Unlisted, size, maxListed)})
	}
	if origin != nil {
		rep.Findings = append(rep.Findings, origin.Findings...)
	}
	return rep, nil
}

// missingCost is what one listed Missing is counted as against the budget
// of the object: its struct, its finding and message, and what printing them
// (check --json) takes, with room to spare.
const missingCost = 4096

// missingSymbols finds the entries whose name an image of their kind lacks,
// in the order of the entries and then of the images. Entries times images
// pairs grow as the square of the object's size, so the pairs are counted
// first, from each image's names (time linear in the entries and the names),
// and listed only as far as limit (the budget of the object's bytes) allows:
// at most limit/missingCost of them, visiting at most limit/8 pairs. The
// rest are counted in Unlisted. It returns the most it would list.
func missingSymbols(rep *Report, ents []entries.FileEntry, limit uint64) uint64 {
	type kindNames struct {
		images, checked int            // images of the kind; those whose names are read
		have            map[string]int // entry name: how many checked images define it
	}
	kinds := map[offload.OffloadKind]*kindNames{}
	for i := range rep.Images {
		im := &rep.Images[i]
		k := kinds[im.OffloadKind]
		if k == nil {
			k = &kindNames{have: map[string]int{}}
			kinds[im.OffloadKind] = k
		}
		k.images++
		if im.Symbols != nil {
			k.checked++
		}
	}
	wanted := func(e *entries.FileEntry) bool {
		return !(e.Kind == offload.OffloadOpenMP && e.Flags&uint32(offload.OMPEntryRequires) != 0)
	}
	for i := range ents {
		if k := kinds[ents[i].Kind]; k != nil && wanted(&ents[i]) {
			k.have[ents[i].Name] = 0
		}
	}
	for i := range rep.Images {
		im := &rep.Images[i]
		k := kinds[im.OffloadKind]
		for name := range im.Symbols {
			if n, ok := k.have[name]; ok {
				k.have[name] = n + 1
			}
		}
	}
	maxListed, maxVisits := limit/missingCost, limit/8
	var visits uint64
	for i := range ents {
		e := &ents[i]
		if !wanted(e) {
			continue
		}
		lacking, visit := 1, uint64(1) // no image of its kind
		k := kinds[e.Kind]
		if k != nil {
			lacking, visit = k.checked-k.have[e.Name], uint64(len(rep.Images))
		}
		if lacking == 0 {
			continue
		}
		// Once one entry is not listed, none after it is: the list is the
		// start of the whole.
		if rep.Unlisted > 0 || uint64(len(rep.Missing))+uint64(lacking) > maxListed || visits+visit > maxVisits {
			rep.Unlisted += lacking
			continue
		}
		visits += visit
		if k == nil {
			rep.Missing = append(rep.Missing, Missing{Entry: *e})
			continue
		}
		for j := range rep.Images {
			im := &rep.Images[j]
			if im.OffloadKind == e.Kind && im.Symbols != nil && !im.Symbols[e.Name] {
				rep.Missing = append(rep.Missing, Missing{Entry: *e, Image: im})
			}
		}
	}
	return maxListed
}

// imageSymbols returns the names an ELF device image defines, or nil and
// why they are not read.
func imageSymbols(im *Image) (map[string]bool, string, error) {
	switch im.Source {
	case SourceFatbinary:
		return nil, "a CUDA fatbinary (NVIDIA's format): its symbols are not read", nil
	case SourceBundle:
		if im.Bundle.Compressed != nil {
			return nil, "a compressed offload bundle: its code objects are not decompressed", nil
		}
	}
	img, err := im.Open()
	if err != nil {
		return nil, "", err
	}
	var magic [4]byte
	n, _ := img.ReadAt(magic[:], 0)
	switch {
	case n == len(magic) && bytes.Equal(magic[:], elfMagic):
		return elfSymbols(img)
	case isCOFF(magic[:n]):
		return coffSymbols(img)
	}
	return nil, "not an ELF or COFF image", nil
}

// coffSymbols returns the names a COFF device image (an offload to a
// Windows host itself) defines: its symbols defined in a section, but
// section definitions, and its weak externals whose default is defined
// (what clang makes of a weak definition, such as an OpenMP kernel).
func coffSymbols(img *io.SectionReader) (map[string]bool, string, error) {
	f, err := coffobj.Read(img, img.Size())
	if err != nil {
		return nil, "", err
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, "", err
	}
	defined := map[int]bool{}
	for i := range syms {
		defined[syms[i].Index] = syms[i].SectionNumber > 0
	}
	names := map[string]bool{}
	for i := range syms {
		s := &syms[i]
		_, def := s.SectionDefinition()
		tag, _, weak := s.WeakExternal()
		if s.Name != "" && !def && (s.SectionNumber > 0 || weak && defined[int(tag)]) {
			names[s.Name] = true
		}
	}
	return names, "", nil
}

func elfSymbols(img *io.SectionReader) (map[string]bool, string, error) {
	f, err := elfobj.Read(img, img.Size())
	if err != nil {
		return nil, "", err
	}
	syms, err := f.Symbols()
	if err == nil && len(syms) == 0 {
		syms, err = f.DynamicSymbols()
	}
	if err != nil {
		return nil, "", err
	}
	names := map[string]bool{}
	for _, s := range syms {
		if s.Section != elf.SHN_UNDEF && s.Name != "" && s.Type() != elf.STT_SECTION && s.Type() != elf.STT_FILE {
			names[s.Name] = true
		}
	}
	return names, "", nil
}
