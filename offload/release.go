package offload

import (
	"debug/elf"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
)

// DefaultRelease is the LLVM release whose formats the package writes when
// none is chosen: the newest release verified with the real tools.
const DefaultRelease = 22

// EntryLayout is the binary layout of an offload entry (spec §2.1).
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

// MapOrder names the container whose iteration order clang-offload-packager's
// output inherits (spec §1.6).
type MapOrder uint8

const (
	// OrderInsertion keeps the order in which keys were first added (an llvm::MapVector).
	OrderInsertion MapOrder = iota
	// OrderStringMap is the bucket order of an llvm::StringMap hashed with djbHash (seed 0).
	OrderStringMap
	// OrderDenseMap is the bucket order of an llvm::DenseMap<StringRef, ...> hashed with
	// llvm::hash_value(StringRef).
	OrderDenseMap
)

var mapOrderNames = [...]string{"insertion", "StringMap(djb)", "DenseMap(hash_value)"}

func (v MapOrder) String() string { return enumName(mapOrderNames[:], int(v), "MapOrder") }

// RequiresEncoding is how a translation unit's `#pragma omp requires` reaches the
// runtime (spec §2.3).
type RequiresEncoding uint8

const (
	// RequiresCtor: a `.omp_offloading.requires_reg` constructor of priority 0 calls
	// __tgt_register_requires(flags) (LLVM 15–18).
	RequiresCtor RequiresEncoding = iota
	// RequiresEntryReserved: an entry with flag 0x10, an empty name and the flags in the
	// legacy `reserved` field (LLVM 19).
	RequiresEntryReserved
	// RequiresEntryData: an entry with flag 0x10, the name ".requires" and the flags in
	// Data (LLVM 21 and later).
	RequiresEntryData
)

var requiresEncodingNames = [...]string{"ctor", "entry-reserved", "entry-data"}

func (v RequiresEncoding) String() string {
	return enumName(requiresEncodingNames[:], int(v), "RequiresEncoding")
}

// ImageBound says where a __tgt_device_image's ImageStart or ImageEnd points in the
// embedded OffloadBinary (spec §3.1, §7).
type ImageBound uint8

const (
	// BoundBinaryStart is the first byte of the OffloadBinary header.
	BoundBinaryStart ImageBound = iota
	// BoundBinaryEnd is one past the last byte of the whole, 8-padded OffloadBinary.
	BoundBinaryEnd
	// BoundImageStart is the binary's ImageOffset.
	BoundImageStart
	// BoundImageEnd is ImageOffset+ImageSize.
	BoundImageEnd
)

var imageBoundNames = [...]string{"binary-start", "binary-end", "image-start", "image-end"}

func (v ImageBound) String() string { return enumName(imageBoundNames[:], int(v), "ImageBound") }

// DummyLinkage is how the wrapper's zero-sized dummy object in the entries section
// is defined (spec §2.5).
type DummyLinkage uint8

const (
	// DummyHiddenGlobal: a GLOBAL HIDDEN object (LLVM 15–18).
	DummyHiddenGlobal DummyLinkage = iota
	// DummyLocalUsed: a LOCAL object kept by llvm.compiler.used (LLVM 19 and later).
	DummyLocalUsed
)

var dummyLinkageNames = [...]string{"hidden-global", "local-used"}

func (v DummyLinkage) String() string { return enumName(dummyLinkageNames[:], int(v), "DummyLinkage") }

// WrapperForm is how a release's driver registers the OpenMP device code of
// a program with the runtime at link time (spec §3, §6).
type WrapperForm uint8

const (
	// WrapperLinkerWrapper: clang-linker-wrapper embeds each linked device
	// image in an OffloadBinary in .llvm.offloading and compiles its module
	// in process (LLVM 15 and later).
	WrapperLinkerWrapper WrapperForm = iota
	// WrapperOffloadWrapper: clang-offload-wrapper embeds the raw device
	// images (device ELF shared objects, no OffloadBinary) as constants that
	// the code generator puts in .rodata, and the driver compiles its module
	// with `clang -cc1 -emit-obj` (the old driver, LLVM 10 to 14).
	WrapperOffloadWrapper
)

// DeviceLink is the shape of the commands and temporary files of a
// release's clang-linker-wrapper, as its --dry-run and --save-temps show
// them (measured in 15, 16, 19 and 22; 17, 18, 20 and 21 taken as 19's).
type DeviceLink uint8

