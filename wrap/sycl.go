package wrap

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap/internal/stubs"
)

// SYCLImage is one SYCL device image as LLVM's wrapSYCLBinaries takes it from
// an OffloadBinary (docs/registration.md#sycl-22): the raw image Data (read
// each time the object is written, never held in memory; nil is an empty
// image), with the binary's image kind and its "triple" and "symbols" strings.
type SYCLImage struct {
	Data *io.SectionReader
	// Kind is the binary's image kind; the __sycl.tgt_device_image holds
	// its low byte (Format), as LLVM's does.
	Kind offload.ImageKind
	// Triple is the binary's "triple" string: the device image's Arch.
	Triple string
	// Symbols is the binary's "symbols" string: the names of the image's
	// kernels, one a line ("\n" or "\r\n"); blank lines are skipped, as
	// LLVM's line_iterator skips them. Each name gets an offload entry.
	Symbols string
	// CompileOptions and LinkOptions are the options that the runtime
	// passes to the device compiler and linker for this image
	// (SYCLJITOptions): empty in clang-linker-wrapper's objects.
	CompileOptions, LinkOptions string
}

// check refuses an image the object cannot hold as LLVM writes it.
func (im *SYCLImage) check() error {
	// LLVM's strings are C strings: a NUL inside one would end it early for
	// the runtime and change the section LLVM puts it in.
	for _, s := range []struct{ what, v string }{
		{"triple", im.Triple}, {"symbols", im.Symbols}, {"compile options", im.CompileOptions}, {"link options", im.LinkOptions},
	} {
		if i := strings.IndexByte(s.v, 0); i >= 0 {
			return fmt.Errorf("%s %q: NUL at byte %d: %w", s.what, s.v, i, fs.ErrInvalid)
		}
	}
	return nil
}

// Names returns the kernel names of im.Symbols, as LLVM's line_iterator
// reads them: lines ended by "\n" or "\r\n", blank ones skipped.
func (im *SYCLImage) Names() []string {
	var names []string
	for s := im.Symbols; s != ""; {
		line, rest, found := strings.Cut(s, "\n")
		if found {
			line = strings.TrimSuffix(line, "\r")
		}
		if line != "" {
			names = append(names, line)
		}
		s = rest
	}
	return names
}

// SYCLImages reads the SYCL device images of the OffloadBinaries in the
// size bytes of r, one binary after another, as release rel reads them
// (rel's versions and offload kind numbers; nil: release.Default()): what
// rel's wrapSYCLBinaries takes from the buffer it is given. Each image's
// bytes are a section of r (of the inflated binary, for a compressed one).
// An image of another offload kind is refused with an error matching
// goffload.ErrInvalid: clang-linker-wrapper hands the SYCL wrapper SYCL images
// only; a release [SYCL] refuses, with its error (goffload.ErrUnsupported).
func SYCLImages(rel *release.Release, r io.ReaderAt, size int64) ([]SYCLImage, error) {
	if rel == nil {
		rel = release.Default()
	}
	if err := syclForm(rel); err != nil {
		return nil, err
	}
	all, err := offloadbinary.ReadAll(r, size, &offloadbinary.ReadOptions{Release: rel})
	if err == nil && len(all) == 0 {
		err = fmt.Errorf("holds no offload binary: %w", goffload.ErrInvalid)
	}
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	var out []SYCLImage
	for _, b := range all {
		for i := range b.Images {
			im := &b.Images[i]
			if im.OffloadKind != offload.OffloadSYCL {
				return nil, fmt.Errorf("wrap: binary at %#x: image %d is for %v (offload kind %d), not sycl: %w",
					b.Offset, i, im.OffloadKind, im.OffloadKindCode, goffload.ErrInvalid)
			}
			rd, err := b.Open(i)
			if err != nil {
				return nil, fmt.Errorf("wrap: %w", err)
			}
			symbols, _ := im.Lookup("symbols")
			out = append(out, SYCLImage{Data: rd, Kind: im.Kind, Triple: im.Triple(), Symbols: symbols})
		}
	}
	return out, nil
}

