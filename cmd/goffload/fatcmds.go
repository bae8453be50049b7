package main

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
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
	if err := atomicfile.Check(out); err != nil {
		return err
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
		f, err := openSized(path)
		if err != nil {
			return err
		}
		defer f.Close()
		// Check that the file is a sequence of binaries, as LLVM will read it.
		bins, err := offload.ReadAll(f, f.Size(), &offload.ReadOptions{Release: rel})
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(bins) == 0 {
			return fmt.Errorf("%s: holds no offload binary: %w", path, goffload.ErrInvalid)
		}
		srcs = append(srcs, fatobj.Source{R: f, Size: f.Size()})
	}
	if err := fatobj.Embed(o, srcs...); err != nil {
		return err
	}
	return fromInput(into, writeObject(out, o))
}

// fromInput names the input an object was loaded from in an error of
// writing it that says the object is inconsistent: its fault, not the
// output's.
func fromInput(in string, err error) error {
	if in != "" && errors.Is(err, elfobj.ErrInconsistent) {
		return fmt.Errorf("%s: %w", in, err)
	}
	return err
}

func openObject(path string) (*elfobj.File, func(), error) {
	f, err := openSized(path)
	if err != nil {
		return nil, nil, err
	}
	ef, err := elfobj.Read(f, f.Size())
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return ef, func() { f.Close() }, nil
}

// runExtract writes out the selected device images of objects, archives,
// executables and shared objects.
func runExtract(args []string, stdout io.Writer) error {
	var llvm, triple, arch, kind, dir, member string
	var raw bool
	fs := newFlags("extract", &llvm)
	fs.StringVar(&triple, "triple", "", "select images for `TRIPLE`")
	fs.StringVar(&arch, "arch", "", "select images for `ARCH`")
	fs.StringVar(&kind, "kind", "", "select images of offload `KIND`")
	fs.BoolVar(&raw, "raw", false, "write the images themselves, named as clang-offload-packager names them (else the OffloadBinaries)")
	fs.StringVar(&dir, "o", ".", "write the files into `DIR`")
	fs.StringVar(&member, "member", "", "select the archive members named `NAME` (as llvm-offload-binary's member=NAME)")
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
	x := &extractor{rel: rel, raw: raw, member: member, filter: fatobj.Filter{Strings: map[string]string{}, Kind: kind}, names: map[string]string{}}
	// A flag given, even empty (`--arch ""`), must match.
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "triple" || f.Name == "arch" {
			x.filter.Strings[f.Name] = f.Value.String()
		}
	})
	// Every input is read and every file named before the first is written,
	// so that bad input writes nothing.
	var counts []int
	for _, path := range fs.Args() {
		n, done, err := x.plan(path)
		if err != nil {
			return err
		}
		defer done()
		counts = append(counts, n)
	}
	if err := x.write(dir); err != nil {
		return err
	}
	if rel.NestedImages {
		// As llvm-offload-binary of main reports them.
		for _, f := range x.files {
			fmt.Fprintf(stdout, "Extracted: %s\n", f.name)
		}
		return nil
	}
	for i, path := range fs.Args() {
		fmt.Fprintf(stdout, "%s: %d image(s) extracted\n", path, counts[i])
	}
	return nil
}

// extractor plans the files that extract writes, then writes them.
type extractor struct {
	rel    *offload.Release
	raw    bool
	member string // select only archive members of this name
	skip   bool   // the input being planned is not selected by member
	filter fatobj.Filter
	files  []extracted
	names  map[string]string // file name → the input it comes from
	total  int64
	paths  []string // the inputs, as given
}

// extracted is one file to write.
type extracted struct {
	from, name string
	size       int64 // bytes it takes
	write      func(w io.Writer) error
}

// plan adds the files of the images of path. The index of an image counts
// on from the previous inputs', so no two files have one name.
func (x *extractor) plan(path string) (int, func(), error) {
	ins, done, err := openInputs(path)
	if err != nil {
		return 0, nil, inFile(path, err)
	}
	stem := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	first := len(x.files)
	x.paths = append(x.paths, path)
	for _, in := range ins {
		if err := x.planInput(stem, in); err != nil {
			done()
			return 0, nil, err
		}
	}
	return len(x.files) - first, done, nil
}

