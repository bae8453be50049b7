package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap"
)

func runWrap(args []string, stdout io.Writer) error {
	in := &inputs{}
	defer in.close()
	var llvm, kind, triple, out, suffix string
	var relocatable, compress bool
	var compressFormat string
	var compressLevel int
	var images stringList
	fs := newFlags("wrap", &llvm)
	fs.StringVar(&kind, "kind", "openmp", "offload `kind`: openmp, cuda, hip or sycl (22: images in a descriptor; 23: the whole binary, one file)")
	fs.StringVar(&triple, "triple", wrap.DefaultTriple, "the host `triple` (x86-64, AArch64, ppc64le, riscv64 Linux; x86_64-pc-windows-msvc or x86_64-w64-windows-gnu: a COFF object, LLVM 22)")
	fs.StringVar(&out, "o", "", "write the object to `OUT`")
	fs.StringVar(&suffix, "suffix", "", "append `S` to the wrapper's symbol names (openmp)")
	fs.BoolVar(&relocatable, "r", false, "for a relocatable link: the images in .llvm.offloading.relocatable (openmp, LLVM 19+)")
	fs.Var(&images, "image", "hip: a linked AMDGPU code object `TARGETID=FILE` (e.g. gfx90a:xnack+=k.out); repeatable")
	fs.BoolVar(&compress, "compress", false, "hip: compress the fatbin, as clang-linker-wrapper --compress has clang-offload-bundler -compress it")
	fs.StringVar(&compressFormat, "compression-format", "zstd", "with --compress: `zstd` or zlib")
	fs.IntVar(&compressLevel, "compression-level", 0, "with --compress: the level `N` (zstd: any, as libzstd takes it, 0 for the default 3; zlib: 1-9, 0 for the default 6)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if (given["compression-format"] || given["compression-level"]) && !compress {
		return fmt.Errorf("--compression-format and --compression-level go with --compress")
	}
	if compress && kind != "hip" {
		return fmt.Errorf("--compress is for --kind hip: it compresses the HIP fatbin")
	}
	if out == "" || (fs.NArg() == 0 && len(images) == 0) {
		return fmt.Errorf("-o OUT and at least one input are required")
	}
	dest := newOutput(out, stdout)
	if err := dest.check(); err != nil {
		return err
	}
	rel, err := parseRelease(llvm)
	if err != nil {
		return err
	}
	opt := wrap.Options{Release: rel, Triple: triple, Suffix: suffix, Relocatable: relocatable}
	switch kind {
	case "openmp":
		if len(images) > 0 {
			return fmt.Errorf("--image is for --kind hip; OpenMP images come in offload binaries")
		}
		return wrapOpenMP(in, dest, opt, fs.Args())
	case "cuda":
		if len(images) > 0 || fs.NArg() != 1 {
			return fmt.Errorf("--kind cuda wraps one fatbinary file (what NVIDIA's fatbinary made)")
		}
		return wrapCUDA(dest, opt, fs.Arg(0))
	case "hip":
		var comp *bundle.CompressOptions
		if compress {
			if comp, err = hipCompression(rel, compressFormat, compressLevel); err != nil {
				return err
			}
		}
		return wrapHIP(dest, opt, fs.Args(), images, comp)
	case "sycl":
		switch {
		case len(images) > 0:
			return fmt.Errorf("--image is for --kind hip; SYCL images come in offload binaries (what clang-sycl-linker writes)")
		case suffix != "" || relocatable:
			return fmt.Errorf("--suffix and -r are for --kind openmp: LLVM's SYCL wrapper has neither")
		}
		return wrapSYCL(in, dest, opt, fs.Args())
	}
	return fmt.Errorf("--kind %s: want openmp, cuda, hip or sycl", kind)
}

func wrapOpenMP(in *inputs, out output, opt wrap.Options, paths []string) error {
	var bins []wrap.Binary
	err := in.each(paths, func(f *infile.File) error {
		if opt.Release.BinaryVersion == 0 { // LLVM 13, 14: clang-offload-wrapper's raw images
			bin, err := wrap.ReadRawImage(f.Section())
			bins = append(bins, bin)
			if err != nil {
				return fmt.Errorf("%w (extract --raw writes the image)", err)
			}
			return nil
		}
		// As the release reads them: version 1 up to 22, 1 and 2 in 23, 1
		// to 3 (compressed or not) in main after 23.
		all, err := wrap.ReadBinaries(f.Section(), opt.Release)
		bins = append(bins, all...)
		return err
	})
	if err != nil {
		return err
	}
	return writeWrapper(out, opt, bins)
}

// inputs are the files a command opened, open until it ends: the objects
// made of them read them when they are written.
type inputs struct{ files []*infile.File }

func (in *inputs) close() {
	for _, f := range in.files {
		f.Close()
	}
}

