package bundle

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// SectionPrefix starts the name of each section of a bundled object, the
// object clang-offload-bundler -type=o makes (and clang 13 and 14's OpenMP
// driver, and HIP -fgpu-rdc through LLVM 22): one section per bundle entry,
// named SectionPrefix + the entry's ID, flags SHF_EXCLUDE, holding the
// entry's bytes as they are. The host entry's section holds one zero byte:
// the host code is the object itself.
const SectionPrefix = Magic

// Contents says what an entry's bytes are.
type Contents uint8

const (
	ContentsUnknown       Contents = iota // none of the below
	ContentsEmpty                         // no bytes
	ContentsHost                          // the host entry's one zero byte
	ContentsELF                           // an ELF file (a device object or code object)
	ContentsBitcode                       // LLVM bitcode
	ContentsBundle                        // an offload bundle, compressed or not
	ContentsOffloadBinary                 // an OffloadBinary
)

var contentsNames = [...]string{"unknown", "empty", "host", "elf", "bitcode", "bundle", "offload-binary"}

func (c Contents) String() string {
	if int(c) < len(contentsNames) {
		return contentsNames[c]
	}
	return fmt.Sprintf("Contents(%d)", c)
}

// Classify returns what the size bytes of r are, from their first bytes.
func Classify(r io.ReaderAt, size int64) Contents {
	var h [24]byte
	n, _ := r.ReadAt(h[:min(int64(len(h)), size)], 0)
	b := h[:n]
	switch {
	case size == 0:
		return ContentsEmpty
	case size == 1 && b[0] == 0:
		return ContentsHost
	case bytes.HasPrefix(b, []byte("\x7fELF")):
		return ContentsELF
	case bytes.HasPrefix(b, []byte("BC\xc0\xde")), bytes.HasPrefix(b, []byte{0xde, 0xc0, 0x17, 0x0b}):
		return ContentsBitcode
	case bytes.HasPrefix(b, []byte(Magic)), bytes.HasPrefix(b, []byte(CompressedMagic)):
		return ContentsBundle
	case bytes.HasPrefix(b, []byte{0x10, 0xff, 0x10, 0xad}):
		return ContentsOffloadBinary
	}
	return ContentsUnknown
}

// ObjectEntry is one bundle entry of a bundled object: a section.
type ObjectEntry struct {
	// Entry's ID is the section name without [SectionPrefix]; Offset is the
	// section's offset in the file, Size its size.
	Entry
	Section  string
	Contents Contents
	r        io.ReaderAt
}

// Open returns a reader of the entry's bytes.
func (e *ObjectEntry) Open() *io.SectionReader {
	return io.NewSectionReader(e.r, int64(e.Offset), int64(e.Size))
}

// ObjectEntries returns the bundle entries of f, in section order: what
// clang-offload-bundler -unbundle -type=o reads of it. A section named by
// the prefix alone is an error; several sections with one ID are returned
// as they are (the bundler extracts the first it finds compatible).
func ObjectEntries(f *elfobj.File) ([]ObjectEntry, error) {
	var out []ObjectEntry
	for _, s := range f.Sections {
		id, ok := strings.CutPrefix(s.Name, SectionPrefix)
		if !ok {
			continue
		}
		sr := s.Open()
		e := ObjectEntry{Entry: Entry{ID: id, Offset: uint64(s.Offset), Size: uint64(sr.Size())}, Section: s.Name}
		e.r, _, _ = sr.Outer()
		e.Contents = Classify(sr, sr.Size())
		if id == "" {
			return nil, fmt.Errorf("offload bundle: section %q: %w: no ID after the prefix", s.Name, ErrBadID)
		}
		out = append(out, e)
	}
	return out, nil
}

// Image describes the code object of an entry as the image an OffloadBinary
// would hold: the kind of its contents (an ELF object or LLVM bitcode), the
// offload kind of the ID's kind, the ID's triple (without the empty
// environment's trailing '-') and its target ID as the arch. A host entry
// has offload kind none.
func (id ID) Image(c Contents, r *release.Release) offloadbinary.Image {
	im := offloadbinary.LinkedImage(id.OffloadKind(r), strings.TrimRight(id.Triple, "-"), id.TargetID)
	switch c {
	case ContentsELF:
		im.Kind = offload.ImageObject
	case ContentsBitcode:
		im.Kind = offload.ImageBitcode
	default:
		im.Kind = offload.ImageNone
	}
	return im
}
