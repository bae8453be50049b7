package link

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap"
)

// RunCommand runs one of goffload's own steps of a link plan from its
// command line: the arguments after `goffload step` ([Step.Args] without
// "step"), which name everything it reads and writes:
//
//	extract --llvm N --input FILE OBJ:IMG=OUT...
//	    write image IMG of object OBJ of FILE (its objects and their images
//	    numbered from 0, as fatobj reads FILE as release N) to OUT
//	bundle --llvm N [--compress [--compression-level=L]] -o OUT --image TARGETID=FILE...
//	    bundle code objects into a HIP fatbin, as the release's
//	    clang-offload-bundler -type=o does for clang-linker-wrapper
//	wrap --llvm N --kind openmp --triple HOST [--relocatable] -o OUT --image TRIPLE/ARCH=FILE...
//	wrap --llvm N --kind hip|cuda --triple HOST [--relocatable] -o OUT --fatbin FILE
//	    write the registration object of linked images, or of a fatbin
//	finish --llvm N -o OUT MERGED
//	    rename the entries sections of a -r link's merged object, as the
//	    release's wrapper has llvm-objcopy do
//
// Each writes its output whole or not at all. These command lines are made
// by [Plan] for a build system to run; they are stable within one version
// of goffload.
func RunCommand(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: step: no kind (extract, bundle, wrap or finish)", ErrUsage)
	}
	kind, args := StepKind(args[0]), args[1:]
	fs := flag.NewFlagSet("step "+string(kind), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	llvm := fs.Int("llvm", 0, "the release")
	out := fs.String("o", "", "the output")
	var images []string
	fs.Func("image", "an image", func(v string) error { images = append(images, v); return nil })
	var input, wrapKind, triple, fatbin string
	var relocatable, compress bool
	level := -1
	switch kind {
	case StepExtract:
		fs.StringVar(&input, "input", "", "the input file")
	case StepBundle:
		fs.BoolVar(&compress, "compress", false, "compress")
		fs.IntVar(&level, "compression-level", -1, "the level")
	case StepWrap:
		fs.StringVar(&wrapKind, "kind", "", "the offload kind")
		fs.StringVar(&triple, "triple", "", "the host triple")
		fs.BoolVar(&relocatable, "relocatable", false, "for -r")
		fs.StringVar(&fatbin, "fatbin", "", "the fatbin")
	case StepFinish:
	default:
		return fmt.Errorf("%w: step %q: not one of goffload's (extract, bundle, wrap, finish)", ErrUsage, kind)
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: step %s: %v", ErrUsage, kind, err)
	}
	rel, err := release.Lookup(*llvm)
	if err != nil {
		return fmt.Errorf("step %s: --llvm: %w", kind, err)
	}
	rest := fs.Args()
	if kind != StepExtract && *out == "" {
		return fmt.Errorf("%w: step %s: no -o", ErrUsage, kind)
	}
	switch kind {
	case StepExtract:
		return runExtract(rel, input, rest)
	case StepBundle:
		return runBundle(rel, compress, level, *out, images)
	case StepWrap:
		return runWrap(rel, wrapKind, triple, relocatable, *out, images, fatbin)
	default:
		if len(rest) != 1 {
			return fmt.Errorf("%w: step finish: want one merged object", ErrUsage)
		}
		return runFinish(rel, rest[0], *out)
	}
}

// runExtract writes images of input, each OBJ:IMG=OUT of pairs.
func runExtract(rel *release.Release, input string, pairs []string) error {
	if input == "" {
		return fmt.Errorf("%w: step extract: no --input", ErrUsage)
	}
	f, err := fatobj.Open(input, &offloadbinary.ReadOptions{Release: rel})
	if err != nil {
		return err
	}
	defer f.Close()
	for _, pair := range pairs {
		at, out, ok := strings.Cut(pair, "=")
		o, i, ok2 := strings.Cut(at, ":")
		oi, err1 := strconv.Atoi(o)
		ii, err2 := strconv.Atoi(i)
		if !ok || !ok2 || err1 != nil || err2 != nil || out == "" {
			return fmt.Errorf("%w: step extract: %q is not OBJ:IMG=OUT", ErrUsage, pair)
		}
		if oi < 0 || oi >= len(f.Objects) || ii < 0 || ii >= len(f.Objects[oi].Images) {
			return fmt.Errorf("%w: step extract: %s has no image %d of object %d", ErrUsage, input, ii, oi)
		}
		r, err := f.Objects[oi].Images[ii].Reader()
		if err == nil {
			err = copyTo(out, r)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", input, err)
		}
	}
	return nil
}

