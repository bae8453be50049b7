package release

import (
	"debug/elf"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
)

// DefaultMajor is the LLVM release whose formats the module writes when
// none is chosen: the newest release verified with the real tools.
const DefaultMajor = 22

// MainCheckedOn is when the rows of LLVM 23 and main (24), which no
// released tool can measure, were last checked against LLVM's sources and
// pull requests (docs/releases.md#llvm-23-and-main says against which
// commits, and how to check again).
const MainCheckedOn = "2026-11-29"

// Release is one row of the table: what one LLVM release's tools write
// and read, each fact a field, grouped by the package that reads it. Code
// that depends on the release reads it from here; nowhere else in the
// module compares release numbers. Get rows from [Lookup], [Parse],
// [Default], [All] or [Range]; each is the caller's own copy.
type Release struct {
	// Major is the LLVM major version. Row 24 is LLVM's main branch after
	// the 23 branch.
	Major int
	// Inferred is true when the row was taken from LLVM's sources and
	// history rather than measured with the release's tools (20, 23, 24).
	Inferred bool
	// Tested is the Debian package version whose tools this row was
	// measured against, or "" when no tool of the release was run.
	Tested string
	// BinaryVersion is the OffloadBinary version the release's tools write
	// and the newest they read: 1 from LLVM 15, 2 for 23 (several images in
	// one binary), 3 for main after 23 (compression); 0 for LLVM 13 and 14,
	// which have no OffloadBinary (their wrapper embeds raw device images).
	BinaryVersion uint32
	// RuntimeLibrary is the soname of the release's libomptarget: the name a
	// program linked against it records in DT_NEEDED ("libomptarget.so" in
	// 13 and 14, "libomptarget.so.19.1", ...).
	RuntimeLibrary string

	Kinds    Kinds
	Packager Packager
	Entries  Entries
	Wrapper  Wrapper
	Link     Link
	Bundle   Bundle
	Runtime  Runtime
	Main     Main
}

