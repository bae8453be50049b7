package release

import "strconv"

// Kinds are the release's OffloadKind numbers in OffloadBinary entries and
// 56-byte offload entries: HIP is 3 up to 20 and 4 from 21; SYCL exists from
// 21 (0: none).
type Kinds struct {
	HIP, SYCL uint16
}

// Packager are the rules of the release's clang-offload-packager.
type Packager struct {
	// Args is the order of its map of --image arguments (all keys, file and
	// kind included); Strings the order of the OffloadingImage string map
	// filled from it.
	Args, Strings MapOrder
	// SplitsFiles: a file value holding commas (from repeated file= keys)
	// names several images, one binary each (measured false in 15 and 16,
	// true in 19 and 22; unverified in 17, 18, 20, 21).
	SplitsFiles bool
	// NeedsTriple: an --image without triple is refused (true in 15-19,
	// false in 22).
	NeedsTriple bool
	// OpenMPHostArch is the arch string the driver gives a host-device
	// OpenMP image: "" up to 19, "generic" in 21 and 22.
	OpenMPHostArch string
}

// Entries are how the release's compiler emits offload entries.
type Entries struct {
	// Size is the size in bytes of one offload entry on a 64-bit host: 32
	// (__tgt_offload_entry {addr, name, size, flags, reserved}) up to 20,
	// 56 (llvm::offloading::EntryTy) from 21 (docs/entries.md#entry-layouts;
	// offload.LayoutOf names the layout).
	Size int
	// OpenMP, CUDA and HIP are the entries sections of each offload kind, ""
	// for a kind without one (CUDA and HIP before the new offload driver).
	OpenMP, CUDA, HIP string
	// Align is the alignment of one entry and of the section.
	Align uint64
	// SymbolPrefix is prepended to an entry's name to make its weak
	// symbol; NameSymbol is the symbol of an entry's name string (".1",
	// ".2", ... appended for the second and later strings of an object).
	SymbolPrefix, NameSymbol string
	// NameSection is the section of the name strings, or "" when the
	// backend chooses .rodata.str1.1 (or .rodata.str1.16 for strings of
	// more than 16 bytes on x86-64).
	NameSection string
	// Requires is how #pragma omp requires is encoded; RequiresName the
	// entry's name when it is an entry.
	Requires     RequiresEncoding
	RequiresName string
	// CtorDtor: C++ constructors and destructors of declare-target globals
	// get entries with flags 0x2/0x4 (LLVM 15-17).
	CtorDtor bool
	// Indirect: declare target indirect functions get entries with flag
	// 0x8 (LLVM 18 and later).
	Indirect bool
	// Retain: the entries section is SHF_GNU_RETAIN, kept under
	// --gc-sections (24, main: llvm-project #212614, after the 23 branch).
	Retain bool
}