// SYCL names (docs/registration.md#sycl-22).
const (
	syclTag          = ".sycl_offloading."
	syclRegName      = "sycl.descriptor_reg"
	syclUnregName    = "sycl.descriptor_unreg"
	syclRegisterLib  = "__sycl_register_lib"
	syclUnregLib     = "__sycl_unregister_lib"
	syclImageVersion = 3 // __sycl.tgt_device_image Version: DPC++ had 1 and 2
	syclDescVersion  = 1 // __sycl.tgt_bin_desc Version
	// syclPriority is the priority of the constructor and of the
	// destructor: wrapSYCLBinaries of LLVM 22 appends both with 1, not the
	// release's CtorPriority of the other wrappers.
	syclPriority = 1
	// Sizes on a 64-bit host: {i16, i8, i8, 9 pointers} and {i16, i16,
	// 3 pointers}.
	syclImageSize = 80
	syclDescSize  = 32
)

// SYCL returns the registration object that LLVM 22's wrapSYCLBinaries, as
// clang-linker-wrapper compiles it, makes for the SYCL device images on an
// x86-64 or AArch64 host (docs/registration.md#sycl-22): per image, in this
// order, the "triple" string, the compile and link option strings
// (.rodata.str1.N), the raw image in .llvm.offloading, an offload entry per
// kernel name (its name in .llvm.rodata.offloading, a weak
// `.offloading.entry.<name>` in llvm_offload_entries) and the image's own array
// of those entries (.sycl_offloading.entries_arr); then the
// __sycl.tgt_device_image array (Version 3, the offload kind, the low byte of
// the image kind, the pointers, null properties) and the __sycl.tgt_bin_desc
// (Version 1, the image count, null host entries); sycl.descriptor_reg and
// sycl.descriptor_unreg in .text.startup, which call __sycl_register_lib and
// __sycl_unregister_lib with the descriptor, registered in .init_array.1 and
// .fini_array.1; and their .eh_frame. Sections, symbols (with LLVM's numbering
// of repeated names: ".1", ".2", ... from one counter), relocations and the
// bytes of every section are the same as clang-linker-wrapper's, including
// where LLVM's code generator splits .llvm.offloading: an image of 4, 8, 16 or
// 32 bytes, or one that is a C string, goes to a mergeable .llvm.offloading of
// its own kind (the image's bytes are read to tell). Images are streamed from
// their readers.
//
// The release must wrap SYCL in this form: one whose row has
// SYCLRegistration release.SYCLRegistrationDescriptor (LLVM 22). Older
// releases have no SYCL wrapper, and LLVM 23 and later register the whole
// OffloadBinary with __sycl_register_lib(start, size) instead
// (llvm-project #193876; [SYCLBinary] writes main's form): both are refused
// with an error matching goffload.ErrUnsupported that names the release, as are
// Suffix and Relocatable, which wrapSYCLBinaries does not have, other
// hosts, and no images or more than 65535 (the count is 16 bits).
func SYCL(opt Options, images []SYCLImage) (*elfobj.Object, error) {
	r := opt.Release
	if r == nil {
		r = release.Default()
	}
	if err := syclForm(r); err != nil {
		return nil, err
	}
	if opt.Suffix != "" || opt.Relocatable {
		return nil, fmt.Errorf("wrap: a suffixed or relocatable SYCL wrapper (wrapSYCLBinaries has neither): %w", goffload.ErrUnsupported)
	}
	switch {
	case len(images) == 0:
		return nil, fmt.Errorf("wrap: no SYCL device image")
	case len(images) > 0xffff:
		return nil, fmt.Errorf("wrap: %d SYCL device images: the descriptor counts them in 16 bits: %w", len(images), goffload.ErrUnsupported)
	}
	for i := range images {
		if err := images[i].check(); err != nil {
			return nil, fmt.Errorf("wrap: SYCL image %d: %w", i, err)
		}
	}
	o, err := syclHost(opt.triple())
	if err != nil {
		return nil, err
	}
	// The two functions are the OpenMP wrapper's of LLVM 15 to 18: one call
	// with the descriptor each, no atexit.
	code, err := stubs.OpenMPWith(o.Machine, stubs.Options{LLVM: r.Major, Images: 1})
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	m := &syclModule{r: r, o: o, code: code, entries: syclEntriesSection(r), taken: map[string]bool{}}
	if err := m.describe(images); err != nil {
		return nil, err
	}
	return m.build()
}

