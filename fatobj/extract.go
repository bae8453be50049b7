package fatobj

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/nvfatbin"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// ExtractOptions choose the images [PlanExtract] takes and how it writes
// them. The zero value takes every image, each in an OffloadBinary of its
// own.
type ExtractOptions struct {
	// Filter selects images as clang-offload-packager's --image does.
	Filter Filter
	// Member, when not "", takes only the archive members of that name, as
	// llvm-offload-binary's member=NAME; every object is read all the same.
	Member string
	// Raw writes the images themselves, named as clang-offload-packager
	// names them ("<stem>-<triple>-<arch>.<index>.<ext>"), and the cubins
	// and PTX of a CUDA fat binary named as cuobjdump -xelf and -xptx name
	// them ("vadd.1.sm_90.cubin"; a fat binary that does not read, or a
	// compressed entry, is an error; each such file counts as 4 KiB at
	// least against MaxBytes); else each image's OffloadBinary
	// ("...<index>.offload"), a new one for device code that is in none.
	Raw bool
	// MaxBytes bounds the bytes the files take together: 0 is the default
	// bound, a negative value no bound. Images may share their bytes
	// (entries of one OffloadBinary pointing at one image, bundle entries
	// at one range) and compressed ones inflate. The default bound is
	// [DefaultMaxExtractBytes] of the inputs' size (16 times it plus 1 MiB)
	// plus the bytes of compressed streams that the files are made of:
	// each byte inflated counted once however many files hold it, and in
	// all at most the inflation limit of the files' reads
	// ([offloadbinary.Budget.MaxInflated], 16 GiB by default). A plan over the
	// bound is an error matching goffload.ErrLimit, before anything is
	// written.
	MaxBytes int64
	// Release, when set, names and packages as that release; else each
	// object's own Release does. Where it reads nested binaries (LLVM main
	// after 22), a raw image that is itself a binary is not written, its
	// images are, an empty arch is left out of names and SPIR-V images get
	// ".spv", as main's llvm-offload-binary does.
	Release *release.Release
}

// Extraction is the plan of the files an extraction writes: every file
// named, collisions refused, before any is written.
type Extraction struct {
	// Files in the order they are written; their index in the names
	// counts on from one input file to the next.
	Files []*ExtractedFile
	// Total is the number of bytes the files take.
	Total int64

	// names maps a file name, case-folded (two names that differ only in
	// case are one file on a case-insensitive file system), to the object
	// it comes from.
	names map[string]string
}

// ExtractedFile is one file of an extraction.
type ExtractedFile struct {
	// Name is the file's name in the output folder: one plain path element.
	Name string
	// File is the input the image comes from, Image the image.
	File  *File
	Image *Image
	// Size is how many bytes the file takes.
	Size int64

	write func(w io.Writer) error
	// from is where the file's bytes are inflated from, when they are the
	// bytes of a compressed stream (from.key set).
	from inflatedRange
}

// Copy writes the file's contents to w: what [Extraction.Write] puts in the
// file, for a caller that stores it elsewhere.
func (f *ExtractedFile) Copy(w io.Writer) error { return f.write(w) }

