// Package offload is the ABI of LLVM's offloading toolchain (OpenMP `target`,
// CUDA, HIP, SYCL) as Go data: image and offload kinds, the offload entry
// tables in both layouts and their flags, `ident_t`, the runtime's
// `__tgt_device_image` and `__tgt_bin_desc`, the indirect-call table. It
// knows nothing of ELF; see the elfobj, entries and wrap packages for
// objects, and offloadbinary for the OffloadBinary container.
//
// Start with an entry table: [DetectEntryLayout] names the layout of an
// entries section, [EntryLayout.DecodeAll] decodes it, and [EntryFromRaw]
// gives each entry its meaning ([Entry.Role]).
//
// # Releases
//
// What differs between LLVM releases is read from a row of the release
// table (package release): every function that writes or reads as a
// release does takes its row, so writing for another release means passing
// another row. The table speaks LLVM 13 to 24, 24 being LLVM's main branch
// after the 23 branch. [LayoutOf] gives a release's
// entry layout, [EntriesSection] its entries sections, and
// [RuntimeReadsEntries] says what its libomptarget reads. This package's
// own tests run the tools of 15, 16, 19 and 22.
//
// # Security
//
// The decoders of the runtime's structures, entries and ident_t are meant
// for untrusted input: every size and offset is checked before it is used,
// and bad input gives a [*goffload.FormatError] saying which field at which
// byte, never a panic. They are fuzzed (FuzzDecodeEntry,
// FuzzDecodeRuntimeStructs, FuzzParseSourceLocation).
//
// The OffloadBinary container that carries device images, its packager and
// its readers are package offloadbinary's.
package offload