// runBundle writes the HIP fatbin of the code objects TARGETID=FILE.
func runBundle(rel *release.Release, compress bool, level int, out string, images []string) error {
	if err := bundle.CheckRelease(rel); err != nil {
		return err
	}
	var devs []bundle.CodeObject
	for _, im := range images {
		id, file, ok := strings.Cut(im, "=")
		if !ok || file == "" {
			return fmt.Errorf("%w: step bundle: --image %q is not TARGETID=FILE", ErrUsage, im)
		}
		f, err := infile.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		devs = append(devs, bundle.CodeObject{TargetID: id, Data: io.NewSectionReader(f, 0, f.Size())})
	}
	if compress {
		c, err := bundle.ReleaseCompressOptions(rel, bundle.MethodZstd, max(level, 0))
		if err != nil {
			return fmt.Errorf("--compress: %w", err)
		}
		return atomicfile.Write(out, func(w io.Writer) error {
			_, err := bundle.WriteCompressedHIPFatbin(w, rel, devs, c)
			return err
		})
	}
	r, err := bundle.HIPFatbin(rel, devs)
	if err != nil {
		return err
	}
	return copyTo(out, r)
}

// runWrap writes the registration object of OpenMP images (TRIPLE/ARCH=FILE)
// or of a CUDA or HIP fatbin.
func runWrap(rel *release.Release, kind, triple string, relocatable bool, out string, images []string, fatbin string) error {
	wopt := wrap.Options{Release: rel, Triple: triple, Relocatable: relocatable}
	var o *elfobj.Object
	switch kind {
	case "openmp":
		var bins []wrap.Binary
		for _, im := range images {
			target, file, ok := strings.Cut(im, "=")
			tr, arch, hasArch := strings.Cut(target, "/")
			if !ok || file == "" {
				return fmt.Errorf("%w: step wrap: --image %q is not TRIPLE/ARCH=FILE or TRIPLE=FILE", ErrUsage, im)
			}
			f, err := infile.Open(file)
			if err != nil {
				return err
			}
			defer f.Close()
			im := offloadbinary.LinkedImage(offload.OffloadOpenMP, tr, arch)
			if !hasArch {
				// An image of --override-image whose header names no
				// processor: the wrapper writes no arch.
				im.Strings = im.Strings[:1]
			}
			var head [4]byte
			if n, _ := f.Section().ReadAt(head[:], 0); bitcode.IsBitcode(head[:n]) {
				// A device link that stopped after its LTO
				// (--embed-bitcode): an image of LLVM IR.
				im.Kind = offload.ImageBitcode
			}
			b, err := wrap.FromImage(rel, im, f.Section())
			if err != nil {
				return err
			}
			bins = append(bins, b)
		}
		if wrap.COFFHost(triple) {
			c, err := wrap.OpenMPCOFF(wopt, bins)
			if err != nil {
				return err
			}
			return writeCOFF(out, c)
		}
		var err error
		if o, err = wrap.OpenMP(wopt, bins); err != nil {
			return err
		}
	case "hip", "cuda":
		k := offload.OffloadHIP
		if kind == "cuda" {
			k = offload.OffloadCUDA
		}
		if fatbin == "" {
			return fmt.Errorf("%w: step wrap --kind %s: no --fatbin", ErrUsage, kind)
		}
		f, err := infile.Open(fatbin)
		if err != nil {
			return err
		}
		defer f.Close()
		if wrap.COFFHost(triple) {
			c, err := wrap.GPUCOFF(wopt, k, io.NewSectionReader(f, 0, f.Size()))
			if err != nil {
				return err
			}
			return writeCOFF(out, c)
		}
		if wrap.MachOHost(triple) {
			m, err := wrap.GPUMachO(wopt, k, io.NewSectionReader(f, 0, f.Size()))
			if err != nil {
				return err
			}
			return atomicfile.Write(out, func(w io.Writer) error {
				_, err := machoobj.Write(w, m)
				return err
			})
		}
		if o, err = wrap.GPU(wopt, k, io.NewSectionReader(f, 0, f.Size())); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: step wrap: --kind %q: want openmp, hip or cuda", ErrUsage, kind)
	}
	return writeObject(out, o)
}