// syclForm refuses a release whose wrapSYCLBinaries is not the one this
// file writes: none before 22; and from LLVM 23, whose
// clang-sycl-linker puts every image in one OffloadBinary of a later
// version, the whole binary registered by (start, size) (sycl_binary.go):
// the release table's SYCLRegistration.
func syclForm(r *release.Release) error {
	switch {
	case r.Wrapper.SYCL == release.SYCLRegistrationNone:
		return fmt.Errorf("wrap: SYCL images in %v: its offloading library has no SYCL wrapper (wrapSYCLBinaries is in 22 and later): %w", r, goffload.ErrUnsupported)
	case r.Wrapper.SYCL != release.SYCLRegistrationDescriptor:
		return fmt.Errorf("wrap: SYCL images in %v: its wrapSYCLBinaries registers the whole OffloadBinary with __sycl_register_lib(start, size), not a descriptor of images (SYCLBinary writes that form): %w", r, goffload.ErrUnsupported)
	case syclEntriesSection(r) == "" || r.Entries.NameSection == "" || r.Entries.SymbolPrefix == "":
		return fmt.Errorf("wrap: SYCL images in %v: no entries section shared by every offload kind with its name strings' section: %w", r, goffload.ErrUnsupported)
	}
	return nil
}

// syclEntriesSection is where emitOffloadingEntry puts a SYCL entry: the
// section that every offload kind shares from LLVM 21, or "".
func syclEntriesSection(r *release.Release) string {
	if s := offload.EntriesSection(r, offload.OffloadOpenMP); s == offload.EntriesSection(r, offload.OffloadCUDA) && s == offload.EntriesSection(r, offload.OffloadHIP) {
		return s
	}
	return ""
}

// syclClass is the section kind LLVM's code generator gives a constant byte
// array (TargetLoweringObjectFile::getKindForGlobal): a C string (a NUL at
// the end and none before), a mergeable constant of 4, 8, 16 or 32 bytes,
// or plain read-only data. It returns the section flags and entry size.
func syclClass(r io.ReaderAt, size int64) (elf.SectionFlag, uint64, error) {
	const merge, strs = elf.SHF_MERGE, elf.SHF_STRINGS
	if size > 0 {
		var last [1]byte
		if err := readFullAt(r, last[:], size-1); err != nil {
			return 0, 0, err
		}
		if last[0] == 0 {
			nul, err := hasNUL(r, size-1)
			if err != nil {
				return 0, 0, err
			}
			if !nul {
				return elf.SHF_ALLOC | merge | strs, 1, nil
			}
		}
	}
	switch size {
	case 4, 8, 16, 32:
		return elf.SHF_ALLOC | merge, uint64(size), nil
	}
	return elf.SHF_ALLOC, 0, nil
}

// hasNUL reports whether the first n bytes of r hold a zero byte, reading
// them in chunks until it finds one.
func hasNUL(r io.ReaderAt, n int64) (bool, error) {
	buf := make([]byte, min(n, 64<<10))
	for off := int64(0); off < n; {
		k := min(int64(len(buf)), n-off)
		if err := readFullAt(r, buf[:k], off); err != nil {
			return false, err
		}
		if bytes.IndexByte(buf[:k], 0) >= 0 {
			return true, nil
		}
		off += k
	}
	return false, nil
}

func readFullAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading the image at %d: %w", off, err)
}
