// Package release is the table of the LLVM releases whose offloading
// formats goffload speaks: one [Release] row per release. The table
// speaks LLVM 13 to 24, 24 being LLVM's main branch after the 23 branch.
// Each row's facts are typed fields grouped by the package that reads them (Entries for the entries
// writers, Wrapper for the registration code, Link for the linker wrapper's
// flow, Bundle for clang-offload-bundler, Runtime for libomptarget, ...);
// every format decision of the module reads its row, so writing for
// another release means passing another row.
//
// Start with [Lookup] (or [Parse] for a command-line value, [Default] for
// release [DefaultMajor]):
//
//	r, err := release.Lookup(19)
//	if err != nil { ... }
//	fmt.Println(r.Entries.Size, r.Wrapper.CtorPriority) // 32 101
//
// [All] and [Range] give several rows; each row handed out is the caller's
// own copy. A [Set] is a set of releases (those that made a file, or that
// can link it), and prints as "LLVM 19-22".
//
// The rows follow docs/releases.md#release-table, measured with the real
// tools of LLVM 13 to 22 except 20, whose row is inferred like 23's and
// 24's from LLVM's sources and pull requests ([Release.Inferred]; no Debian
// suite ships them); a field measured only on some releases says so.
// [MainCheckedOn] says when rows 23 and 24 were last checked against
// LLVM's main branch.
package release