// EntriesFlags returns the section flags an entries section gets beyond
// SHF_ALLOC (and SHF_WRITE for the compiler's): SHF_GNU_RETAIN where the
// release keeps it under --gc-sections, else none.
func (r *Release) EntriesFlags() elf.SectionFlag {
	if r.Entries.Retain {
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
	if !r.Main.AMDGPUSubarchTriples {
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

// SYCLWholeBinary reports whether the release's wrapSYCLBinaries registers
// the whole OffloadBinary it is given (LLVM 23 and later), rather than a
// descriptor of its images (22), or has no SYCL wrapper (before 22).
func (r *Release) SYCLWholeBinary() bool {
	s := r.Wrapper.SYCL
	return s == SYCLRegistrationBinary || s == SYCLRegistrationBinaryDtor
}

// String returns "LLVM <major>".
func (r *Release) String() string { return "LLVM " + strconv.Itoa(r.Major) }

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
		Major: 13, Tested: "13.0.1", RuntimeLibrary: "libomptarget.so",
		Kinds:   Kinds{HIP: 3},
		Entries: Entries{Size: 32, OpenMP: "omp_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", CtorDtor: true},
		Wrapper: Wrapper{Form: WrapperOffloadWrapper, Static: true, ImageEnd: BoundBinaryEnd, CtorPriority: 1, LegacyDummyName: true},
	},
	{
		// As 13, but clang-14 of Debian compiles the wrapper module PIE.
		Major: 14, Tested: "14.0.6", RuntimeLibrary: "libomptarget.so",
		Kinds:   Kinds{HIP: 3},
		Entries: Entries{Size: 32, OpenMP: "omp_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", CtorDtor: true},
		Wrapper: Wrapper{Form: WrapperOffloadWrapper, ImageEnd: BoundBinaryEnd, CtorPriority: 1, LegacyDummyName: true},
	},
	{
		Major: 15, BinaryVersion: 1, Tested: "15.0.6", RuntimeLibrary: "libomptarget.so.15",
		Kinds:    Kinds{HIP: 3},
		Packager: Packager{Args: OrderStringMap, Strings: OrderStringMap, NeedsTriple: true},
		Entries:  Entries{Size: 32, OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", CtorDtor: true},
		Wrapper:  Wrapper{BitcodeLibrary: true, TripleBeforeFirstEquals: true, ImageEnd: BoundBinaryEnd, CtorPriority: 1, LegacyDummyName: true},
		Link:     Link{InProcessLTO: true, Archives: ArchiveUsedTargets, Device: DeviceLinkLD, KernelArgsVersion: 1},
	},
	{
		Major: 16, BinaryVersion: 1, Tested: "16.0.6", RuntimeLibrary: "libomptarget.so.16",
		Kinds:    Kinds{HIP: 3},
		Packager: Packager{Args: OrderDenseMap, Strings: OrderStringMap, NeedsTriple: true},
		Entries:  Entries{Size: 32, OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", CtorDtor: true},
		Wrapper:  Wrapper{BitcodeLibrary: true, TripleBeforeFirstEquals: true, ImageEnd: BoundBinaryEnd, CtorPriority: 1, LegacyDummyName: true},
		Link:     Link{LTO2SelectSaveTemps: true, InProcessLTO: true, Archives: ArchiveOrdered, SortImages: true, Device: DeviceLinkClang16, KernelArgsVersion: 2},
	},
	{
		Major: 17, BinaryVersion: 1, Tested: "17.0.6", RuntimeLibrary: "libomptarget.so.17",
		Kinds:    Kinds{HIP: 3},
		Packager: Packager{Args: OrderDenseMap, SplitsFiles: true, NeedsTriple: true},
		Entries:  Entries{Size: 32, OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", CtorDtor: true},
		Wrapper:  Wrapper{BitcodeLibrary: true, TripleBeforeFirstEquals: true, ImageEnd: BoundBinaryEnd, CtorPriority: 1, LegacyDummyName: true, GPU: GPURegistrationWholeFlags},
		Link:     Link{LTO2SelectSaveTemps: true, InProcessLTO: true, Archives: ArchiveOrdered, SortImages: true, WholeArchive: true, Device: DeviceLinkClang17, KernelArgsVersion: 2},
		Bundle:   Bundle{HIPFatbin: HIPFatbin{HostTarget: "host-x86_64-unknown-linux", HostID: "host-x86_64-unknown-linux--", DeviceKind: "hipv4"}},
	},
	{
		Major: 18, BinaryVersion: 1, Tested: "18.1.8", RuntimeLibrary: "libomptarget.so.18.1",
		Kinds:    Kinds{HIP: 3},
		Packager: Packager{Args: OrderDenseMap, SplitsFiles: true, NeedsTriple: true},
		Entries:  Entries{Size: 32, OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".omp_offloading.entry.", NameSymbol: ".omp_offloading.entry_name", Indirect: true},
		Wrapper:  Wrapper{LTOStrongOverWeak: true, BitcodeLibrary: true, TripleBeforeFirstEquals: true, ImageStart: BoundImageStart, ImageEnd: BoundBinaryEnd, CtorPriority: 1, GPU: GPURegistrationFlagBits},
		Link:     Link{LTO2SelectSaveTemps: true, InProcessLTO: true, Archives: ArchiveOrdered, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: DeviceLinkClang17, KernelArgsVersion: 3},
		Bundle:   Bundle{HIPFatbin: HIPFatbin{HostTarget: "host-x86_64-unknown-linux", HostID: "host-x86_64-unknown-linux--", DeviceKind: "hipv4", CompressedVersion: 1}},
		Runtime:  Runtime{Images: imageHeaders18},
	},
	{
		Major: 19, BinaryVersion: 1, Tested: "19.1.7", RuntimeLibrary: "libomptarget.so.19.1",
		Kinds:    Kinds{HIP: 3},
		Packager: Packager{Args: OrderDenseMap, SplitsFiles: true, NeedsTriple: true},
		Entries:  Entries{Size: 32, OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", Requires: RequiresEntryReserved, Indirect: true},
		Wrapper: Wrapper{LTOStrongOverWeak: true, BitcodeLibrary: true, TripleBeforeFirstEquals: true, OverrideImage: true, ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
			Dummy: DummyLocalUsed, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: legacyRenames, GPU: GPURegistrationFlagBits},
		Link:    Link{LTO2SelectSaveTemps: true, InProcessLTO: true, Archives: ArchiveResolve, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: DeviceLinkClang17, KernelArgsVersion: 3},
		Bundle:  Bundle{HIPFatbin: HIPFatbin{Measured: true, HostTarget: "host-x86_64-unknown-linux", HostID: "host-x86_64-unknown-linux--", DeviceKind: "hip", CompressedVersion: 2}},
		Runtime: Runtime{Images: imageHeaders18},
	},
	{
		// Inferred (docs/releases.md#llvm-20): the name strings moved to
		// .llvm.rodata.offloading (PR #111890, Oct 2024); the kind renumbering
		// (PR #135809) and the unified section (PR #125731) came after the
		// branch. The 56-byte entry (PR #124018) was committed on the branch
		// day; 32 bytes is assumed.
		Major: 20, Inferred: true, BinaryVersion: 1, RuntimeLibrary: "libomptarget.so.20.1",
		Kinds:    Kinds{HIP: 3},
		Packager: Packager{Args: OrderDenseMap, SplitsFiles: true, NeedsTriple: true},
		Entries:  Entries{Size: 32, OpenMP: "omp_offloading_entries", CUDA: "cuda_offloading_entries", HIP: "hip_offloading_entries", Align: 1, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", NameSection: ".llvm.rodata.offloading", Requires: RequiresEntryReserved, Indirect: true},
		Wrapper: Wrapper{OverrideImage: true, ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
			Dummy: DummyLocalUsed, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: legacyRenames, GPU: GPURegistrationFlagBits},
		Link:    Link{LTO2SelectSaveTemps: true, Archives: ArchiveResolve, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: DeviceLinkClang17, KernelArgsVersion: 3},
		Bundle:  Bundle{IDs: BundleIDComponents, HIPFatbin: HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 2}},
		Runtime: Runtime{Images: imageHeaders18},
	},
	{
		Major: 21, BinaryVersion: 1, Tested: "21.1.8", RuntimeLibrary: "libomptarget.so.21.1",
		Kinds:    Kinds{HIP: 4, SYCL: 8},
		Packager: Packager{Args: OrderDenseMap, SplitsFiles: true, NeedsTriple: true, OpenMPHostArch: "generic"},
		Entries:  Entries{Size: 56, OpenMP: "llvm_offload_entries", CUDA: "llvm_offload_entries", HIP: "llvm_offload_entries", Align: 8, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", NameSection: ".llvm.rodata.offloading", Requires: RequiresEntryData, RequiresName: ".requires", Indirect: true},
		Wrapper: Wrapper{OverrideImage: true, ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
			Dummy: DummyLocalUsed, DummyAlign: 8, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename, GPU: GPURegistrationKindCheck},
		Link:    Link{LTO2SelectSaveTemps: true, Archives: ArchiveAllMembers, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: DeviceLinkClang17, KernelArgsVersion: 3},
		Bundle:  Bundle{IDs: BundleIDComponents, HIPFatbin: HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 2}},
		Runtime: Runtime{ReadsLegacyEntries: true, Images: imageHeaders21},
	},
	{
		Major: 22, BinaryVersion: 1, Tested: "22.1.8", RuntimeLibrary: "libomptarget.so.22.1",
		Kinds:    Kinds{HIP: 4, SYCL: 8},
		Packager: Packager{Args: OrderDenseMap, SplitsFiles: true, OpenMPHostArch: "generic"},
		Entries:  Entries{Size: 56, OpenMP: "llvm_offload_entries", CUDA: "llvm_offload_entries", HIP: "llvm_offload_entries", Align: 8, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", NameSection: ".llvm.rodata.offloading", Requires: RequiresEntryData, RequiresName: ".requires", Indirect: true},
		Wrapper: Wrapper{OverrideImage: true, ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
			Dummy: DummyLocalUsed, DummyAlign: 8, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename, GPU: GPURegistrationKindCheck, SYCL: SYCLRegistrationDescriptor, COFFBounds: COFFBoundsEmpty},
		Link:    Link{LTO2SelectSaveTemps: true, Archives: ArchiveAllMembers, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: DeviceLinkClang22, KernelArgsVersion: 3, FatbinImage3: true},
		Bundle:  Bundle{IDs: BundleIDComponents, HIPFatbin: HIPFatbin{Measured: true, HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 3}},
		Runtime: Runtime{ReadsLegacyEntries: true, Images: imageHeaders21},
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
		Major: 23, Inferred: true, BinaryVersion: 2, RuntimeLibrary: "libomptarget.so.23.1",
		Kinds:    Kinds{HIP: 4, SYCL: 8},
		Packager: Packager{Args: OrderDenseMap, SplitsFiles: true, OpenMPHostArch: "generic"},
		Entries:  Entries{Size: 56, OpenMP: "llvm_offload_entries", CUDA: "llvm_offload_entries", HIP: "llvm_offload_entries", Align: 8, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", NameSection: ".llvm.rodata.offloading", Requires: RequiresEntryData, RequiresName: ".requires", Indirect: true},
		Wrapper: Wrapper{OverrideImage: true, ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
			Dummy: DummyLocalUsed, DummyAlign: 8, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename, GPU: GPURegistrationKindCheck, SYCL: SYCLRegistrationBinaryDtor, COFFBounds: COFFBoundsEmpty},
		Link:    Link{LTO2SelectSaveTemps: true, Archives: ArchiveAllMembers, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: DeviceLinkClang22, KernelArgsVersion: 3, FatbinImage3: true},
		Bundle:  Bundle{IDs: BundleIDComponents, HIPFatbin: HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 3}},
		Runtime: Runtime{ReadsLegacyEntries: true, Images: imageHeaders21},
		Main:    Main{SPIRVImages: true, NestedImages: true, ChecksStrings: true},
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
		Major: 24, Inferred: true, BinaryVersion: 3, RuntimeLibrary: "libomptarget.so.24.0",
		Kinds:    Kinds{HIP: 4, SYCL: 8},
		Packager: Packager{Args: OrderDenseMap, SplitsFiles: true, OpenMPHostArch: "generic"},
		Entries:  Entries{Size: 56, OpenMP: "llvm_offload_entries", CUDA: "llvm_offload_entries", HIP: "llvm_offload_entries", Align: 8, SymbolPrefix: ".offloading.entry.", NameSymbol: ".offloading.entry_name", NameSection: ".llvm.rodata.offloading", Requires: RequiresEntryData, RequiresName: ".requires", Indirect: true, Retain: true},
		Wrapper: Wrapper{OverrideImage: true, ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
			Dummy: DummyLocalUsed, DummyAlign: 8, RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename, GPU: GPURegistrationKindCheck, SYCL: SYCLRegistrationBinary, COFFBounds: COFFBoundsSentinel, MachO: true},
		Link:    Link{LTO2SelectSaveTemps: true, Archives: ArchiveAllMembers, TargetMatch: TargetMatchTargetID, SortImages: true, WholeArchive: true, LinkExeOptions: true, Device: DeviceLinkClang22, KernelArgsVersion: 3, FatbinImage3: true},
		Bundle:  Bundle{IDs: BundleIDComponents, HIPFatbin: HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 3}},
		Runtime: Runtime{ReadsLegacyEntries: true, Images: imageHeaders21},
		Main:    Main{AMDGPUSubarchTriples: true, SPIRVImages: true, NestedImages: true, ChecksStrings: true, AlignsAfter: true},
	},
}

// imageHeaders18 and imageHeaders21 are how libomptarget 18 to 20, and 21
// and later, check a device image's header (ImageHeaders).
var (
	imageHeaders18 = ImageHeaders{Checked: true, CUDAMaxSM: 90, AMDABIVersions: []uint8{2, 3}, AMDMaxMach: 0x4e}
	imageHeaders21 = ImageHeaders{Checked: true, CUDAABI2: true, AMDABIVersions: []uint8{3, 4}}
)

// All returns every row of the table, oldest first. Each row is the
// caller's own copy: changing it changes nothing for anyone else.
func All() []*Release {
	out := make([]*Release, len(releases))
	for i := range releases {
		out[i] = row(i)
	}
	return out
}

// Range returns the rows of the releases from lo to hi, both included,
// oldest first; none where the table holds none of them.
func Range(lo, hi int) []*Release {
	var out []*Release
	for i := range releases {
		if m := releases[i].Major; m >= lo && m <= hi {
			out = append(out, row(i))
		}
	}
	return out
}

// Lookup returns a copy of the row of LLVM release major, or an error
// matching [goffload.ErrUnknownRelease].
func Lookup(major int) (*Release, error) {
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
	r.Wrapper.RelocatableRenames = slices.Clone(r.Wrapper.RelocatableRenames)
	r.Runtime.Images.AMDABIVersions = slices.Clone(r.Runtime.Images.AMDABIVersions)
	return &r
}

// Default returns a copy of the row of DefaultMajor.
func Default() *Release {
	r, err := Lookup(DefaultMajor)
	if err != nil {
		panic(err) // the table always holds DefaultMajor
	}
	return r
}

// Parse parses a release number as given on a command line ("19",
// "llvm19", "LLVM 19", "19.1.7").
func Parse(s string) (*Release, error) {
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
	return Lookup(n)
}

// ByRuntimeLibrary returns the releases whose libomptarget a file needing
// the shared object name (a DT_NEEDED entry) runs on: those whose
// RuntimeLibrary is name ("libomptarget.so" gives 13 and 14), else the
// release whose major version follows "libomptarget.so."
// ("libomptarget.so.21.1.3" gives 21). It returns nil for another library
// or a release the table does not hold.
func ByRuntimeLibrary(name string) []*Release {
	var out []*Release
	for i := range releases {
		if releases[i].RuntimeLibrary == name {
			out = append(out, row(i))
		}
	}
	if out != nil {
		return out
	}
	v, ok := strings.CutPrefix(name, "libomptarget.so.")
	if !ok {
		return nil
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil || strconv.Itoa(n) != major {
		return nil
	}
	if r, err := Lookup(n); err == nil {
		return []*Release{r}
	}
	return nil
}
