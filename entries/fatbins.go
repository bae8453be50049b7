package entries

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
)

// The sections in which the CUDA and HIP wrappers put the device code they
// register (spec §3.3).
const (
	hipFatbinSection  = ".hip_fatbin"
	cudaFatbinSection = ".nv_fatbin"
)

// maxFatbins bounds the bundles read in one .hip_fatbin section.
const maxFatbins = 4096

// fatbinImages returns the device images of the CUDA and HIP wrappers of f:
// the code objects of the clang offload bundles in .hip_fatbin (one after
// the other, zero padding between them, as a linked program holds them),
// with their symbols when the bundle is not compressed, and the fatbinary of
// .nv_fatbin, whose symbols (NVIDIA's format) are not read. A bundle that
// cannot be read, or a compressed one (whose code objects are not
// decompressed), gives an image of its kind whose symbols are not read: the
// device code is there, its symbols unknown.
func fatbinImages(f *elfobj.File, r *offload.Release) ([]DeviceImage, error) {
	var out []DeviceImage
	if s := f.Section(cudaFatbinSection); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
		d := DeviceImage{Section: s.Name, Image: offload.LinkedImage(offload.OffloadCUDA, "nvptx64-nvidia-cuda", ""),
			Skipped: "a CUDA fatbinary (NVIDIA's format): its symbols are not read"}
		d.Kind = offload.ImageFatbinary
		out = append(out, d)
	}
	s := f.Section(hipFatbinSection)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return out, nil
	}
	sr := s.Open()
	unread := func(off int64, why string) {
		out = append(out, DeviceImage{Section: s.Name, Offset: off, Image: offload.LinkedImage(offload.OffloadHIP, "amdgcn-amd-amdhsa", ""), Skipped: why})
	}
	for off, n := int64(0), 0; off < sr.Size() && n < maxFatbins; n++ {
		rest := io.NewSectionReader(sr, off, sr.Size()-off)
		b, err := bundle.Read(rest, rest.Size())
		var size int64
		switch {
		case errors.Is(err, bundle.ErrCompressed):
			unread(off, "a compressed offload bundle: its code objects are not decompressed")
			c, err := bundle.ReadCompressed(rest, rest.Size())
			if err != nil || c.FileSize == 0 || c.FileSize > uint64(rest.Size()) {
				return out, nil // where the next bundle starts is not known
			}
			size = int64(c.FileSize)
		case err != nil:
			unread(off, fmt.Sprintf("an offload bundle that cannot be read: %v", err))
			return out, nil
		default:
			for i, e := range b.Entries {
				id, err := bundle.ParseID(e.ID, r.BundleIDs)
				if err != nil || id.IsHost() {
					continue
				}
				code := b.Open(i)
				d := DeviceImage{Section: s.Name, Offset: off, Index: i, Image: id.Image(bundle.Classify(code, code.Size()), r)}
				if d.Symbols, d.Skipped, err = imageSymbols(code); err != nil {
					d.Symbols, d.Skipped = nil, fmt.Sprintf("a code object that cannot be read: %v", err)
				}
				out = append(out, d)
			}
			size = int64(b.End())
		}
		next, err := nextNonZero(sr, off+max(size, 1))
		if err != nil {
			return out, fmt.Errorf("entries: section %q: %w", s.Name, err)
		}
		off = next
	}
	return out, nil
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
