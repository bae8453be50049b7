package coffobj

import (
	"errors"
	"testing"

	"github.com/goffload/goffload"
)

func TestForTriple(t *testing.T) {
	for _, c := range []struct {
		triple  string
		machine uint16 // 0: refused
	}{
		{"x86_64-pc-windows-msvc", MachineAMD64},
		{"x86_64-w64-windows-gnu", MachineAMD64},
		{"x86_64-unknown-uefi", MachineAMD64},
		{"aarch64-pc-windows-msvc", MachineARM64},
		{"arm64-pc-windows-msvc", MachineARM64},
		{"i686-pc-windows-msvc", 0},
		{"x86_64-unknown-linux-gnu", 0},
		{"x86_64-pc-windows-elf", 0},
	} {
		o, err := ForTriple(c.triple)
		switch {
		case c.machine == 0 && !errors.Is(err, goffload.ErrUnsupported):
			t.Errorf("ForTriple(%q) = %v, %v; want an error matching ErrUnsupported", c.triple, o, err)
		case c.machine != 0 && (err != nil || o.Machine != c.machine):
			t.Errorf("ForTriple(%q) = %v, %v; want machine %#x", c.triple, o, err, c.machine)
		}
	}
}
