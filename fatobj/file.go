package fatobj

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/nvfatbin"
	"github.com/goffload/goffload/offloadbinary"
)

// Format is what a file, or an object in an archive, is.
type Format uint8

const (
	// FormatELF: an ELF file: a relocatable object, an executable or a
	// shared object.
	FormatELF Format = iota + 1
	// FormatArchive: a static library (GNU, BSD or COFF layout).
	FormatArchive
	// FormatThinArchive: a thin archive, whose members are other files.
	FormatThinArchive
	// FormatBinary: OffloadBinaries back to back, as clang-offload-packager
	// and llvm-offload-binary write them.
	FormatBinary
	// FormatBundle: a clang offload bundle file (a HIP fatbin, .hipfb),
	// compressed or not.
	FormatBundle
	// FormatBitcode: an LLVM bitcode file (or one in a bitcode wrapper),
	// as `clang -flto -c` makes a host object: its device code is embedded
	// in the module ([bitcode.EmbeddedObjects]).
	FormatBitcode
	// FormatCOFF: a COFF file, for a Windows host: a relocatable object
	// (x86-64, AArch64, x86 or ARM), or a PE executable or DLL. Its
	// OffloadBinaries are in the sections whose names start with
	// .llvm.offloading ([Object.COFF]).
	FormatCOFF
	// FormatFatbin: a CUDA fat binary file, as NVIDIA's fatbinary writes
	// it: one image of kind fatbinary, its cubins and PTX listed by
	// package nvfatbin.
	FormatFatbin
	// FormatMachO: a 64-bit Mach-O file, for an Apple host (x86-64 or
	// arm64): a relocatable object or a linked image ([Object.MachO]). Its
	// OffloadBinaries are in __LLVM,__offloading ([MachOSection]), its HIP
	// fatbin in __HIP,__hip_fatbin, its CUDA fatbin in
	// __NV_CUDA,__nv_fatbin, its entries in __LLVM,offload_entries.
	// 32-bit, big-endian and universal files give an error matching
	// goffload.ErrUnsupported.
	FormatMachO
)

var formatNames = [...]string{"unknown", "elf", "archive", "thin archive", "offload binary", "offload bundle", "bitcode", "coff", "cuda fatbin", "mach-o"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return "Format(" + strconv.Itoa(int(f)) + ")"
}

// Limits of what one File opens: far beyond what any build makes, they stop
// archives built to multiply (a thin archive that names itself, or one
// large archive many times).
const (
	// MaxArchiveDepth bounds the nesting of archives in archives.
	MaxArchiveDepth = 16
	// MaxMembers bounds the archive members of one file, counting those of
	// nested archives and of the files of thin archives each time they are
	// named.
	MaxMembers = 1 << 18
)

// File is an opened input and the device code it holds.
type File struct {
	// Name is the path the file was opened with, or the name given to
	// NewFile.
	Name   string
	Format Format
	// Objects are what can hold device code: the file itself, or the
	// members of an archive in order (those of nested archives in turn, and
	// the files a thin archive names). Members that are none of the formats
	// (a text file, say) are left out, as llvm-objdump leaves them out.
	Objects []*Object

	r       *io.SectionReader
	archive *ar.Archive // a regular archive's index, for rewriting it
	files   []*infile.File
	closers []io.Closer // scratch files of decompressed bundles
}

// Close closes the files opened for f (the file itself and the members of
// thin archives). The readers of its objects and images fail afterwards.
func (f *File) Close() error {
	var first error
	for _, in := range f.files {
		if err := in.Close(); err != nil && first == nil {
			first = err
		}
	}
	for _, c := range f.closers {
		c.Close()
	}
	f.files, f.closers = nil, nil
	return first
}

// Images returns every device image of every object of f, in order.
func (f *File) Images() []*Image {
	var out []*Image
	for _, o := range f.Objects {
		out = append(out, o.Images...)
	}
	return out
}

// Open opens the file at path, which must be a regular file, and reads the
// device code of everything it holds (see [File]). The members of a thin
// archive are opened from the archive's folder. opt chooses the release to
// read as; nil reads each object as the releases that made it.
//
// However many files it opens (members of thin archives), at most 128
// descriptors are open at a time. Archives nest at most [MaxArchiveDepth]
// deep and hold at most [MaxMembers] members; a thin archive that names
// itself is refused. Malformed input gives an error naming the file (or
// member) and wrapping a [*goffload.FormatError].
func Open(path string, opt *offloadbinary.ReadOptions) (*File, error) {
	in, err := infile.Open(path)
	if err != nil {
		return nil, err
	}
	f := &File{Name: path, r: in.Section(), files: []*infile.File{in}}
	o := &opener{f: f, opt: withBudget(opt), open: true}
	if err := o.contents(path, filepath.Dir(path), in.Section(), 0, []fs.FileInfo{in.Stat()}, 0, true); err != nil {
		f.Close()
		return nil, ferr.Named(path, err)
	}
	return f, nil
}

