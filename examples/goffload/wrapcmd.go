package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/wrap"
)

func runWrap(args []string, _ io.Writer) error {
	var llvm, kind, triple, out, suffix string
	var relocatable bool
	var images stringList
	fs := newFlags("wrap", &llvm)
	fs.StringVar(&kind, "kind", "openmp", "offload `kind`: openmp, cuda or hip")
	fs.StringVar(&triple, "triple", "x86_64-unknown-linux-gnu", "the host `triple`")
	fs.StringVar(&out, "o", "", "write the object to `OUT`")
	fs.StringVar(&suffix, "suffix", "", "append `S` to the wrapper's symbol names (openmp)")
	fs.BoolVar(&relocatable, "r", false, "for a relocatable link: the images in .llvm.offloading.relocatable (openmp, LLVM 19+)")
	fs.Var(&images, "image", "hip: a linked AMDGPU code object `TARGETID=FILE` (e.g. gfx90a:xnack+=k.out); repeatable")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if out == "" || (fs.NArg() == 0 && len(images) == 0) {
		return fmt.Errorf("-o OUT and at least one input are required")
	}
	if err := atomicfile.Check(out); err != nil {
		return err
	}
	rel, err := offload.ParseRelease(llvm)
	if err != nil {
		return err
	}
	opt := wrap.Options{Release: rel, Triple: triple, Suffix: suffix, Relocatable: relocatable}
	switch kind {
	case "openmp":
		if len(images) > 0 {
			return fmt.Errorf("--image is for --kind hip; OpenMP images come in offload binaries")
		}
		return wrapOpenMP(out, opt, fs.Args())
	case "cuda":
		if len(images) > 0 || fs.NArg() != 1 {
			return fmt.Errorf("--kind cuda wraps one fatbinary file (what NVIDIA's fatbinary made)")
		}
		return wrapCUDA(out, opt, fs.Arg(0))
	case "hip":
		return wrapHIP(out, opt, fs.Args(), images)
	}
	return fmt.Errorf("--kind %s: want openmp, cuda or hip", kind)
}

func wrapOpenMP(out string, opt wrap.Options, paths []string) error {
	if opt.Release.Wrapper == offload.WrapperOffloadWrapper {
		return wrapRawImages(out, opt, paths)
	}
	var bins []wrap.Binary
	for _, path := range paths {
		f, err := openSized(path)
		if err != nil {
			return err
		}
		defer f.Close()
		all, err := offload.ReadAll(f, f.Size(), &offload.ReadOptions{Release: opt.Release, MaxVersion: 1})
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(all) == 0 {
			return fmt.Errorf("%s: holds no offload binary: %w", path, offload.ErrInvalid)
		}
		for _, b := range all {
			bin, err := wrap.FromBinary(io.NewSectionReader(f, b.Offset, int64(b.Size)), int64(b.Size))
			if err != nil {
				return fmt.Errorf("%s: binary at %#x: %w", path, b.Offset, err)
			}
			bins = append(bins, bin)
		}
	}
	return writeWrapper(out, opt, bins)
}

