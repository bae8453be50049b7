package stubs

import (
	"debug/elf"
	"fmt"
	"slices"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
)

// Target is what a relocation of the stub code refers to.
type Target int

const (
	// Descriptor is `.omp_offloading.descriptor`. The caller resolves it to
	// the symbol LLVM uses on the machine: the section symbol of
	// `.data.rel.ro` plus the descriptor's offset when
	// [Code.DescriptorViaSection], else the descriptor's own symbol.
	Descriptor Target = iota
	// RegisterLib is the undefined global `__tgt_register_lib`.
	RegisterLib
	// UnregisterLib is the undefined global `__tgt_unregister_lib`.
	UnregisterLib
	// Atexit is the undefined global `atexit`.
	Atexit
	// Unreg is `.omp_offloading.descriptor_unreg`, where the machine
	// relocates the reference that reg passes to atexit (AArch64, ppc64).
	// LLVM relocates it against the section symbol of `.text.startup` plus
	// unreg's offset ([Code.UnregViaSection]).
	Unreg
	// TOC is the undefined global `.TOC.` (ppc64).
	TOC
	// LocalLabel is a local label in `.text.startup` at
	// [Reloc.LabelOffset]: the riscv64 %pcrel_lo relocation refers to the
	// label of its %pcrel_hi instruction.
	LocalLabel
)

var targetNames = [...]string{"Descriptor", "RegisterLib", "UnregisterLib", "Atexit", "Unreg", "TOC", "LocalLabel"}

func (t Target) String() string {
	if t >= 0 && int(t) < len(targetNames) {
		return targetNames[t]
	}
	return fmt.Sprintf("Target(%d)", int(t))
}

// Symbol returns the name of the undefined symbol t stands for, or "" when t
// is defined in the wrapper object (Descriptor, Unreg, LocalLabel).
func (t Target) Symbol() string {
	switch t {
	case RegisterLib:
		return "__tgt_register_lib"
	case UnregisterLib:
		return "__tgt_unregister_lib"
	case Atexit:
		return "atexit"
	case TOC:
		return ".TOC."
	}
	return ""
}

// Reloc is one relocation of `.text.startup`.
type Reloc struct {
	Offset uint64           // in .text.startup
	Type   elfobj.RelocType // a debug/elf value, e.g. elf.R_X86_64_PC32
	Target Target
	// Addend is relative to the target's address: for Descriptor, to the
	// descriptor (the caller adds the descriptor's offset in .data.rel.ro
	// when LLVM relocates against the section symbol); for Unreg, to the
	// unreg function (the caller adds its offset, Funcs[1].Offset).
	Addend int64
	// Label names the label of a LocalLabel target as LLVM writes it in .symtab
	// (".Lpcrel_hi0"), and LabelOffset is where it is in .text.startup.
	Label       string
	LabelOffset uint64
}

// Func is one of the two functions.
type Func struct {
	Name         string // ".omp_offloading.descriptor_reg" or ".omp_offloading.descriptor_unreg"
	Offset, Size uint64 // in .text.startup; Size as in the symbol table (ppc64: traceback words included)
	// Other holds the st_other bits above the visibility: the ppc64 ELFv2
	// local entry offset (0x60: 8 bytes, after the TOC set-up).
	Other uint8
	// CFI is the function's call-frame instructions from its first byte
	// on, for its FDE in .eh_frame (whose pc_range is Size).
	CFI ehframe.CFI
}

// Label is a named local symbol that LLVM writes to .symtab in
// .text.startup besides the functions and the section symbol: mapping
// symbols (`$x`, `$x.0`), riscv64 %pcrel_hi labels and the riscv64
// `.L0 ` labels (with a trailing space, LLVM's name for an unnamed
// temporary) that the .eh_frame relocations refer to.
type Label struct {
	Name   string
	Offset uint64
	// Func is the index in Code.Funcs of the function whose symbol the
	// label follows in .symtab.
	Func int
}

// Code is the content of `.text.startup` of the OpenMP wrapper object, and
// what else the same code generator decides about that object.
type Code struct {
	Text   []byte // contents of .text.startup, padding included
	Align  uint64 // alignment of .text.startup and of each function
	Funcs  []Func // reg, then unreg
	Relocs []Reloc
	// Labels are in the order LLVM writes them to .symtab; see Label.
	Labels []Label

	// DescriptorViaSection says that LLVM relocates references to the
	// descriptor against the section symbol of .data.rel.ro; otherwise
	// against the descriptor's symbol.
	DescriptorViaSection bool
	// UnregViaSection says that references to unreg are relocated against
	// the section symbol of .text.startup (there are such references only
	// when reg calls atexit on AArch64 and ppc64).
	UnregViaSection bool
	// DescriptorOffset is where LLVM places the descriptor in .data.rel.ro
	// for the number of images asked for: after the [N x __tgt_device_image]
	// array, 32×N, except where the code generator merges globals (ppc64
	// from LLVM 20), whose order is then by size.
	DescriptorOffset uint64

	// Flags is the e_flags word the code generator writes: 2 (ELFv2) on
	// ppc64le, 0 elsewhere (riscv64: soft-float lp64, no RVC; see the
	// package documentation).
	Flags uint32
	// Attributes is the content of `.riscv.attributes` (riscv64 only).
	Attributes []byte

	// InfoLink says that the relocation sections have SHF_INFO_LINK, as
	// LLVM's ELF writer sets from LLVM 14 on; LLVM 13 leaves their flags 0.
	InfoLink bool

	// Measured is true when this code was compared with the output of that
	// release's code generator (llc of LLVM 15, 16, 19 and 22; clang -cc1
	// of 13 and 14), false when it is inferred from the neighbouring
	// releases and LLVM's history (17, 18, 20, 21).
	Measured bool
}

