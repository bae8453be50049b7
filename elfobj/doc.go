// Package elfobj writes, reads and edits ELF64 relocatable objects in pure Go:
// the layer under the registration objects, entry tables and fat objects of
// this module. It knows nothing of offloading.
//
// # Writing
//
// An [Object] is sections, symbols and relocations as Go values; [Write]
// turns it into an ET_REL file for x86-64, AArch64, ppc64 (either byte order)
// or riscv64, with relocation types given as debug/elf values
// (elf.R_X86_64_PC32, elf.R_AARCH64_CALL26, ...). The writer makes what can
// be derived: the symbol table with the locals first and sh_info right, string
// tables whose strings share suffixes, a `.rela<name>` section for each
// section with relocations, group and address-significance contents. Section
// contents are bytes or an io.ReaderAt of known size, copied once straight to
// the output: a 2 GiB image needs no more memory than a 2 KiB one. The same
// Object gives the same bytes, and an Object that cannot be right (a
// relocation outside its section, a symbol in a section that is not in the
// object, an alignment that is not a power of two) gives an error wrapping
// [ErrInconsistent] instead of a broken file.
//
//	text := &elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS,
//		Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 16, Data: code}
//	puts := &elfobj.Symbol{Name: "puts", Bind: elf.STB_GLOBAL}
//	text.Relocs = []elfobj.Reloc{{Offset: 9, Type: elf.R_X86_64_PLT32, Symbol: puts, Addend: -4}}
//	o := &elfobj.Object{Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64,
//		Sections: []*elfobj.Section{text}, Symbols: []*elfobj.Symbol{puts}}
//	_, err := elfobj.Write(w, o)
//
// # Reading
//
// [Read] reads an ET_REL, ET_EXEC or ET_DYN file from an io.ReaderAt on top of
// debug/elf: sections by name and type, symbols with their true indices (the
// null symbol included, which debug/elf drops), relocations resolved to their
// symbols, and the dynamic relocations and needed libraries ([File.Needed])
// of linked files.
//
// # Editing
//
// [File.Object] loads a relocatable object as an Object, keeping every
// section, symbol, relocation and group in its order; the contents that are
// not remade stay in the file and are streamed from it when written. Sections
// can then be added, replaced or removed ([Object.RemoveSection] takes what
// belongs to a section with it), and sections and symbols renamed
// ([Object.RenameSection], [Object.RenameSymbols]); [Write] remaps every index.
// Written back unchanged, an object compiled by gcc or clang reads the same in
// llvm-readelf except for file offsets.
//
// # Security
//
// The reader is meant for untrusted input. Panics of debug/elf's
// elf.NewFile become errors (and only those: a bug of this package still
// panics); every size, offset and index read from the file is checked before it
// is used, and nothing is allocated beyond the size of the input for it.
// Malformed input gives an error wrapping [goffload.ErrInvalid] (a [*goffload.FormatError] says
// where), never a panic. The reader and the load-and-write path are fuzzed
// (FuzzRead). Writing an object loaded from untrusted input writes at most 64
// KiB of padding per section, whatever alignment the input declares.
// Symbol and DT_NEEDED names share one copy of their string table and are
// looked up once per offset; their bytes, counted for each symbol or tag
// that names them, are at most 16 times the file's size plus 1 MiB, beyond
// which [File.Symbols], [File.DynamicSymbols] and [File.Needed] give
// [goffload.ErrLimit] (4000 symbols naming one 256 KiB string are refused).
// [File.SectionAt] finds a section by address in log n, however many
// sections there are and however they overlap. Section names, which
// debug/elf copies for each section, count against the same budget, checked
// before debug/elf reads them: 8000 sections naming one 64 KiB string give
// [goffload.ErrLimit] from [Read].
package elfobj
