package main

import (
	"bytes"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/ar"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/offload"
)

// runEmbed makes a fat object, as clang -fembed-offload-object does.
func runEmbed(args []string, _ io.Writer) error {
	var llvm, out, into, triple string
	fs := newFlags("embed", &llvm)
	fs.StringVar(&out, "o", "", "write the object to `OUT`")
	fs.StringVar(&into, "into", "", "add the binaries to the host object `HOST.o` (else make a new object)")
	fs.StringVar(&triple, "triple", "x86_64-unknown-linux-gnu", "the host `triple` of a new object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if out == "" || fs.NArg() == 0 {
		return fmt.Errorf("-o OUT and at least one BINARY are required")
	}
	rel, err := offload.ParseRelease(llvm)
	if err != nil {
		return err
	}
	var o *elfobj.Object
	if into != "" {
		f, closeIn, err := openObject(into)
		if err != nil {
			return err
		}
		defer closeIn()
		if o, err = f.Object(); err != nil {
			return fmt.Errorf("%s: %w", into, err)
		}
	} else {
		if o, err = elfobj.ForTriple(triple); err != nil {
			return err
		}
		o.AddSection(&elfobj.Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS, Addralign: 1}, false)
	}
	var srcs []fatobj.Source
	for _, path := range fs.Args() {
		f, size, err := openSized(path)
		if err != nil {
			return err
		}
		defer f.Close()
		// Check that the file is a sequence of binaries, as LLVM will read it.
		if _, err := offload.ReadAll(f, size, &offload.ReadOptions{Release: rel}); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		srcs = append(srcs, fatobj.Source{R: io.NewSectionReader(f, 0, size), Size: size})
	}
	if err := fatobj.Embed(o, srcs...); err != nil {
		return err
	}
	return writeObject(out, o)
}

func openObject(path string) (*elfobj.File, func(), error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, nil, err
	}
	ef, err := elfobj.Read(f, size)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return ef, func() { f.Close() }, nil
}

// runExtract writes out the selected device images of objects, archives,
// executables and shared objects.
func runExtract(args []string, stdout io.Writer) error {
	var llvm, triple, arch, kind, dir string
	var raw bool
	fs := newFlags("extract", &llvm)
	fs.StringVar(&triple, "triple", "", "select images for `TRIPLE`")
	fs.StringVar(&arch, "arch", "", "select images for `ARCH`")
	fs.StringVar(&kind, "kind", "", "select images of offload `KIND`")
	fs.BoolVar(&raw, "raw", false, "write the images themselves, named as clang-offload-packager names them (else the OffloadBinaries)")
	fs.StringVar(&dir, "o", ".", "write the files into `DIR`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("no input file")
	}
	rel, err := offload.ParseRelease(llvm)
	if err != nil {
		return err
	}
	filter := fatobj.Filter{Strings: map[string]string{}, Kind: kind}
	// A flag given, even empty (`--arch ""`), must match.
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "triple" || f.Name == "arch" {
			filter.Strings[f.Name] = f.Value.String()
		}
	})
	opt := &offload.ReadOptions{Release: rel}
	for _, path := range fs.Args() {
		n, err := extractFile(dir, path, filter, raw, opt)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %d image(s) extracted\n", path, n)
	}
	return nil
}

func extractFile(dir, path string, filter fatobj.Filter, raw bool, opt *offload.ReadOptions) (int, error) {
	ins, done, err := openInputs(path)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	defer done()
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	index := 0
	for _, in := range ins {
		bins, err := in.binaries(opt)
		if err != nil {
			return index, fmt.Errorf("%s: %w", in.name, err)
		}
		for _, b := range bins {
			for i := range b.Images {
				im := &b.Images[i]
				if !filter.Match(opt.Release, im) {
					continue
				}
				name := fatobj.PackagerName(stem, &im.Image, index)
				var r io.Reader
				if raw {
					if r, err = b.Open(i); err != nil {
						return index, fmt.Errorf("%s: %w", in.name, err)
					}
				} else {
					name = binaryName(stem, &im.Image, index)
					r = b.Reader()
				}
				if err := copyTo(filepath.Join(dir, name), r); err != nil {
					return index, err
				}
				index++
			}
		}
		fbs, fbDone, err := in.hipFatbins()
		if err != nil {
			return index, fmt.Errorf("%s: %w", in.name, err)
		}
		index, err = extractBundles(dir, stem, index, fbs, filter, raw, opt.Release)
		fbDone()
		if err != nil {
			return index, fmt.Errorf("%s: %w", in.name, err)
		}
	}
	return index, nil
}

// binaryName names an extracted OffloadBinary as the packager names its
// image, with the extension "offload".
func binaryName(stem string, im *offload.Image, index int) string {
	return strings.TrimSuffix(fatobj.PackagerName(stem, im, index), im.Kind.Extension()) + "offload"
}

