package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/ar"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/offload"
)

// input is one thing to list or check: a raw OffloadBinary file, or an ELF
// file standing alone or as an archive member.
type input struct {
	name string       // "file" or "archive(member)"
	r    io.ReaderAt  // its bytes
	size int64        //
	elf  *elfobj.File // nil for a raw OffloadBinary
	// member is set for a member of an archive (of one nested in it).
	member bool
	// bundleFile is set for a clang offload bundle file.
	bundleFile bool
}

var (
	elfMagic     = []byte("\x7fELF")
	offloadMagic = offload.Magic[:]
)

// maxArchiveDepth bounds the nesting of archives in archives: far beyond
// what any build makes, and it stops a thin archive that names itself.
const maxArchiveDepth = 16

// openInputs opens path and returns the inputs it holds, with a function that
// closes what was opened.
func openInputs(path string) ([]input, func(), error) {
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
func (o *opener) file(path string, outer []fs.FileInfo, depth int) ([]input, error) {
	f, err := openSized(path)
	if err != nil {
		return nil, err
	}
	o.files = append(o.files, f)
	for _, a := range outer {
		if os.SameFile(a, f.Stat()) {
			return nil, fmt.Errorf("%s: a thin archive that includes itself: %w", path, offload.ErrInvalid)
		}
	}
	return o.contents(path, filepath.Dir(path), f, f.Size(), append(outer, f.Stat()), depth)
}

// contents returns the inputs of the size bytes of r, named name, from a
// file in dir.
func (o *opener) contents(name, dir string, r io.ReaderAt, size int64, outer []fs.FileInfo, depth int) ([]input, error) {
	head := make([]byte, 8)
	n, _ := r.ReadAt(head, 0)
	head = head[:n]
	switch {
	case size == 0:
		return nil, fmt.Errorf("empty file: %w", offload.ErrInvalid)
	case bytes.HasPrefix(head, offloadMagic):
		return []input{{name: name, r: r, size: size}}, nil
	case bytes.HasPrefix(head, elfMagic):
		in, err := elfInput(name, r, size)
		return []input{in}, err
	case ar.IsArchive(head):
		return o.archive(name, dir, r, size, outer, depth)
	case bytes.HasPrefix(head, []byte(bundle.Magic[:8])) || bytes.HasPrefix(head, []byte(bundle.CompressedMagic)):
		// A bundle file (a .hipfb), compressed or not: read as the bundles
		// of a .hip_fatbin section are.
		return []input{{name: name, r: r, size: size, bundleFile: true}}, nil
	}
	return nil, fmt.Errorf("not an OffloadBinary, an ELF file, an archive or an offload bundle: %w", offload.ErrInvalid)
}

// inFile names path in err, unless err names it already.
func inFile(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// openSized opens path for reading: a regular file, never a FIFO or a device,
// read through a pool that bounds the open descriptors however many files
// are open.
func openSized(path string) (*infile.File, error) {
	return infile.Open(path)
}

func elfInput(name string, r io.ReaderAt, size int64) (input, error) {
	ef, err := elfobj.Read(r, size)
	if err != nil {
		return input{}, err
	}
	return input{name: name, r: r, size: size, elf: ef}, nil
}

// archive returns the ELF and OffloadBinary members of an archive (other
// members, such as llvm-objdump lists nothing for, are left out), thin
// members opened from the archive's folder dir, nested archives in turn.
// outer are the files that hold the archive, and the thin archives that
// named them.
func (o *opener) archive(path, dir string, r io.ReaderAt, size int64, outer []fs.FileInfo, depth int) ([]input, error) {
	if depth >= maxArchiveDepth {
		return nil, fmt.Errorf("archives nested more than %d deep: %w", maxArchiveDepth, offload.ErrInvalid)
	}
	a, err := ar.Open(r, size)
	if err != nil {
		return nil, err
	}
	var ins []input
	for _, m := range a.Members() {
		if o.members++; o.members > maxMembers {
			return nil, fmt.Errorf("more than %d archive members: %w", maxMembers, offload.ErrInvalid)
		}
		name := fmt.Sprintf("%s(%s)", path, m.Name)
		mdir, mouter := dir, outer
		var sr *io.SectionReader
		if m.Thin {
			sr, err = a.OpenThin(m, func(_ string) (io.ReaderAt, int64, error) {
				f, err := openSized(m.Path(dir))
				if err != nil {
					return nil, 0, err
				}
				o.files = append(o.files, f)
				for _, a := range outer {
					if os.SameFile(a, f.Stat()) {
						return nil, 0, fmt.Errorf("a thin archive that includes itself: %w", offload.ErrInvalid)
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
		if !ar.IsArchive(head[:n]) && !bytes.HasPrefix(head[:n], elfMagic) && !bytes.HasPrefix(head[:n], offloadMagic) &&
			!bytes.HasPrefix(head[:n], []byte(bundle.Magic[:8])) && !bytes.HasPrefix(head[:n], []byte(bundle.CompressedMagic)) {
			continue // not an object: llvm-objdump lists nothing for it either
		}
		nested, err := o.contents(name, mdir, sr, sr.Size(), mouter, depth+1)
		if err != nil {
			return nil, fmt.Errorf("member %q: %w", m.Name, err)
		}
		for i := range nested {
			nested[i].member = true
		}
		ins = append(ins, nested...)
	}
	return ins, nil
}

// fileFormat is llvm-objdump's name of an ELF file's format.
func fileFormat(f *elfobj.File) string {
	switch {
	case f.Machine == elf.EM_X86_64:
		return "elf64-x86-64"
	case f.Machine == elf.EM_AARCH64 && f.Data == elf.ELFDATA2LSB:
		return "elf64-littleaarch64"
	case f.Machine == elf.EM_AARCH64:
		return "elf64-bigaarch64"
	case f.Machine == elf.EM_PPC64 && f.Data == elf.ELFDATA2LSB:
		return "elf64-powerpcle"
	case f.Machine == elf.EM_PPC64:
		return "elf64-powerpc"
	case f.Machine == elf.EM_RISCV:
		return "elf64-littleriscv"
	case f.Machine == elf.EM_AMDGPU:
		return "elf64-amdgpu"
	}
	return "elf64-unknown"
}

// located is an OffloadBinary and where its section starts in the file.
type located struct {
	*offload.Binary
	base int64
}

// binaries returns the OffloadBinaries of in: the whole of a raw file, or
// those of every SHT_LLVM_OFFLOADING section of an ELF file in turn.
func (in input) binaries(opt *offload.ReadOptions) ([]located, error) {
	if in.bundleFile {
		return nil, nil
	}
	if in.elf == nil {
		bins, err := offload.ReadAll(in.r, in.size, opt)
		out := make([]located, len(bins))
		for i, b := range bins {
			out[i] = located{b, 0}
		}
		return out, err
	}
	var out []located
	for _, s := range in.elf.SectionsByType(elfobj.SHT_LLVM_OFFLOADING) {
		sr := s.Open()
		bins, err := offload.ReadAll(sr, sr.Size(), opt)
		if err != nil {
			return nil, fmt.Errorf("while extracting offloading files: section %q: %w", s.Name, err)
		}
		for _, b := range bins {
			out = append(out, located{b, int64(s.Offset)})
		}
	}
	return out, nil
}
