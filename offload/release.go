package offload

import (
	"debug/elf"
	"fmt"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/facts"
)

// DefaultRelease is the LLVM release whose formats the package writes when
// none is chosen: the newest release verified with the real tools.
const DefaultRelease = 22

// MainCheckedOn is when the rows of LLVM 23 and main (24), which no
// released tool can measure, were last checked against LLVM's sources and
// pull requests (docs/releases.md#llvm-23-and-main says against which
// commits, and how to check again).
const MainCheckedOn = "2026-09-11"

// EntryLayout is the binary layout of an offload entry
// (docs/entries.md#entry-layouts).
type EntryLayout uint8

const (
	// EntryLegacy is the 32-byte __tgt_offload_entry {addr, name, size, flags, reserved}
	// of LLVM 15–20.
	EntryLegacy EntryLayout = iota
	// EntryV1 is the 56-byte llvm::offloading::EntryTy of LLVM 21 and later.
	EntryV1
)

var entryLayoutNames = [...]string{"legacy", "v1"}

func (v EntryLayout) String() string { return enumName(entryLayoutNames[:], int(v), "EntryLayout") }

// enumName returns names[v], or "typ(v)" for a value without a name.
func enumName(names []string, v int, typ string) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return typ + "(" + strconv.Itoa(v) + ")"
}

// Release is one LLVM release of the table: the facts of its formats that
// users read, and (unexported, read by the module's packages) every other
// fact that differs between releases. Code that depends on the release reads
// it from here; nowhere else in the module compares release numbers. Get
// rows from [LookupRelease], [ParseRelease], [Default] or [Releases]; each
// is the caller's own copy.
type Release struct {
	// Major is the LLVM major version. Row 24 is LLVM's main branch after
	// the 23 branch.
	Major int
	// Inferred is true when the row was taken from LLVM's sources and
	// history rather than measured with the release's tools (20, 23, 24).
	Inferred bool
	// BinaryVersion is the OffloadBinary version the release's tools write
	// and the newest they read: 1 from LLVM 15, 2 for 23 (several images in
	// one binary), 3 for main after 23 (compression); 0 for LLVM 13 and 14,
	// which have no OffloadBinary (their wrapper embeds raw device images).
	BinaryVersion uint32
	// EntryLayout is the offload entry struct of the release (32 bytes up to
	// 20, 56 from 21).
	EntryLayout EntryLayout
	// RuntimeLibrary is the soname of the release's libomptarget: the name a
	// program linked against it records in DT_NEEDED ("libomptarget.so" in
	// 13 and 14, "libomptarget.so.19.1", ...).
	RuntimeLibrary string

	f *facts.Row
}

// EntriesFlags returns the section flags an entries section gets beyond
// SHF_ALLOC (and SHF_WRITE for the compiler's): SHF_GNU_RETAIN where the
// release keeps it under --gc-sections, else none.
func (r *Release) EntriesFlags() elf.SectionFlag {
	if r.facts().Entries.Retain {
		return shfGNURetain
	}
	return 0
}

// shfGNURetain is SHF_GNU_RETAIN, which debug/elf does not name.
const shfGNURetain elf.SectionFlag = 0x200000

// AMDGPUTriple returns the triple of an AMDGPU target ID ("gfx90a",
// "gfx90a:xnack+", "gfx10-3-generic") as the release spells it:
// amdgcn-amd-amdhsa up to 23; from main after 23 (24) the processor's version is
// the triple's subarch: gfx90a gives amdgpu9.0a-amd-amdhsa, gfx1030
// amdgpu10.30-amd-amdhsa, gfx10-3-generic amdgpu10.3-amd-amdhsa, no or an
// unknown processor amdgpu-amd-amdhsa (clang's test amdgpu-mcpu.cl).
func (r *Release) AMDGPUTriple(targetID string) string {
	if !r.facts().Main.AMDGPUSubarchTriples {
		return "amdgcn-amd-amdhsa"
	}
	return "amdgpu" + AMDGPUSubarch(targetID) + "-amd-amdhsa"
}

