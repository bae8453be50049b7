package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/internal/objfmt"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/wrap"
)

// runEmbed makes a fat object, as clang -fembed-offload-object does.
func runEmbed(args []string, stdout io.Writer) error {
	var llvm, out, into, triple string
	fs := newFlags("embed", &llvm)
	fs.StringVar(&out, "o", "", "write the object to `OUT`")
	fs.StringVar(&into, "into", "", "add the binaries to the host object `HOST.o` (else make a new object)")
	fs.StringVar(&triple, "triple", wrap.DefaultTriple, "the host `triple` of a new object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if out == "" || fs.NArg() == 0 {
		return fmt.Errorf("-o OUT and at least one BINARY are required")
	}
	dest := newOutput(out, stdout)
	if err := dest.check(); err != nil {
		return err
	}
	if _, err := parseRelease(llvm); err != nil {
		return err
	}
	h, closeIn, err := embedHost(into, triple)
	if err != nil {
		return err
	}
	defer closeIn()
	for _, path := range fs.Args() {
		f, err := openSized(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := h.embed(f.Section()); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return fromInput(into, h.write(dest))
}

// host is the object embed adds binaries to, of any host format.
type host struct {
	embed func(*io.SectionReader) error
	write func(output) error
}

func elfHost(o *elfobj.Object) host {
	return host{func(r *io.SectionReader) error { return fatobj.Embed(o, r) },
		func(dest output) error { return writeObject(dest, o) }}
}

func coffHost(o *coffobj.Object) host {
	return host{func(r *io.SectionReader) error { return fatobj.EmbedCOFF(o, r) },
		func(dest output) error {
			return dest.write(func(w io.Writer) error { _, err := coffobj.Write(w, o); return err })
		}}
}

func machoHost(o *machoobj.Object) host {
	return host{func(r *io.SectionReader) error { return fatobj.EmbedMachO(o, r) },
		func(dest output) error {
			return dest.write(func(w io.Writer) error { _, err := machoobj.Write(w, o); return err })
		}}
}

// embedHost returns the object embed adds binaries to: the host object
// into, ELF, COFF or Mach-O, or a new one for triple (COFF for a Windows
// triple, Mach-O for an Apple one).
func embedHost(into, triple string) (host, func(), error) {
	if into == "" {
		switch objfmt.Of(triple) {
		case "COFF":
			co, err := fatobj.NewCOFFHostObject(triple)
			return coffHost(co), func() {}, err
		case "Mach-O":
			mo, err := fatobj.NewMachOHostObject(triple)
			return machoHost(mo), func() {}, err
		}
		o, err := fatobj.NewHostObject(triple)
		return elfHost(o), func() {}, err
	}
	f, err := openSized(into)
	if err != nil {
		return host{}, nil, err
	}
	h, err := loadHost(f)
	if err != nil {
		f.Close()
		return host{}, nil, fmt.Errorf("%s: %w", into, err)
	}
	return h, func() { f.Close() }, nil
}

// loadHost loads the object of f by its first bytes: ELF, Mach-O, else
// COFF (which has no magic number).
func loadHost(f *infile.File) (host, error) {
	var head [8]byte
	f.ReadAt(head[:], 0)
	switch {
	case string(head[:4]) == "\x7fELF":
		ef, err := elfobj.Read(f, f.Size())
		if err != nil {
			return host{}, err
		}
		o, err := ef.Object()
		return elfHost(o), err
	case machoobj.IsMachO(head[:]):
		mf, err := machoobj.Read(f, f.Size())
		if err != nil {
			return host{}, err
		}
		if mf.Cpu != machoobj.CpuAmd64 && mf.Cpu != machoobj.CpuArm64 {
			return host{}, fmt.Errorf("cpu %v: not x86-64 or arm64 Mach-O: %w", mf.Cpu, goffload.ErrUnsupported)
		}
		o, err := mf.Object()
		return machoHost(o), err
	}
	cf, err := coffobj.Read(f, f.Size())
	switch {
	case err != nil:
	case cf.Image:
		err = fmt.Errorf("a PE image, not an object: %w", goffload.ErrUnsupported)
	case cf.Machine != coffobj.MachineAMD64 && cf.Machine != coffobj.MachineARM64:
		// What LLVM takes for COFF starts with its machine; these two are
		// the ones written.
		err = fmt.Errorf("machine %#x: not x86-64 or AArch64 COFF: %w", cf.Machine, goffload.ErrUnsupported)
	}
	if err != nil {
		return host{}, fmt.Errorf("not an ELF or Mach-O object, and as COFF: %w", err)
	}
	o, err := cf.Object()
	return coffHost(o), err
}

// fromInput names the input an object was loaded from in an error of
// writing it that says the object is inconsistent: its fault, not the
// output's.
func fromInput(in string, err error) error {
	if in != "" && (errors.Is(err, elfobj.ErrInconsistent) || errors.Is(err, coffobj.ErrInconsistent) || errors.Is(err, machoobj.ErrInconsistent)) {
		return fmt.Errorf("%s: %w", in, err)
	}
	return err
}

// runExtract writes out the selected device images of objects, archives,
// executables and shared objects (fatobj.PlanExtract).
func runExtract(args []string, stdout io.Writer) error {
	var llvm, triple, arch, kind, dir, member string
	var raw bool
	var maxBytes int64
	fs := newFlags("extract", &llvm)
	fs.StringVar(&triple, "triple", "", "select images for `TRIPLE`")
	fs.StringVar(&arch, "arch", "", "select images for `ARCH`")
	fs.StringVar(&kind, "kind", "", "select images of offload `KIND`")
	fs.BoolVar(&raw, "raw", false, "write the images themselves, named as clang-offload-packager names them (else the OffloadBinaries)")
	fs.StringVar(&dir, "o", ".", "write the files into `DIR`")
	fs.Int64Var(&maxBytes, "max-bytes", 0, "write at most `N` bytes in all (default: 16 times the inputs' size plus 1 MiB, plus the bytes inflated from compressed images, each once; -1: no bound)")
	fs.StringVar(&member, "member", "", "select the archive members named `NAME` (as llvm-offload-binary's member=NAME)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("no input file")
	}
	readOpt, err := readOptions(llvm)
	if err != nil {
		return err
	}
	opt := &fatobj.ExtractOptions{Raw: raw, Member: member, MaxBytes: maxBytes, Filter: fatobj.Filter{Strings: map[string]string{}, Kind: kind}}
	if readOpt != nil {
		opt.Release = readOpt.Release
	}
	// A flag given, even empty (`--arch ""`), must match.
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "triple" || f.Name == "arch" {
			opt.Filter.Strings[f.Name] = f.Value.String()
		}
	})
	// Every input is read and every file named before the first is written,
	// so that bad input writes nothing.
	var files []*fatobj.File
	for _, path := range fs.Args() {
		f, err := fatobj.Open(path, readOpt)
		if err != nil {
			return err
		}
		defer f.Close()
		files = append(files, f)
	}
	x, err := fatobj.PlanExtract(files, opt)
	if err != nil {
		return err
	}
	if err := x.Write(dir); err != nil {
		return err
	}
	counts := map[*fatobj.File]int{}
	nested := false
	for _, f := range x.Files {
		counts[f.File]++
		nested = nested || f.Image.Object.Release.Main.NestedImages && opt.Release == nil || opt.Release != nil && opt.Release.Main.NestedImages
	}
	if nested {
		// As llvm-offload-binary of main reports them.
		for _, f := range x.Files {
			fmt.Fprintf(stdout, "Extracted: %s\n", shown(f.Name))
		}
		return nil
	}
	for i, f := range files {
		fmt.Fprintf(stdout, "%s: %d image(s) extracted\n", fs.Arg(i), counts[f])
	}
	return nil
}