// PlanExtract names the files that extracting the selected images of files
// writes: as clang-offload-packager names them, the index counting on from
// one input to the next so that two inputs never write one name. The
// triples and arches in names come from the files: a name that is not one
// plain file name (it holds '/' or NUL, is "." or "..", or is longer than
// 255 bytes, holds a control character) is an error matching
// [ErrUnsafeName], and so is a name that two images would be written to,
// names that differ only in case included (one file on a case-insensitive
// file system).
func PlanExtract(files []*File, opt *ExtractOptions) (*Extraction, error) {
	if opt == nil {
		opt = &ExtractOptions{}
	}
	x := &extractor{opt: opt, Extraction: &Extraction{names: map[string]string{}}}
	for _, f := range files {
		x.file = f
		x.stem = strings.TrimSuffix(filepath.Base(f.Name), filepath.Ext(f.Name))
		for _, o := range f.Objects {
			if err := x.object(o); err != nil {
				return nil, err
			}
		}
	}
	if limit := opt.MaxBytes; limit > 0 && x.Total > limit {
		return nil, fmt.Errorf("%s: the %d files would take %d bytes, more than the %d asked for: %w",
			x.inputs(), len(x.Files), x.Total, limit, goffload.ErrLimit)
	} else if limit == 0 {
		var in int64
		for _, f := range files {
			in += f.inputSize()
		}
		inflated := x.inflated(files)
		if limit = satAdd(DefaultMaxExtractBytes(in), inflated); x.Total > limit {
			return nil, fmt.Errorf("%s: the %d files would take %d bytes, more than %d (16 times the %d bytes of the input plus 1 MiB, plus the %d bytes inflated that they are made of, each counted once; entries share images): %w",
				x.inputs(), len(x.Files), x.Total, limit, in, inflated, goffload.ErrLimit)
		}
	}
	return x.Extraction, nil
}

// DefaultMaxExtractBytes is the bound of an extraction's files for inputs
// of in bytes, before what they inflate: 16 times in plus 1 MiB, the
// budget of goffload's readers (docs/hostile-input.md). [PlanExtract] adds
// the bytes inflated from compressed streams that the files are made of
// (see [ExtractOptions.MaxBytes]).
func DefaultMaxExtractBytes(in int64) int64 { return budget.LinearInt(in) }

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// inflatedRange is the part of a compressed stream's inflated data that a
// file is made of: n bytes at off of the stream key.
type inflatedRange struct {
	key    streamKey
	off, n uint64
}

// streamKey names a compressed stream by where it is: a compressed bundle
// (bundle set), or a compressed OffloadBinary found in the top-level
// binary top at the path at (the offsets of the compressed binaries that
// hold it, each in the inflated data of the one before, then its own).
// Entries that alias one image, or one nested binary, give one key.
type streamKey struct {
	bundle *Bundle
	top    *offloadbinary.Binary
	at     string
}

// inflatedFrom returns where the bytes of im, an image of an OffloadBinary
// or of a bundle, are inflated from; ok is false for bytes that are in
// place in the input (or decoded from a bitcode module).
func inflatedFrom(im *Image) (r inflatedRange, ok bool) {
	switch {
	case im.Bundle != nil:
		if im.Bundle.comp == nil || im.Index < 0 || im.Index >= len(im.Bundle.Entries) {
			return r, false
		}
		e := im.Bundle.Entries[im.Index]
		return inflatedRange{key: streamKey{bundle: im.Bundle}, off: e.Offset, n: e.Size}, true
	case im.Binary != nil:
		key, off := imageAt(im)
		return inflatedRange{key: key, off: off, n: uint64(im.Size)}, key.at != ""
	}
	return r, false
}

// end is where r ends, at most the largest offset.
func (r inflatedRange) end() uint64 {
	if r.n > math.MaxUint64-r.off {
		return math.MaxUint64
	}
	return r.off + r.n
}

// imageAt returns where im's bytes are: at off in the inflated data of
// the stream key, or for key.at "" in im's top-level binary.
func imageAt(im *Image) (key streamKey, off uint64) {
	if im.Parent == nil {
		key.top = im.Binary
	} else {
		key, off = imageAt(im.Parent)
		off += uint64(im.Binary.Offset)
	}
	if im.Binary.Compression != "" {
		// The binary is inflated whole, header included: its images are
		// at their ImageOffset in the data of its own stream.
		key.at += "/" + strconv.FormatUint(off, 10)
		off = 0
	}
	return key, off + im.Binary.Images[im.Index].ImageOffset
}

