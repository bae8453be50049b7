package wrap

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// HIPCodeObjects returns the HIP images of the OffloadBinaries in data (one,
// or several back to back) as the code objects of a HIP fatbin, read as
// release rel reads them (nil: each as the release that made it): what
// clang-linker-wrapper bundles after the device link. An image's arch is
// its target ID. An image of another kind or without an arch, or data that
// holds no binary, is an error.
func HIPCodeObjects(data *io.SectionReader, rel *release.Release) ([]bundle.CodeObject, error) {
	var opt *offloadbinary.ReadOptions
	if rel != nil {
		opt = &offloadbinary.ReadOptions{Release: rel}
	}
	all, err := offloadbinary.ReadAll(data, data.Size(), opt)
	if err == nil && len(all) == 0 {
		err = fmt.Errorf("holds no offload binary: %w", goffload.ErrInvalid)
	}
	if err != nil {
		return nil, err
	}
	var objs []bundle.CodeObject
	for _, b := range all {
		for i := range b.Images {
			im := &b.Images[i]
			if im.OffloadKind != offload.OffloadHIP {
				return nil, fmt.Errorf("binary at %#x: image %d is for %v, not hip: %w", b.Offset, i, im.OffloadKind, goffload.ErrInvalid)
			}
			if im.Arch() == "" {
				return nil, fmt.Errorf("binary at %#x: image %d has no arch (the AMDGPU target ID): %w", b.Offset, i, goffload.ErrInvalid)
			}
			r, err := b.Open(i)
			if err != nil {
				return nil, fmt.Errorf("binary at %#x: %w", b.Offset, err)
			}
			objs = append(objs, bundle.CodeObject{TargetID: im.Arch(), Data: r})
		}
	}
	return objs, nil
}

// CheckCodeObject reports whether r starts as an AMDGPU code object does: a
// 64-bit little-endian ELF header for machine EM_AMDGPU. The HIP runtime
// loads nothing else from a fatbin.
func CheckCodeObject(r io.ReaderAt) error {
	var h [20]byte
	n, _ := r.ReadAt(h[:], 0)
	switch {
	case n < len(h) || !bytes.HasPrefix(h[:], []byte("\x7fELF")) || h[elf.EI_CLASS] != byte(elf.ELFCLASS64) || h[elf.EI_DATA] != byte(elf.ELFDATA2LSB):
		return fmt.Errorf("not an AMDGPU code object (no 64-bit little-endian ELF header): %w", goffload.ErrInvalid)
	case elf.Machine(binary.LittleEndian.Uint16(h[18:])) != elf.EM_AMDGPU:
		return fmt.Errorf("not an AMDGPU code object (machine %v): %w", elf.Machine(binary.LittleEndian.Uint16(h[18:])), goffload.ErrInvalid)
	}
	return nil
}

// HIPFatbin returns the fatbin of objs as release rel's clang-linker-wrapper
// has clang-offload-bundler write it, byte for byte (see
// bundle.HIPFatbin), compressed with comp when it is not nil (see
// bundle.Compress). The code objects are not checked: see
// [CheckCodeObject].
func HIPFatbin(rel *release.Release, objs []bundle.CodeObject, comp *bundle.CompressOptions) (*io.SectionReader, error) {
	if rel == nil {
		rel = release.Default()
	}
	if err := bundle.CheckRelease(rel); err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.Data == nil {
			return nil, fmt.Errorf("wrap: code object %s: no data: %w", o.TargetID, goffload.ErrInvalid)
		}
	}
	fb, err := bundle.HIPFatbin(rel, objs)
	if err != nil || comp == nil {
		return fb, err
	}
	return bundle.Compress(fb, *comp)
}

// CompressFatbin returns the uncompressed HIP fatbin fb (an offload bundle)
// compressed with comp, as clang-offload-bundler -compress writes it. A
// bundle compressed already, or input that is none, is an error.
func CompressFatbin(fb *io.SectionReader, comp bundle.CompressOptions) (*io.SectionReader, error) {
	if _, err := bundle.Read(fb, fb.Size()); err != nil {
		if errors.Is(err, bundle.ErrCompressed) {
			return nil, fmt.Errorf("wrap: a compressed bundle already: %w", goffload.ErrInvalid)
		}
		return nil, err
	}
	return bundle.Compress(fb, comp)
}
