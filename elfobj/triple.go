package elfobj

import (
	"debug/elf"
	"fmt"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/objfmt"
)

// hostTargets are the ELF identities of the host machines, by the
// architecture part of a target triple, as clang writes them in objects.
var hostTargets = []struct {
	arches  []string
	data    elf.Data
	machine elf.Machine
	flags   uint32
}{
	{[]string{"x86_64", "amd64"}, elf.ELFDATA2LSB, elf.EM_X86_64, 0},
	{[]string{"aarch64", "arm64"}, elf.ELFDATA2LSB, elf.EM_AARCH64, 0},
	{[]string{"aarch64_be"}, elf.ELFDATA2MSB, elf.EM_AARCH64, 0},
	{[]string{"powerpc64le", "ppc64le"}, elf.ELFDATA2LSB, elf.EM_PPC64, 2}, // ELFv2
	{[]string{"powerpc64", "ppc64"}, elf.ELFDATA2MSB, elf.EM_PPC64, 0},
	{[]string{"riscv64"}, elf.ELFDATA2LSB, elf.EM_RISCV, 5}, // RVC, double-float ABI (rv64gc, lp64d)
}

// ForTriple returns an empty Object for the host of target triple (such as
// "x86_64-unknown-linux-gnu", "aarch64-linux-gnu", "powerpc64le-unknown-linux-gnu",
// "riscv64-linux-gnu"), with the byte order, machine and flags that clang
// gives its objects, laid out as its assembler lays them out
// (AssemblerLayout). A triple whose objects are not ELF (Windows, Apple's
// systems, AIX, z/OS) gives an error matching [goffload.ErrUnsupported].
func ForTriple(triple string) (*Object, error) {
	if f := objfmt.Of(triple); f != "ELF" {
		return nil, fmt.Errorf("triple %q: %s objects are not written: %w", triple, f, goffload.ErrUnsupported)
	}
	arch, _, _ := strings.Cut(triple, "-")
	for _, t := range hostTargets {
		for _, a := range t.arches {
			if a == arch {
				return &Object{Data: t.data, Machine: t.machine, Flags: t.flags, AssemblerLayout: true}, nil
			}
		}
	}
	return nil, fmt.Errorf("triple %q: architecture %q is not one of x86_64, aarch64, aarch64_be, powerpc64le, powerpc64, riscv64", triple, arch)
}
