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
//	r, _ := release.Lookup(19)
//	req, _ := entries.RequiresEntry(r, offload.RequiresUnifiedSharedMemory)
//	err := entries.Write(o, r, []offload.Entry{entries.KernelEntry("__omp_offloading_10_20_main_l5"), req})
//
// # Reading
//
// [Read] finds the entries sections of a file by name, detects their layout,
// and resolves each pointer: through RELA relocations in a relocatable object,
// through the dynamic relocations (or the stored address) in a linked file.
// fatobj.Check compares the entries of a file with the symbols of the device
// images it carries, which LLVM only does when a program runs and fails to
// load one.
//
// # Mixed releases
//
// Relinking objects of one LLVM release with another's clang links without a
// warning and fails at run time. [Mixing] reads a file for it, with the facts
// of the release table ([release.Release]): in a linked program or shared
// object, the registrations its wrappers left (each __tgt_bin_desc, by its
// symbol or, stripped, by its shape; the __start_/__stop_ symbols of entries
// sections) and their releases (the section registered, where the device
// images point into the OffloadBinary, the constructor and destructor), and
// the libomptarget it needs (DT_NEEDED, [release.ByRuntimeLibrary]); it
// reports each problem as a [Finding] of a stable [FindingKind]: entries
// outside every registered range ([FindUnregistered]: clang-22 linking
// clang-19 objects registers the empty llvm_offload_entries), 32- and 56-byte
// entries together ([FindMixedLayouts]), entries or a `requires` encoding the
// runtime does not read ([FindRuntimeLayout], [FindRequires]: libomptarget 19
// and 56-byte entries), HIP numbered 3 beside HIP numbered 4 or 56-byte
// entries ([FindHIPKind]), device code in a form no wrapper registers
// ([FindDeviceCodeForm]). In an object it reports the [Fact]s that no one
// release links and runs together, and [Incompatible] does the same across
// the objects of one link or archive:
//
//	o, _ := entries.Mixing(f, release.Default())
//	for _, f := range o.Findings {
//		fmt.Println(f) // unregistered-entries: 3 of the 3 entries in omp_offloading_entries ...
//	}
//	perObject := entries.Incompatible([]entries.Input{{Name: "a.o", Origin: a}, {Name: "b.o", Origin: b}})
//
// # Security
//
// The readers take untrusted files: every size and offset comes through
// package elfobj's checked reader, strings are bounded by their sections, and
// bad input gives a [*goffload.FormatError] at its byte in the file
// (matching [goffload.ErrInvalid], and [goffload.ErrTruncated] for a cut
// section), never a panic. Mixing follows the pointers of a descriptor only
// inside the file's sections, and bounds its work: at most 1024 images per
// descriptor, 256 descriptors, and in a stripped file 4096 candidates of 64
// images at most. Entries that point at one name share one string, and the
// names' bytes, counted for each entry, are at most 16 times the file's size
// plus 1 MiB ([goffload.ErrLimit] beyond); a linked file's name pointers find
// their section through an index by address ([elfobj.File.SectionAt]), not a
// scan of every section for every entry.
package entries
