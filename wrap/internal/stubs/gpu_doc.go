package stubs

import "fmt"

// GPUKind is the offload kind of a CUDA or HIP wrapper object
// (docs/registration.md#globals-reg): the object that clang-linker-wrapper
// compiles for CUDA or HIP images to register the fatbinary and the entries of
// the offloading entries section with the CUDA or HIP runtime. [GPU] returns
// its `.text.startup`:
//
//   - `.<p>.fatbin_reg` (p = cuda or hip) calls
//     `h = __<p>RegisterFatBinary(&.fatbin_wrapper)`, stores h in
//     `.<p>.binary_handle`, calls `.<p>.globals_reg(h)`, then (CUDA only)
//     `__cudaRegisterFatBinaryEnd(h)` and `atexit(.<p>.fatbin_unreg)`;
//   - `.<p>.fatbin_unreg` calls `__<p>UnregisterFatBinary(handle)`;
//   - `.<p>.globals_reg(h)` walks [__start_<sec>, __stop_<sec>) and registers
//     each entry: size 0 with __<p>RegisterFunction, else by `flags & 7`
//     with RegisterVar (0), RegisterManagedVar (1, LLVM 21+), and for HIP
//     18+ RegisterSurface (2) and RegisterTexture (3); LLVM 21+ skips
//     entries whose 16-bit Kind is not CUDA's 2 or HIP's 4.
//
// # What changes between releases
//
// The code depends on the form of the module only, and llc-19 and llc-22
// emit the same code for each form (tested), so three forms give all of it:
//
//	17      32-byte entries (<p>_offloading_entries). The switch is on the
//	        whole flags word and only case 0 does anything, RegisterVar(h,
//	        addr, name, name, 0, size, 0, 0): llc compares the word with 0.
//	        CUDA and HIP have the same globals_reg. Inferred from
//	        clang-linker-wrapper's OffloadWrapper.cpp before llvm-project
//	        PR #73177 (November 2023, which brought the flag bits and
//	        surfaces/textures); the `flags & 7` loop came with 18
//	        (docs/registration.md#globals-reg).
//	18–20   32-byte entries; flags & 7, extern and constant from bits 3 and
//	        4; HIP registers surfaces and textures with the entry's
//	        reserved word as the texture type, CUDA only declares them.
//	        Measured (fixtures) for 19; 18 and 20 inferred as the same module.
//	21, 22  56-byte entries in llvm_offload_entries: Kind check, managed
//	        variables (aux_addr, (i32)data), HIP's surface/texture type is
//	        (i32)data. Measured for 22; 21 inferred as the same module.
//
// Releases 17, 18 and 20 are compared with llc-19, 21 with llc-22
// ([GPUCode.Measured] is false for them): the wrapper is compiled by the
// libLLVM of its own release, and that those releases' code generators
// emit the same as their neighbours for these modules is an inference
// (supported by llc-19 and llc-22 agreeing on all of them).
//
// Code sizes (function offset+size; the text ends with globals_reg):
//
//	           fatbin_reg  fatbin_unreg  globals_reg 17 / 18–20 / 21–22
//	x86-64 CUDA  0x00+53   0x40+15       0x50+126 / 143 / 206
//	x86-64 HIP   0x00+42   0x30+15       0x40+126 / 232 / 284 (+ jump table)
//	AArch64 CUDA 0x00+60   0x3c+24       0x54+156 / 160 / 220
//	AArch64 HIP  0x00+48   0x30+24       0x48+156 / 224 / 312
//
// x86-64: functions aligned to 16 with LLVM's nops, the loop header too;
// branches relaxed from rel8 to rel32 as far as needed; one call-frame rule
// after every instruction that moves rsp (pushes of stack arguments
// included) and at blocks entered with another CFA offset. AArch64: aligned
// to 4, no padding, rules only after the prologue. llc lowers the 4-case
// switch of HIP's 21+ module on x86-64 to a jump table ([GPUCode.JumpTable];
// `leaq .rodata(%rip), %r12`, `movslq (%r12,%rsi,4)`, `addq`, `jmpq *`),
// everywhere else to compares.
//
// # The llc objects around the code (for the object builder)
//
// Measured on `llc-19`/`llc-22 -relocation-model=pic -filetype=obj` of the
// LLVM 19 and 22 modules with a 20-byte image, for x86-64 and AArch64, CUDA
// and HIP; the x86-64 objects are those clang-linker-wrapper wrote, but for
// the image. gpu_objects.golden has every section, symbol and relocation.
//
// Sections, in this order (e_flags 0; .strtab also names the sections):
//
//	.strtab               STRTAB          align 1
//	.text                 PROGBITS AX     align 4, size 0
//	.text.startup         PROGBITS AX     align 16 (x86-64) / 4 (AArch64)
//	.rela.text.startup
//	.rodata               PROGBITS A      align 4, 16 zero bytes    x86-64 HIP 21+ only: the
//	.rela.rodata                                                    jump table, 4× R_X86_64_PC32
//	                                                                .text.startup+(block+4i)
//	<entries>             PROGBITS A      align 8, size 0: cuda_offloading_entries or
//	                                      hip_offloading_entries (19), llvm_offload_entries (22)
//	.nv_fatbin            PROGBITS A      the image (HIP .hip_fatbin); align GPUFatbinAlign:
//	                                      16 above 16 bytes, else 1 (x86-64) or 4 (AArch64)
//	.nvFatBinSegment      PROGBITS WA     align 8, 24 bytes (HIP .hipFatBinSegment): magic
//	                                      b1 43 62 46 (HIP 46 50 49 48), 01 00 00 00, the
//	                                      image pointer (0), 8 zero bytes
//	.rela.nvFatBinSegment                 one R_X86_64_64 / R_AARCH64_ABS64 at 8 against the
//	                                      section symbol of .nv_fatbin/.hip_fatbin, addend 0
//	.bss                  NOBITS WA       align 8, size 8 (the handle)
//	.init_array.101       INIT_ARRAY WA   align 8, 8 zero bytes
//	.rela.init_array.101                  R_*_64/ABS64 .text.startup+0 (fatbin_reg)
//	.note.GNU-stack       PROGBITS        size 0, align 1
//	.eh_frame             X86_64_UNWIND (x86-64) / PROGBITS (AArch64), A, align 8:
//	                      one CIE and an FDE per function, as for OpenMP
//	.rela.eh_frame                        R_X86_64_PC32 / R_AARCH64_PREL32
//	                                      .text.startup+function offset, one per FDE
//	.symtab               align 8, sh_info the first global
//
// The LLVM 17 and 18 modules (ctor priority 1) have .init_array.1 instead.
//
// Relocations of .text.startup use section symbols for everything defined
// in the object: .nvFatBinSegment/.hipFatBinSegment+0 (the wrapper),
// .bss+0 (the handle), .rodata+0 (the jump table), and on AArch64
// .text.startup+unreg for atexit's argument; x86-64 resolves that one and
// both machines resolve the call of globals_reg. Runtime functions, atexit
// and __start_/__stop_ are relocated against their undefined symbols
// (x86-64: R_X86_64_PLT32 calls, R_X86_64_PC32 leas of __start_/__stop_,
// addend -4; AArch64: CALL26, ADR_PREL_PG_HI21 + ADD_ABS_LO12_NC, and
// LDST64_ABS_LO12_NC for the handle's load and store, addend 0).
//
// Symbols, in .symtab order: null; FILE offload.wrapper.module; SECTION
// .text.startup; FUNC .<p>.fatbin_reg; [`$x`]; OBJECT .fatbin_wrapper (24,
// in the segment section); OBJECT .<p>.binary_handle (8, .bss); FUNC
// .<p>.globals_reg; FUNC .<p>.fatbin_unreg; [SECTION .rodata]; OBJECT
// __dummy.<entries> (size 0); OBJECT .fatbin_image (the image's size);
// SECTION .nv_fatbin; [`$d`]; SECTION .nvFatBinSegment; [`$d`]; SECTION
// .bss; [`$d`]; [`$d` in .init_array.101]; [`$d` in .eh_frame]; all LOCAL,
// `$x`/`$d` being AArch64's mapping symbols and .rodata x86-64 HIP 21+'s.
// Then the GLOBAL NOTYPE undefined symbols in the order of their first
// relocation in .text.startup: __<p>RegisterFatBinary,
// [__cudaRegisterFatBinaryEnd], atexit, __<p>UnregisterFatBinary,
// __stop_<entries> and __start_<entries> (both HIDDEN), then the
// Register* functions as globals_reg first calls them (see [GPUCode.Relocs]).
// The handle (.bss) and the wrapper are LOCAL; nothing is defined GLOBAL.
//
// # Mach-O hosts
//
// [MachOGPU] returns `__TEXT,__StaticInit` of the object that `llc-22
// -mtriple=x86_64-apple-macosx10.15.0` (or `arm64-apple-macosx`)
// `-relocation-model=pic -filetype=obj` makes of [GPUModuleIRMachO], the
// module above with LLVM main's Mach-O names (macho.go, macho_x86.go,
// macho_aarch64.go). What differs from the ELF code:
//
//	relocations every reference, to globals_reg, fatbin_unreg, the wrapper
//	            and the handle too, against the symbols (the object has
//	            subsections via symbols), addend 0: x86-64 BRANCH (calls)
//	            and SIGNED (RIP-relative), arm64 BRANCH26, PAGE21 and
//	            PAGEOFF12; written highest offset first.
//	x86-64      globals_reg reserves the stack arguments in its prologue
//	            (`subq $0x20`, HIP `$0x28`) and stores them; rules only in
//	            the prologue; other registers than on ELF. HIP's jump table
//	            ends the section (aligned 4 with a nop): four 32-bit
//	            differences block − table, resolved, marked by one
//	            LC_DATA_IN_CODE entry (JUMP_TABLE32, 16 bytes).
//	arm64       every function saves x29 with x30 without setting x29 (CUDA's
//	            fatbin_reg also x19, x20; globals_reg x19–x22 in 64
//	            bytes); the bodies are the ELF ones. LC_LINKER_OPTIMIZATION_HINT:
//	            AdrpAdd for adrp+add, AdrpLdr for adrp+ldr, none for adrp+str.
//	unwind      __LD,__compact_unwind, a record per function (x86-64
//	            STACK_IMMD, arm64 DWARF), and __TEXT,__eh_frame: a CIE with
//	            8-byte pcrel pointers ([MachOFDEPointerEncoding]), data
//	            alignment −8, then an FDE per function.
//
//	             fatbin_reg  fatbin_unreg  globals_reg  section size
//	x86-64 CUDA  0x00+53     0x40+15       0x50+226     0x132
//	x86-64 HIP   0x00+42     0x30+15       0x40+327     0x198 (table at 0x188)
//	arm64 CUDA   0x00+68     0x44+24       0x5c+228     0x140
//	arm64 HIP    0x00+48     0x30+24       0x48+320     0x188
//
// The object's sections, in order: __TEXT,__text (empty), __StaticInit
// (align 16 / 4), __LLVM,offload_entries, the fatbin, its wrapper,
// __DATA,__bss (the handle), __DATA,__mod_init_func (fatbin_reg),
// __LD,__compact_unwind, __TEXT,__eh_frame.
type GPUKind int

const (
	CUDA GPUKind = iota
	HIP
)

func (k GPUKind) String() string {
	switch k {
	case CUDA:
		return "CUDA"
	case HIP:
		return "HIP"
	}
	return fmt.Sprintf("GPUKind(%d)", int(k))
}
