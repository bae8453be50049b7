package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/ar"
	"github.com/goffload/goffload/offload"
)

// input is one thing to list or check: a raw OffloadBinary file, or an ELF
// file standing alone or as an archive member.
type input struct {
	name string       // "file" or "archive(member)"
	r    io.ReaderAt  // its bytes
	size int64        //
	elf  *elfobj.File // nil for a raw OffloadBinary
}

var (
	elfMagic     = []byte("\x7fELF")
	offloadMagic = offload.Magic[:]
)

// openInputs opens path and returns the inputs it holds, with a function that
// closes what was opened.
func openInputs(path string) ([]input, func(), error) {
	f, size, err := openSized(path)
	if err != nil {
		return nil, nil, err
	}
	closers := []io.Closer{f}
	done := func() {
		for _, c := range closers {
			c.Close()
		}
	}
	head := make([]byte, 8)
	n, _ := f.ReadAt(head, 0)
	head = head[:n]
	var ins []input
	switch {
	case size == 0:
		err = fmt.Errorf("empty file: %w", offload.ErrInvalid)
	case bytes.HasPrefix(head, offloadMagic):
		ins = []input{{name: path, r: f, size: size}}
	case bytes.HasPrefix(head, elfMagic):
		var in input
		in, err = elfInput(path, f, size)
		ins = []input{in}
	case ar.IsArchive(head):
		ins, err = archiveInputs(path, f, size, &closers)
	default:
		err = fmt.Errorf("not an OffloadBinary, an ELF file or an archive: %w", offload.ErrInvalid)
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	return ins, done, nil
}

// openSized opens path for reading and returns its size.
func openSized(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

func elfInput(name string, r io.ReaderAt, size int64) (input, error) {
	ef, err := elfobj.Read(r, size)
	if err != nil {
		return input{}, err
	}
	return input{name: name, r: r, size: size, elf: ef}, nil
}

// archiveInputs returns the ELF members of an archive, thin members opened
// beside it.
func archiveInputs(path string, r io.ReaderAt, size int64, closers *[]io.Closer) ([]input, error) {
	a, err := ar.Open(r, size)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	open := func(name string) (io.ReaderAt, int64, error) {
		f, size, err := openSized(name)
		if err != nil {
			return nil, 0, err
		}
		*closers = append(*closers, f)
		return f, size, nil
	}
	var ins []input
	for _, m := range a.Members() {
		var sr *io.SectionReader
		if m.Thin {
			sr, err = a.OpenThin(m, func(name string) (io.ReaderAt, int64, error) { return open(filepath.Join(dir, name)) })
		} else {
			sr, err = a.Open(m)
		}
		if err != nil {
			return nil, fmt.Errorf("member %q: %w", m.Name, err)
		}
		var head [8]byte
		n, _ := sr.ReadAt(head[:], 0)
		name := fmt.Sprintf("%s(%s)", path, m.Name)
		if ar.IsArchive(head[:n]) {
			nested, err := archiveInputs(name, sr, sr.Size(), closers)
			if err != nil {
				return nil, err
			}
			ins = append(ins, nested...)
			continue
		}
		if n < 4 || !bytes.Equal(head[:4], elfMagic) {
			continue // not an object: llvm-objdump lists nothing for it either
		}
		in, err := elfInput(name, sr, sr.Size())
		if err != nil {
			return nil, fmt.Errorf("member %q: %w", m.Name, err)
		}
		ins = append(ins, in)
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