// Wrapper is the registration code the release's driver makes at link
// time.
type Wrapper struct {
	// Form is clang-linker-wrapper's (15 and later) or
	// clang-offload-wrapper's (13, 14).
	Form WrapperForm
	// Static: the driver compiles clang-offload-wrapper's module with the
	// static relocation model (clang-13's default on Linux).
	Static bool
	// ImageStart and ImageEnd are where __tgt_device_image points into the
	// embedded OffloadBinary (13, 14: the raw image itself).
	ImageStart, ImageEnd ImageBound
	// CtorPriority is the priority of the registration constructor
	// (.init_array.<N>); UnregisterAtexit: it registers the unregistration
	// with atexit, else a destructor of the same priority runs it.
	CtorPriority     int
	UnregisterAtexit bool
	// Dummy is the linkage of the zero-sized object that forces the entries
	// section to exist; DummyAlign its alignment (0: none given, 1).
	// LegacyDummyName: it is named __dummy.omp_offloading.entry (and
	// cuda/hip alike) instead of __dummy.<entries section> (15-17).
	Dummy           DummyLinkage
	DummyAlign      uint64
	LegacyDummyName bool
	// OverrideImage: the wrapper takes --override-image=KIND=FILE (#91984,
	// May 2024: 19 and later).
	OverrideImage bool
	// BitcodeLibrary: the wrapper takes --bitcode-library=KIND-TRIPLE-ARCH=FILE,
	// a bitcode file given to the device link of that target (15 to 19;
	// #114298, October 2024, removed it: 20 and later pass it to the host
	// linker, as any option not theirs).
	BitcodeLibrary bool
	// TripleBeforeFirstEquals: --device-linker=A=B is for the target whose
	// triple is A, whatever A is, so that an option holding '=' given to
	// every target (--device-linker=--build-id=none, from -Xoffload-linker)
	// goes to none (15 to 19, measured). #100270 (July 2024) takes A as a
	// triple only where it names an architecture: 20 and later.
	TripleBeforeFirstEquals bool
	// LTOStrongOverWeak: the device LTO the wrapper runs in its own
	// process (Link.InProcessLTO) takes a strong definition over a weak one of an
	// earlier input, where 15 to 17's takes the first definition of a
	// symbol whatever it is (#68215, October 2023: 18 and 19; measured
	// in 16 and 19 against llvm-lto2 given each resolution).
	LTOStrongOverWeak bool
	// RelocatableSection is the image section under -r, or "" without
	// special -r handling; RelocatableRenames the entries sections renamed
	// with a content hash suffix after a relocatable link.
	RelocatableSection string
	RelocatableRenames []string
	// GPU is the form of the CUDA and HIP registration module; SYCL of the
	// SYCL one.
	GPU  GPURegistration
	SYCL SYCLRegistration
	// COFFBounds is how the wrapper bounds the entries on a COFF (Windows)
	// host, or COFFBoundsNone where goffload knows no COFF wrapper of the
	// release.
	COFFBounds COFFBounds
	// MachO: the wrapper writes CUDA and HIP registration objects for a
	// Mach-O (macOS) host: the functions in __TEXT,__StaticInit, the
	// fatbin in __HIP,__hip_fatbin (__NV_CUDA,__nv_fatbin), the entries in
	// __LLVM,offload_entries bounded by ld64's section$start$ and
	// section$end$ symbols (llvm-project #183991, opened March 2026,
	// merged on a date not known here; in main's
	// llvm-offload-wrapper/offload-wrapper.ll as HIP-MACHO: 24, inferred;
	// 23's side of the branch is not known, and goffload does not write
	// it for 23).
	MachO bool
}

// COFFBounds is how a release's wrapper defines __start_ and __stop_ of the
// entries section on a COFF host, where the linker defines no such symbols
// (getOffloadEntryArray in llvm/lib/Frontend/Offloading/Utility.cpp;
// docs/registration.md#windows).
type COFFBounds int

const (
	// COFFBoundsNone: no COFF wrapper of the release is known to goffload
	// (before 22).
	COFFBoundsNone COFFBounds = iota
	// COFFBoundsEmpty (22, measured; 23, inferred): weak_odr hidden empty
	// arrays in <entries>$OA and $OZ, which the linker sorts around the
	// entries' $OE.
	COFFBoundsEmpty
	// COFFBoundsSentinel (24, main): each bound one zeroed entry (56
	// bytes, aligned 8), so that lld-link /opt:ref keeps both sections when
	// there is no entry; the entries begin one entry after __start_
	// (llvm-project #215390, August 2026, after the 23 branch: the HIP loop
	// from its regression test, OpenMP's EntriesBegin and HostEntriesBegin
	// inferred).
	COFFBoundsSentinel
)

var coffBoundsNames = [...]string{"none", "empty", "sentinel"}

func (v COFFBounds) String() string { return enumName(coffBoundsNames[:], int(v), "COFFBounds") }