func (x *extractor) planInput(stem string, in input) error {
	// An input --member does not select is read all the same, as
	// llvm-offload-binary reads every member before it selects: bad input
	// is refused wherever it is. Its files are not planned.
	x.skip = x.member != "" && (!in.Member || baseName(in.Name) != x.member)
	bins, err := in.Binaries(&offload.ReadOptions{Release: x.rel})
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	for _, b := range bins {
		for i := range b.Images {
			im := &b.Images[i]
			if !x.filter.Match(x.rel, im) {
				continue
			}
			if x.raw {
				if err := x.addImage(in.Name, stem, b.Binary, i, 0); err != nil {
					return err
				}
				continue
			}
			r := b.Reader()
			if err := x.add(in.Name, stem, &im.Image, "offload", r.Size(), copier(r)); err != nil {
				return err
			}
		}
	}
	fbs, err := hipFatbins(in)
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	if err := x.planBundles(in.Name, stem, fbs); err != nil {
		return err
	}
	return x.planLegacy(in)
}

// addImage plans the i-th image of b. Where the release extracts nested
// binaries (LLVM main after 22), an image that is itself an OffloadBinary
// is not written: its images are, recursively, as llvm-offload-binary
// extracts them; depth counts the binaries it is in.
func (x *extractor) addImage(from, stem string, b *offload.Binary, i, depth int) error {
	r, err := b.Open(i)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	if x.rel.NestedImages {
		if offload.StartsWithMagic(r) {
			if depth >= maxNesting {
				return fmt.Errorf("%s: image %d: more than %d levels of nested binaries", from, i, maxNesting)
			}
			inner, err := offload.ReadAll(r, r.Size(), &offload.ReadOptions{Release: x.rel})
			if err != nil {
				return fmt.Errorf("%s: nested binary in image %d: %w", from, i, err)
			}
			for _, ib := range inner {
				for j := range ib.Images {
					if err := x.addImage(from, stem, ib, j, depth+1); err != nil {
						return err
					}
				}
			}
			return nil
		}
	}
	return x.add(from, stem, &b.Images[i].Image, "", r.Size(), copier(r))
}

