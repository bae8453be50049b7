// Package inputs opens the files that goffload reads: raw OffloadBinaries,
// ELF files, offload bundle files and archives of them (thin and nested), as
// bounded inputs, shared by the command line and the link flow.
package inputs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/ar"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/offload"
)

// Input is one thing to list or check: a raw OffloadBinary file, or an ELF
// file standing alone or as an archive member.
type Input struct {
	Name string       // "file" or "archive(member)"
	R    io.ReaderAt  // its bytes
	Size int64        //
	ELF  *elfobj.File // nil for a raw OffloadBinary
	// Member is set for a member of an archive (of one nested in it).
	Member bool
	// BundleFile is set for a clang offload bundle file.
	BundleFile bool
}

var (
	ElfMagic     = []byte("\x7fELF")
	OffloadMagic = offload.Magic[:]
)

// maxArchiveDepth bounds the nesting of archives in archives: far beyond
// what any build makes, and it stops a thin archive that names itself.
const maxArchiveDepth = 16

// Open opens path and returns the inputs it holds, with a function that
// closes what was opened.
func Open(path string) ([]Input, func(), error) {
	o := &opener{}
	ins, err := o.file(path, nil, 0)
	if err != nil {
		o.close()
		return nil, nil, err
	}
	return ins, o.close, nil
}

// maxMembers bounds the archive members of one input, counting those of
// nested archives and of thin archives' files each time they are named: a
// small thin archive that names one large archive many times would otherwise
// make an input of any size.
const maxMembers = 1 << 18

// opener opens an input file and the files its thin archives name.
type opener struct {
	files   []*infile.File
	members int
}

func (o *opener) close() {
	for _, f := range o.files {
		f.Close()
	}
}

// file returns the inputs of the file at path; outer are the files of the
// thin archives that named it.
func (o *opener) file(path string, outer []fs.FileInfo, depth int) ([]Input, error) {
	f, err := OpenSized(path)
	if err != nil {
		return nil, err
	}
	o.files = append(o.files, f)
	for _, a := range outer {
		if os.SameFile(a, f.Stat()) {
			return nil, fmt.Errorf("%s: a thin archive that includes itself: %w", path, goffload.ErrInvalid)
		}
	}
	return o.contents(path, filepath.Dir(path), f, f.Size(), append(outer, f.Stat()), depth)
}

// contents returns the inputs of the size bytes of r, named name, from a
// file in dir.
func (o *opener) contents(name, dir string, r io.ReaderAt, size int64, outer []fs.FileInfo, depth int) ([]Input, error) {
	head := make([]byte, 8)
	n, _ := r.ReadAt(head, 0)
	head = head[:n]
	switch {
	case size == 0:
		return nil, fmt.Errorf("empty file: %w", goffload.ErrInvalid)
	case bytes.HasPrefix(head, OffloadMagic):
		return []Input{{Name: name, R: r, Size: size}}, nil
	case bytes.HasPrefix(head, ElfMagic):
		in, err := elfInput(name, r, size)
		return []Input{in}, err
	case ar.IsArchive(head):
		return o.archive(name, dir, r, size, outer, depth)
	case bytes.HasPrefix(head, []byte(bundle.Magic[:8])) || bytes.HasPrefix(head, []byte(bundle.CompressedMagic)):
		// A bundle file (a .hipfb), compressed or not: read as the bundles
		// of a .hip_fatbin section are.
		return []Input{{Name: name, R: r, Size: size, BundleFile: true}}, nil
	}
	return nil, fmt.Errorf("not an OffloadBinary, an ELF file, an archive or an offload bundle: %w", goffload.ErrInvalid)
}

// InFile names path in err, unless err names it already.
func InFile(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// OpenSized opens path for reading: a regular file, never a FIFO or a device,
// read through a pool that bounds the open descriptors however many files
// are open.
func OpenSized(path string) (*infile.File, error) {
	return infile.Open(path)
}

func elfInput(name string, r io.ReaderAt, size int64) (Input, error) {
	ef, err := elfobj.Read(r, size)
	if err != nil {
		return Input{}, err
	}
	return Input{Name: name, R: r, Size: size, ELF: ef}, nil
}

// archive returns the ELF and OffloadBinary members of an archive (other
// members, such as llvm-objdump lists nothing for, are left out), thin
// members opened from the archive's folder dir, nested archives in turn.
// outer are the files that hold the archive, and the thin archives that
// named them.
func (o *opener) archive(path, dir string, r io.ReaderAt, size int64, outer []fs.FileInfo, depth int) ([]Input, error) {
	if depth >= maxArchiveDepth {
		return nil, fmt.Errorf("archives nested more than %d deep: %w", maxArchiveDepth, goffload.ErrInvalid)
	}
	a, err := ar.Open(r, size)
	if err != nil {
		return nil, err
	}
	var ins []Input
	for _, m := range a.Members() {
		if o.members++; o.members > maxMembers {
			return nil, fmt.Errorf("more than %d archive members: %w", maxMembers, goffload.ErrInvalid)
		}
		name := fmt.Sprintf("%s(%s)", path, m.Name)
		mdir, mouter := dir, outer
		var sr *io.SectionReader
		if m.Thin {
			sr, err = a.OpenThin(m, func(_ string) (io.ReaderAt, int64, error) {
				f, err := OpenSized(m.Path(dir))
				if err != nil {
					return nil, 0, err
				}
				o.files = append(o.files, f)
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
			return nil, fmt.Errorf("member %q: %w", m.Name, err)
		}
		var head [8]byte
		n, _ := sr.ReadAt(head[:], 0)
		if !ar.IsArchive(head[:n]) && !bytes.HasPrefix(head[:n], ElfMagic) && !bytes.HasPrefix(head[:n], OffloadMagic) &&
			!bytes.HasPrefix(head[:n], []byte(bundle.Magic[:8])) && !bytes.HasPrefix(head[:n], []byte(bundle.CompressedMagic)) {
			continue // not an object: llvm-objdump lists nothing for it either
		}
		nested, err := o.contents(name, mdir, sr, sr.Size(), mouter, depth+1)
		if err != nil {
			return nil, fmt.Errorf("member %q: %w", m.Name, err)
		}
		for i := range nested {
			nested[i].Member = true
		}
		ins = append(ins, nested...)
	}
	return ins, nil
}

// Located is an OffloadBinary and where its section starts in the file.
type Located struct {
	*offload.Binary
	Base int64
	// Section is the name of the ELF section holding it ("" for a raw
	// file).
	Section string
}

// Binaries returns the OffloadBinaries of in: the whole of a raw file, or
// those of every SHT_LLVM_OFFLOADING section of an ELF file in turn.
func (in Input) Binaries(opt *offload.ReadOptions) ([]Located, error) {
	if in.BundleFile {
		return nil, nil
	}
	if in.ELF == nil {
		bins, err := offload.ReadAll(in.R, in.Size, opt)
		out := make([]Located, len(bins))
		for i, b := range bins {
			out[i] = Located{Binary: b}
		}
		return out, err
	}
	var out []Located
	for _, s := range in.ELF.SectionsByType(elfobj.SHT_LLVM_OFFLOADING) {
		sr := s.Open()
		bins, err := offload.ReadAll(sr, sr.Size(), opt)
		if err != nil {
			return nil, fmt.Errorf("while extracting offloading files: section %q: %w", s.Name, err)
		}
		for _, b := range bins {
			out = append(out, Located{Binary: b, Base: int64(s.Offset), Section: s.Name})
		}
	}
	return out, nil
}
