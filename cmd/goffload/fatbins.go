package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/offload"
)

// hipFatbin is one clang offload bundle found in a .hip_fatbin section: the
// HIP fatbin of a registration object, or several of them one after the
// other in a linked program. A compressed bundle is read in place: its
// entries come from the header alone, and an entry's data is decompressed
// when it is read.
type hipFatbin struct {
	section string
	offset  int64 // of the bundle in the file
	size    int64 // bytes of the bundle in the section
	Entries []bundle.Entry

	plain *bundle.Bundle     // an uncompressed bundle
	comp  *bundle.Compressed // or a compressed one
}

// open returns a reader of the data of entry i.
func (fb *hipFatbin) open(i int) io.Reader {
	if fb.comp != nil {
		return fb.comp.OpenEntry(fb.Entries[i])
	}
	return fb.plain.Open(i)
}

// hipFatbinSection is the section clang-linker-wrapper (and the old driver)
// put HIP fatbins in.
const hipFatbinSection = ".hip_fatbin"

// hipFatbins returns the bundles of in's .hip_fatbin section, one after the
// other with zero padding between them.
func hipFatbins(in input) ([]hipFatbin, error) {
	if in.BundleFile {
		return bundles("", io.NewSectionReader(in.R, 0, in.Size), 0)
	}
	if in.ELF == nil {
		return nil, nil
	}
	s := in.ELF.Section(hipFatbinSection)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	return bundles(s.Name, s.Open(), int64(s.Offset))
}

// bundles reads the bundles of sr, the section named section at byte base of
// the file ("" for a bundle file), one after the other with zero padding
// between them.
func bundles(section string, sr *io.SectionReader, base int64) ([]hipFatbin, error) {
	var fbs []hipFatbin
	for off := int64(0); off < sr.Size(); {
		rest := io.NewSectionReader(sr, off, sr.Size()-off)
		fb := hipFatbin{section: section, offset: base + off}
		b, err := bundle.Read(rest, rest.Size())
		switch {
		case errors.Is(err, bundle.ErrCompressed):
			c, err := bundle.ReadCompressed(rest, rest.Size())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where(section, off), err)
			}
			fb.size = rest.Size()
			if c.FileSize != 0 && int64(c.FileSize) <= rest.Size() {
				fb.size = int64(c.FileSize)
				c, _ = bundle.ReadCompressed(io.NewSectionReader(rest, 0, fb.size), fb.size)
			}
			if fb.Entries, err = c.Entries(); err != nil {
				return nil, fmt.Errorf("%s: %w", where(section, off), err)
			}
			fb.comp = c
		case err != nil:
			return nil, fmt.Errorf("%s: %w", where(section, off), err)
		default:
			fb.size = int64(b.End())
			fb.plain, fb.Entries = b, b.Entries
		}
		fbs = append(fbs, fb)
		// The next bundle, if any, starts at the next byte that is not
		// padding: the linker aligns each input's section (16 bytes for
		// clang-linker-wrapper's).
		if off, err = nextNonZero(sr, off+max(fb.size, 1)); err != nil {
			return nil, err
		}
	}
	return fbs, nil
}

// where names the bundle at off of section for errors.
func where(section string, off int64) string {
	if section == "" {
		return fmt.Sprintf("bundle at %#x", off)
	}
	return fmt.Sprintf("section %s+%#x", section, off)
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

// bundleImage describes a bundle entry as an image: the offload kind, the
// triple and the target ID of its ID "<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]",
// so that extract selects and names it as it does images of OffloadBinaries.
// A host entry, or an ID of another form, gives ok false.
func bundleImage(id string) (im offload.Image, ok bool) {
	parts := strings.SplitN(id, "-", 6)
	if len(parts) < 5 {
		return offload.Image{}, false
	}
	var kind offload.OffloadKind
	switch parts[0] {
	case "hip", "hipv4":
		kind = offload.OffloadHIP
	case "openmp":
		kind = offload.OffloadOpenMP
	case "cuda":
		kind = offload.OffloadCUDA
	default:
		return offload.Image{}, false
	}
	triple := strings.TrimRight(strings.Join(parts[1:5], "-"), "-")
	arch := ""
	if len(parts) == 6 {
		arch = parts[5]
	}
	return offload.LinkedImage(kind, triple, arch), true
}

// compression describes how a bundle is stored, for list.
func (fb *hipFatbin) compression() string {
	if fb.comp == nil {
		return "uncompressed"
	}
	return fmt.Sprintf("%v, compressed bundle version %d, %d bytes", fb.comp.Method, fb.comp.Version, fb.size)
}
