// Package machoobj writes, reads and edits 64-bit Mach-O objects in pure
// Go: the sibling of elfobj and coffobj for Apple hosts
// (x86_64-apple-macosx10.15.0, arm64-apple-macos). It knows nothing of
// offloading.
//
// # Writing
//
// An [Object] is sections, symbols and relocations as Go values; [Write]
// turns it into a relocatable object (MH_OBJECT) laid out as LLVM's
// MachObjectWriter lays one out, for x86-64 ([CpuAmd64]) or arm64
// ([CpuArm64]): one unnamed segment holding every section, each section at
// the address LLVM gives it (those with bytes first, in order, each at its
// alignment, then the zero-fill ones), the deployment target
// ([ForTriple] makes it from a triple as llc does), the data-in-code
// records and linker optimization hints, the symbol table with locals
// first and the external symbols sorted by name, and LLVM's string table.
// Contents are bytes or an io.ReaderAt of known size, copied once straight
// to the output. The same Object gives the same bytes, and an Object that
// cannot be right gives an error wrapping [ErrInconsistent] before a byte
// is written.
//
//	o, _ := machoobj.ForTriple("arm64-apple-macos11")
//	data := &machoobj.Section{Seg: "__DATA", Name: "__data", Align: 8, Data: b}
//	o.Sections = append(o.Sections, data)
//	o.Symbols = append(o.Symbols, &machoobj.Symbol{Name: "_table", Type: machoobj.N_SECT | machoobj.N_EXT, Section: data})
//	_, err := machoobj.Write(w, o)
//
// Mach-O objects lay their sections out in one address space, and their
// bytes hold addresses: a section-relative relocation's field holds the
// target's address, and x86-64's __eh_frame points to the code it
// describes with pc-relative values no relocation names. When a section
// moves (a section added in the middle, one that grows), Write corrects
// those bytes from each section's [Section.Base], the address they were
// computed for; [Addresses] gives a builder the addresses Write will use.
//
// # Reading
//
// [Read] reads a 64-bit little-endian Mach-O file, an object or a linked
// image, from an io.ReaderAt: every load command checked against the
// file's size before anything else is read, the sections of every segment
// ([File.Section], [FileSection.Open]), the symbol table ([File.Symbols]),
// relocations ([File.Relocations]), data-in-code records and hints.
// [IsMachO] recognises any Mach-O file by its first bytes; 32-bit,
// big-endian and universal files are refused with an error matching
// goffload.ErrUnsupported.
//
// # Editing
//
// [File.Object] loads a relocatable object as an Object, keeping every
// section, symbol, relocation, data-in-code record, hint and indirect
// symbol in its order; the contents stay in the file and are streamed from
// it when written. Written back unchanged, an object that clang or llc
// made is the same file, byte for byte.
//
// # Security
//
// The reader is meant for untrusted input. Sizes and offsets are checked
// before use, and malformed input gives a *goffload.FormatError (format
// "mach-o", with the offset of the field at fault), never a panic.
// Relocation tables that sections share are refused once they would read
// more records than the file holds (goffload.ErrLimit); the symbols' names
// handed out, each counted every time a symbol names it, are at most 16
// times the file's size plus 1 MiB ([File.Referenced]); data-in-code
// records and hints are placed in O(log n) of the sections.
package machoobj