const (
	// DeviceLinkNone: no clang-linker-wrapper (13, 14: the old driver).
	DeviceLinkNone DeviceLink = iota
	// DeviceLinkLD (15): a CPU target is linked by the host linker itself
	// (-m EMU -shared, the host's -L, -l, -rpath, -dynamic-linker,
	// --as-needed, then -Bsymbolic); files OUT-ARCH-.out, OUT-wrapper.o.
	DeviceLinkLD
	// DeviceLinkClang16 (16): clang -o IMG --target -march -O2
	// -Wl,--no-undefined -Bsymbolic -shared, the host's -L, -l, -rpath,
	// then -g, -save-temps, -v, -Wl,ARG and the inputs; files
	// OUT.ARCH.native.img, OUT.image.wrapper.o.
	DeviceLinkClang16
	// DeviceLinkClang17 (17 to 21): clang --no-default-config, the inputs
	// before -Wl,-Bsymbolic -shared, the dynamic linker as an input, the
	// host's -L, -l, -rpath and --whole-archive regions, then -g,
	// -save-temps, -v and --device-linker arguments as they are; files
	// OUT.ARCH.native.img, OUT.KIND.image.wrapper.o.
	DeviceLinkClang17
	// DeviceLinkClang22 (22): as 17 with -dumpdir IMG., -flto for bitcode,
	// -Xlinker ARG, the --device-compiler arguments and no -O of its own;
	// files OUT.ARCH..img for a generic image.
	DeviceLinkClang22
)

var wrapperFormNames = [...]string{"clang-linker-wrapper", "clang-offload-wrapper"}

func (v WrapperForm) String() string { return enumName(wrapperFormNames[:], int(v), "WrapperForm") }

// enumName returns names[v], or "typ(v)" for a value without a name.
func enumName(names []string, v int, typ string) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return typ + "(" + strconv.Itoa(v) + ")"
}

