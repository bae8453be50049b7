// Package stubs holds the machine code of the two functions of the OpenMP
// registration ("wrapper") object that clang-linker-wrapper compiles, for the
// host machines x86-64, AArch64, ppc64le and riscv64, byte for byte as LLVM's
// code generators of releases 15 to 22 emit them
// (docs/registration.md#openmp-module, docs/registration.md#openmp-object), and
// of the object that the old driver of LLVM 13 and 14 compiles from
// clang-offload-wrapper's module (docs/old-driver.md#legacy-wrapper-object):
//
//   - `.omp_offloading.descriptor_reg` calls `__tgt_register_lib(&descriptor)`
//     and, in the LLVM 19+ module, `atexit(.omp_offloading.descriptor_unreg)`;
//   - `.omp_offloading.descriptor_unreg` calls `__tgt_unregister_lib(&descriptor)`.
//
// Both are local functions in `.text.startup`, reg first. clang-linker-wrapper
// compiles the module in process for the host triple with CPU "", features
// "", Reloc::PIC_, the default code model and optimisation level and no IR
// pipeline: the same as `llc -mtriple=<triple> -relocation-model=pic
// -filetype=obj`. [OpenMP] gives LLVM 19's code; [OpenMPWith] that of another
// release and image count. A [Code] is the section's bytes with the
// relocations, symbols, labels and call-frame rules that go with them, the
// relocations as [Target]s that the object builder resolves to its symbols.
// Instructions are encoded by small functions per machine (x86.go,
// arm64.go, ppc64.go, riscv64.go), not copied as blobs.
//
//	c, err := stubs.OpenMP(elf.EM_X86_64, true)
//	// c.Text: 50 48 8d 3d 00 00 00 00 e8 ...; c.Relocs[0]: {4 R_X86_64_PC32 Descriptor -4}
//
// With [Options.SizeArg] both calls pass a second argument, an i64 size,
// as the SYCL module of LLVM main after 23 does (`__sycl_register_lib(ptr
// binary, i64 size)`, then atexit, and `__sycl_unregister_lib(ptr binary,
// i64 size)`), on x86-64 and AArch64: `mov $size, %esi` (or `movabs`, or
// `xor` for 0) after the address; on AArch64 the instructions LLVM's
// expandMOVImm chooses for the constant (arm64imm.go), the first of several
// scheduled before the address, the others after it. TestSizeArgMatchesLLC
// compares every form with llc-22.
//
// The tests compare the code with llc of LLVM 15, 16, 19 and 22 (text,
// relocations, symbols, labels, e_flags, .riscv.attributes, and .eh_frame
// as bytes and as llvm-dwarfdump prints it), decode it with golang.org/x/arch
// against golden listings, and compare the x86-64 code with the objects that
// the real clang-linker-wrapper of LLVM 15, 16, 19 and 22 wrote.
//
// The CUDA and HIP wrapper's code is [GPU] for ELF hosts (gpu_doc.go),
// [WinGPU] for x86-64 COFF hosts (win64.go) and [MachOGPU] for Mach-O
// hosts, x86-64 and arm64 (macho.go): `__TEXT,__StaticInit` with its
// Mach-O relocations, data-in-code entries, linker optimization hints,
// compact unwind encodings and call-frame rules, compared with llc-22.
//
// # What changes between releases
//
// One table (codegens in asm.go) holds it. Measured: 15, 16, 19, 22;
// inferred, [Code.Measured] false: 17 and 18 (16 and 19 agree on the code),
// 20 and 21 (from the LLVM changes that 22 shows, both merged in autumn 2024,
// before the LLVM 20 branch); 23 and 24 (main after 23) as 22.
//
// LLVM 13 and 14 are measured on `clang-N -cc1 -emit-obj` of the module of
// clang-offload-wrapper-N, with the flags that the driver passes (clang -###):
// -O0 and the driver's target features, where 15 to 22 compile with llc's
// defaults. 14 compiles PIE: the code is 15's on x86-64 and AArch64, and on
// ppc64le 15's but for a 96-byte frame (-O0 reserves the parameter save
// area); its riscv64 module is compiled rv64gc with relaxation (compressed
// code, another shape), which this package does not write. 13's driver
// compiles without PIC ([Options.Static]): the descriptor is loaded with
// `movabs` (R_X86_64_64 against .rodata, where the tables are); and 13's ELF
// writer leaves SHF_INFO_LINK off the relocation sections
// ([Code.InfoLink]); x86-64 only.
//
//	x86-64    no change 13–22 but static code's movabs.
//	AArch64   code unchanged; mapping symbol `$x.0` (14–16) then `$x`.
//	ppc64le   14, 15 store LR before `stdu` (`std 0,16(1)`), 16+ after (`std 0,48(1)`);
//	          14's frame is 96 bytes, the others' 32.
//	          20+ GlobalMerge (PR #114850): device_images and the descriptor
//	          become one block, sorted by size (stable): one image puts the
//	          descriptor at 0x20 and the code adds `addi 3,3,32` after the
//	          TOC pair relocated against .data.rel.ro+0; two or more put it
//	          at 0 (no addi). See [Code.DescriptorOffset].
//	riscv64   code unchanged, but 20+ adds epilogue CFI (PR #110810:
//	          `.cfi_restore ra`, `.cfi_def_cfa_offset 0`). %pcrel_hi label
//	          `.LBB0_1`/`.LBB1_1` in 15, `.Lpcrel_hiN` from 16. 19+ writes the
//	          `$x` mapping symbol and a `.L0 ` label at each function for the
//	          FDE; 15 and 16 write unnamed local symbols instead and describe
//	          pc_range and every advance with R_RISCV_ADD32/SUB32 and
//	          SET6/SUB6 pairs in .rela.eh_frame (not expressible with
//	          ehframe.Build; those unnamed symbols are not in Labels).
//	          Arch attribute rv64i2p0 up to 16, rv64i2p1 after.
//
// # The llc-19 object around the code (for the object builder)
//
// Measured on `llc-19 -relocation-model=pic -filetype=obj` of the LLVM 19
// module (one 256-byte image); LLVM 15 module differences follow.
//
//	                    x86-64           AArch64          ppc64le           riscv64
//	e_flags             0                0                2 (ELFv2)         0 (lp64 soft-float, no RVC)
//	.text               AX, size 0, align 4 on all four
//	.text.startup align 16               4                16                4
//	padding             x86 nops         none             nops (0x60000000) none
//	.eh_frame type      X86_64_UNWIND    PROGBITS         PROGBITS          PROGBITS
//	CIE code/data/RA    1/-8/16          1/-4/30          4/-8/65           1/-8/1
//	section symbols     .text.startup, .llvm.offloading, .data.rel.ro      none at all
//	descriptor ref      .data.rel.ro+off .data.rel.ro+off .data.rel.ro+off  the symbol
//	atexit(unreg) ref   resolved         .text.startup+u  .text.startup+u   resolved
//	64-bit data reloc   R_X86_64_64      R_AARCH64_ABS64  R_PPC64_ADDR64    R_RISCV_64
//	data relocs against section symbols (.llvm.offloading+ImageOffset,
//	                    .data.rel.ro+0 for device_images)                   symbols (.omp_offloading.device_image+off,
//	                                                                        .omp_offloading.device_images+0)
//	init/fini_array     .text.startup+off (section symbol)                  the function symbols
//	eh_frame pc_begin   R_X86_64_PC32    R_AARCH64_PREL32 R_PPC64_REL32     R_RISCV_32_PCREL
//	  against           .text.startup+off (section symbol)                  the `.L0 ` label of the function
//	extra sections      —                —                —                 .riscv.attributes (RISCV_ATTRIBUTES, align 1,
//	                                                                        before .eh_frame; see Code.Attributes)
//	mapping symbols     none             AArch64 and riscv64 (riscv64 from 19): `$x` at the start of
//	                                     .text.startup; `$d` in .llvm.offloading, .data.rel.ro,
//	                                     .init_array.101 and .eh_frame (riscv64 also .riscv.attributes)
//
// Section order (all four; .strtab first, and also the section-name table):
// .strtab, .text, .text.startup, .rela.text.startup, omp_offloading_entries (A,
// size 0, align 8; llvm_offload_entries in the LLVM 21+ module),
// .llvm.offloading (SHT_LLVM_OFFLOADING, A, align 8), .data.rel.ro (WA,
// align 16), .rela.data.rel.ro, .init_array.101 (align 8), its .rela,
// .note.GNU-stack (size 0, align 1), [.riscv.attributes], .eh_frame (A,
// align 8), .rela.eh_frame, .symtab. The LLVM 15 module has .init_array.1,
// .rela.init_array.1, .fini_array.1 (unreg), .rela.fini_array.1 instead.
// ppc64le 20+ emits merged globals last: with one image .init_array.101 comes
// before .data.rel.ro; with two or more it also precedes .llvm.offloading
// (the images are merged too, same offsets).
//
// .data.rel.ro: device_images (32 bytes per image) at 0, then the descriptor
// at 32×N (`01 00 00 00 00 00 00 00` and three pointers), except ppc64le 20+
// (above). Seven (4N+3) 64-bit relocations, in field order.
//
// Local symbol order, x86-64 LLVM 19 module: FILE offload.wrapper.module,
// SECTION .text.startup, reg, descriptor, unreg, __dummy.<entries>,
// device_image, SECTION .llvm.offloading, device_images, SECTION
// .data.rel.ro; then globals __tgt_register_lib, atexit,
// __tgt_unregister_lib, __start_<entries>, __stop_<entries> (hidden). AArch64
// inserts `$x` after reg, a `$d` after the section symbols of
// .llvm.offloading and of .data.rel.ro, and after the latter the `$d` of
// .init_array.101 and of .eh_frame; ppc64le puts `.TOC.` first among the
// globals; riscv64 has no section symbols: reg, `.L0 `, `$x`, `.Lpcrel_hi0`,
// descriptor, unreg, `.L0 `, `.Lpcrel_hi2`, __dummy, device_image, `$d`,
// device_images, then the `$d` of .data.rel.ro, .init_array.101,
// .riscv.attributes and .eh_frame. The symbol table's sh_info is the first
// global, as ELF requires.
// The LLVM 15 module has no local __dummy: __dummy.omp_offloading.entry is a
// global hidden OBJECT in the entries section, after __stop_.
//
// # riscv64: soft-float
//
// Empty features give rv64i with the lp64 ABI: e_flags 0 and arch rv64i2p1.
// GNU ld refuses to link such an object with the lp64d objects of a Debian
// riscv64 glibc ("can't link soft-float modules with double-float modules"),
// and so does ld.lld ("cannot link object files with different floating-point
// ABI"). The code itself uses neither floating point nor compressed
// instructions, so the same bytes with e_flags 5 (RVC, double-float) link and
// run (checked with qemu-riscv64). [Code.Flags] is LLVM's 0; a builder that
// must link should say so explicitly when it writes 5.
//
// # Security
//
// The package takes no input but a machine, a release and an image count;
// unknown ones give an error wrapping [goffload.ErrUnsupported], never a panic.
package stubs
