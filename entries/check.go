package entries

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
)

// DeviceImage is a device image that a file carries, with the symbols it
// defines.
type DeviceImage struct {
	Section string // the section it was found in
	Offset  int64  // of its binary in an SHT_LLVM_OFFLOADING section
	Index   int    // among the images of its binary
	offload.Image
	// Symbols holds the names the image defines; nil when its symbols cannot
	// be read (an image that is not ELF, such as LLVM bitcode), see Skipped.
	Symbols map[string]bool
	Skipped string
}

// Missing is an entry whose name no device image of its kind defines.
type Missing struct {
	Entry Entry
	Image *DeviceImage // nil when the file carries no image of the entry's kind
}

func (m Missing) String() string {
	if m.Image == nil {
		return fmt.Sprintf("entry %q (%v, %s[%d]): the file carries no %v device image", m.Entry.Name, m.Entry.Kind, m.Entry.Section, m.Entry.Index, m.Entry.Kind)
	}
	return fmt.Sprintf("entry %q (%v, %s[%d]): no such symbol in the %s image for %s (arch %q)", m.Entry.Name, m.Entry.Kind, m.Entry.Section,
		m.Entry.Index, m.Image.Kind, m.Image.Triple(), m.Image.Arch())
}

// Report is the result of Check.
type Report struct {
	Entries []Entry
	Images  []DeviceImage
	Missing []Missing
}

// DeviceImages returns the device images of every SHT_LLVM_OFFLOADING section
// of f (a fat object's, or the copy the wrapper puts in a linked program),
// then those of a bundled object's device entries (sections
// __CLANG_OFFLOAD_BUNDLE__<ID>, IDs read as release r's bundler reads them),
// of clang 14's image sections, the code objects of HIP fatbins and the
// CUDA fatbinary (.hip_fatbin, .nv_fatbin), and the raw images that the
// wrapper of LLVM 13 and 14 registers, with the symbols of those that are ELF
// files.
func DeviceImages(f *elfobj.File, r *offload.Release) ([]DeviceImage, error) {
	out, err := binaryImages(f, r)
	if err != nil {
		return out, err
	}
	bundled, err := bundle.ObjectEntries(f)
	if err != nil {
		return out, fmt.Errorf("entries: %w", err)
	}
	for _, e := range bundled {
		id, err := bundle.ParseID(e.ID, r.BundleIDs)
		if err != nil {
			return out, fmt.Errorf("entries: section %q: %w", e.Section, err)
		}
		if id.IsHost() {
			continue
		}
		d := DeviceImage{Section: e.Section, Image: id.Image(e.Contents, r)}
		if d.Symbols, d.Skipped, err = imageSymbols(e.Open()); err != nil {
			return out, fmt.Errorf("entries: section %q: %w", e.Section, err)
		}
		out = append(out, d)
	}
	for _, s := range f.Sections {
		triple, arch, _, ok := offload.ParseImageSection(s.Name)
		if !ok || s.Type == elfobj.SHT_LLVM_OFFLOADING {
			continue
		}
		d := DeviceImage{Section: s.Name, Image: offload.LinkedImage(offload.OffloadOpenMP, triple, arch)}
		if d.Symbols, d.Skipped, err = imageSymbols(s.Open()); err != nil {
			return out, fmt.Errorf("entries: section %q: %w", s.Name, err)
		}
		out = append(out, d)
	}
	fatbins, err := fatbinImages(f, r)
	if out = append(out, fatbins...); err != nil {
		return out, err
	}
	raw, err := rawImages(f)
	return append(out, raw...), err
}

// binaryImages returns the images of the OffloadBinaries of f.
func binaryImages(f *elfobj.File, r *offload.Release) ([]DeviceImage, error) {
	var out []DeviceImage
	for _, s := range f.SectionsByType(elfobj.SHT_LLVM_OFFLOADING) {
		sr := s.Open()
		bins, err := offload.ReadAll(sr, sr.Size(), &offload.ReadOptions{Release: r})
		if err != nil {
			return out, fmt.Errorf("entries: section %q: %w", s.Name, err)
		}
		for _, b := range bins {
			for i, im := range b.Images {
				d := DeviceImage{Section: s.Name, Offset: b.Offset, Index: i, Image: im.Image}
				img, err := b.Open(i)
				if err == nil {
					d.Symbols, d.Skipped, err = imageSymbols(img)
				}
				if err != nil {
					return out, fmt.Errorf("entries: section %q: binary at %#x: image %d: %w", s.Name, b.Offset, i, err)
				}
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// imageSymbols returns the names an ELF device image defines.
func imageSymbols(img *io.SectionReader) (map[string]bool, string, error) {
	var magic [4]byte
	if _, err := img.ReadAt(magic[:], 0); err != nil || !bytes.Equal(magic[:], []byte("\x7fELF")) {
		return nil, "not an ELF image", nil
	}
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

// Check reads the entries and the device images of f (a linked program or a
// fat object) and reports every entry whose name is not a symbol of each
// device image of its kind: what the runtime would find only when it fails to
// load the symbol. Requires entries, which name no symbol, are not checked;
// images whose symbols cannot be read are listed in the report and skipped.
func Check(f *elfobj.File, r *offload.Release) (*Report, error) {
	ents, err := Read(f, r)
	if err != nil {
		return nil, err
	}
	imgs, err := DeviceImages(f, r)
	if err != nil {
		return nil, err
	}
	rep := &Report{Entries: ents, Images: imgs}
	for _, e := range ents {
		if e.Kind == offload.OffloadOpenMP && e.Flags&uint32(offload.OMPEntryRequires) != 0 {
			continue
		}
		found := false
		for i := range imgs {
			im := &imgs[i]
			if im.OffloadKind != e.Kind {
				continue
			}
			found = true
			if im.Symbols != nil && !im.Symbols[e.Name] {
				rep.Missing = append(rep.Missing, Missing{Entry: e, Image: im})
			}
		}
		if !found {
			rep.Missing = append(rep.Missing, Missing{Entry: e})
		}
	}
	return rep, nil
}
