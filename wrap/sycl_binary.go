package wrap

import (
	"debug/elf"
	"fmt"
	"io"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap/internal/stubs"
)

// Names of the SYCL module of LLVM main after 23 (llvm-project #193876,
// #216419, #217173).
const (
	// syclBinaryName is the one global: the OffloadBinary, whole.
	syclBinaryName = ".sycl_offloading.binary"
	// syclBinaryPriority is reg's constructor priority, the other offload
	// kinds' since #217173 (unreg is registered with atexit).
	syclBinaryPriority = 101
)

// SYCLBinary returns the registration object that wrapSYCLBinaries of LLVM
// main after 23 (a release whose row has SYCLRegistration
// release.SYCLRegistrationBinary: --llvm 24), as clang-linker-wrapper
// compiles it, makes of the OffloadBinary in the size bytes of r on an
// x86-64 or AArch64 host. The binary is embedded as it is given, byte for
// byte: clang-linker-wrapper hands wrapSYCLBinaries the file that
// clang-sycl-linker wrote (bundleSYCL passes it through), and
// wrapSYCLBinaries copies that buffer into the global; a compressed binary
// stays compressed, for the runtime's OffloadBinary::create to inflate.
//
// The object holds, as llc makes it of main's module:
//
//   - `.sycl_offloading.binary`, a local object in .llvm.offloading
//     (SHT_LLVM_OFFLOADING, SHF_ALLOC; no explicit alignment, so 16, the
//     preferred alignment of an array larger than 16 bytes);
//   - `sycl.descriptor_reg` in .text.startup, which calls
//     `__sycl_register_lib(binary, size)` and then `atexit(sycl.descriptor_unreg)`,
//     registered in .init_array.101;
//   - `sycl.descriptor_unreg`, which calls `__sycl_unregister_lib(binary, size)`;
//   - their .eh_frame.
//
// r is read first as the release reads OffloadBinaries (versions 1 to 3,
// compressed ones inflated to check them), and must hold exactly one
// binary, every image of it a SYCL image: the runtime (libsycl's
// registerFatBin) parses one binary from the pointer it is given and
// refuses images of another kind. A bad buffer gives an error matching
// goffload.ErrInvalid. The object streams the binary from r
// when it is written; r must stay readable until then.
//
// A release of another form is refused with an error matching
// goffload.ErrUnsupported that names it (22's form is [SYCL]; 23's, the
// whole binary from a constructor and destructor of priority 1, is not
// written), as are Suffix and
// Relocatable, other hosts, and on AArch64 a binary of 2^48 bytes or more.
func SYCLBinary(opt Options, r io.ReaderAt, size int64) (*elfobj.Object, error) {
	rel := opt.Release
	if rel == nil {
		rel = release.Default()
	}
	switch rel.Wrapper.SYCL {
	case release.SYCLRegistrationBinary:
	case release.SYCLRegistrationBinaryDtor:
		return nil, fmt.Errorf("wrap: SYCL binary in %v: its wrapSYCLBinaries registers the whole OffloadBinary from a constructor and destructor of priority 1 (llvm-project #193876, before #217173), a form goffload does not write (its calls at the 23 branch are not known; docs/registration.md#sycl-main): %w", rel, goffload.ErrUnsupported)
	default:
		return nil, fmt.Errorf("wrap: SYCL binary in %v: its wrapSYCLBinaries does not register the whole OffloadBinary (that is LLVM 23's and later): %w", rel, goffload.ErrUnsupported)
	}
	if opt.Suffix != "" || opt.Relocatable {
		return nil, fmt.Errorf("wrap: a suffixed or relocatable SYCL wrapper (wrapSYCLBinaries has neither): %w", goffload.ErrUnsupported)
	}
	if err := ferr.CheckInput("SYCL binary", r, size); err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	if err := checkSYCLBinary(rel, r, size); err != nil {
		return nil, err
	}
	o, err := syclHost(opt.triple())
	if err != nil {
		return nil, err
	}
	code, err := stubs.OpenMPWith(o.Machine, stubs.Options{LLVM: rel.Major, Atexit: true, SizeArg: true, Size: uint64(size)})
	if err != nil {
		return nil, fmt.Errorf("wrap: SYCL binary of %d bytes: %w", size, err)
	}
	flags, entsize, err := syclClass(r, size)
	if err != nil {
		return nil, fmt.Errorf("wrap: SYCL binary: %w", err)
	}
	m := &syclModule{r: rel, o: o, code: code, binary: true, taken: map[string]bool{}}
	m.desc = m.add(&syclGlobal{name: m.name(syclBinaryName),
		key:  syclSectionKey{".llvm.offloading", elfobj.SHT_LLVM_OFFLOADING, flags, entsize},
		size: uint64(size), align: constantAlign(o.Machine, uint64(size)), r: r})
	return m.build()
}

// checkSYCLBinary checks the size bytes of r as rel's SYCL runtime reads
// them: one OffloadBinary of SYCL images.
func checkSYCLBinary(rel *release.Release, r io.ReaderAt, size int64) error {
	all, err := offloadbinary.ReadAll(r, size, &offloadbinary.ReadOptions{Release: rel})
	if err != nil {
		return fmt.Errorf("wrap: SYCL binary: %w", err)
	}
	switch len(all) {
	case 0:
		return fmt.Errorf("wrap: SYCL binary: empty: %w", goffload.ErrInvalid)
	case 1:
	default:
		return fmt.Errorf("wrap: SYCL binary: %d OffloadBinaries one after another, where the SYCL runtime reads one (the one clang-sycl-linker writes): %w",
			len(all), goffload.ErrInvalid)
	}
	b := all[0]
	for i := range b.Images {
		if im := &b.Images[i]; im.OffloadKind != offload.OffloadSYCL {
			return fmt.Errorf("wrap: SYCL binary: image %d is for %v (offload kind %d), not sycl: %w",
				i, im.OffloadKind, im.OffloadKindCode, goffload.ErrInvalid)
		}
	}
	return nil
}

// syclHost returns an empty object for the host triple of a SYCL wrapper:
// x86-64 or little-endian AArch64.
func syclHost(triple string) (*elfobj.Object, error) {
	o, err := elfobj.ForTriple(triple)
	if err != nil {
		return nil, err
	}
	if (o.Machine != elf.EM_X86_64 && o.Machine != elf.EM_AARCH64) || o.Data != elf.ELFDATA2LSB {
		return nil, fmt.Errorf("wrap: SYCL wrapper for %q: %w (x86-64 and little-endian AArch64 hosts)", triple, goffload.ErrUnsupported)
	}
	return o, nil
}