// Options selects the code generator and the wrapper module it compiles.
type Options struct {
	// LLVM is the release whose code generator compiles the wrapper module
	// (clang-linker-wrapper compiles in process, with its own libLLVM; the
	// driver of 13 and 14 compiles clang-offload-wrapper's module with
	// `clang -cc1 -emit-obj`): 13 to 23; 0 means 19. LLVM 13 has x86-64
	// code only, 14 has no riscv64 code.
	LLVM int
	// Atexit says that reg calls atexit(unreg), as the wrapper module of
	// LLVM 19 and later does; LLVM 15–18 register unreg in .fini_array
	// instead.
	Atexit bool
	// Static says that the module is compiled with the static relocation
	// model, as the driver of LLVM 13 compiles clang-offload-wrapper's: the
	// descriptor is addressed with an absolute 64-bit move (x86-64 only).
	Static bool
	// Images is the number of device images (1 if 0). It decides
	// DescriptorOffset and, where LLVM merges globals and so orders them by
	// size (ppc64 from LLVM 20), the code.
	Images int
	// SizeArg says that reg and unreg pass Size as a second argument, an
	// i64 after the descriptor: the SYCL module of LLVM main after 23
	// registers its binary with __sycl_register_lib(ptr start, i64 size)
	// and unregisters it with __sycl_unregister_lib(ptr start, i64 size).
	// x86-64 and AArch64 only; on AArch64 Size must be below 2^48.
	SizeArg bool
	Size    uint64
}

// Function names, as the wrapper module gives them
// (docs/registration.md#openmp-module).
const (
	RegName   = ".omp_offloading.descriptor_reg"
	UnregName = ".omp_offloading.descriptor_unreg"
)

// OpenMP returns the registration code that LLVM 19's code generator emits
// for host machine m: elf.EM_X86_64, elf.EM_AARCH64, elf.EM_PPC64 (little
// endian, ELFv2) or elf.EM_RISCV (riscv64), with reg calling atexit when
// atexit is true (LLVM 19+ IR). It is what `llc-19 -mtriple=<triple>
// -relocation-model=pic -filetype=obj` makes of the wrapper module with one
// image.
func OpenMP(m elf.Machine, atexit bool) (*Code, error) {
	return OpenMPWith(m, Options{Atexit: atexit})
}

// OpenMPWith returns the registration code for host machine m as the code
// generator of release o.LLVM emits it. Each call returns new slices.
func OpenMPWith(m elf.Machine, o Options) (*Code, error) {
	if o.LLVM == 0 {
		o.LLVM = 19
	}
	if o.Images == 0 {
		o.Images = 1
	}
	if o.Images < 0 {
		return nil, fmt.Errorf("openmp wrapper code: %d images", o.Images)
	}
	cg, ok := codegens[o.LLVM]
	if !ok {
		return nil, fmt.Errorf("openmp wrapper code of LLVM %d: %w (known: 13 to 23)", o.LLVM, goffload.ErrUnsupported)
	}
	arch, ok := arches[m]
	if !ok {
		return nil, fmt.Errorf("openmp wrapper code for %v: %w", m, goffload.ErrUnsupported)
	}
	if cg.machines != nil && !slices.Contains(cg.machines, m) {
		return nil, fmt.Errorf("openmp wrapper code of LLVM %d for %v: %w (known for %v)", o.LLVM, m, goffload.ErrUnsupported, cg.machines)
	}
	if o.Static && m != elf.EM_X86_64 {
		return nil, fmt.Errorf("static openmp wrapper code for %v: %w (x86-64 only)", m, goffload.ErrUnsupported)
	}
	if o.SizeArg {
		switch {
		case m != elf.EM_X86_64 && m != elf.EM_AARCH64:
			return nil, fmt.Errorf("wrapper code passing a size for %v: %w (x86-64 and AArch64 only)", m, goffload.ErrUnsupported)
		case o.Static:
			return nil, fmt.Errorf("static wrapper code passing a size: %w", goffload.ErrUnsupported)
		case m == elf.EM_AARCH64 && o.Size>>48 != 0:
			return nil, fmt.Errorf("AArch64 wrapper code passing the size %#x: %w (below 2^48 only)", o.Size, goffload.ErrUnsupported)
		}
	}
	v := variant{codegen: cg, atexit: o.Atexit, static: o.Static, images: uint64(o.Images), sizeArg: o.SizeArg, size: o.Size}
	return assemble(arch, v), nil
}