// Release holds every fact of the offloading formats that differs between LLVM
// releases. Code that depends on the release reads it from here; nowhere else in
// the module compares release numbers.
//
// A field documented as unverified for a release holds the value that the
// neighbouring verified releases and the upstream history make most likely.
type Release struct {
	// Major is the LLVM major version.
	Major int
	// Tested is the Debian package version whose tools this row was measured
	// against (spec §0), or "" when no tool of the release was run.
	Tested string
	// Inferred is true when the whole row is inferred from the upstream history
	// rather than measured (LLVM 20: no Debian suite ships it).
	Inferred bool

	// BinaryVersion is the OffloadBinary version the release's tools write
	// (spec §1.2): 1 from LLVM 15. It is 0 for LLVM 13 and 14, which have no
	// OffloadBinary and no clang-offload-packager: their Packager fields mean
	// nothing, and WriteBinary and the packager refuse them
	// (goffload.ErrUnsupported).
	BinaryVersion uint32
	// Wrapper is the form of the OpenMP registration object made at link
	// time: clang-linker-wrapper's (15 and later) or clang-offload-wrapper's
	// (13, 14).
	Wrapper WrapperForm
	// WrapperStatic: the driver compiles clang-offload-wrapper's module with
	// the static relocation model (`-mrelocation-model static`, clang-13's
	// default on Linux; clang-14 of Debian compiles it as PIE), so that the
	// tables of the object are in .rodata, addressed with absolute
	// relocations. clang-linker-wrapper always compiles PIC.
	WrapperStatic bool

	// OffloadKind numbering in OffloadBinary entries and in 56-byte offload
	// entries (spec §1.8): HIP is 3 up to 20 and 4 from 21; SYCL exists from 21.
	// LLVM 13 and 14 have no OffloadBinary; their rows read one by the
	// numbering of 15 to 20.
	HIPCode  uint16
	SYCLCode uint16 // 0: the release has no SYCL kind ("sycl" parses as none)

	// PackagerArgs is the order of clang-offload-packager's map of --image
	// arguments (all keys, `file` and `kind` included); PackagerStrings the order
	// of the OffloadingImage string map filled from it (spec §1.6). Not
	// applicable where BinaryVersion is 0.
	PackagerArgs    MapOrder
	PackagerStrings MapOrder
	// PackagerSplitsFiles: a `file` value holding commas (from repeated `file=`
	// keys) names several images, one binary each. Measured false in 15 and 16,
	// true in 19 and 22; unverified in 17, 18, 20, 21.
	PackagerSplitsFiles bool
	// PackagerNeedsTriple: the packager rejects an --image without `triple`.
	// Measured true in 15–19, false in 22; unverified in 17, 18, 20, 21.
	PackagerNeedsTriple bool
	// OpenMPHostArch is the `arch` string the driver gives a host-device OpenMP
	// image (`-fopenmp-targets=x86_64-...`): "" up to 19, "generic" in 21 and 22.
	OpenMPHostArch string

	// EntryLayout is the offload entry struct (spec §2.1).
	EntryLayout EntryLayout
	// EntrySection holds the entries section of each offload kind (spec §2.2),
	// or "" for a kind without one (CUDA and HIP before the new offload
	// driver of LLVM 15: their host code registers every kernel itself).
	OpenMPEntries, CUDAEntries, HIPEntries string
	// EntryAlign is the alignment of one entry and of the entries section.
	EntryAlign uint64
	// EntrySymbolPrefix is prepended to an entry's name to make its weak symbol.
	EntrySymbolPrefix string
	// EntryNameSymbol is the symbol of an entry's name string; the second and later
	// strings of an object get ".1", ".2", ... appended.
	EntryNameSymbol string
	// NameSection is the section of the name strings, or "" when the backend
	// chooses `.rodata.str1.1`, or `.rodata.str1.16` for strings of more than 16
	// bytes on x86-64.
	NameSection string
	// Requires is how `#pragma omp requires` is encoded; RequiresName the entry
	// name when it is an entry.
	Requires     RequiresEncoding
	RequiresName string
	// CtorDtorEntries: C++ constructors and destructors of declare-target globals
	// get entries with flags 0x2/0x4 (LLVM 15–17).
	CtorDtorEntries bool
	// IndirectEntries: `declare target indirect` functions get entries with flag
	// 0x8 (LLVM 18 and later).
	IndirectEntries bool
	// KernelArgsVersion is the version of the __tgt_kernel_arguments that
	// the host code gives __tgt_target_kernel: 1 in LLVM 15 (64 bytes, up
	// to Tripcount), 2 in 16 and 17 (104 bytes: Flags, NumTeams[3],
	// ThreadLimit[3], DynCGroupMem), 3 from 18 (the kernels take the launch
	// environment); 0 in 13 and 14, whose host code calls
	// __tgt_target_teams_mapper. Measured in 15, 16, 19 and 22 (objdump of
	// the host code); libomptarget 19 and 22 misread version 1 (the
	// program crashes in its first target region).
	KernelArgsVersion uint32
	// DeviceLink is how the release's clang-linker-wrapper links one
	// target's device code, and names the files of a link (see
	// [DeviceLink]).
	DeviceLink DeviceLink

	// ImageStart and ImageEnd are where the wrapper's __tgt_device_image points
	// into the embedded OffloadBinary (spec §3.1); in LLVM 13 and 14, which
	// embed the raw image, the "binary" is the image itself.
	ImageStart, ImageEnd ImageBound
	// CtorPriority is the priority of the wrapper's registration constructor
	// (`.init_array.<N>`).
	CtorPriority int
	// UnregisterAtexit: the constructor registers the unregistration with atexit;
	// otherwise a destructor of the same priority runs it (`.fini_array.<N>`).
	UnregisterAtexit bool
	// Dummy is the linkage of the wrapper's zero-sized object that forces the
	// entries section to exist; DummyAlign its alignment (0: none given, 1).
	Dummy      DummyLinkage
	DummyAlign uint64
	// LegacyDummyName: the dummy is named `__dummy.omp_offloading.entry` (and
	// cuda/hip alike) instead of `__dummy.<entries section>` (LLVM 15–17).
	LegacyDummyName bool

	// RelocatableSection is the wrapper's image section under `-r`, or "" when the
	// release has no special `-r` handling (spec §3.5).
	RelocatableSection string
	// RelocatableRenames lists the entries sections renamed with a content hash
	// suffix after a relocatable link.
	RelocatableRenames []string

	// GPURegistration is the form of the CUDA and HIP registration module of
	// clang-linker-wrapper (spec §3.3).
	GPURegistration GPURegistration
	// HIPFatbin is what clang-linker-wrapper asks of clang-offload-bundler for
	// a HIP fatbin, and what the bundler writes (spec §3.3; package bundle).
	HIPFatbin HIPFatbin
	// BundleIDs is how the release's clang-offload-bundler reads a bundle
	// entry ID into kind, triple and target ID when it unbundles (package
	// bundle).
	BundleIDs BundleIDRule

	// RuntimeLibrary is the soname of the release's libomptarget as LLVM
	// builds it: the name a program linked against it records in DT_NEEDED.
	// Measured: "libomptarget.so" (no version) in 14, "libomptarget.so.15"
	// and ".16", "libomptarget.so.19.1" and ".22.1"; the others inferred.
	RuntimeLibrary string
	// RuntimeReadsLegacyEntries: the release's libomptarget reads the 32-byte
	// entries of LLVM 20 and before besides its own 56-byte ones, as
	// 56-byte entries whose Data is the old `reserved` field, so that LLVM
	// 19's requires entry keeps its flags (measured with libomptarget 22; 21
	// inferred). A runtime up to 20 reads its 32-byte entries only:
	// libomptarget 19 crashes on a table of 56-byte ones.
	RuntimeReadsLegacyEntries bool

	// The facts below are those of LLVM's main branch after 22 (row 23,
	// Inferred: no Debian suite ships it; read from main's sources and
	// regression tests).

	// EntriesRetain: the wrapper's and the compiler's entries section is
	// SHF_GNU_RETAIN, kept under --gc-sections (main after 22; 22 does not
	// set it).
	EntriesRetain bool
	// AMDGPUSubarchTriples: AMDGPU triples name the processor
	// (amdgpu9.0a-amd-amdhsa for gfx90a, amdgpu10.30-amd-amdhsa for gfx1030;
	// main after 22) rather than amdgcn-amd-amdhsa; see [Release.AMDGPUTriple].
	AMDGPUSubarchTriples bool
	// SYCLRegistration is how the release's offloading library registers
	// SYCL images (llvm::offloading::wrapSYCLBinaries, __sycl_register_lib;
	// 22 and later), or SYCLRegistrationNone.
	SYCLRegistration SYCLRegistration
	// SPIRVImages: the release names IMG_SPIRV images (llvm-objdump
	// "spir-v", extension "spv", the packager's kind of a .spv file; main
	// after 22, where 22 declares the kind but names it nowhere).
	SPIRVImages bool
	// NestedImages: the release's readers list and extract an image that is
	// itself an OffloadBinary as nested images numbered [i.j], print an
	// `image size` line per image and know the OIF_Metadata image flag
	// (main after 22).
	NestedImages bool
}