// NewFile reads the device code of the size bytes of r, named name in its
// objects' names and in errors, as [Open] reads a file. A thin archive is
// refused (its members are other files: open it with Open).
func NewFile(name string, r io.ReaderAt, size int64, opt *offloadbinary.ReadOptions) (*File, error) {
	if err := ferr.CheckInput("fatobj", r, size); err != nil {
		return nil, err
	}
	sr := io.NewSectionReader(r, 0, size)
	f := &File{Name: name, r: sr}
	o := &opener{f: f, opt: withBudget(opt)}
	if err := o.contents(name, "", sr, 0, nil, 0, true); err != nil {
		return nil, ferr.Named(name, err)
	}
	return f, nil
}

// withBudget returns opt with a budget of the file's own where it has
// none: the binaries of all the file's objects, nested ones included, are
// read within one (see [offloadbinary.Budget]).
func withBudget(opt *offloadbinary.ReadOptions) *offloadbinary.ReadOptions {
	if opt != nil && opt.Budget != nil {
		return opt
	}
	o := &offloadbinary.ReadOptions{}
	if opt != nil {
		*o = *opt
	}
	o.Budget = &offloadbinary.Budget{}
	return o
}

// opener opens a File's contents.
type opener struct {
	f       *File
	opt     *offloadbinary.ReadOptions
	open    bool // thin members may be opened (Open, not NewFile)
	members int
	// A thin archive may name one file many times: each is opened once,
	// and an archive read at the same place of the same file is parsed
	// once, so that the cost of such a name is its member count, not its
	// size (the hostile table's thin-amplify).
	thin     map[string]*infile.File
	archives map[span]*ar.Archive
}

// span is a range of bytes of a file the opener opened.
type span struct {
	f         *infile.File
	off, size int64
}

var (
	elfMagic     = []byte("\x7fELF")
	bundleMagic  = []byte(bundle.Magic[:8])
	ccobMagic    = []byte(bundle.CompressedMagic)
	offloadMagic = offloadbinary.Magic[:]
)

// formatOf returns the format the first bytes head announce, or 0.
func formatOf(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, offloadMagic):
		return FormatBinary
	case bytes.HasPrefix(head, elfMagic):
		return FormatELF
	case bytes.HasPrefix(head, []byte(ar.ThinMagic)):
		return FormatThinArchive
	case ar.IsArchive(head):
		return FormatArchive
	case bytes.HasPrefix(head, bundleMagic) || bytes.HasPrefix(head, ccobMagic):
		return FormatBundle
	case bitcode.IsBitcode(head):
		return FormatBitcode
	case isCOFF(head):
		return FormatCOFF
	case nvfatbin.IsFatbin(head):
		return FormatFatbin
	case machoobj.IsMachO(head):
		return FormatMachO
	}
	return 0
}

// coffMachines are the machines whose COFF objects are taken for such by
// their first two bytes, as LLVM's identify_magic takes them (a COFF
// object has no magic number).
var coffMachines = []uint16{coffobj.MachineAMD64, coffobj.MachineARM64, 0x14c /* I386 */, 0x1c4 /* ARMNT */}

// isCOFF reports whether head starts a PE image ("MZ") or a COFF object of
// one of coffMachines.
func isCOFF(head []byte) bool {
	if bytes.HasPrefix(head, []byte("MZ")) {
		return true
	}
	if len(head) < 4 {
		return false
	}
	m := uint16(head[0]) | uint16(head[1])<<8
	return slices.Contains(coffMachines, m)
}

// contents adds the objects of the bytes of r, named name, from a file in
// dir; base is where r starts in the file the caller opened (for error
// offsets), outer the files holding it (to refuse a thin archive that names
// itself). top is set for the file itself, whose format becomes the File's.
func (o *opener) contents(name, dir string, r *io.SectionReader, base int64, outer []fs.FileInfo, depth int, top bool) error {
	head := make([]byte, 8)
	n, _ := r.ReadAt(head, 0)
	format := formatOf(head[:n])
	if top {
		o.f.Format = format
	}
	switch {
	case r.Size() == 0:
		return ferr.New("input", 0, "size (an empty file)", nil, goffload.ErrInvalid)
	case format == 0:
		return ferr.New("input", base, "magic (not an OffloadBinary, an ELF, COFF or Mach-O file, an archive, an offload bundle or LLVM bitcode)", append([]byte(nil), head[:n]...), goffload.ErrInvalid)
	case format == FormatArchive || format == FormatThinArchive:
		return o.archive(name, dir, r, base, outer, depth, top)
	}
	obj := &Object{Name: name, Format: format, Offset: base, r: r, depth: depth, file: o.f}
	if !top {
		obj.Member = memberName(name)
	}
	if err := obj.read(o.opt); err != nil {
		return err
	}
	o.f.Objects = append(o.f.Objects, obj)
	return nil
}

