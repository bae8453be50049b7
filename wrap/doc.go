// Package wrap makes the registration objects that clang-linker-wrapper makes
// after device linking (and, for LLVM 13 and 14, clang-offload-wrapper), so
// that a program links and runs with the offloading runtime without any LLVM
// tool at link time.
//
// [OpenMP] builds the object for OpenMP device binaries of LLVM 15 to 24 on
// x86-64, AArch64, ppc64le and riscv64 hosts
// (docs/registration.md#openmp-module, docs/registration.md#openmp-object):
// each binary embedded whole in .llvm.offloading (SHF_ALLOC), a
// __tgt_device_image per binary whose ImageStart and ImageEnd point where that
// release points them, the __tgt_bin_desc, the release's __start_/__stop_
// symbols and dummy of the entries section, and the constructor in
// .text.startup that calls __tgt_register_lib, registered through .init_array.1
// and .fini_array.1 (15 to 18) or .init_array.101 with atexit (19 and later),
// with its .eh_frame. On x86-64 the object is the same as
// clang-linker-wrapper's, section by section and symbol by symbol; on the other
// hosts the same as llc's from the same IR, except that the riscv64 object is
// double-float so that it links. Images are streamed from their readers: a
// 2 GiB image is never held in memory. With [Options.Relocatable] the images
// go to .llvm.offloading.relocatable, for a relocatable link (LLVM 19+).
//
//	bin, _ := wrap.FromImage(r, offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-pc-linux-gnu", ""), image)
//	o, _ := wrap.OpenMP(wrap.Options{Release: r, Triple: "x86_64-unknown-linux-gnu"}, []wrap.Binary{bin})
//	_, err := elfobj.Write(w, o)
//
// For LLVM 13 and 14, whose old OpenMP driver registers device code with
// clang-offload-wrapper (release.WrapperOffloadWrapper), [OpenMP] takes the
// linked device images themselves ([RawImage]; [FromImage] gives the same
// for those releases, so the code above serves every release) and writes
// the object that clang-offload-wrapper and `clang -cc1 -emit-obj`, run as
// that release's driver runs them, make: the images raw in .rodata,
// .init_array.1 and .fini_array.1, the hidden __dummy.omp_offloading.entry;
// section by section and symbol by symbol the same as LLVM's for 14 on
// x86-64, AArch64 and ppc64le and for 13 (compiled static) on x86-64, but
// for images so small that LLVM merges them (see [OpenMP]).
//
// [GPU] builds the CUDA and HIP registration objects of LLVM 17 to 24 on x86-64
// and AArch64 hosts (docs/registration.md#cuda-hip) around a fatbin that it
// first checks as the runtime will read it ([ErrNotFatbin]).
//
// [SYCL] builds the object of LLVM 22's wrapSYCLBinaries
// (docs/registration.md#sycl-22) on x86-64 and AArch64 hosts, from the SYCL
// images of OffloadBinaries ([SYCLImages] reads them as clang-sycl-linker
// writes them): per image its raw bytes in .llvm.offloading, its triple and
// option strings, an offload entry per kernel of its "symbols" string and the
// array of them, then the __sycl.tgt_device_image array and
// __sycl.tgt_bin_desc, and sycl.descriptor_reg/_unreg calling
// __sycl_register_lib and __sycl_unregister_lib from .init_array.1 and
// .fini_array.1; section by section and symbol by symbol the same as
// clang-linker-wrapper-22's. Releases without that form are refused: before 22
// there is no SYCL wrapper, and 23 and later register the whole binary
// another way.
//
//	images, _ := wrap.SYCLImages(r, f, size) // what clang-sycl-linker wrote
//	o, _ := wrap.SYCL(wrap.Options{Release: r, Triple: "x86_64-unknown-linux-gnu"}, images)
//
// [SYCLBinary] builds the object of LLVM main after 23's wrapSYCLBinaries
// (release.SYCLRegistrationBinary, --llvm 24; llvm-project #193876,
// #217173) on the same hosts: the one OffloadBinary that clang-sycl-linker
// writes, embedded whole and as given in .llvm.offloading, and
// sycl.descriptor_reg calling __sycl_register_lib(start, size) and
// atexit(unreg) from .init_array.101, unreg calling
// __sycl_unregister_lib(start, size). 23's form (the whole binary from a
// constructor and destructor of priority 1, before #217173) is refused.
// No release has main's form yet: the
// object is compared with llc-22's of the module that main's source builds,
// and run against a stand-in runtime.
//
//	o, _ := wrap.SYCLBinary(wrap.Options{Release: r24, Triple: "aarch64-unknown-linux-gnu"}, f, size)
//
// [OpenMPCOFF] and [GPUCOFF] build the OpenMP, CUDA and HIP objects of LLVM
// 22 to 24 for x86-64 Windows hosts, x86_64-pc-windows-msvc and
// x86_64-w64-windows-gnu ([COFFHost]; docs/registration.md#windows), as
// package coffobj objects: the same module with the entries' bounds defined
// in llvm_offload_entries$OA and $OZ (from 24 a zeroed sentinel entry each,
// llvm-project #215390), code in the Microsoft x64 convention with its
// .xdata and .pdata, and the constructor in .CRT$XCA00101 (MSVC) or
// .ctors.65434 (MinGW); byte for byte clang-linker-wrapper-22's for 22 (and
// 23, whose wrapper is 22's), llc-22's of main's module for 24.
//
// Binaries, images and fatbins are io.ReaderAts read each time the object
// is written, so an object can be written again and from several
// goroutines.
//
// # Security
//
// [FromBinary], [SYCLImages] and [SYCLBinary] read untrusted binaries with
// package offload's checked reader (SYCLBinary inflates a compressed one to
// check it, as bounded as that reader is, and embeds the bytes given), and
// [GPU] untrusted fatbins with package bundle's (decompressing a compressed
// HIP fatbin once, bounded by its declared size), and [OpenMP] reads the
// first 4 bytes of a raw image to refuse an OffloadBinary given as one;
// [SYCL] reads each image's last byte ([SYCLBinary] the binary's), and when
// it is zero the image up to its first other zero, in 64 KiB pieces, to
// choose its section as LLVM does; the rest of the package only writes what
// its arguments describe.
package wrap