// each calls fn with each file of paths opened, and names the file in what
// fn returns.
func (in *inputs) each(paths []string, fn func(f *infile.File) error) error {
	for _, path := range paths {
		f, err := openSized(path)
		if err != nil {
			return err
		}
		in.files = append(in.files, f)
		if err := fn(f); err != nil {
			if errors.Is(err, goffload.ErrUnsupported) {
				return err // the release or the host, not the file
			}
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// wrapSYCL wraps the SYCL images of the offload binaries in paths (each file
// one binary or several in a row, as clang-sycl-linker writes them) as the
// release's wrapSYCLBinaries does: 22 describes each image; 23 and main
// register the one binary clang-sycl-linker wrote, embedded as it is (23's
// form is refused by wrap.SYCLBinary: not written).
func wrapSYCL(in *inputs, out output, opt wrap.Options, paths []string) error {
	if opt.Release.SYCLWholeBinary() && len(paths) != 1 {
		return fmt.Errorf("--kind sycl with %v wraps one offload binary file (what clang-sycl-linker writes: its wrapSYCLBinaries registers one buffer), not %d", opt.Release, len(paths))
	}
	var images []wrap.SYCLImage
	var o *elfobj.Object
	err := in.each(paths, func(f *infile.File) error {
		var err error
		if opt.Release.SYCLWholeBinary() {
			o, err = wrap.SYCLBinary(opt, f, f.Size())
			return err
		}
		ims, err := wrap.SYCLImages(opt.Release, f, f.Size())
		images = append(images, ims...)
		return err
	})
	if err == nil && o == nil {
		o, err = wrap.SYCL(opt, images)
	}
	if err != nil {
		return err
	}
	return writeObject(out, o)
}

// wrapCUDA wraps a CUDA fatbinary, copied into the object as is.
func wrapCUDA(out output, opt wrap.Options, path string) error {
	f, err := openSized(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return writeGPU(out, opt, offload.OffloadCUDA, path, f.Section())
}

// hipCompression returns the options with which release rel's
// clang-linker-wrapper --compress [--compression-level=N] has
// clang-offload-bundler compress a HIP fatbin.
func hipCompression(rel *release.Release, format string, level int) (*bundle.CompressOptions, error) {
	if err := bundle.CheckRelease(rel); err != nil {
		return nil, fmt.Errorf("--compress: %w", err)
	}
	method, err := bundle.ParseMethod(format)
	if err != nil {
		return nil, fmt.Errorf("--compression-format %s: %w", format, err)
	}
	c, err := bundle.ReleaseCompressOptions(rel, method, level)
	if errors.Is(err, bundle.ErrCompressOptions) {
		return nil, fmt.Errorf("--compression-level %d: %w", level, err)
	}
	if err != nil {
		return nil, fmt.Errorf("--compress: %w", err)
	}
	return &c, nil
}

// wrapHIP wraps either one file that is a HIP fatbin already (an offload
// bundle), or device images: the HIP images of offload binaries (their arch
// is the target ID) and the --image TARGETID=FILE code objects, bundled as
// the release's clang-linker-wrapper has clang-offload-bundler do it. With
// comp, the fatbin (an uncompressed one given too) is compressed with it
// first.
func wrapHIP(out output, opt wrap.Options, paths, images []string, comp *bundle.CompressOptions) error {
	var objs []bundle.CodeObject
	for _, path := range paths {
		f, err := openSized(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if bundle.Classify(f, f.Size()) == bundle.ContentsBundle {
			if len(paths) != 1 || len(images) != 0 {
				return fmt.Errorf("%s is a fatbin already: wrap it alone", path)
			}
			fb := f.Section()
			if comp != nil {
				if fb, err = wrap.CompressFatbin(fb, *comp); err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
			}
			// Else copied into the object as is, compressed or not.
			return writeGPU(out, opt, offload.OffloadHIP, path, fb)
		}
		objs1, err := wrap.HIPCodeObjects(f.Section(), opt.Release)
		if err != nil {
			return fmt.Errorf("%s: neither an offload bundle nor offload binaries of HIP images: %w", path, err)
		}
		objs = append(objs, objs1...)
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
		if err := wrap.CheckCodeObject(f); err != nil {
			return fmt.Errorf("--image %s: %s: %w", id, path, err)
		}
		objs = append(objs, bundle.CodeObject{TargetID: id, Data: f.Section()})
	}
	fb, err := wrap.HIPFatbin(opt.Release, objs, comp)
	if err != nil {
		return err
	}
	return writeGPU(out, opt, offload.OffloadHIP, "", fb)
}

// writeGPU wraps fb, which wrap.GPU checks as the runtime would read it
// (naming the file src, if any, when it is no fatbin).
func writeGPU(out output, opt wrap.Options, kind offload.OffloadKind, src string, fb *io.SectionReader) error {
	if wrap.COFFHost(opt.Triple) {
		o, err := wrap.GPUCOFF(opt, kind, fb)
		if src != "" && errors.Is(err, wrap.ErrNotFatbin) {
			return fmt.Errorf("%s: %w", src, err)
		}
		if err != nil {
			return err
		}
		return writeCOFF(out, o)
	}
	if wrap.MachOHost(opt.Triple) {
		o, err := wrap.GPUMachO(opt, kind, fb)
		if src != "" && errors.Is(err, wrap.ErrNotFatbin) {
			return fmt.Errorf("%s: %w", src, err)
		}
		if err != nil {
			return err
		}
		return out.write(func(w io.Writer) error {
			_, err := machoobj.Write(w, o)
			return err
		})
	}
	o, err := wrap.GPU(opt, kind, fb)
	if src != "" && errors.Is(err, wrap.ErrNotFatbin) {
		return fmt.Errorf("%s: %w", src, err)
	}
	if err != nil {
		return err
	}
	return writeObject(out, o)
}

func writeWrapper(out output, opt wrap.Options, bins []wrap.Binary) error {
	if wrap.COFFHost(opt.Triple) {
		o, err := wrap.OpenMPCOFF(opt, bins)
		if err != nil {
			return err
		}
		return writeCOFF(out, o)
	}
	o, err := wrap.OpenMP(opt, bins)
	if err != nil {
		return err
	}
	return writeObject(out, o)
}

// writeObject writes o to out whole or not at all.
func writeObject(out output, o *elfobj.Object) error {
	return out.write(func(w io.Writer) error {
		_, err := elfobj.Write(w, o)
		return err
	})
}

// writeCOFF writes the COFF object o to out whole or not at all.
func writeCOFF(out output, o *coffobj.Object) error {
	return out.write(func(w io.Writer) error {
		_, err := coffobj.Write(w, o)
		return err
	})
}
