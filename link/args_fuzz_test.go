package link

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// The allocation budget of FuzzWrapperArgs, per byte of the arguments and
// fixed: an @FILE argument may name a file of the package's folder, which
// the expansion reads (bounded by its size, see internal/respfile).
const (
	fuzzBytesPerByte = 1024
	fuzzFixedBytes   = 4 << 20
)

// FuzzWrapperArgs: any argument list is read without a panic, and every
// error of the wrapper's options is ErrUsage; the host linker's argv is
// scanned without a panic (no library folder exists: -l finds nothing); and
// what that allocates is bounded by the arguments' size.
func FuzzWrapperArgs(f *testing.F) {
	f.Add("--host-triple=x86_64-pc-linux-gnu\x00--linker-path=/usr/bin/ld\x00--\x00-pie\x00-o\x00p\x00a.o\x00-lomp")
	f.Add("--device-compiler=amdgcn-amd-amdhsa=-O2\x00-m\x00elf_x86_64\x00--push-state\x00--whole-archive\x00-l\x00x\x00--pop-state\x00-r")
	f.Add("--output\x00o\x00--sysroot\x00/\x00-L\x00--wrapper-jobs=2\x00--pop-state\x00-o")
	f.Add("--host-triple=x86_64-pc-windows-msvc\x00--linker-path=lld-link\x00-out:a.exe\x00-libpath:d\x00-opt:ref\x00/wholearchive:x.lib\x00k\x00-defaultlib:m\x00/OUT:b\x00-dll")
	f.Fuzz(func(t *testing.T, s string) {
		argv := strings.Split(s, "\x00")
		var o *Options
		var err error
		got := tooltest.Allocated(func() {
			if o, err = ParseWrapperArgs(argv); err == nil {
				scanLD(o.LinkerArgs, nil, os.Stat)
				driverToLD(argv)
				// An MSVC host's lld-link argv, as the wrapper and lld-link
				// read it.
				scanLinkExe(o.LinkerArgs, os.Stat)
				wrapperArgs(o.LinkerArgs, true)
				wrapperOutput(o.LinkerArgs, true, true)
				wrapperLinkExeArgs(o.LinkerArgs, []string{"w.o"})
				hostOutput(&Options{HostTriple: "x86_64-pc-windows-msvc"}, o.LinkerArgs, "out.exe")
			}
		})
		if bound := fuzzBytesPerByte*uint64(len(s)+1) + fuzzFixedBytes; got > bound {
			t.Errorf("%d bytes of arguments allocated %d bytes, more than %d", len(s)+1, got, bound)
		}
		if err != nil && !errors.Is(err, ErrUsage) {
			t.Fatalf("%q: %v, not ErrUsage", argv, err)
		}
	})
}