// EntriesFlags returns the section flags an entries section gets beyond
// SHF_ALLOC (and SHF_WRITE for the compiler's): SHF_GNU_RETAIN where the
// release keeps it under --gc-sections, else none.
func (r *Release) EntriesFlags() elf.SectionFlag {
	if r.EntriesRetain {
		return shfGNURetain
	}
	return 0
}

// shfGNURetain is SHF_GNU_RETAIN, which debug/elf does not name.
const shfGNURetain elf.SectionFlag = 0x200000

// AMDGPUTriple returns the triple of an AMDGPU target ID ("gfx90a",
// "gfx90a:xnack+", "gfx10-3-generic") as the release spells it:
// amdgcn-amd-amdhsa up to 22; from main after 22 the processor's version is
// the triple's subarch: gfx90a gives amdgpu9.0a-amd-amdhsa, gfx1030
// amdgpu10.30-amd-amdhsa, gfx10-3-generic amdgpu10.3-amd-amdhsa, no or an
// unknown processor amdgpu-amd-amdhsa (clang's test amdgpu-mcpu.cl).
func (r *Release) AMDGPUTriple(targetID string) string {
	if !r.AMDGPUSubarchTriples {
		return "amdgcn-amd-amdhsa"
	}
	return "amdgpu" + AMDGPUSubarch(targetID) + "-amd-amdhsa"
}

// AMDGPUSubarch returns the subarch of an AMDGPU processor in the triples
// of LLVM main after 22: "9.0a" for gfx90a (the last two characters are
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

// BundleIDRule is how clang-offload-bundler splits a bundle entry ID
// "<kind>-<triple>[-<target id>]" when it unbundles, and so which entries it
// finds compatible with a requested target.
type BundleIDRule uint8

const (
	// BundleIDArchSuffix (up to LLVM 19): the ID before its first ':' is split
	// at its last '-'; when what follows is an offload arch (sm_70, gfx90a,
	// ...), the target ID starts there and the kind and triple come before
	// it; otherwise the whole ID before ':' is the kind and triple. Any ID is
	// accepted.
	BundleIDArchSuffix BundleIDRule = iota
	// BundleIDComponents (LLVM 20 and later, clang::checkOffloadBundleID): an
	// ID is 5 or 6 components separated by '-' (kind, arch, vendor, OS,
	// environment, target ID), the sixth a target ID only when it starts
	// with an offload arch; other IDs are refused.
	BundleIDComponents
)

var bundleIDRuleNames = [...]string{"arch-suffix", "components"}

func (v BundleIDRule) String() string { return enumName(bundleIDRuleNames[:], int(v), "BundleIDRule") }

