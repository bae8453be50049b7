package stubs

import (
	"debug/elf"
	"fmt"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// Targets of the CUDA and HIP wrapper code (docs/registration.md#cuda-hip),
// after those of the OpenMP code. Addends are relative to the target, as for
// the OpenMP ones; [GPUCode.ViaSection] says which targets LLVM relocates
// against a section symbol instead, and [GPUCode.Symbols] names the undefined
// ones. `atexit` is [Atexit].
const (
	// FatbinWrapper is `.fatbin_wrapper`, alone at offset 0 of
	// `.nvFatBinSegment` (HIP: `.hipFatBinSegment`).
	FatbinWrapper Target = iota + 100
	// BinaryHandle is `.cuda.binary_handle` (HIP: `.hip.binary_handle`),
	// alone in `.bss`.
	BinaryHandle
	// FatbinUnreg is `.cuda.fatbin_unreg` (HIP: `.hip.fatbin_unreg`), which
	// fatbin_reg passes to atexit. The addend is relative to the function;
	// the caller adds its offset, Funcs[1].Offset, when LLVM relocates
	// against the section symbol of `.text.startup` (AArch64; x86-64 needs
	// no relocation).
	FatbinUnreg
	// EntriesStart and EntriesStop are the hidden undefined `__start_<sec>`
	// and `__stop_<sec>` of the entries section.
	EntriesStart
	EntriesStop
	// The runtime functions, undefined globals: `__cudaRegisterFatBinary`
	// or `__hipRegisterFatBinary` and so on ([GPUCode.Symbols]).
	RegisterFatBinary
	RegisterFatBinaryEnd // CUDA only
	UnregisterFatBinary
	RegisterFunction
	RegisterVar
	RegisterManagedVar // LLVM 21+
	RegisterSurface    // HIP, LLVM 18+
	RegisterTexture    // HIP, LLVM 18+
	// JumpTable is the jump table of the switch in `.rodata`
	// ([GPUCode.JumpTable]), which the code addresses at offset 0.
	JumpTable
	// TextStartup is `.text.startup` itself: the jump table's entries point
	// into it. The addend is relative to the section's start.
	TextStartup
)

var gpuTargetNames = map[Target]string{
	FatbinWrapper: "FatbinWrapper", BinaryHandle: "BinaryHandle", FatbinUnreg: "FatbinUnreg",
	EntriesStart: "EntriesStart", EntriesStop: "EntriesStop",
	RegisterFatBinary: "RegisterFatBinary", RegisterFatBinaryEnd: "RegisterFatBinaryEnd",
	UnregisterFatBinary: "UnregisterFatBinary", RegisterFunction: "RegisterFunction",
	RegisterVar: "RegisterVar", RegisterManagedVar: "RegisterManagedVar",
	RegisterSurface: "RegisterSurface", RegisterTexture: "RegisterTexture",
	JumpTable: "JumpTable", TextStartup: "TextStartup",
}

// GPUTargetName is the name of a CUDA or HIP target t ("BinaryHandle"), or
// t.String() for the others. (Target.String knows only the OpenMP ones.)
func GPUTargetName(t Target) string {
	if n, ok := gpuTargetNames[t]; ok {
		return n
	}
	return t.String()
}

// GPUCode is the content of `.text.startup` of a CUDA or HIP wrapper object
// and what else the code generator decides about the sections it refers
// to. See [GPUKind] for the rest of the object.
type GPUCode struct {
	Text  []byte // contents of .text.startup, padding included
	Align uint64 // alignment of .text.startup and of each function
	// Funcs are .<p>.fatbin_reg, .<p>.fatbin_unreg and .<p>.globals_reg,
	// in this order: LLVM's order in the section (the module defines them
	// in that order; globals_reg is created while fatbin_reg is built, but
	// appended after both).
	Funcs  []Func
	Relocs []Reloc // of .text.startup, in offset order
	// Labels are the mapping symbols in .text.startup (AArch64: `$x` at 0).
	Labels []Label
	// JumpTable is the jump table that llc makes of the switch on the entry
	// type, or nil where it compares instead (all but x86-64 HIP of the
	// LLVM 21+ module).
	JumpTable *GPUJumpTable

	// Symbols names the undefined symbol of each such target the code
	// refers to (runtime functions, atexit, __start_/__stop_).
	Symbols map[Target]string
	// ViaSection names, for each target that LLVM relocates against a
	// section symbol, that section: FatbinWrapper → .nvFatBinSegment or
	// .hipFatBinSegment, BinaryHandle → .bss, FatbinUnreg and TextStartup →
	// .text.startup, JumpTable → .rodata. The addend LLVM writes is then the
	// Reloc's plus the target's offset in that section (0 but for
	// FatbinUnreg).
	ViaSection map[Target]string

	// Measured is true when this code was compared with llc of its own release
	// on the module that release's clang-linker-wrapper writes (LLVM 19 and
	// 22), false when the module is inferred from the source and
	// docs/registration.md#globals-reg, and compiled by a neighbouring llc
	// (17, 18, 20: llc-19; 21: llc-22).
	Measured bool
}

// GPUJumpTable is a jump table in `.rodata`: 32-bit entries, each the
// distance from the table to a block, written by relocations (the data is
// zero).
type GPUJumpTable struct {
	Align uint64 // of .rodata
	Data  []byte
	// Relocs are at offsets in Data; their target is TextStartup with the
	// addend LLVM writes: the block's offset in .text.startup plus the
	// entry's offset in the table (R_X86_64_PC32, S + A - P).
	Relocs []Reloc
}

// GPUOptions selects the code generator and the wrapper module.
type GPUOptions struct {
	// LLVM is the release of clang-linker-wrapper, 17 to 23; 0 means 19.
	LLVM int
	Kind GPUKind
}

// gpuMeasured are the releases whose code generator was run on the module
// of that release's clang-linker-wrapper; the form of each release's module
// (release.Release.GPURegistration) and its entries section come from the
// release table.
var gpuMeasured = map[int]bool{19: true, 22: true}

// gpuArch writes the three functions of one machine.
type gpuArch struct {
	align uint64
	pad   func(n int) []byte
	// viaSection are the targets that the machine relocates against
	// section symbols when they occur.
	viaSection []Target
	write      func(a *gpuAsm, kind GPUKind, module release.GPURegistration)
}

var gpuArches = map[elf.Machine]gpuArch{
	elf.EM_X86_64:  gpuX86,
	elf.EM_AARCH64: gpuARM64,
}

// GPU returns the `.text.startup` of the CUDA or HIP wrapper object for host
// machine m (elf.EM_X86_64 or elf.EM_AARCH64) as the code generator of
// release o.LLVM emits it for the module that release's clang-linker-wrapper
// writes: what `llc -mtriple=<triple> -relocation-model=pic -filetype=obj`
// makes of it. Each call returns new slices and maps.
func GPU(m elf.Machine, o GPUOptions) (*GPUCode, error) {
	if o.LLVM == 0 {
		o.LLVM = 19
	}
	if o.Kind != CUDA && o.Kind != HIP {
		return nil, fmt.Errorf("gpu wrapper code: kind %v: %w", o.Kind, goffload.ErrUnsupported)
	}
	rel, err := release.Lookup(o.LLVM)
	if err != nil || rel.Wrapper.GPU == release.GPURegistrationNone {
		known := release.Where(func(r *release.Release) bool { return r.Wrapper.GPU != release.GPURegistrationNone })
		return nil, fmt.Errorf("%v wrapper code of LLVM %d: %w (known: %v)", o.Kind, o.LLVM, goffload.ErrUnsupported, known)
	}
	arch, ok := gpuArches[m]
	if !ok {
		return nil, fmt.Errorf("%v wrapper code for %v: %w", o.Kind, m, goffload.ErrUnsupported)
	}
	a := &gpuAsm{align: arch.align, pad: arch.pad}
	arch.write(a, o.Kind, rel.Wrapper.GPU)
	c := a.assemble()
	c.Measured = gpuMeasured[o.LLVM]
	c.Symbols, c.ViaSection = map[Target]string{}, map[Target]string{}
	entries := offload.EntriesSection(rel, o.Kind.offloadKind())
	relocs := c.Relocs
	if c.JumpTable != nil {
		relocs = append(relocs[:len(relocs):len(relocs)], c.JumpTable.Relocs...)
	}
	for _, r := range relocs {
		if s := o.Kind.symbol(r.Target, entries); s != "" {
			c.Symbols[r.Target] = s
		}
		for _, t := range arch.viaSection {
			if t == r.Target {
				c.ViaSection[t] = o.Kind.section(t)
			}
		}
	}
	return c, nil
}

// offloadKind is k as an offload kind.
func (k GPUKind) offloadKind() offload.OffloadKind {
	if k == HIP {
		return offload.OffloadHIP
	}
	return offload.OffloadCUDA
}

// prefix is the wrapper's name prefix: "cuda" or "hip".
func (k GPUKind) prefix() string {
	if k == HIP {
		return "hip"
	}
	return "cuda"
}

// symbol names the undefined symbol of t, "" if t is defined in the object.
func (k GPUKind) symbol(t Target, entries string) string {
	runtime := map[Target]string{
		RegisterFatBinary: "RegisterFatBinary", UnregisterFatBinary: "UnregisterFatBinary",
		RegisterFunction: "RegisterFunction", RegisterVar: "RegisterVar",
		RegisterManagedVar: "RegisterManagedVar", RegisterSurface: "RegisterSurface",
		RegisterTexture: "RegisterTexture",
	}
	switch t {
	case Atexit:
		return "atexit"
	case RegisterFatBinaryEnd:
		return "__cudaRegisterFatBinaryEnd" // HIP declares it too, by this name
	case EntriesStart:
		return "__start_" + entries
	case EntriesStop:
		return "__stop_" + entries
	}
	if n, ok := runtime[t]; ok {
		return "__" + k.prefix() + n
	}
	return ""
}

// section is the section whose symbol LLVM relocates t against.
func (k GPUKind) section(t Target) string {
	switch t {
	case FatbinWrapper:
		if k == HIP {
			return ".hipFatBinSegment"
		}
		return ".nvFatBinSegment"
	case BinaryHandle:
		return ".bss"
	case JumpTable:
		return ".rodata"
	}
	return ".text.startup" // FatbinUnreg, TextStartup
}

// GPUFatbinAlign is the alignment LLVM gives `.nv_fatbin` / `.hip_fatbin`
// for an image of size bytes: the global has no alignment in the IR, so it
// gets its preferred one, 16 for globals larger than 16 bytes (DataLayout's
// large-global rule, all targets), else that of i8: 1 on x86-64, 4 on
// AArch64 (its data layout prefers 32-bit alignment for i8). Measured with
// llc-19 and llc-22.
func GPUFatbinAlign(m elf.Machine, size uint64) uint64 {
	switch {
	case size > 16:
		return 16
	case m == elf.EM_AARCH64:
		return 4
	}
	return 1
}
