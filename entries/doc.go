// Package entries writes the offload entry tables (omp_offloading_entries,
// cuda_offloading_entries, hip_offloading_entries, llvm_offload_entries) into
// ELF objects as each LLVM release emits them, and reads them back from
// objects, executables and shared objects. The entry layouts themselves are in
// package offload, the objects in package elfobj.
//
// # Writing
//
// [Write] adds entries to an [elfobj.Object] for release r and the object's
// host machine (x86-64, AArch64, ppc64, riscv64): the release's entries
// section (32-byte entries aligned 1 up to LLVM 20, 56-byte entries aligned 8
// from 21), the name strings where that release and machine put them
// (.rodata.str1.1/.4/.16 by size, or .llvm.rodata.offloading from 20), a weak
// `.omp_offloading.entry.<name>` or `.offloading.entry.<name>` symbol per
// entry, the relocations of the address, name and aux pointers, and the
// `.region_id` symbols of target regions. Tests compare every byte,
// relocation and entry symbol with what clang 15, 16, 19 and 22 emit.
//
//	o, _ := elfobj.ForTriple("x86_64-unknown-linux-gnu")
//	r, _ := offload.LookupRelease(19)
//	req, _ := entries.RequiresEntry(r, offload.RequiresUnifiedSharedMemory)
//	err := entries.Write(o, r, []offload.Entry{entries.KernelEntry("__omp_offloading_10_20_main_l5"), req})
//
// # Reading
//
// [Read] finds the entries sections of a file by name, detects their layout,
// and resolves each pointer: through RELA relocations in a relocatable object,
// through the dynamic relocations (or the stored address) in a linked file.
// [Check] compares the entries of a file with the symbols of the device images
// it carries, which LLVM only does when a program runs and fails to load one.
//
// # Security
//
// The readers take untrusted files: every size and offset comes through
// package elfobj's checked reader, strings are bounded by their sections, and
// bad input gives an error wrapping [ErrFormat] or the underlying package's
// errors, never a panic.
package entries
