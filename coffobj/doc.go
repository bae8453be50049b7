// Package coffobj writes, reads and edits relocatable COFF objects in pure
// Go, and reads PE images (executables and DLLs) enough to find their
// sections: the Windows sibling of elfobj, for hosts such as
// x86_64-pc-windows-msvc. It knows nothing of offloading.
//
// # Writing
//
// An [Object] is sections, symbols and relocations as Go values; [Write]
// turns it into a COFF object laid out as LLVM's WinCOFFObjectWriter lays
// one out, for x86-64 ([MachineAMD64]) or AArch64 ([MachineARM64]), with
// relocation types given as [RelocAMD64] or [RelocARM64] values
// (IMAGE_REL_AMD64_ADDR64, IMAGE_REL_ARM64_BRANCH26, ...). The writer makes
// what can be derived: names longer than 8 bytes in the string table
// (section names as "/<offset>"), the aux records of section definitions
// (length, relocation count, LLVM's checksum, COMDAT selection and
// associated section), of weak externals and of .file symbols, and the
// relocation-count overflow record of a section with 65535 or more.
// Contents are bytes or an io.ReaderAt of known size, copied once straight
// to the output. The same Object gives the same bytes, and an Object that
// cannot be right gives an error wrapping [ErrInconsistent] before a byte is
// written.
//
//	o := &coffobj.Object{Machine: coffobj.MachineAMD64}
//	text := &coffobj.Section{Name: ".text", Align: 16, Data: code,
//		Characteristics: coffobj.IMAGE_SCN_CNT_CODE | coffobj.IMAGE_SCN_MEM_EXECUTE | coffobj.IMAGE_SCN_MEM_READ}
//	o.AddSection(text, nil) // and its section definition symbol
//	puts := &coffobj.Symbol{Name: "puts", StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
//	o.Symbols = append(o.Symbols, puts)
//	text.Relocs = []coffobj.Reloc{{Offset: 9, Type: coffobj.IMAGE_REL_AMD64_REL32, Symbol: puts}}
//	_, err := coffobj.Write(w, o)
//
// Sections keep their names as written: the linker groups
// "llvm_offload_entries$OA" ... "$OZ" by the part after `$`, and the
// package leaves that to it. [Directives] makes the `.drectve` section of
// linker options.
//
// # Reading
//
// [Read] reads an object or a PE image from an io.ReaderAt on top of
// debug/pe: sections with their full names, characteristics and alignment
// ([File.Section], [FileSection.Open]; an image's section reads as many
// bytes as its VirtualSize, without the file alignment's padding), the
// symbol table with its aux records and true indices ([File.Symbols]), and
// relocations resolved to their symbols ([File.Relocations]).
//
// # Editing
//
// [File.Object] loads a relocatable object as an Object, keeping every
// section, symbol, aux record and relocation in its order; the contents
// stay in the file and are streamed from it when written. Written back
// unchanged, an object that clang made reads the same in llvm-readobj
// except for file offsets (and its checksums are LLVM's).
//
// # Security
//
// The reader is meant for untrusted input. Before debug/pe reads a file,
// its header, section table, section contents, relocation tables and
// symbol table are checked against the input's size; the bytes of the
// names debug/pe copies (a long name, once per section or symbol that
// names it) are at most 16 times the file's size plus 1 MiB, and the
// relocation records of all sections at most the file's size, beyond which
// [Read] gives [goffload.ErrLimit]. Panics of debug/pe become errors.
// Malformed input gives an error wrapping [goffload.ErrInvalid] (a
// [*goffload.FormatError] with Format "coff" says where), never a panic.
// The reader and the load-and-write path are fuzzed (FuzzRead). Big objects
// (/bigobj) and short import objects are refused with
// [goffload.ErrUnsupported].
package coffobj