// planLegacy adds the device code of a bundled object's sections and of
// clang 14's image sections that the filter selects (not the host's entry).
// Raw, a bundle entry is named as clang-offload-bundler names it in a device
// archive ("<stem>-<ID><stem><ext>", ':' as '_'), an image section's image
// as the packager names images; else each is an OffloadBinary holding it.
func (x *extractor) planLegacy(in input) error {
	if in.ELF == nil {
		return nil
	}
	legacy, err := fatobj.LegacyImages(in.ELF, x.rel)
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	stem := strings.TrimSuffix(filepath.Base(baseName(in.Name)), filepath.Ext(baseName(in.Name)))
	for i := range legacy {
		im := &legacy[i]
		// Every device entry is written, empty or not, as the bundler
		// writes it; only the host's stands for the object itself.
		if im.Host() || !x.filter.Match(x.rel, &offload.BinaryImage{Image: im.Image}) {
			continue
		}
		r := im.Open()
		switch {
		case !x.raw:
			err = x.add(in.Name, stem, &im.Image, "offload", r.Size(), func(w io.Writer) error {
				_, err := offload.WriteBinary(w, x.rel, &im.Image, r, r.Size())
				return err
			})
		case im.ID != "":
			name := bundle.DeviceMemberName(baseName(in.Name), im.ID, im.Arch())
			err = x.addNamed(in.Name, name, r.Size(), copier(r))
		default:
			err = x.add(in.Name, stem, &im.Image, "", r.Size(), copier(r))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// baseName is the name of a file, or of an archive member ("lib.a(k.o)"
// gives "k.o").
func baseName(name string) string {
	if strings.HasSuffix(name, ")") {
		if i := strings.LastIndexByte(name, '('); i >= 0 {
			return filepath.Base(name[i+1 : len(name)-1])
		}
	}
	return filepath.Base(name)
}

// addNamed plans a file of a name made elsewhere; a name already planned
// gets the file's index before its extension, so nothing is written twice.
func (x *extractor) addNamed(from, name string, size int64, write func(io.Writer) error) error {
	if x.skip {
		return nil
	}
	if err := atomicfile.CheckName(name); err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	if _, taken := x.names[name]; taken {
		ext := filepath.Ext(name)
		name = fmt.Sprintf("%s.%d%s", strings.TrimSuffix(name, ext), len(x.files), ext)
		if _, taken := x.names[name]; taken {
			return fmt.Errorf("%s: %s would be written twice", from, name)
		}
	}
	x.names[name] = from
	x.files = append(x.files, extracted{from: from, name: name, size: size, write: write})
	x.total += size
	return nil
}

// planBundles adds the device code objects of HIP fatbins (not the empty
// host entries) that the filter selects, seen as the images that
// clang-linker-wrapper made them from: kind elf, offload kind hip, the
// entry's triple and target ID as arch. Raw, the code object is written,
// else an OffloadBinary holding it.
func (x *extractor) planBundles(from, stem string, fbs []hipFatbin) error {
	for _, fb := range fbs {
		for i, e := range fb.Entries {
			im, ok := bundleImage(e.ID)
			if !ok || e.Size == 0 || !x.filter.Match(x.rel, &offload.BinaryImage{Image: im}) {
				continue
			}
			if e.Size > math.MaxInt64/2 {
				return fmt.Errorf("%s: bundle entry %s: %d bytes", from, e.ID, e.Size)
			}
			size := int64(e.Size)
			fb, i := fb, i
			if x.raw {
				err := x.add(from, stem, &im, "", size, func(w io.Writer) error { return copyAll(w, fb.open(i), size) })
				if err != nil {
					return err
				}
				continue
			}
			err := x.add(from, stem, &im, "offload", size, func(w io.Writer) error {
				_, err := offload.WriteBinary(w, x.rel, &im, fb.open(i), size)
				return err
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// add plans a file for image im of input from, named as the packager names
// it, with the extension ext instead of the image kind's if ext is not "".
func (x *extractor) add(from, stem string, im *offload.Image, ext string, size int64, write func(io.Writer) error) error {
	if x.skip {
		return nil
	}
	index := len(x.files)
	kindExt := x.rel.ImageKindExtension(im.Kind)
	var name string
	if x.rel.NestedImages {
		// llvm-offload-binary of main leaves out an empty arch, and names
		// SPIR-V images.
		name = stem + "-" + im.Triple()
		if im.Arch() != "" {
			name += "-" + im.Arch()
		}
		name += "." + strconv.Itoa(index) + "." + kindExt
		if err := atomicfile.CheckName(name); err != nil {
			return fmt.Errorf("%s: image %d: %w", from, index, err)
		}
	} else {
		var err error
		if name, err = fatobj.PackagerName(stem, im, index); err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
	}
	if ext != "" {
		name = strings.TrimSuffix(name, kindExt) + ext
	}
	if prev, ok := x.names[name]; ok {
		return fmt.Errorf("%s: image %d would be written to %s, as an image of %s was", from, index, name, prev)
	}
	x.names[name] = from
	x.files = append(x.files, extracted{from: from, name: name, size: size, write: write})
	x.total += size
	return nil
}

// write writes the planned files into dir, made if it does not exist (and
// removed again if nothing could be written), after checking that its file
// system has room for them.
func (x *extractor) write(dir string) (err error) {
	if len(x.files) == 0 {
		return nil
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				os.Remove(dir) // only if empty
			}
		}()
	}
	if free, ok := atomicfile.Available(dir); ok && x.total > free {
		return fmt.Errorf("%s: the images take %d bytes, the file system of %s has %d free", strings.Join(x.paths, ", "), x.total, dir, free)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range x.files {
		if err := atomicfile.WriteIn(root, dir, f.name, f.write); err != nil {
			return fmt.Errorf("%s: %w", f.from, err)
		}
	}
	return nil
}

func copier(r *io.SectionReader) func(io.Writer) error {
	return func(w io.Writer) error { return copyAll(w, io.NewSectionReader(r, 0, r.Size()), r.Size()) }
}

// copyAll copies the size bytes of r to w; fewer is an error.
func copyAll(w io.Writer, r io.Reader, size int64) error {
	// Reads of 1 MiB: a decompressing reader works per call, and the
	// writer's ReadFrom would read 32 KiB at a time.
	n, err := io.CopyBuffer(struct{ io.Writer }{w}, io.LimitReader(r, size), make([]byte, 1<<20))
	if err == nil && n < size {
		err = fmt.Errorf("%d of %d bytes: %w", n, size, io.ErrUnexpectedEOF)
	}
	return err
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
	if err := atomicfile.Check(out); err != nil {
		return err
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
	f, err := openSized(in)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := f.ReadAt(head, 0)
	s := &stripper{rel: rel, keep: keep, targets: targets, matched: make([]bool, len(targets))}
	if ar.IsArchive(head[:n]) {
		err = s.archive(in, f, f.Size(), out)
	} else {
		err = s.object(in, f, f.Size(), out)
	}
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, s.report.String())
	return nil
}

// stripper strips an object or the objects of an archive.
type stripper struct {
	rel     *offload.Release
	keep    []string // as given
	targets []fatobj.Target
	matched []bool          // of targets, in any object
	report  strings.Builder // printed once the output is written
}

// strip strips o, the object name, and returns whether it held device code.
func (s *stripper) strip(name string, o *elfobj.Object) (bool, error) {
	st, err := fatobj.Strip(o, s.rel, s.targets)
	if err == fatobj.ErrNoOffloading {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	for i, m := range st.Matched {
		s.matched[i] = s.matched[i] || m
	}
	fmt.Fprintf(&s.report, "%s: kept %d, dropped %d device binaries\n", name, st.Kept, st.Dropped)
	return true, nil
}

// checkMatched refuses a --keep that matches no image of the input: a typing
// error there would drop all device code.
func (s *stripper) checkMatched(in string) error {
	for i, m := range s.matched {
		if !m {
			return fmt.Errorf("%s: --keep %s matches no device image (nothing written)", in, s.keep[i])
		}
	}
	return nil
}

func (s *stripper) object(in string, r io.ReaderAt, size int64, out string) error {
	ef, err := elfobj.Read(r, size)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	o, err := ef.Object()
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if _, err := s.strip(in, o); err != nil {
		return err
	}
	if err := s.checkMatched(in); err != nil {
		return err
	}
	return fromInput(in, writeObject(out, o))
}

// archive strips every object member of an archive and writes a GNU archive
// with the same members, names, headers and symbol index.
func (s *stripper) archive(path string, r io.ReaderAt, size int64, out string) error {
	return rewriteArchive(path, r, size, out, s.member, func() error { return s.checkMatched(path) })
}

// rewriteArchive writes to out a GNU archive with the members, names,
// headers and symbol index of the archive path, each member replaced by the
// object member returns for it (nil: the member as it is). The rewritten
// members go one after the other into one scratch file, so that an archive
// of any number of members takes one descriptor. check, when not nil, runs
// before anything is written.
func rewriteArchive(path string, r io.ReaderAt, size int64, out string,
	member func(name string, sr *io.SectionReader) (*elfobj.Object, error), check func() error) error {
	a, err := ar.Open(r, size)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if a.Kind() == ar.Thin {
		return fmt.Errorf("%s: a thin archive: give the member files themselves", path)
	}
	syms, err := a.Symbols()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	bySym := map[int][]string{}
	for _, s := range syms {
		bySym[s.Member] = append(bySym[s.Member], s.Name)
	}
	scratch, err := atomicfile.Scratch()
	if err != nil {
		return err
	}
	defer scratch.Close()
	var end int64 // of the scratch file's contents
	var members []ar.NewMember
	for i, m := range a.Members() {
		name := fmt.Sprintf("%s(%s)", path, m.Name)
		sr, err := a.Open(m)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		nm := ar.NewMember{Name: m.Name, Date: m.Date, UID: m.UID, GID: m.GID, Mode: m.Mode, R: sr, Size: m.Size, Symbols: bySym[i]}
		o, err := member(name, sr)
		if err != nil {
			return err
		}
		if o != nil {
			bw := bufio.NewWriterSize(io.NewOffsetWriter(scratch, end), 1<<20)
			n, err := elfobj.Write(bw, o)
			if err == nil {
				err = bw.Flush()
			}
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			nm.R, nm.Size = io.NewSectionReader(scratch, end, n), n
			end += n
		}
		members = append(members, nm)
	}
	if check != nil {
		if err := check(); err != nil {
			return err
		}
	}
	return atomicfile.Write(out, func(w io.Writer) error { return ar.WriteGNU(w, members) })
}

// member returns the stripped object of an archive member, or nil when the
// member stays as it is (not a relocatable object, or one without device
// code).
func (s *stripper) member(name string, sr *io.SectionReader) (*elfobj.Object, error) {
	var magic [4]byte
	if n, _ := sr.ReadAt(magic[:], 0); n < 4 || !bytes.Equal(magic[:], elfMagic) {
		return nil, nil
	}
	ef, err := elfobj.Read(sr, sr.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if ef.Type != elf.ET_REL {
		return nil, nil
	}
	o, err := ef.Object()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if held, err := s.strip(name, o); err != nil || !held {
		return nil, err
	}
	return o, nil
}
