package link

import (
	"errors"
	"strings"
	"testing"
)

// FuzzWrapperArgs: any argument list is read without a panic, and every
// error of the wrapper's options is ErrUsage; the host linker's argv is
// scanned without a panic (no library folder exists: -l finds nothing).
func FuzzWrapperArgs(f *testing.F) {
	f.Add("--host-triple=x86_64-pc-linux-gnu\x00--linker-path=/usr/bin/ld\x00--\x00-pie\x00-o\x00p\x00a.o\x00-lomp")
	f.Add("--device-compiler=amdgcn-amd-amdhsa=-O2\x00-m\x00elf_x86_64\x00--push-state\x00--whole-archive\x00-l\x00x\x00--pop-state\x00-r")
	f.Add("--output\x00o\x00--sysroot\x00/\x00-L\x00--wrapper-jobs=2\x00--pop-state\x00-o")
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Split(s, "\x00")
		o, err := ParseWrapperArgs(argv)
		if err != nil {
			if !errors.Is(err, ErrUsage) {
				t.Fatalf("%q: %v, not ErrUsage", argv, err)
			}
			return
		}
		scanLD(o.LinkerArgs, nil)
		driverToLD(argv)
	})
}
