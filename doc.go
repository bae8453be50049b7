// Package goffload is the root of a pure-Go toolkit for the object files of
// LLVM's offloading toolchain (OpenMP target, CUDA, HIP, SYCL). It holds
// what every package of the module shares: the error vocabulary
// ([FormatError] and the sentinels) and the module's version.
//
// The work is done by the packages below it:
//
//   - [github.com/goffload/goffload/fatobj]: open any file a user holds
//     (objects, executables, shared objects, archives, OffloadBinaries,
//     bundles) and list its device code and offload entries; extract,
//     embed, strip, convert and check.
//   - [github.com/goffload/goffload/offload]: the ABI as Go types, the
//     OffloadBinary container, and the table of what differs between LLVM
//     releases.
//   - [github.com/goffload/goffload/elfobj]: ELF relocatable objects,
//     written, read and edited.
//   - [github.com/goffload/goffload/coffobj]: COFF relocatable objects,
//     the same for Windows hosts; PE images read.
//   - [github.com/goffload/goffload/machoobj]: 64-bit Mach-O objects, the
//     same for Apple hosts; linked images read.
//   - [github.com/goffload/goffload/bundle]: clang offload bundles.
//   - [github.com/goffload/goffload/entries]: offload entry tables.
//   - [github.com/goffload/goffload/wrap]: registration objects.
//   - [github.com/goffload/goffload/link]: the clang-linker-wrapper flow as
//     a plan of steps.
//
// # Errors
//
// Malformed input gives a [*FormatError], found with [errors.As] whichever
// package read it; it matches [ErrInvalid], and where it applies
// [ErrTruncated], [ErrUnsupported] or [ErrLimit]. These sentinels are the
// same values in every package.
package goffload