// wrapRawImages wraps linked device images as they are, as
// clang-offload-wrapper of LLVM 13 and 14 does.
func wrapRawImages(out string, opt wrap.Options, paths []string) error {
	var bins []wrap.Binary
	for _, path := range paths {
		f, err := openSized(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var head [4]byte
		n, _ := f.ReadAt(head[:], 0)
		switch {
		case f.Size() == 0:
			return fmt.Errorf("%s: holds no device image: %w", path, offload.ErrInvalid)
		case n == len(head) && head == offload.Magic:
			return fmt.Errorf("%s: an offload binary, where %v wraps the device image itself (extract --raw writes it): %w", path, opt.Release, offload.ErrInvalid)
		}
		bins = append(bins, wrap.RawImage(f, f.Size()))
	}
	return writeWrapper(out, opt, bins)
}

// wrapCUDA wraps a CUDA fatbinary, copied into the object as is.
func wrapCUDA(out string, opt wrap.Options, path string) error {
	f, err := openSized(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return writeGPU(out, opt, offload.OffloadCUDA, path, wrap.Fatbin{R: f, Size: f.Size()})
}

// wrapHIP wraps either one file that is a HIP fatbin already (an offload
// bundle), or device images: the HIP images of offload binaries (their arch
// is the target ID) and the --image TARGETID=FILE code objects, bundled as
// the release's clang-linker-wrapper has clang-offload-bundler do it.
func wrapHIP(out string, opt wrap.Options, paths, images []string) error {
	br, err := bundle.LookupRelease(opt.Release.Major)
	if err != nil {
		return err
	}
	var devs []bundle.DeviceImage
	for _, path := range paths {
		f, err := openSized(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if isBundle(f) {
			if len(paths) != 1 || len(images) != 0 {
				return fmt.Errorf("%s is a fatbin already: wrap it alone", path)
			}
			// Copied into the object as is, compressed or not.
			return writeGPU(out, opt, offload.OffloadHIP, path, wrap.Fatbin{R: f, Size: f.Size()})
		}
		all, err := offload.ReadAll(f, f.Size(), &offload.ReadOptions{Release: opt.Release})
		if err == nil && len(all) == 0 {
			err = offload.ErrInvalid
		}
		if err != nil {
			return fmt.Errorf("%s: neither an offload bundle nor offload binaries: %w", path, err)
		}
		for _, b := range all {
			for i := range b.Images {
				im := &b.Images[i]
				if im.OffloadKind != offload.OffloadHIP {
					return fmt.Errorf("%s: binary at %#x: image %d is for %v, not hip", path, b.Offset, i, im.OffloadKind)
				}
				if im.Arch() == "" {
					return fmt.Errorf("%s: binary at %#x: image %d has no arch (the AMDGPU target ID)", path, b.Offset, i)
				}
				r, err := b.Open(i)
				if err != nil {
					return fmt.Errorf("%s: binary at %#x: %w", path, b.Offset, err)
				}
				devs = append(devs, bundle.DeviceImage{TargetID: im.Arch(), R: r, Size: r.Size()})
			}
		}
	}
	for _, arg := range images {
		id, path, ok := strings.Cut(arg, "=")
		if !ok || id == "" || path == "" {
			return fmt.Errorf("--image %q: want TARGETID=FILE", arg)
		}
		f, err := openSized(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := amdgpuCodeObject(f); err != nil {
			return fmt.Errorf("--image %s: %s: %w", id, path, err)
		}
		devs = append(devs, bundle.DeviceImage{TargetID: id, R: f, Size: f.Size()})
	}
	fb, err := br.HIPFatbin(devs)
	if err != nil {
		return err
	}
	return writeGPU(out, opt, offload.OffloadHIP, "", wrap.Fatbin{R: fb, Size: fb.Size()})
}

// amdgpuCodeObject checks that r starts as an AMDGPU code object does: a
// 64-bit ELF header for machine EM_AMDGPU. The HIP runtime loads nothing
// else from a fatbin.
func amdgpuCodeObject(r io.ReaderAt) error {
	var h [20]byte
	n, _ := r.ReadAt(h[:], 0)
	switch {
	case n < len(h) || !bytes.HasPrefix(h[:], elfMagic) || h[elf.EI_CLASS] != byte(elf.ELFCLASS64) || h[elf.EI_DATA] != byte(elf.ELFDATA2LSB):
		return fmt.Errorf("not an AMDGPU code object (no 64-bit little-endian ELF header): %w", offload.ErrInvalid)
	case elf.Machine(binary.LittleEndian.Uint16(h[18:])) != elf.EM_AMDGPU:
		return fmt.Errorf("not an AMDGPU code object (machine %v): %w", elf.Machine(binary.LittleEndian.Uint16(h[18:])), offload.ErrInvalid)
	}
	return nil
}

func isBundle(r io.ReaderAt) bool {
	var b [24]byte
	n, _ := r.ReadAt(b[:], 0)
	s := string(b[:n])
	return s == bundle.Magic || strings.HasPrefix(s, bundle.CompressedMagic)
}

// writeGPU wraps fb, which wrap.GPU checks as the runtime would read it
// (naming the file src, if any, when it is no fatbin).
func writeGPU(out string, opt wrap.Options, kind offload.OffloadKind, src string, fb wrap.Fatbin) error {
	o, err := wrap.GPU(opt, kind, fb)
	if src != "" && errors.Is(err, wrap.ErrNotFatbin) {
		return fmt.Errorf("%s: %w", src, err)
	}
	if err != nil {
		return err
	}
	return writeObject(out, o)
}

func writeWrapper(out string, opt wrap.Options, bins []wrap.Binary) error {
	o, err := wrap.OpenMP(opt, bins)
	if err != nil {
		return err
	}
	return writeObject(out, o)
}

// writeObject writes o to out whole or not at all.
func writeObject(out string, o *elfobj.Object) error {
	return atomicfile.Write(out, func(w io.Writer) error {
		_, err := elfobj.Write(w, o)
		return err
	})
}