// memberName returns the member's own name of an object named
// "lib.a(k.o)": "k.o".
func memberName(name string) string {
	if len(name) > 0 && name[len(name)-1] == ')' {
		depth := 0
		for i := len(name) - 1; i >= 0; i-- {
			switch name[i] {
			case ')':
				depth++
			case '(':
				if depth--; depth == 0 {
					return name[i+1 : len(name)-1]
				}
			}
		}
	}
	return name
}

// archive adds the objects of an archive's members, thin members opened
// from the archive's folder dir, nested archives in turn.
func (o *opener) archive(path, dir string, r *io.SectionReader, base int64, outer []fs.FileInfo, depth int, top bool) error {
	if depth >= MaxArchiveDepth {
		return fmt.Errorf("archives nested more than %d deep: %w", MaxArchiveDepth, goffload.ErrLimit)
	}
	a, err := o.openArchive(r)
	if err != nil {
		return ferr.Rebase(err, base)
	}
	if top && a.Kind() != ar.Thin {
		o.f.archive = a
	}
	// The archive's own bytes (its members' count as theirs) and the long
	// names its headers refer to join the command's count of names.
	own := r.Size()
	members := a.Members()
	for _, m := range members {
		if !m.Thin {
			own -= m.Size
		}
	}
	if err := o.opt.Budget.CountNames(uint64(max(own, 0)), a.Referenced()); err != nil {
		return err
	}
	for _, m := range members {
		if o.members++; o.members > MaxMembers {
			return fmt.Errorf("more than %d archive members: %w", MaxMembers, goffload.ErrLimit)
		}
		mdir, mouter, mbase := dir, outer, base+m.DataOffset
		var sr *io.SectionReader
		if m.Thin {
			if !o.open {
				return fmt.Errorf("member %q: a thin archive's members are other files: open it by path: %w", m.Name, goffload.ErrUnsupported)
			}
			mbase = 0
			sr, err = a.OpenThin(m, func(_ string) (io.ReaderAt, int64, error) {
				f, err := o.openThin(m.Path(dir))
				if err != nil {
					return nil, 0, err
				}
				for _, a := range outer {
					if os.SameFile(a, f.Stat()) {
						return nil, 0, fmt.Errorf("a thin archive that includes itself: %w", goffload.ErrInvalid)
					}
				}
				mdir, mouter = filepath.Dir(m.Path(dir)), append(outer[:len(outer):len(outer)], f.Stat())
				return f, f.Size(), nil
			})
		} else {
			sr, err = a.Open(m)
		}
		if err != nil {
			return fmt.Errorf("member %q: %w", m.Name, err)
		}
		var head [8]byte
		n, _ := sr.ReadAt(head[:], 0)
		if formatOf(head[:n]) == 0 {
			continue // not an object: llvm-objdump lists nothing for it either
		}
		name := fmt.Sprintf("%s(%s)", path, m.Name)
		if err := o.contents(name, mdir, sr, mbase, mouter, depth+1, false); err != nil {
			return fmt.Errorf("member %q: %w", m.Name, err)
		}
	}
	return nil
}

// openArchive reads the archive r, once for each range of a file the
// opener opened (a caller's reader, which may not even be comparable, is
// read each time).
func (o *opener) openArchive(r *io.SectionReader) (*ar.Archive, error) {
	outer, off, size := r.Outer()
	f, ok := outer.(*infile.File)
	if !ok {
		return ar.Open(r, size)
	}
	key := span{f, off, size}
	if a, ok := o.archives[key]; ok {
		return a, nil
	}
	a, err := ar.Open(r, size)
	if err != nil {
		return nil, err
	}
	if o.archives == nil {
		o.archives = map[span]*ar.Archive{}
	}
	o.archives[key] = a
	return a, nil
}

// openThin opens the file a thin archive names, once for each path; the
// File closes it.
func (o *opener) openThin(path string) (*infile.File, error) {
	if f, ok := o.thin[path]; ok {
		return f, nil
	}
	f, err := infile.Open(path)
	if err != nil {
		return nil, err
	}
	o.f.files = append(o.f.files, f)
	if o.thin == nil {
		o.thin = map[string]*infile.File{}
	}
	o.thin[path] = f
	return f, nil
}

// readCOFF reads a COFF file's headers, its error offsets rebased to base.
func readCOFF(r *io.SectionReader, base int64) (*coffobj.File, error) {
	f, err := coffobj.Read(r, r.Size())
	return f, ferr.Rebase(err, base)
}

// readMachO reads a Mach-O file's headers, its error offsets rebased to
// base.
func readMachO(r *io.SectionReader, base int64) (*machoobj.File, error) {
	f, err := machoobj.Read(r, r.Size())
	return f, ferr.Rebase(err, base)
}

// readELF reads an ELF file's headers, its error offsets rebased to base.
func readELF(r *io.SectionReader, base int64) (*elfobj.File, error) {
	f, err := elfobj.Read(r, r.Size())
	return f, ferr.Rebase(err, base)
}
