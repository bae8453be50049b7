// Package objfmt tells the object format of a target triple, as LLVM
// chooses it: the one question elfobj and coffobj both ask of a triple.
package objfmt

import "strings"

// Of returns the object format that LLVM gives the objects of
// triple (llvm::Triple::getObjectFormat): the one an environment names
// ("x86_64-pc-windows-elf"), else Mach-O for Apple's systems, COFF for
// Windows and UEFI, XCOFF for AIX, GOFF for z/OS, and ELF for the rest. The
// components after the architecture are looked at whatever their position,
// as LLVM recognises them ("aarch64-linux-gnu" has no vendor).
func Of(triple string) string {
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