// runFinish renames the entries sections of a -r link's merged object.
func runFinish(rel *release.Release, merged, out string) error {
	mf, err := infile.Open(merged)
	if err != nil {
		return err
	}
	defer mf.Close()
	suffix, err := wrap.RelocatableSuffix(mf.Section())
	if err != nil {
		return err
	}
	f, err := elfobj.Read(mf, mf.Size())
	if err != nil {
		return err
	}
	o, err := f.Object()
	if err != nil {
		return err
	}
	if err := wrap.FinishRelocatable(o, rel, suffix); err != nil {
		return err
	}
	o.KeepLayout = true // as llvm-objcopy writes it for LLVM's wrapper
	return writeObject(out, o)
}

// thinFiles returns path and, for a thin archive, the files its members
// are (as fatobj opens them: relative to the archive's folder).
func thinFiles(path string) []string {
	out := []string{path}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	var head [8]byte
	if n, _ := io.ReadFull(f, head[:]); n != len(head) || string(head[:]) != ar.ThinMagic {
		return out
	}
	st, err := f.Stat()
	if err != nil {
		return out
	}
	a, err := ar.Open(f, st.Size())
	if err != nil {
		return out
	}
	var members []string
	for _, m := range a.Members() {
		members = append(members, m.Path(filepath.Dir(path)))
	}
	return appendNew(out, members...)
}

// linkedFiles returns the files a linker's (or, driver, a compiler
// driver's) arguments name for it to read: its input files, the libraries
// its -l options find in its -L folders (libNAME.so, then libNAME.a, as ld
// looks), and its scripts.
func linkedFiles(args []string, driver bool, stat func(string) (fs.FileInfo, error)) []string {
	if driver {
		args, _ = driverToLD(args)
	}
	h, err := scanLD(args, nil, stat)
	if err != nil {
		return nil
	}
	var out []string // with repeats, taken out at the end
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "-T" || a == "--script" || a == "--version-script" || a == "--dynamic-list" || a == "-plugin" || a == "--plugin":
			out = append(out, value())
		case a == "-l" || a == "--library":
			out = append(out, findLibrary(value(), h.dirs, stat)...)
		case strings.HasPrefix(a, "-l") && !ldValueOptions[a]:
			out = append(out, findLibrary(a[2:], h.dirs, stat)...)
		case ldValueOptions[a]:
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			out = append(out, a)
		}
	}
	return appendNew(nil, out...)
}

// findLibrary returns the file -lNAME names, as ld finds it, or nothing.
func findLibrary(name string, dirs []string, stat func(string) (fs.FileInfo, error)) []string {
	candidates := []string{"lib" + name + ".so", "lib" + name + ".a"}
	if exact, ok := strings.CutPrefix(name, ":"); ok {
		candidates = []string{exact}
	}
	for _, d := range dirs {
		for _, c := range candidates {
			p := filepath.Join(d, c)
			if st, err := stat(p); err == nil && st.Mode().IsRegular() {
				return []string{p}
			}
		}
	}
	return nil
}

// appendNew appends the strings of add, but "", that list does not hold
// yet, each once, in time linear in both.
func appendNew(list []string, add ...string) []string {
	seen := make(map[string]bool, len(list)+len(add))
	for _, s := range list {
		seen[s] = true
	}
	for _, a := range add {
		if a != "" && !seen[a] {
			seen[a] = true
			list = append(list, a)
		}
	}
	return list
}

// errStepFailed wraps the failure of a step's program.
var errStepFailed = errors.New("failed")

// writeCOFF writes the COFF object o to out whole or not at all.
func writeCOFF(out string, o *coffobj.Object) error {
	return atomicfile.Write(out, func(w io.Writer) error {
		_, err := coffobj.Write(w, o)
		return err
	})
}