// Link is how the release's clang-linker-wrapper links device code.
type Link struct {
	Device DeviceLink
	// Archives is how the wrapper takes device code from static libraries
	// (docs/releases.md#archive-members).
	Archives ArchiveRule
	// TargetMatch is how the wrapper matches device images to the targets
	// it links (docs/releases.md#target-matching).
	TargetMatch TargetMatch
	// WholeArchive: the wrapper honours --whole-archive, taking every member
	// of the archives within (measured not in 15 and 16, and in 19 and 22;
	// inferred in 17).
	WholeArchive bool
	// SortImages: the linked images of each offload kind are sorted before
	// they are bundled and wrapped (by triple and arch, both descending),
	// from 16; 15 keeps the order of its map of targets.
	SortImages bool
	// LinkExeOptions: the wrapper's option table knows three options of
	// link.exe's command line, which clang's MSVC toolchain writes: out:,
	// libpath: and wholearchive, after "/", "-", "/?" or "-?" (llvm-project
	// #72889, November 2023: measured in 19 and 22, inferred in 18). Before,
	// -libpath:DIR is -l ibpath:DIR and -out:FILE is -o ut:FILE to it.
	LinkExeOptions bool
	// FatbinImage3: the wrapper names each CUDA image to fatbinary as
	// --image3=kind=elf,sm=N,file=F (llvm-project #163571, October 2025:
	// measured in 22; CUDA 13's fatbinary knows nothing else); before, as
	// --image=profile=sm_N,file=F (measured in 19; 16 to 21 inferred).
	FatbinImage3 bool
	// KernelArgsVersion is the version of the __tgt_kernel_arguments the
	// host code gives __tgt_target_kernel: 1 in 15, 2 in 16 and 17, 3 from
	// 18; 0 in 13 and 14 (__tgt_target_teams_mapper).
	KernelArgsVersion uint32
	// InProcessLTO: the wrapper links a target's bitcode images with LTO
	// in its own process: under --embed-bitcode (-fopenmp-target-jit) it
	// registers the module after the optimisation, otherwise it gives the
	// device link the object (15 to 19, measured in 15, 16 and 19; 17 and
	// 18 from their sources). From 20 the device link does that LTO
	// (-Wl,--lto-emit-llvm for the JIT: llvm-project #97573, July 2024, for
	// NVPTX and AMDGPU; #113715, October 2024, removed the wrapper's own
	// LTO), inferred from LLVM's sources for 20 and 21.
	InProcessLTO bool
	// LTO2SelectSaveTemps: the release's llvm-lto2 takes
	// --select-save-temps=STAGES (16 and later, measured with --help of 15,
	// 16, 19 and 22); 15's keeps every stage's module or none
	// (--save-temps).
	LTO2SelectSaveTemps bool
}

// Bundle is what the release's clang-offload-bundler does.
type Bundle struct {
	// IDs is how it reads a bundle entry ID when it unbundles.
	IDs BundleIDRule
	// HIPFatbin is what clang-linker-wrapper asks of it for a HIP fatbin.
	HIPFatbin HIPFatbin
}

// Runtime is what the release's libomptarget reads.
type Runtime struct {
	// ReadsLegacyEntries: it reads the 32-byte entries of LLVM 20 and
	// before besides its own 56-byte ones (measured with 22; 21 inferred).
	ReadsLegacyEntries bool
	// Images is how its plugins check the ELF header of a device image
	// before they load it.
	Images ImageHeaders
}

// ImageHeaders is how a release's libomptarget plugins check the ELF header
// of a device image before loading it (utils::elf::checkMachine, in
// offload/plugins-nextgen/common/src/Utils/ELF.cpp since #75720, December
// 2023: LLVM 18). The zero value checks no more than e_machine (13 to 17).
// 19's and 22's error messages were read in their libraries (Debian's
// 19.1.7 and 22.1.8); the rules are from LLVM's sources and pull requests.
type ImageHeaders struct {
	// Checked: an image must be a 64-bit ELF executable or shared object,
	// and its vendor's rules below hold.
	Checked bool
	// CUDAABI2: a cubin's EI_ABIVERSION chooses how its e_flags read: 7,
	// the SM in bits 0-7 and 64-bit addressing in bit 10; 8 (CUDA 13, and
	// CUDA 12.8 and later for sm_100 and later), the SM in bits 8-15
	// (#149534, July 2025, and #159354, September 2025: 22; on 21 from
	// 21.1.2 through #159451). Without it every cubin is read the first
	// way, so a cubin of ABI 8 is refused (18 to 20).
	CUDAABI2 bool
	// CUDAMaxSM is the highest SM it loads: 90 in 18 to 20, none (0) from
	// 21 (#142399, June 2025). The lowest is 35.
	CUDAMaxSM uint32
	// AMDABIVersions are the EI_ABIVERSION values of the AMDGPU code
	// objects it loads: 2 and 3 (code objects v4 and v5) in 18 to 20, 3
	// and 4 (v5 and v6) from 21 (#131033, March 2025).
	AMDABIVersions []uint8
	// AMDMaxMach is the highest EF_AMDGPU_MACH it loads (0x4e, gfx1201, in
	// 18 to 20; 0: not known). The lowest is 0x22, gfx700.
	AMDMaxMach uint32
}