// runStrip keeps only the chosen targets' device code in an object or in
// every object of an archive (fatobj.StripFile).
func runStrip(args []string, stdout io.Writer) error {
	var llvm, out string
	var keep stringList
	fs := newFlags("strip", &llvm)
	fs.Var(&keep, "keep", "keep the device code of `TRIPLE[:ARCH]` (repeatable)")
	fs.StringVar(&out, "o", "", "write the result to `OUT`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if out == "" || fs.NArg() != 1 || len(keep) == 0 {
		return fmt.Errorf("--keep TRIPLE[:ARCH], -o OUT and one input are required")
	}
	dest := newOutput(out, stdout)
	if err := dest.check(); err != nil {
		return err
	}
	readOpt, err := readOptions(llvm)
	if err != nil {
		return err
	}
	var targets []fatobj.Target
	for _, k := range keep {
		t, err := fatobj.ParseTarget(k)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	f, err := fatobj.Open(fs.Arg(0), readOpt)
	if err != nil {
		return err
	}
	defer f.Close()
	var results []fatobj.StripResult
	err = dest.write(func(w io.Writer) error {
		var err error
		results, err = fatobj.StripFile(w, f, targets)
		return err
	})
	if err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(dest.report(), "%s: %s\n", shown(r.Object.Name), escaped(fmt.Sprint(r.Stripped)))
	}
	return nil
}