// inflated returns the bytes inflated that the files of x are made of: of
// each stream, the bytes that any file holds, once; in all at most the
// inflation limit of the budgets the files were read with.
func (x *extractor) inflated(files []*File) int64 {
	ranges := map[streamKey][][2]uint64{}
	for _, f := range x.Files {
		if f.from.n > 0 {
			ranges[f.from.key] = append(ranges[f.from.key], [2]uint64{f.from.off, f.from.end()})
		}
	}
	var total uint64
	for _, rs := range ranges {
		slices.SortFunc(rs, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
		var end uint64
		for _, r := range rs {
			start := max(r[0], end)
			if r[1] > start {
				total += r[1] - start
				end = r[1]
			}
		}
	}
	var limit uint64
	for _, f := range files {
		for _, o := range f.Objects {
			g := o.budget
			if g == nil {
				g = &offloadbinary.Budget{}
			}
			limit = max(limit, g.InflatedLimit())
		}
	}
	return int64(min(total, limit, math.MaxInt64))
}

// inputSize is the bytes f was read from: the file and the distinct files
// its thin archives name (one named many times counts once).
func (f *File) inputSize() int64 {
	if len(f.files) == 0 {
		return f.r.Size()
	}
	var n int64
	var seen []fs.FileInfo
	for _, in := range f.files {
		if !slices.ContainsFunc(seen, func(s fs.FileInfo) bool { return os.SameFile(s, in.Stat()) }) {
			seen = append(seen, in.Stat())
			n += in.Size()
		}
	}
	return n
}

// extractor plans an Extraction.
type extractor struct {
	*Extraction
	opt  *ExtractOptions
	file *File
	stem string
	skip bool // the object is not selected by Member
}

func (x *extractor) release(o *Object) *release.Release {
	if x.opt.Release != nil {
		return x.opt.Release
	}
	return o.Release
}

// object plans the files of o's selected images.
func (x *extractor) object(o *Object) error {
	x.skip = x.opt.Member != "" && (o.Member == "" || filepath.Base(o.Member) != x.opt.Member)
	rel := x.release(o)
	children := map[*Image][]*Image{}
	for _, im := range o.Images {
		if im.Parent != nil {
			children[im.Parent] = append(children[im.Parent], im)
		}
	}
	fatbinN := map[nvfatbin.Kind]int{} // cuobjdump numbers each kind across the object
	for _, im := range o.Images {
		if im.Source == SourceNested || !x.opt.Filter.Match(rel, &im.Image) {
			continue
		}
		var err error
		switch im.Source {
		case SourceBinary, SourceBitcode:
			if x.opt.Raw {
				err = x.imageTree(im, children)
				break
			}
			b := im.Binary
			// The binary as stored, compressed or not: nothing inflated.
			err = x.add(im, "offload", false, b.Reader().Size(), func(w io.Writer) error { return copyAll(w, b.Reader(), b.Reader().Size()) })
		case SourceBundle, SourceImageSection:
			err = x.raw(im, rel)
		case SourceFatbinary:
			if x.opt.Raw {
				err = x.fatbinEntries(o, im, fatbinN)
				break
			}
			err = x.raw(im, rel)
		case SourceBundled:
			if x.opt.Raw {
				name := bundle.DeviceMemberName(filepath.Base(memberName(o.Name)), im.BundleID, im.Arch())
				err = x.addNamed(im, name)
				break
			}
			err = x.raw(im, rel)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fatbinEntries plans the cubins and PTX files of the CUDA fat binary im,
// named as cuobjdump -xelf and -xptx name them (vadd.1.sm_90.cubin), each
// kind numbered from 1 across the object (n). A fat binary that does not
// read, or a compressed entry, is an error: nothing of it is written.
func (x *extractor) fatbinEntries(o *Object, im *Image, n map[nvfatbin.Kind]int) error {
	if x.skip {
		return nil
	}
	r, err := im.Open()
	if err != nil {
		return err
	}
	f, err := nvfatbin.Read(r, r.Size())
	if err != nil {
		return fmt.Errorf("%s: %s: %w", o.Name, im.Section, err)
	}
	input := o.Name
	if o.Member != "" {
		input = o.Member
	}
	for _, e := range f.Entries {
		n[e.Kind]++
		payload, err := e.Open()
		if err != nil {
			return fmt.Errorf("%s: %s: %w", o.Name, im.Section, err)
		}
		name := e.CuobjdumpName(input, n[e.Kind])
		if err := atomicfile.CheckName(name); err != nil {
			return fmt.Errorf("%s: %w", o.Name, ErrUnsafeName)
		}
		if prev, taken := x.names[folded(name)]; taken {
			return fmt.Errorf("%s: %s would be written twice (as of %s): %w", o.Name, name, prev, ErrUnsafeName)
		}
		x.plan(im, name, payload.Size(), func(w io.Writer) error { return copyAll(w, payload, payload.Size()) }, false)
		// A file costs a block of the file system at least, whatever its
		// payload: a fat binary of many tiny entries (64 bytes each is the
		// least) would otherwise make thousands of files of a small input.
		x.Total += max(0, minFileCost-payload.Size())
	}
	return nil
}

// minFileCost is what each file of a fat binary's entries counts for, at
// least, against the extraction's bound of bytes.
const minFileCost = 4096

// raw plans an image of device code outside OffloadBinaries: itself, or a
// new OffloadBinary holding it.
func (x *extractor) raw(im *Image, rel *release.Release) error {
	if x.opt.Raw {
		return x.add(im, "", true, im.Size, imageCopier(im))
	}
	if rel.BinaryVersion == 0 {
		rel = release.Default() // LLVM 13 and 14 have no OffloadBinary
	}
	return x.add(im, "offload", true, im.Size, func(w io.Writer) error {
		r, err := im.Reader()
		if err != nil {
			return err
		}
		_, err = offloadbinary.WriteBinary(w, rel, &im.Image, r, im.Size)
		return err
	})
}

// imageTree plans a raw image of an OffloadBinary; one that is itself a
// binary whose images the object holds (a release that reads nested
// binaries) is not written, its images are, in turn.
func (x *extractor) imageTree(im *Image, children map[*Image][]*Image) error {
	if im.NestedErr != nil {
		return im.NestedErr
	}
	if kids, ok := children[im]; ok {
		for _, k := range kids {
			if err := x.imageTree(k, children); err != nil {
				return err
			}
		}
		return nil
	}
	return x.add(im, "", true, im.Size, imageCopier(im))
}

func imageCopier(im *Image) func(io.Writer) error {
	return func(w io.Writer) error {
		r, err := im.Reader()
		if err != nil {
			return err
		}
		return copyAll(w, r, im.Size)
	}
}

// add plans a file for im named as the packager names it, with the
// extension ext instead of the image kind's if ext is not ""; image says
// that the file holds the image's bytes (inflated, if they are
// compressed).
func (x *extractor) add(im *Image, ext string, image bool, size int64, write func(io.Writer) error) error {
	if x.skip {
		return nil
	}
	if im.at != nil {
		// The image's bytes must be there before anything is written.
		if _, err := im.at(); err != nil {
			return err
		}
	}
	rel := x.release(im.Object)
	index := len(x.Files)
	kindExt := offload.ImageKindExtension(rel, im.Kind)
	var name string
	if rel.Main.NestedImages {
		// llvm-offload-binary of main leaves out an empty arch, and names
		// SPIR-V images.
		name = x.stem + "-" + im.Triple()
		if im.Arch() != "" {
			name += "-" + im.Arch()
		}
		name += "." + strconv.Itoa(index) + "." + kindExt
		if err := atomicfile.CheckName(name); err != nil {
			return fmt.Errorf("%s: image %d: %w", im.Object.Name, index, ErrUnsafeName)
		}
	} else {
		var err error
		if name, err = PackagerName(x.stem, &im.Image, index); err != nil {
			return fmt.Errorf("%s: %w", im.Object.Name, err)
		}
	}
	if ext != "" {
		name = strings.TrimSuffix(name, kindExt) + ext
	}
	if prev, ok := x.names[folded(name)]; ok {
		return fmt.Errorf("%s: image %d would be written to %s, as an image of %s was (names that differ only in case are one file on some file systems): %w", im.Object.Name, index, name, prev, ErrUnsafeName)
	}
	x.plan(im, name, size, write, image)
	return nil
}

// addNamed plans the raw image im under a name made elsewhere; a name
// already planned gets the file's index before its extension.
func (x *extractor) addNamed(im *Image, name string) error {
	if x.skip {
		return nil
	}
	if err := atomicfile.CheckName(name); err != nil {
		return fmt.Errorf("%s: %w", im.Object.Name, ErrUnsafeName)
	}
	if _, taken := x.names[folded(name)]; taken {
		ext := filepath.Ext(name)
		name = fmt.Sprintf("%s.%d%s", strings.TrimSuffix(name, ext), len(x.Files), ext)
		if _, taken := x.names[folded(name)]; taken {
			return fmt.Errorf("%s: %s would be written twice: %w", im.Object.Name, name, ErrUnsafeName)
		}
	}
	x.plan(im, name, im.Size, imageCopier(im), true)
	return nil
}

func (x *extractor) plan(im *Image, name string, size int64, write func(io.Writer) error, image bool) {
	x.names[folded(name)] = im.Object.Name
	f := &ExtractedFile{Name: name, File: x.file, Image: im, Size: size, write: write}
	if image {
		f.from, _ = inflatedFrom(im)
	}
	x.Files = append(x.Files, f)
	x.Total += size
}

// folded is name as a case-insensitive file system compares it.
func folded(name string) string { return strings.ToLower(strings.ToUpper(name)) }

// Write writes the planned files into dir, made if it does not exist (and
// removed again if nothing could be written), after checking that its file
// system has room for them. Each file is written whole or not at all,
// inside dir whatever its name ([os.Root]), and replaces only a regular
// file.
func (x *Extraction) Write(dir string) (err error) {
	if len(x.Files) == 0 {
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
	if free, ok := atomicfile.Available(dir); ok && x.Total > free {
		return fmt.Errorf("%s: the images take %d bytes, the file system of %s has %d free", x.inputs(), x.Total, dir, free)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	// Every name is checked before the first file is written: a symbolic
	// link at the second name must not leave the first file written.
	for _, f := range x.Files {
		if err := atomicfile.CheckIn(root, dir, f.Name); err != nil {
			return fmt.Errorf("%s: %w", f.Image.Object.Name, err)
		}
	}
	for _, f := range x.Files {
		if err := atomicfile.WriteIn(root, dir, f.Name, f.write); err != nil {
			return fmt.Errorf("%s: %w", f.Image.Object.Name, err)
		}
	}
	return nil
}

// inputs names the input files of x.
func (x *Extraction) inputs() string {
	var names []string
	seen := map[*File]bool{}
	for _, f := range x.Files {
		if !seen[f.File] {
			seen[f.File] = true
			names = append(names, f.File.Name)
		}
	}
	return strings.Join(names, ", ")
}

// copyAll copies the size bytes of r to w; fewer is an error.
func copyAll(w io.Writer, r io.Reader, size int64) error {
	// Reads of 2 MiB: a decompressing reader works per call, and the
	// writer's ReadFrom would read 32 KiB at a time; larger than the 1 MiB
	// buffer of the file written (atomicfile), so bufio writes them
	// straight to the file instead of copying them into its buffer. A
	// smaller image takes a buffer of its size: an object of many small
	// images would otherwise allocate 2 MiB for each.
	n, err := io.CopyBuffer(struct{ io.Writer }{w}, io.LimitReader(r, size), make([]byte, min(max(size, 512), 2<<20)))
	if err == nil && n < size {
		err = fmt.Errorf("%d of %d bytes: %w", n, size, io.ErrUnexpectedEOF)
	}
	return err
}