// Main are the facts that came after 22: in LLVM 23 (the release/23.x
// branch, cut on 16 July 2026) and in main after it (row 24); each says
// which (docs/releases.md#llvm-23-and-main).
type Main struct {
	// AMDGPUSubarchTriples: AMDGPU triples name the processor
	// (amdgpu9.0a-amd-amdhsa for gfx90a): clang emits them from #206482,
	// merged in August 2026 (24; 23's backend accepts them, its driver
	// does not write them).
	AMDGPUSubarchTriples bool
	// SPIRVImages: IMG_SPIRV images are named (llvm-objdump "spir-v",
	// extension "spv", the packager's kind of a .spv file) (23, 24).
	SPIRVImages bool
	// NestedImages: the readers list and extract an image that is itself an
	// OffloadBinary as nested images, print an image size line and know the
	// OIF_Metadata flag (23, 24: #184774, #185425, March 2026).
	NestedImages bool
	// ChecksStrings: the reader checks each entry's string entries
	// (24 bytes each, whatever the version) against the buffer (23, 24:
	// #177029, January 2026).
	ChecksStrings bool
	// AlignsAfter: the section loop starts the next binary at the next
	// multiple of 8 after a binary's Size, whatever its version (24: came
	// with compression, #222774, whose compressed Size is not padded;
	// inferred).
	AlignsAfter bool
}

// ReadsRequires reports whether the release's libomptarget honours a
// `#pragma omp requires` encoded as e: its release's own encoding, and LLVM
// 19's requires entry where it reads 32-byte entries as 56-byte ones.
// Measured: libomptarget 19 and 22 ignore the constructor's
// __tgt_register_requires ("has been removed. Old OpenMP requirements will
// not be handled"); libomptarget 16 fails on a requires entry ("Unable to
// generate entries table"); libomptarget 22 applies the flags of LLVM 19's
// entry.
func (r *Release) ReadsRequires(e RequiresEncoding) bool {
	return e == r.Entries.Requires || (e == RequiresEntryReserved && r.Runtime.ReadsLegacyEntries)
}

// enumName returns names[v], or "typ(v)" for a value without a name.
func enumName(names []string, v int, typ string) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return typ + "(" + strconv.Itoa(v) + ")"
}

// MapOrder names the container whose iteration order clang-offload-packager's
// output inherits (docs/releases.md#release-table;
// docs/offload-binary.md#map-orders).
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

// RequiresEncoding is how a translation unit's `#pragma omp requires` reaches
// the runtime (docs/releases.md#release-table; docs/entries.md#requires).
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

// ImageBound says where a __tgt_device_image's ImageStart or ImageEnd points in
// the embedded OffloadBinary (docs/releases.md#release-table;
// docs/registration.md#image-bounds).
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

// DummyLinkage is how the wrapper's zero-sized dummy object in the entries
// section is defined (docs/releases.md#release-table;
// docs/entries.md#section-bounds).
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
// a program with the runtime at link time (docs/releases.md#release-table;
// docs/registration.md#registration, docs/old-driver.md#clang-offload-wrapper).
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
	// then -g, -save-temps, -v, --cuda-path=DIR (NVPTX), -Wl,ARG and the
	// inputs; files OUT.ARCH.native.img, OUT.image.wrapper.o.
	DeviceLinkClang16
	// DeviceLinkClang17 (17 to 21): clang --no-default-config, -O,
	// -Wl,--no-undefined but for NVPTX, the inputs before -Wl,-Bsymbolic
	// -shared, the dynamic linker as an input, the host's -L, -l, -rpath
	// and --whole-archive regions, then -g, -save-temps, -v,
	// --cuda-path=DIR (NVPTX) and --device-linker arguments as they are;
	// files OUT.ARCH.native.img, OUT.KIND.image.wrapper.o (measured in
	// 19).
	DeviceLinkClang17
	// DeviceLinkClang22 (22): as 17 with -dumpdir IMG., -flto for AMDGPU
	// (whatever the inputs), -Wl,--no-undefined but for NVPTX and SPIR-V,
	// -Wl,--save-temps with --save-temps where the device linker does LTO
	// (NVPTX, AMDGPU, a CPU target linked by lld), -Xlinker ARG, the
	// --device-compiler arguments (--cuda-path among them) and no -O of
	// its own; files OUT.ARCH..img for a generic image.
	DeviceLinkClang22
)