// extractBundles extracts the device code objects of HIP fatbins (not the
// empty host entries) that filter selects, seen as the images that
// clang-linker-wrapper made them from: kind elf, offload kind hip, the
// entry's triple and target ID as arch. With raw the code object is written,
// else an OffloadBinary holding it.
func extractBundles(dir, stem string, index int, fbs []hipFatbin, filter fatobj.Filter, raw bool, r *offload.Release) (int, error) {
	for _, fb := range fbs {
		for i, e := range fb.Entries {
			im, ok := bundleImage(e.ID)
			if !ok || e.Size == 0 || !filter.Match(r, &offload.BinaryImage{Image: im}) {
				continue
			}
			data := fb.Open(i)
			var err error
			if raw {
				err = copyTo(filepath.Join(dir, fatobj.PackagerName(stem, &im, index)), data)
			} else {
				err = atomicfile.Write(filepath.Join(dir, binaryName(stem, &im, index)), 0o644, func(w io.Writer) error {
					_, err := offload.WriteBinary(w, r, &im, data, data.Size())
					return err
				})
			}
			if err != nil {
				return index, err
			}
			index++
		}
	}
	return index, nil
}

// runStrip keeps only the chosen targets' device code in an object or in
// every object of an archive.
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
	rel, err := offload.ParseRelease(llvm)
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
	in := fs.Arg(0)
	f, size, err := openSized(in)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := f.ReadAt(head, 0)
	if ar.IsArchive(head[:n]) {
		return stripArchive(stdout, in, f, size, out, rel, targets)
	}
	ef, err := elfobj.Read(f, size)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	o, err := ef.Object()
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	kept, dropped, err := fatobj.Strip(o, rel, targets)
	if err != nil && err != fatobj.ErrNoOffloading {
		return fmt.Errorf("%s: %w", in, err)
	}
	fmt.Fprintf(stdout, "%s: kept %d, dropped %d device binaries\n", in, kept, dropped)
	return writeObject(out, o)
}

// stripArchive strips every object member of an archive and writes a GNU
// archive with the same members, names, headers and symbol index.
func stripArchive(stdout io.Writer, path string, r io.ReaderAt, size int64, out string, rel *offload.Release, targets []fatobj.Target) error {
	a, err := ar.Open(r, size)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if a.Kind() == ar.Thin {
		return fmt.Errorf("%s: a thin archive: strip the member files themselves", path)
	}
	syms, err := a.Symbols()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	bySym := map[int][]string{}
	for _, s := range syms {
		bySym[s.Member] = append(bySym[s.Member], s.Name)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".goffload-strip")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var members []ar.NewMember
	for i, m := range a.Members() {
		sr, err := a.Open(m)
		if err != nil {
			return fmt.Errorf("%s(%s): %w", path, m.Name, err)
		}
		nm := ar.NewMember{Name: m.Name, Date: m.Date, UID: m.UID, GID: m.GID, Mode: m.Mode, R: sr, Size: m.Size, Symbols: bySym[i]}
		var magic [4]byte
		if n, _ := sr.ReadAt(magic[:], 0); n == 4 && bytes.Equal(magic[:], elfMagic) {
			stripped, kept, dropped, err := stripMember(sr, rel, targets, filepath.Join(tmp, fmt.Sprint(i)))
			if err != nil {
				return fmt.Errorf("%s(%s): %w", path, m.Name, err)
			}
			if stripped != nil {
				defer stripped.Close()
				st, err := stripped.Stat()
				if err != nil {
					return err
				}
				nm.R, nm.Size = stripped, st.Size()
			}
			fmt.Fprintf(stdout, "%s(%s): kept %d, dropped %d device binaries\n", path, m.Name, kept, dropped)
		}
		members = append(members, nm)
	}
	return atomicfile.Write(out, 0o644, func(w io.Writer) error { return ar.WriteGNU(w, members) })
}

// stripMember writes the stripped object to the file tmp and returns it open
// at its start, or nil when the member has no device code to strip.
func stripMember(sr *io.SectionReader, rel *offload.Release, targets []fatobj.Target, tmp string) (*os.File, int, int, error) {
	ef, err := elfobj.Read(sr, sr.Size())
	if err != nil {
		return nil, 0, 0, err
	}
	if ef.Type != elf.ET_REL { // kept as it is
		return nil, 0, 0, nil
	}
	o, err := ef.Object()
	if err != nil {
		return nil, 0, 0, err
	}
	kept, dropped, err := fatobj.Strip(o, rel, targets)
	if err == fatobj.ErrNoOffloading {
		return nil, 0, 0, nil
	}
	if err != nil {
		return nil, 0, 0, err
	}
	if err := writeObject(tmp, o); err != nil {
		return nil, 0, 0, err
	}
	f, err := os.Open(tmp)
	return f, kept, dropped, err
}
