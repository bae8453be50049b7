package fatobj

import (
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
)

// LegacyImage is device code that an object carries outside OffloadBinaries,
// as the old offloading driver left it: an entry of a bundled object (a
// section __CLANG_OFFLOAD_BUNDLE__<ID>: OpenMP up to LLVM 14, HIP -fgpu-rdc
// through LLVM 22), or a raw image in a section of clang 14's
// -fopenmp-new-driver (".llvm.offloading.<triple>.<arch>.<stem>").
type LegacyImage struct {
	Section string
	// ID is the bundle entry's ID; "" for an LLVM 14 image section.
	ID string
	// Image gives the contents' kind (elf, llvm ir, or none), the offload
	// kind (none for the host's entry), the triple and, as arch, the
	// target ID of the entry or the arch of the section name.
	offload.Image
	Contents bundle.Contents
	// Offset and Size locate the bytes in the file.
	Offset, Size int64

	r io.ReaderAt
}

// Open returns a reader of the image's bytes.
func (im *LegacyImage) Open() *io.SectionReader { return io.NewSectionReader(im.r, im.Offset, im.Size) }

// Host reports whether the image is a bundled object's host entry (kind
// "host"); entries of kinds that are not offload kinds goffload knows have
// offload kind none but are not the host's.
func (im *LegacyImage) Host() bool { return strings.HasPrefix(im.ID, "host-") }

// LegacyImages returns the device code of f held in bundled-object sections
// and in LLVM 14 image sections, in section order, the IDs read as release
// r's bundler reads them. An ID r's bundler refuses (LLVM 20 and later) is
// an error naming the section.
func LegacyImages(f *elfobj.File, r *offload.Release) ([]LegacyImage, error) {
	entries, err := bundle.ObjectEntries(f)
	if err != nil {
		return nil, err
	}
	var out []LegacyImage
	for _, e := range entries {
		id, err := bundle.ParseID(e.ID, r.BundleIDs)
		if err != nil {
			return nil, fmt.Errorf("section %q: %w", e.Section, err)
		}
		sr := e.Open()
		ra, _, _ := sr.Outer()
		out = append(out, LegacyImage{Section: e.Section, ID: e.ID, Image: id.Image(e.Contents, r), Contents: e.Contents,
			Offset: int64(e.Offset), Size: int64(e.Size), r: ra})
	}
	for _, s := range f.Sections {
		triple, arch, _, ok := offload.ParseImageSection(s.Name)
		if !ok || s.Type == elfobj.SHT_LLVM_OFFLOADING {
			continue
		}
		sr := s.Open()
		ra, off, size := sr.Outer()
		c := bundle.Classify(sr, size)
		im := offload.LinkedImage(offload.OffloadOpenMP, triple, arch)
		im.Kind = bundle.ID{}.Image(c, r).Kind
		out = append(out, LegacyImage{Section: s.Name, Image: im, Contents: c, Offset: off, Size: size, r: ra})
	}
	return out, nil
}
