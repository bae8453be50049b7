package main

import (
	"debug/elf"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/internal/inputs"
)

// input is one thing to list or check (see package inputs).
type input = inputs.Input

// located is an OffloadBinary and where its section starts in the file.
type located = inputs.Located

var (
	elfMagic     = inputs.ElfMagic
	offloadMagic = inputs.OffloadMagic
)

// openInputs opens path and returns the inputs it holds, with a function that
// closes what was opened.
func openInputs(path string) ([]input, func(), error) { return inputs.Open(path) }

// inFile names path in err, unless err names it already.
func inFile(path string, err error) error { return inputs.InFile(path, err) }

// openSized opens path for reading: a regular file, never a FIFO or a device.
func openSized(path string) (*infile.File, error) { return inputs.OpenSized(path) }

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
