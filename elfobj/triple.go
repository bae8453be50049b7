package elfobj

import (
	"debug/elf"
	"fmt"
	"strings"

	"github.com/goffload/goffload"
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
// gives its objects. A triple whose objects are not ELF (Windows, Apple's
// systems, AIX, z/OS) gives an error matching [goffload.ErrUnsupported].
func ForTriple(triple string) (*Object, error) {
	if f := objectFormat(triple); f != "ELF" {
		return nil, fmt.Errorf("triple %q: %s objects are not written: %w", triple, f, goffload.ErrUnsupported)
	}
	arch, _, _ := strings.Cut(triple, "-")
	for _, t := range hostTargets {
		for _, a := range t.arches {
			if a == arch {
				return &Object{Data: t.data, Machine: t.machine, Flags: t.flags}, nil
			}
		}
	}
	return nil, fmt.Errorf("triple %q: architecture %q is not one of x86_64, aarch64, aarch64_be, powerpc64le, powerpc64, riscv64", triple, arch)
}

// objectFormat returns the object format that LLVM gives the objects of
// triple (llvm::Triple::getObjectFormat): the one an environment names
// ("x86_64-pc-windows-elf"), else Mach-O for Apple's systems, COFF for
// Windows and UEFI, XCOFF for AIX, GOFF for z/OS, and ELF for the rest. The
// components after the architecture are looked at whatever their position,
// as LLVM recognises them ("aarch64-linux-gnu" has no vendor).
func objectFormat(triple string) string {
	parts := strings.Split(strings.ToLower(triple), "-")[1:]
	if len(parts) >= 2 {
		for _, f := range []struct{ suffix, name string }{
			{"xcoff", "XCOFF"}, {"coff", "COFF"}, {"elf", "ELF"}, {"goff", "GOFF"}, {"macho", "Mach-O"}, {"wasm", "Wasm"},
		} {
			if strings.HasSuffix(parts[len(parts)-1], f.suffix) {
				return f.name
			}
		}
	}
	for _, p := range parts {
		for _, os := range []struct{ prefix, format string }{
			{"darwin", "Mach-O"}, {"macos", "Mach-O"}, {"ios", "Mach-O"}, {"tvos", "Mach-O"}, {"watchos", "Mach-O"},
			{"xros", "Mach-O"}, {"visionos", "Mach-O"}, {"driverkit", "Mach-O"}, {"bridgeos", "Mach-O"},
			{"windows", "COFF"}, {"win32", "COFF"}, {"uefi", "COFF"}, {"aix", "XCOFF"}, {"zos", "GOFF"},
		} {
			if strings.HasPrefix(p, os.prefix) {
				return os.format
			}
		}
	}
	return "ELF"
}