// ArchiveRule is which members of a static library the wrapper takes device
// code from (measured in 15, 16, 19 and 22).
type ArchiveRule uint8

const (
	// ArchiveNone: no clang-linker-wrapper (13, 14).
	ArchiveNone ArchiveRule = iota
	// ArchiveUsedTargets (15): every member of an archive named as an input
	// or found by -l, whose image's target (triple and arch) an object
	// input has, after all the objects; -l stops at a folder holding
	// libNAME.so and is silently dropped when nothing is found;
	// --whole-archive changes nothing.
	ArchiveUsedTargets
	// ArchiveOrdered (16 to 18): in command-line order, an archive's
	// members are taken as ld.bfd takes them, by the device symbols of what
	// came before (a member that resolves an undefined strong symbol or
	// defines a new visible global is taken, and the archive is scanned
	// again); members of a target nothing before has are not taken.
	ArchiveOrdered
	// ArchiveResolve (19, 20): as ArchiveOrdered, but after every object
	// (and --whole-archive member), the archives being scanned again from
	// the first whenever a member is taken, in any order on the command
	// line.
	ArchiveResolve
	// ArchiveAllMembers (21 and later): every member of an archive whose
	// target an object has, or whose arch --should-extract names, after
	// every object, without looking at symbols.
	ArchiveAllMembers
)

var archiveRuleNames = [...]string{"none", "used-targets", "ordered", "resolve", "all-members"}

func (v ArchiveRule) String() string { return enumName(archiveRuleNames[:], int(v), "ArchiveRule") }

// TargetMatch is how the wrapper decides which targets' links a device
// image joins (getDeviceInput in ClangLinkerWrapper.cpp).
type TargetMatch uint8

const (
	// TargetMatchSymmetric (15 to 23): an image joins the link of its own
	// target and of every other target compatible with it, both ways: the
	// same triple and either arch "generic", or on AMDGPU the same
	// processor with no feature on in one and off in the other
	// (object::areTargetsCompatible before #209563; measured in 19 and 22).
	TargetMatchSymmetric TargetMatch = iota
	// TargetMatchTargetID (24, main: llvm-project #207853 and #209563, July
	// 2026; their side of the 23 branch is not known, and 23 is taken to
	// match as 22): objects, the most specific target IDs first (by their
	// count of ':'), each join the link of every target equivalent to
	// theirs (AMDGPU::TargetID::isEquivalent: the same processor and
	// settings, "any" being neither on nor off), else start their own;
	// an archive member joins every link its image provides for
	// (TargetID::providesFor, one way: any serves on and off, a family's
	// generic processor serves its members), and its own target's where
	// an object or --should-extract asks for it.
	TargetMatchTargetID
)

var targetMatchNames = [...]string{"symmetric", "target-id"}

func (v TargetMatch) String() string { return enumName(targetMatchNames[:], int(v), "TargetMatch") }

var wrapperFormNames = [...]string{"clang-linker-wrapper", "clang-offload-wrapper"}

func (v WrapperForm) String() string { return enumName(wrapperFormNames[:], int(v), "WrapperForm") }

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
	// and destructor of priority 1 (docs/releases.md#release-table;
	// docs/registration.md#sycl-22).
	SYCLRegistrationDescriptor
	// SYCLRegistrationBinary (24, main): the whole OffloadBinary
	// registered with __sycl_register_lib(start, size) (llvm-project
	// #193876), from a constructor of priority 101 with atexit (#217173,
	// August 2026, after the 23 branch).
	SYCLRegistrationBinary
	// SYCLRegistrationBinaryDtor (23, inferred): the whole OffloadBinary
	// registered as #193876 (April 2026) left it, before #217173: a
	// constructor and a destructor of priority 1. goffload does not write
	// it (the unregistration's arguments at the branch are not known).
	SYCLRegistrationBinaryDtor
)

var syclRegistrationNames = [...]string{"none", "descriptor", "binary", "binary-dtor"}

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