// GPURegistration is how a release's CUDA/HIP wrapper module registers the
// entries of the entries section.
type GPURegistration int

const (
	// GPURegistrationNone: the release's wrapper is not made by this module
	// (15, 16).
	GPURegistrationNone GPURegistration = iota
	// GPURegistrationWholeFlags (17): a switch on the whole flags word;
	// variables registered with extern and constant 0; no surfaces or
	// textures (PR #73177 changed it).
	GPURegistrationWholeFlags
	// GPURegistrationFlagBits (18–20): a switch on flags & 7, extern and
	// constant from the flag bits; HIP registers surfaces and textures.
	GPURegistrationFlagBits
	// GPURegistrationKindCheck (21, 22): 56-byte entries, skipped unless
	// their kind is the wrapper's; managed variables registered too.
	GPURegistrationKindCheck
)

// SYCLRegistration is the form of a release's SYCL registration code.
type SYCLRegistration int

const (
	// SYCLRegistrationNone: the release's library has no SYCL wrapper
	// (before 22).
	SYCLRegistrationNone SYCLRegistration = iota
	// SYCLRegistrationDescriptor (22): a __sycl.tgt_device_image per image
	// (the raw image, its entries and option strings) in a
	// __sycl.tgt_bin_desc passed to __sycl_register_lib from a constructor
	// and destructor of priority 1 (spec §3.4).
	SYCLRegistrationDescriptor
	// SYCLRegistrationBinary (main after 22): the whole OffloadBinary
	// registered with __sycl_register_lib(start, size) (llvm-project
	// #193876), from a constructor of priority 101 with atexit (#217173).
	SYCLRegistrationBinary
)

var syclRegistrationNames = [...]string{"none", "descriptor", "binary"}

func (v SYCLRegistration) String() string {
	return enumName(syclRegistrationNames[:], int(v), "SYCLRegistration")
}

var gpuRegistrationNames = [...]string{"none", "whole-flags", "flag-bits", "kind-check"}

func (v GPURegistration) String() string {
	return enumName(gpuRegistrationNames[:], int(v), "GPURegistration")
}

// HIPFatbin holds the facts of one release's HIP fatbin bundling; the zero
// value for a release whose wrapper this module does not make HIP fatbins for
// (15, 16).
type HIPFatbin struct {
	// Measured is true when the bundler and wrapper of the release were run
	// for these facts (19 and 22); otherwise they are inferred from the
	// upstream history.
	Measured bool
	// HostTarget is the host entry of the wrapper's -targets (hard-coded in
	// clang-linker-wrapper, whatever the host); HostID the ID the bundler
	// writes for it. From LLVM 17 (D145770) the bundler rewrites every
	// -targets entry as <kind>-<arch>-<vendor>-<os>-<env>-<target id>, so a
	// three-field host triple gains "--" and a four-field one "-".
	HostTarget, HostID string
	// DeviceKind is the offload kind of the device entries: "hipv4" up to 18,
	// "hip" from 19.
	DeviceKind string
	// CompressedVersion is the compressed bundle version the bundler writes
	// with -compress (19.1.7 writes 2, 22 writes 3); 0 for a release without
	// -compress.
	CompressedVersion uint16
}

// String returns "LLVM <major>".
func (r *Release) String() string { return "LLVM " + strconv.Itoa(r.Major) }

// EntriesSection returns the entries section for offload kind k, or "" if k has
// none.
func (r *Release) EntriesSection(k OffloadKind) string {
	switch k {
	case OffloadOpenMP:
		return r.OpenMPEntries
	case OffloadCUDA:
		return r.CUDAEntries
	case OffloadHIP:
		return r.HIPEntries
	}
	return ""
}

// EntrySize is the size in bytes of one offload entry on a 64-bit host.
func (r *Release) EntrySize() int { return r.EntryLayout.Size() }

// DummySymbol returns the name of the wrapper's dummy object for offload kind k.
func (r *Release) DummySymbol(k OffloadKind) string {
	if r.LegacyDummyName {
		return "__dummy." + strings.TrimSuffix(r.EntriesSection(k), "_entries") + ".entry"
	}
	return "__dummy." + r.EntriesSection(k)
}

var (
	legacyRenames = []string{"omp_offloading_entries", "cuda_offloading_entries", "hip_offloading_entries"}
	unifiedRename = []string{"llvm_offload_entries"}
)

