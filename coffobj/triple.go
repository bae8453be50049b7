package coffobj

import (
	"fmt"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/objfmt"
)

// ForTriple returns an empty object for the host triple, which must be one
// whose objects LLVM makes in COFF (a Windows or UEFI system:
// "x86_64-pc-windows-msvc", "x86_64-w64-windows-gnu",
// "aarch64-pc-windows-msvc") of an architecture this package writes:
// x86_64 (amd64) or aarch64 (arm64). Another triple gives an error
// matching goffload.ErrUnsupported.
func ForTriple(triple string) (*Object, error) {
	if f := objfmt.Of(triple); f != "COFF" {
		return nil, fmt.Errorf("triple %q: LLVM makes %s objects for it, not COFF: %w", triple, f, goffload.ErrUnsupported)
	}
	arch, _, _ := strings.Cut(strings.ToLower(triple), "-")
	switch arch {
	case "x86_64", "amd64":
		return &Object{Machine: MachineAMD64}, nil
	case "aarch64", "arm64":
		return &Object{Machine: MachineARM64}, nil
	}
	return nil, fmt.Errorf("triple %q: architecture %q is not one of x86_64, aarch64: %w", triple, arch, goffload.ErrUnsupported)
}
