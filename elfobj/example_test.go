package elfobj_test

import (
	"bytes"
	"debug/elf"
	"fmt"

	"github.com/goffload/goffload/elfobj"
)

// Write an x86-64 object whose .data holds a pointer to 16 bytes past an
// undefined symbol, and read it back with debug/elf.
func ExampleWrite() {
	data := &elfobj.Section{Name: ".data", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Data: make([]byte, 8)}
	ptr := &elfobj.Symbol{Name: "ptr", Type: elf.STT_OBJECT, Bind: elf.STB_GLOBAL, Section: data, Size: 8}
	table := &elfobj.Symbol{Name: "table", Bind: elf.STB_GLOBAL} // undefined
	data.Relocs = []elfobj.Reloc{{Offset: 0, Type: elf.R_X86_64_64, Symbol: table, Addend: 16}}
	o := &elfobj.Object{
		Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64,
		Sections: []*elfobj.Section{data},
		Symbols:  []*elfobj.Symbol{ptr, table},
	}

	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		panic(err)
	}
	f, err := elf.NewFile(bytes.NewReader(buf.Bytes()))
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Class, f.Type, f.Machine)
	for _, s := range f.Sections[1:] {
		fmt.Printf("section %-10s %-12v size %2d link %d info %d\n", s.Name, s.Type, s.Size, s.Link, s.Info)
	}
	syms, _ := f.Symbols()
	for _, s := range syms {
		fmt.Printf("symbol %-5s %v %v section %v size %d\n", s.Name, elf.ST_BIND(s.Info), elf.ST_TYPE(s.Info), s.Section, s.Size)
	}
	rela, _ := f.Section(".rela.data").Data()
	info := f.ByteOrder.Uint64(rela[8:])
	fmt.Printf("relocation at %d: %v %s%+d\n", f.ByteOrder.Uint64(rela), elf.R_X86_64(info&0xffffffff),
		syms[info>>32-1].Name, int64(f.ByteOrder.Uint64(rela[16:])))
	// Output:
	// ELFCLASS64 ET_REL EM_X86_64
	// section .data      SHT_PROGBITS size  8 link 0 info 0
	// section .rela.data SHT_RELA     size 24 link 3 info 1
	// section .symtab    SHT_SYMTAB   size 72 link 4 info 1
	// section .strtab    SHT_STRTAB   size 11 link 0 info 0
	// section .shstrtab  SHT_STRTAB   size 38 link 0 info 0
	// symbol ptr   STB_GLOBAL STT_OBJECT section SHN_UNDEF+1 size 8
	// symbol table STB_GLOBAL STT_NOTYPE section SHN_UNDEF size 0
	// relocation at 0: R_X86_64_64 table+16
}