// releases is the table: one row per release, oldest first (spec §7).
var releases = []Release{
	{
		// The old OpenMP driver (around-the-binary §2): device code in
		// __CLANG_OFFLOAD_BUNDLE__ sections, registered by
		// clang-offload-wrapper. Entries, requires and ctor/dtor entries as
		// in 15 (measured with clang-13 -c: the same bytes, names and
		// symbols). The wrapper module is 14's; the driver compiles it
		// static (WrapperStatic).
		Major: 13, Tested: "13.0.1",
		Wrapper: WrapperOffloadWrapper, WrapperStatic: true,
		HIPCode:       3,
		EntryLayout:   EntryLegacy,
		OpenMPEntries: "omp_offloading_entries",
		EntryAlign:    1, EntrySymbolPrefix: ".omp_offloading.entry.", EntryNameSymbol: ".omp_offloading.entry_name",
		Requires: RequiresCtor, CtorDtorEntries: true,
		ImageStart: BoundBinaryStart, ImageEnd: BoundBinaryEnd, CtorPriority: 1,
		Dummy: DummyHiddenGlobal, LegacyDummyName: true,
		RuntimeLibrary: "libomptarget.so",
	},
	{
		// As 13, but clang-14 of Debian compiles the wrapper module PIE.
		Major: 14, Tested: "14.0.6",
		Wrapper:       WrapperOffloadWrapper,
		HIPCode:       3,
		EntryLayout:   EntryLegacy,
		OpenMPEntries: "omp_offloading_entries",
		EntryAlign:    1, EntrySymbolPrefix: ".omp_offloading.entry.", EntryNameSymbol: ".omp_offloading.entry_name",
		Requires: RequiresCtor, CtorDtorEntries: true,
		ImageStart: BoundBinaryStart, ImageEnd: BoundBinaryEnd, CtorPriority: 1,
		Dummy: DummyHiddenGlobal, LegacyDummyName: true,
		RuntimeLibrary: "libomptarget.so",
	},
	{
		Major: 15, Tested: "15.0.6", BinaryVersion: 1,
		KernelArgsVersion: 1,
		DeviceLink:        DeviceLinkLD,
		HIPCode:           3,
		PackagerArgs:      OrderStringMap, PackagerStrings: OrderStringMap, PackagerNeedsTriple: true,
		EntryLayout:   EntryLegacy,
		OpenMPEntries: "omp_offloading_entries", CUDAEntries: "cuda_offloading_entries", HIPEntries: "hip_offloading_entries",
		EntryAlign: 1, EntrySymbolPrefix: ".omp_offloading.entry.", EntryNameSymbol: ".omp_offloading.entry_name",
		Requires: RequiresCtor, CtorDtorEntries: true,
		ImageStart: BoundBinaryStart, ImageEnd: BoundBinaryEnd, CtorPriority: 1,
		Dummy: DummyHiddenGlobal, LegacyDummyName: true,
		RuntimeLibrary: "libomptarget.so.15",
	},
	{
		Major: 16, Tested: "16.0.6", BinaryVersion: 1,
		KernelArgsVersion: 2,
		DeviceLink:        DeviceLinkClang16,
		HIPCode:           3,
		PackagerArgs:      OrderDenseMap, PackagerStrings: OrderStringMap, PackagerNeedsTriple: true,
		EntryLayout:   EntryLegacy,
		OpenMPEntries: "omp_offloading_entries", CUDAEntries: "cuda_offloading_entries", HIPEntries: "hip_offloading_entries",
		EntryAlign: 1, EntrySymbolPrefix: ".omp_offloading.entry.", EntryNameSymbol: ".omp_offloading.entry_name",
		Requires: RequiresCtor, CtorDtorEntries: true,
		ImageStart: BoundBinaryStart, ImageEnd: BoundBinaryEnd, CtorPriority: 1,
		Dummy: DummyHiddenGlobal, LegacyDummyName: true,
		RuntimeLibrary: "libomptarget.so.16",
	},
	{
		Major: 17, Tested: "17.0.6", BinaryVersion: 1,
		KernelArgsVersion: 2,
		DeviceLink:        DeviceLinkClang17,
		HIPCode:           3,
		PackagerArgs:      OrderDenseMap, PackagerStrings: OrderInsertion, PackagerSplitsFiles: true, PackagerNeedsTriple: true,
		EntryLayout:   EntryLegacy,
		OpenMPEntries: "omp_offloading_entries", CUDAEntries: "cuda_offloading_entries", HIPEntries: "hip_offloading_entries",
		EntryAlign: 1, EntrySymbolPrefix: ".omp_offloading.entry.", EntryNameSymbol: ".omp_offloading.entry_name",
		Requires: RequiresCtor, CtorDtorEntries: true,
		ImageStart: BoundBinaryStart, ImageEnd: BoundBinaryEnd, CtorPriority: 1,
		Dummy: DummyHiddenGlobal, LegacyDummyName: true,
		GPURegistration: GPURegistrationWholeFlags,
		HIPFatbin:       HIPFatbin{HostTarget: "host-x86_64-unknown-linux", HostID: "host-x86_64-unknown-linux--", DeviceKind: "hipv4"},
		RuntimeLibrary:  "libomptarget.so.17",
	},
	{
		Major: 18, Tested: "18.1.8", BinaryVersion: 1,
		KernelArgsVersion: 3,
		DeviceLink:        DeviceLinkClang17,
		HIPCode:           3,
		PackagerArgs:      OrderDenseMap, PackagerStrings: OrderInsertion, PackagerSplitsFiles: true, PackagerNeedsTriple: true,
		EntryLayout:   EntryLegacy,
		OpenMPEntries: "omp_offloading_entries", CUDAEntries: "cuda_offloading_entries", HIPEntries: "hip_offloading_entries",
		EntryAlign: 1, EntrySymbolPrefix: ".omp_offloading.entry.", EntryNameSymbol: ".omp_offloading.entry_name",
		Requires: RequiresCtor, IndirectEntries: true,
		ImageStart: BoundImageStart, ImageEnd: BoundBinaryEnd, CtorPriority: 1,
		Dummy:           DummyHiddenGlobal,
		GPURegistration: GPURegistrationFlagBits,
		HIPFatbin:       HIPFatbin{HostTarget: "host-x86_64-unknown-linux", HostID: "host-x86_64-unknown-linux--", DeviceKind: "hipv4", CompressedVersion: 1},
		RuntimeLibrary:  "libomptarget.so.18.1",
	},
	{
		Major: 19, Tested: "19.1.7", BinaryVersion: 1,
		KernelArgsVersion: 3,
		DeviceLink:        DeviceLinkClang17,
		HIPCode:           3,
		PackagerArgs:      OrderDenseMap, PackagerStrings: OrderInsertion, PackagerSplitsFiles: true, PackagerNeedsTriple: true,
		EntryLayout:   EntryLegacy,
		OpenMPEntries: "omp_offloading_entries", CUDAEntries: "cuda_offloading_entries", HIPEntries: "hip_offloading_entries",
		EntryAlign: 1, EntrySymbolPrefix: ".offloading.entry.", EntryNameSymbol: ".offloading.entry_name",
		Requires: RequiresEntryReserved, IndirectEntries: true,
		ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
		Dummy:              DummyLocalUsed,
		RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: legacyRenames,
		GPURegistration: GPURegistrationFlagBits,
		HIPFatbin:       HIPFatbin{Measured: true, HostTarget: "host-x86_64-unknown-linux", HostID: "host-x86_64-unknown-linux--", DeviceKind: "hip", CompressedVersion: 2},
		RuntimeLibrary:  "libomptarget.so.19.1",
	},
	{
		// Inferred (spec §9.1): the name strings moved to .llvm.rodata.offloading
		// (PR #111890, Oct 2024); the kind renumbering (PR #135809) and the unified
		// section (PR #125731) came after the branch. The 56-byte entry (PR #124018)
		// was committed on the branch day; 32 bytes is assumed.
		Major: 20, Inferred: true, BinaryVersion: 1,
		KernelArgsVersion: 3,
		DeviceLink:        DeviceLinkClang17,
		HIPCode:           3,
		PackagerArgs:      OrderDenseMap, PackagerStrings: OrderInsertion, PackagerSplitsFiles: true, PackagerNeedsTriple: true,
		EntryLayout:   EntryLegacy,
		OpenMPEntries: "omp_offloading_entries", CUDAEntries: "cuda_offloading_entries", HIPEntries: "hip_offloading_entries",
		EntryAlign: 1, EntrySymbolPrefix: ".offloading.entry.", EntryNameSymbol: ".offloading.entry_name",
		NameSection: ".llvm.rodata.offloading",
		Requires:    RequiresEntryReserved, IndirectEntries: true,
		ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
		Dummy:              DummyLocalUsed,
		RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: legacyRenames,
		GPURegistration: GPURegistrationFlagBits,
		HIPFatbin:       HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 2},
		BundleIDs:       BundleIDComponents,
		RuntimeLibrary:  "libomptarget.so.20.1",
	},
	{
		Major: 21, Tested: "21.1.8", BinaryVersion: 1,
		KernelArgsVersion: 3,
		DeviceLink:        DeviceLinkClang17,
		HIPCode:           4, SYCLCode: 8,
		PackagerArgs: OrderDenseMap, PackagerStrings: OrderInsertion, PackagerSplitsFiles: true, PackagerNeedsTriple: true,
		OpenMPHostArch: "generic",
		EntryLayout:    EntryV1,
		OpenMPEntries:  "llvm_offload_entries", CUDAEntries: "llvm_offload_entries", HIPEntries: "llvm_offload_entries",
		EntryAlign: 8, EntrySymbolPrefix: ".offloading.entry.", EntryNameSymbol: ".offloading.entry_name",
		NameSection: ".llvm.rodata.offloading",
		Requires:    RequiresEntryData, RequiresName: ".requires", IndirectEntries: true,
		ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
		Dummy: DummyLocalUsed, DummyAlign: 8,
		RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename,
		GPURegistration: GPURegistrationKindCheck,
		HIPFatbin:       HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 2},
		BundleIDs:       BundleIDComponents,
		RuntimeLibrary:  "libomptarget.so.21.1", RuntimeReadsLegacyEntries: true,
	},
	{
		Major: 22, Tested: "22.1.8", BinaryVersion: 1,
		KernelArgsVersion: 3,
		DeviceLink:        DeviceLinkClang22,
		HIPCode:           4, SYCLCode: 8,
		PackagerArgs: OrderDenseMap, PackagerStrings: OrderInsertion, PackagerSplitsFiles: true,
		OpenMPHostArch: "generic",
		EntryLayout:    EntryV1,
		OpenMPEntries:  "llvm_offload_entries", CUDAEntries: "llvm_offload_entries", HIPEntries: "llvm_offload_entries",
		EntryAlign: 8, EntrySymbolPrefix: ".offloading.entry.", EntryNameSymbol: ".offloading.entry_name",
		NameSection: ".llvm.rodata.offloading",
		Requires:    RequiresEntryData, RequiresName: ".requires", IndirectEntries: true,
		ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
		Dummy: DummyLocalUsed, DummyAlign: 8,
		RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename,
		GPURegistration: GPURegistrationKindCheck,
		HIPFatbin:       HIPFatbin{Measured: true, HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 3},
		BundleIDs:       BundleIDComponents,
		RuntimeLibrary:  "libomptarget.so.22.1", RuntimeReadsLegacyEntries: true,
		SYCLRegistration: SYCLRegistrationDescriptor,
	},
	{
		// Inferred: LLVM's main branch after 22 (no Debian suite ships it),
		// from its sources and regression tests: 22's row but for
		// OffloadBinary version 3 (40-byte header, compressed bodies), nested
		// images and OIF_Metadata, AMDGPU subarch triples, and entries
		// sections kept under --gc-sections (SHF_GNU_RETAIN).
		Major: 23, Inferred: true, BinaryVersion: 3,
		KernelArgsVersion: 3,
		DeviceLink:        DeviceLinkClang22,
		HIPCode:           4, SYCLCode: 8,
		PackagerArgs: OrderDenseMap, PackagerStrings: OrderInsertion, PackagerSplitsFiles: true,
		OpenMPHostArch: "generic",
		EntryLayout:    EntryV1,
		OpenMPEntries:  "llvm_offload_entries", CUDAEntries: "llvm_offload_entries", HIPEntries: "llvm_offload_entries",
		EntryAlign: 8, EntrySymbolPrefix: ".offloading.entry.", EntryNameSymbol: ".offloading.entry_name",
		NameSection: ".llvm.rodata.offloading",
		Requires:    RequiresEntryData, RequiresName: ".requires", IndirectEntries: true,
		ImageStart: BoundImageStart, ImageEnd: BoundImageEnd, CtorPriority: 101, UnregisterAtexit: true,
		Dummy: DummyLocalUsed, DummyAlign: 8,
		RelocatableSection: ".llvm.offloading.relocatable", RelocatableRenames: unifiedRename,
		GPURegistration: GPURegistrationKindCheck,
		HIPFatbin:       HIPFatbin{HostTarget: "host-x86_64-unknown-linux-gnu", HostID: "host-x86_64-unknown-linux-gnu-", DeviceKind: "hip", CompressedVersion: 3},
		BundleIDs:       BundleIDComponents,
		RuntimeLibrary:  "libomptarget.so.23.0", RuntimeReadsLegacyEntries: true,
		SYCLRegistration: SYCLRegistrationBinary, SPIRVImages: true, EntriesRetain: true, AMDGPUSubarchTriples: true, NestedImages: true,
	},
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
	r.RelocatableRenames = slices.Clone(r.RelocatableRenames)
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
