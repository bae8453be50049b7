// Package ar reads Unix static archives (".a" files) in place: [Open] takes an
// [io.ReaderAt] and its size, parses the 60-byte member headers without
// reading member data, and [Archive.Open] gives each member as an
// [*io.SectionReader] over the archive, never a copy.
//
// It reads the three layouts that the GNU binutils and LLVM tools write
// (checked against GNU ar 2.40 and llvm-ar 19):
//
//   - GNU/SysV, magic "!<arch>\n": names end with '/', longer names live in
//     the "//" member and are referenced as "/<offset>", the symbol index is
//     "/" (32-bit big-endian) or "/SYM64/" (64-bit). COFF archives as lib.exe
//     and llvm-ar --format=coff write them also read as GNU: their long names
//     end with a NUL instead of "/\n", and the second "/" member (the
//     little-endian COFF index) is skipped.
//   - BSD, magic "!<arch>\n": names longer than 16 bytes or with spaces are
//     written "#1/<length>" and stored at the start of the member's data; the
//     symbol index is "__.SYMDEF" or "__.SYMDEF SORTED" (ranlib structs),
//     or "__.SYMDEF_64" for 64-bit offsets (llvm-ar --format=darwin).
//     llvm-ar --format=darwin pads each member to 8 bytes with '\n' and
//     counts the padding in the member's size; [Member.Size] includes it, as
//     it does for llvm-ar p.
//   - thin, magic "!<thin>\n" (GNU ar T, llvm-ar T): only the index and the
//     long-name table are stored; every other member is a file named by a
//     path relative to the archive's folder (or absolute). [Archive.Open]
//     refuses these members with [ErrThin]; [Archive.OpenThin] opens them
//     through a caller's [Opener]. The package never touches the file system.
//     GNU ar, given a regular archive to add, refers to each of its members
//     as "/<name offset>:<member offset>" ([Member.NestedOffset]).
//
// A member that is itself an archive is an ordinary member; [IsArchive] tells
// a caller when to recurse. AIX big archives ("<bigaf>\n") are refused with
// [goffload.ErrUnsupported].
//
// # Example
//
//	f, _ := os.Open("libfoo.a")
//	st, _ := f.Stat()
//	a, err := ar.Open(f, st.Size())
//	for _, m := range a.Members() {
//		r, err := a.Open(m) // an *io.SectionReader over f
//		...
//	}
//	syms, err := a.Symbols()
//
// # Security
//
// The reader is meant for untrusted input. Every size, offset and count read
// from the archive is checked against the archive's size before it is used,
// nothing is allocated from a declared length beyond what the [io.ReaderAt]
// actually returns (a symbol index that claims 2^31 entries in a 100-byte
// member is refused before any allocation), and bad input gives an error (a
// [*goffload.FormatError] saying what is wrong at which byte, matching [goffload.ErrInvalid],
// [goffload.ErrTruncated] or [goffload.ErrUnsupported]), never a panic. The reader is fuzzed
// (FuzzOpen). Open reads every member header, so its time and memory grow
// with the number of members, which is at most the archive's size / 60.
// A long name is kept once however many members refer to it, and the bytes
// of the long names, counted for each member that refers to one, are at most
// 16 times the archive's size plus 1 MiB: more gives [goffload.ErrLimit], so
// that listing or rewriting the members cannot multiply the input. A
// thin archive's member paths are whatever the archive says, including
// absolute paths and "..": an [Opener] given untrusted archives must decide
// itself which files it may open (for example with os.Root, Go 1.24 or
// later).
package ar