// AMDGPUSubarch returns the subarch of an AMDGPU processor in the triples
// of LLVM main after 23 (24): "9.0a" for gfx90a (the last two characters are
// minor and stepping), "10.3" for gfx10-3-generic, "9" for gfx9-generic;
// "" for anything else.
func AMDGPUSubarch(targetID string) string {
	proc, _, _ := strings.Cut(targetID, ":")
	v, ok := strings.CutPrefix(proc, "gfx")
	if !ok {
		return ""
	}
	if g, ok := strings.CutSuffix(v, "-generic"); ok {
		major, minor, hasMinor := strings.Cut(g, "-")
		if !allDigits(major) || hasMinor && !allDigits(minor) {
			return ""
		}
		if hasMinor {
			return major + "." + minor
		}
		return major
	}
	if len(v) < 3 || !allDigits(v[:len(v)-2]) {
		return ""
	}
	for _, c := range v[len(v)-2:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	return v[:len(v)-2] + "." + v[len(v)-2:]
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// NestedImages reports whether the release's tools read an image that is
// itself an OffloadBinary as nested images (llvm-objdump lists them as
// [i.j] with an image size line, llvm-offload-binary extracts their images)
// and know the OIF_Metadata image flag: LLVM 23 and later.
func (r *Release) NestedImages() bool { return r.facts().Main.NestedImages }

// SYCLWholeBinary reports whether the release's wrapSYCLBinaries registers
// the whole OffloadBinary it is given (LLVM 23 and later), rather than a
// descriptor of its images (22), or has no SYCL wrapper (before 22).
func (r *Release) SYCLWholeBinary() bool {
	s := r.facts().Wrapper.SYCL
	return s == facts.SYCLRegistrationBinary || s == facts.SYCLRegistrationBinaryDtor
}

// facts returns the facts of the release that users do not read.
func (r *Release) facts() *facts.Row {
	if r.f != nil {
		return r.f
	}
	return r.facts()
}

// String returns "LLVM <major>".
func (r *Release) String() string { return "LLVM " + strconv.Itoa(r.Major) }

// EntriesSection returns the entries section for offload kind k, or "" if k has
// none.
func (r *Release) EntriesSection(k OffloadKind) string {
	switch k {
	case OffloadOpenMP:
		return r.facts().Entries.OpenMP
	case OffloadCUDA:
		return r.facts().Entries.CUDA
	case OffloadHIP:
		return r.facts().Entries.HIP
	}
	return ""
}

// EntrySize is the size in bytes of one offload entry on a 64-bit host.
func (r *Release) EntrySize() int { return r.EntryLayout.Size() }

// DummySymbol returns the name of the wrapper's dummy object for offload kind k.
func (r *Release) DummySymbol(k OffloadKind) string {
	if r.facts().Wrapper.LegacyDummyName {
		return "__dummy." + strings.TrimSuffix(r.EntriesSection(k), "_entries") + ".entry"
	}
	return "__dummy." + r.EntriesSection(k)
}

var (
	legacyRenames = []string{"omp_offloading_entries", "cuda_offloading_entries", "hip_offloading_entries"}
	unifiedRename = []string{"llvm_offload_entries"}
)

// releases is the table: one row per release, oldest first
// (docs/releases.md#release-table). The facts users read are fields of Release;
// the others, grouped by the package that reads them, are in f.
var releases = []Release{
	{
		// The old OpenMP driver (docs/old-driver.md#old-driver): device code in
		// __CLANG_OFFLOAD_BUNDLE__ sections, registered by
		// clang-offload-wrapper. Entries, requires and ctor/dtor entries as
		// in 15 (measured with clang-13 -c: the same bytes, names and
		// symbols). The wrapper module is 14's; the driver compiles it
		// static (Wrapper.Static).
		Major: 13, EntryLayout: EntryLegacy, RuntimeLibrary: "libomptarget.so",
		f: &facts.Row{
			Tested:  "13.0.1",
			Kinds:   facts.Kinds{HIP: 3},
			Entries: facts.Entries{OpenMP: "omp_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", CtorDtor: true},
			Wrapper: facts.Wrapper{Form: facts.WrapperOffloadWrapper, Static: true, ImageEnd: facts.BoundBinaryEnd, CtorPriority: 1, LegacyDummyName: true},
		},
	},
	{
		// As 13, but clang-14 of Debian compiles the wrapper module PIE.
		Major: 14, EntryLayout: EntryLegacy, RuntimeLibrary: "libomptarget.so",
		f: &facts.Row{
			Tested:  "14.0.6",
			Kinds:   facts.Kinds{HIP: 3},
			Entries: facts.Entries{OpenMP: "omp_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", CtorDtor: true},
			Wrapper: facts.Wrapper{Form: facts.WrapperOffloadWrapper, ImageEnd: facts.BoundBinaryEnd, CtorPriority: 1, LegacyDummyName: true},
		},
	},
	{
		Major: 15, BinaryVersion: 1, EntryLayout: EntryLegacy, RuntimeLibrary: "libomptarget.so.15",
		f: &facts.Row{
			Tested:   "15.0.6",
			Kinds:    facts.Kinds{HIP: 3},
			Packager: facts.Packager{Args: facts.OrderStringMap, Strings: facts.OrderStringMap, NeedsTriple: true},
			Entries:  facts.Entries{OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", CtorDtor: true},
			Wrapper:  facts.Wrapper{BitcodeLibrary: true, TripleBeforeFirstEquals: true, ImageEnd: facts.BoundBinaryEnd, CtorPriority: 1, LegacyDummyName: true},
			Link:     facts.Link{InProcessLTO: true, Archives: facts.ArchiveUsedTargets, Device: facts.DeviceLinkLD, KernelArgsVersion: 1},
		},
	},
	{
		Major: 16, BinaryVersion: 1, EntryLayout: EntryLegacy, RuntimeLibrary: "libomptarget.so.16",
		f: &facts.Row{
			Tested:   "16.0.6",
			Kinds:    facts.Kinds{HIP: 3},
			Packager: facts.Packager{Args: facts.OrderDenseMap, Strings: facts.OrderStringMap, NeedsTriple: true},
			Entries:  facts.Entries{OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", CtorDtor: true},
			Wrapper:  facts.Wrapper{BitcodeLibrary: true, TripleBeforeFirstEquals: true, ImageEnd: facts.BoundBinaryEnd, CtorPriority: 1, LegacyDummyName: true},
			Link:     facts.Link{LTO2SelectSaveTemps: true, InProcessLTO: true, Archives: facts.ArchiveOrdered, SortImages: true, Device: facts.DeviceLinkClang16, KernelArgsVersion: 2},
		},
	},
	{
		Major: 17, BinaryVersion: 1, EntryLayout: EntryLegacy, RuntimeLibrary: "libomptarget.so.17",
		f: &facts.Row{
			Tested:   "17.0.6",
			Kinds:    facts.Kinds{HIP: 3},
			Packager: facts.Packager{Args: facts.OrderDenseMap, SplitsFiles: true, NeedsTriple: true},
			Entries:  facts.Entries{OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", CtorDtor: true},
			Wrapper:  facts.Wrapper{BitcodeLibrary: true, TripleBeforeFirstEquals: true, ImageEnd: facts.BoundBinaryEnd, CtorPriority: 1, LegacyDummyName: true, GPU: facts.GPURegistrationWholeFlags},
			Link:     facts.Link{LTO2SelectSaveTemps: true, InProcessLTO: true, Archives: facts.ArchiveOrdered, SortImages: true, WholeArchive: true, Device: facts.DeviceLinkClang17, KernelArgsVersion: 2},
			Bundle:   facts.Bundle{HIPFatbin: facts.HIPFatbin{HostTarget: "host-x86_64-unknown-linux", HostID: "host-x86_64-unknown-linux--", DeviceKind: "hipv4"}},
		},
	},
	{
		Major: 18, BinaryVersion: 1, EntryLayout: EntryLegacy, RuntimeLibrary: "libomptarget.so.18.1",
		f: &facts.Row{
			Tested:   "18.1.8",
			Kinds:    facts.Kinds{HIP: 3},
			Packager: facts.Packager{Args: facts.OrderDenseMap, SplitsFiles: true, NeedsTriple: true},
			Entries:  facts.Entries{OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", Indirect: true},
			Wrapper:  facts.Wrapper{LTOStrongOverWeak: true, BitcodeLibrary: true, TripleBeforeFirstEquals: true, ImageStart: facts.BoundImageStart, ImageEnd: facts.BoundBinaryEnd, CtorPriority: 1, GPU: facts.GPURegistrationFlagBits},
			Link:     facts.Link{LTO2SelectSaveTemps: true, InProcessLTO: true, Archives: facts.ArchiveOrdered, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: facts.DeviceLinkClang17, KernelArgsVersion: 3},
			Bundle:   facts.Bundle{HIPFatbin: facts.HIPFatbin{HostTarget: "host-x86_64-unknown-linux", HostID: "host-x86_64-unknown-linux--", DeviceKind: "hipv4", CompressedVersion: 1}},
			Runtime:  facts.Runtime{Images: imageHeaders18},
		},
	},
	{
		Major: 19, BinaryVersion: 1, EntryLayout: EntryLegacy, RuntimeLibrary: "libomptarget.so.19.1",
		f: &facts.Row{
			Tested:   "19.1.7",
			Kinds:    facts.Kinds{HIP: 3},
			Packager: facts.Packager{Args: facts.OrderDenseMap, SplitsFiles: true, NeedsTriple: true},
			Entries:  facts.Entries{OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", Requires: facts.RequiresEntryReserved, Indirect: true},
			Wrapper: facts.Wrapper{LTOStrongOverWeak: true, BitcodeLibrary: true, TripleBeforeFirstEquals: true, OverrideImage: true, ImageStart: facts.BoundImageStart, ImageEnd: facts.BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
				Dummy: facts.DummyLocalUsed, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: legacyRenames, GPU: facts.GPURegistrationFlagBits},
			Link:    facts.Link{LTO2SelectSaveTemps: true, InProcessLTO: true, Archives: facts.ArchiveResolve, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: facts.DeviceLinkClang17, KernelArgsVersion: 3},
			Bundle:  facts.Bundle{HIPFatbin: facts.HIPFatbin{Measured: true, HostTarget: "host-x86_64-unknown-linux", HostID: "host-x86_64-unknown-linux--", DeviceKind: "hip", CompressedVersion: 2}},
			Runtime: facts.Runtime{Images: imageHeaders18},
		},
	},
	{
		// Inferred (docs/releases.md#llvm-20): the name strings moved to
		// .llvm.rodata.offloading (PR #111890, Oct 2024); the kind renumbering
		// (PR #135809) and the unified section (PR #125731) came after the
		// branch. The 56-byte entry (PR #124018) was committed on the branch
		// day; 32 bytes is assumed.
		Major: 20, Inferred: true, BinaryVersion: 1, EntryLayout: EntryLegacy, RuntimeLibrary: "libomptarget.so.20.1",
		f: &facts.Row{
			Kinds:    facts.Kinds{HIP: 3},
			Packager: facts.Packager{Args: facts.OrderDenseMap, SplitsFiles: true, NeedsTriple: true},
			Entries:  facts.Entries{OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", NameSection: ".llvm.rodata.offloading", Requires: facts.RequiresEntryReserved, Indirect: true},
			Wrapper: facts.Wrapper{OverrideImage: true, ImageStart: facts.BoundImageStart, ImageEnd: facts.BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
				Dummy: facts.DummyLocalUsed, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: legacyRenames, GPU: facts.GPURegistrationFlagBits},
			Link:    facts.Link{LTO2SelectSaveTemps: true, Archives: facts.ArchiveResolve, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: facts.DeviceLinkClang17, KernelArgsVersion: 3},
			Bundle:  facts.Bundle{IDs: facts.BundleIDComponents, HIPFatbin: facts.HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 2}},
			Runtime: facts.Runtime{Images: imageHeaders18},
		},
	},
	{
		Major: 21, BinaryVersion: 1, EntryLayout: EntryV1, RuntimeLibrary: "libomptarget.so.21.1",
		f: &facts.Row{
			Tested:   "21.1.8",
			Kinds:    facts.Kinds{HIP: 4, SYCL: 8},
			Packager: facts.Packager{Args: facts.OrderDenseMap, SplitsFiles: true, NeedsTriple: true, OpenMPHostArch: "generic"},
			Entries:  facts.Entries{OpenMP: "llvm_offload_entries", CUDA: "llvm_offload_entries", HIP: "llvm_offload_entries", Align: 8, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", NameSection: ".llvm.rodata.offloading", Requires: facts.RequiresEntryData, RequiresName: ".requires", Indirect: true},
			Wrapper: facts.Wrapper{OverrideImage: true, ImageStart: facts.BoundImageStart, ImageEnd: facts.BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
				Dummy: facts.DummyLocalUsed, DummyAlign: 8, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename, GPU: facts.GPURegistrationKindCheck},
			Link:    facts.Link{LTO2SelectSaveTemps: true, Archives: facts.ArchiveAllMembers, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: facts.DeviceLinkClang17, KernelArgsVersion: 3},
			Bundle:  facts.Bundle{IDs: facts.BundleIDComponents, HIPFatbin: facts.HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 2}},
			Runtime: facts.Runtime{ReadsLegacyEntries: true, Images: imageHeaders21},
		},
	},
	{
		Major: 22, BinaryVersion: 1, EntryLayout: EntryV1, RuntimeLibrary: "libomptarget.so.22.1",
		f: &facts.Row{
			Tested:   "22.1.8",
			Kinds:    facts.Kinds{HIP: 4, SYCL: 8},
			Packager: facts.Packager{Args: facts.OrderDenseMap, SplitsFiles: true, OpenMPHostArch: "generic"},
			Entries:  facts.Entries{OpenMP: "llvm_offload_entries", CUDA: "llvm_offload_entries", HIP: "llvm_offload_entries", Align: 8, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", NameSection: ".llvm.rodata.offloading", Requires: facts.RequiresEntryData, RequiresName: ".requires", Indirect: true},
			Wrapper: facts.Wrapper{OverrideImage: true, ImageStart: facts.BoundImageStart, ImageEnd: facts.BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
				Dummy: facts.DummyLocalUsed, DummyAlign: 8, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename, GPU: facts.GPURegistrationKindCheck, SYCL: facts.SYCLRegistrationDescriptor, COFFBounds: facts.COFFBoundsEmpty},
			Link:    facts.Link{LTO2SelectSaveTemps: true, Archives: facts.ArchiveAllMembers, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: facts.DeviceLinkClang22, KernelArgsVersion: 3, FatbinImage3: true},
			Bundle:  facts.Bundle{IDs: facts.BundleIDComponents, HIPFatbin: facts.HIPFatbin{Measured: true, HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 3}},
			Runtime: facts.Runtime{ReadsLegacyEntries: true, Images: imageHeaders21},
		},
	},
	{
		// Inferred: LLVM 23.1 as shipped, from the sources and pull requests
		// of main before the release/23.x branch (16 July 2026) and what was
		// picked onto it (docs/releases.md#llvm-23-and-main; no Debian suite
		// ships it yet): 22's row but for OffloadBinary version 2 (several
		// images in one binary, 24-byte string entries, the 32-byte header;
		// no compression), nested images and OIF_Metadata, SPIR-V images
		// named, string entries checked, and SYCL registering the whole
		// binary from a constructor and destructor of priority 1. Its COFF
		// wrapper is 22's (#215390 came after the branch).
		Major: 23, Inferred: true, BinaryVersion: 2, EntryLayout: EntryV1, RuntimeLibrary: "libomptarget.so.23.1",
		f: &facts.Row{
			Kinds:    facts.Kinds{HIP: 4, SYCL: 8},
			Packager: facts.Packager{Args: facts.OrderDenseMap, SplitsFiles: true, OpenMPHostArch: "generic"},
			Entries:  facts.Entries{OpenMP: "llvm_offload_entries", CUDA: "llvm_offload_entries", HIP: "llvm_offload_entries", Align: 8, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", NameSection: ".llvm.rodata.offloading", Requires: facts.RequiresEntryData, RequiresName: ".requires", Indirect: true},
			Wrapper: facts.Wrapper{OverrideImage: true, ImageStart: facts.BoundImageStart, ImageEnd: facts.BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
				Dummy: facts.DummyLocalUsed, DummyAlign: 8, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename, GPU: facts.GPURegistrationKindCheck, SYCL: facts.SYCLRegistrationBinaryDtor, COFFBounds: facts.COFFBoundsEmpty},
			Link:    facts.Link{LTO2SelectSaveTemps: true, Archives: facts.ArchiveAllMembers, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: facts.DeviceLinkClang22, KernelArgsVersion: 3, FatbinImage3: true},
			Bundle:  facts.Bundle{IDs: facts.BundleIDComponents, HIPFatbin: facts.HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 3}},
			Runtime: facts.Runtime{ReadsLegacyEntries: true, Images: imageHeaders21},
			Main:    facts.Main{SPIRVImages: true, NestedImages: true, ChecksStrings: true},
		},
	},
	{
		// Inferred: LLVM's main branch after the 23 branch (24.0.0git), from
		// its sources and regression tests, pinned to a commit in
		// docs/releases.md#llvm-23-and-main: 23's row but for OffloadBinary
		// version 3 (40-byte header, compressed bodies, the next binary at a
		// multiple of 8), AMDGPU subarch triples, entries sections kept under
		// --gc-sections (SHF_GNU_RETAIN), SYCL registration from a
		// constructor of priority 101 with atexit, and on COFF hosts a
		// zeroed sentinel entry in each bound's section (#215390).
		Major: 24, Inferred: true, BinaryVersion: 3, EntryLayout: EntryV1, RuntimeLibrary: "libomptarget.so.24.0",
		f: &facts.Row{
			Kinds:    facts.Kinds{HIP: 4, SYCL: 8},
			Packager: facts.Packager{Args: facts.OrderDenseMap, SplitsFiles: true, OpenMPHostArch: "generic"},
			Entries:  facts.Entries{OpenMP: "llvm_offload_entries", CUDA: "llvm_offload_entries", HIP: "llvm_offload_entries", Align: 8, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", NameSection: ".llvm.rodata.offloading", Requires: facts.RequiresEntryData, RequiresName: ".requires", Indirect: true, Retain: true},
			Wrapper: facts.Wrapper{OverrideImage: true, ImageStart: facts.BoundImageStart, ImageEnd: facts.BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
				Dummy: facts.DummyLocalUsed, DummyAlign: 8, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename, GPU: facts.GPURegistrationKindCheck, SYCL: facts.SYCLRegistrationBinary, COFFBounds: facts.COFFBoundsSentinel},
			Link:    facts.Link{LTO2SelectSaveTemps: true, Archives: facts.ArchiveAllMembers, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: facts.DeviceLinkClang22, KernelArgsVersion: 3, FatbinImage3: true},
			Bundle:  facts.Bundle{IDs: facts.BundleIDComponents, HIPFatbin: facts.HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 3}},
			Runtime: facts.Runtime{ReadsLegacyEntries: true, Images: imageHeaders21},
			Main:    facts.Main{AMDGPUSubarchTriples: true, SPIRVImages: true, NestedImages: true, ChecksStrings: true, AlignsAfter: true},
		},
	},
}

// imageHeaders18 and imageHeaders21 are how libomptarget 18 to 20, and 21
// and later, check a device image's header (facts.ImageHeaders).
var (
	imageHeaders18 = facts.ImageHeaders{Checked: true, CUDAMaxSM: 90, AMDABIVersions: []uint8{2, 3}, AMDMaxMach: 0x4e}
	imageHeaders21 = facts.ImageHeaders{Checked: true, CUDAABI2: true, AMDABIVersions: []uint8{3, 4}}
)

func init() {
	for i := range releases {
		facts.Register(releases[i].Major, releases[i].f)
	}
	facts.Of = func(r any) *facts.Row {
		if r, ok := r.(*Release); ok && r != nil {
			return r.facts()
		}
		return facts.For(DefaultRelease)
	}
}

// Releases returns every release the package knows, oldest first. Each row
// is the caller's own copy: changing it changes nothing for anyone else.
func Releases() []*Release {
	out := make([]*Release, len(releases))
	for i := range releases {
		out[i] = row(i)
	}
	return out
}

// LookupRelease returns a copy of the row of LLVM release major.
func LookupRelease(major int) (*Release, error) {
	for i := range releases {
		if releases[i].Major == major {
			return row(i), nil
		}
	}
	return nil, fmt.Errorf("release %d: %w (known: %d to %d)", major, goffload.ErrUnknownRelease,
		releases[0].Major, releases[len(releases)-1].Major)
}

// row returns a copy of releases[i], its slices copied too: rows handed out
// are the caller's, so that a caller setting a field (a test trying another
// ctor priority, say) cannot change the table under every other user.
func row(i int) *Release {
	r := releases[i]
	return &r
}

// Default returns a copy of the row of DefaultRelease.
func Default() *Release {
	r, err := LookupRelease(DefaultRelease)
	if err != nil {
		panic(err) // the table always holds DefaultRelease
	}
	return r
}

// ParseRelease parses a release number as given on a command line ("19",
// "llvm19", "LLVM 19", "19.1.7").
func ParseRelease(s string) (*Release, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	t = strings.TrimSpace(strings.TrimPrefix(t, "llvm"))
	t = strings.TrimPrefix(t, "-")
	if i := strings.IndexByte(t, '.'); i >= 0 {
		t = t[:i]
	}
	n, err := strconv.Atoi(t)
	if err != nil {
		return nil, fmt.Errorf("LLVM release %q: %w", s, goffload.ErrUnknownRelease)
	}
	return LookupRelease(n)
}
