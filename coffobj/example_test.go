package coffobj_test

import (
	"bytes"
	"fmt"

	"github.com/goffload/goffload/coffobj"
)

// Write an object whose .text calls puts, and read it back.
func Example() {
	o := &coffobj.Object{Machine: coffobj.MachineAMD64}
	text := &coffobj.Section{Name: ".text", Align: 16,
		Characteristics: coffobj.IMAGE_SCN_CNT_CODE | coffobj.IMAGE_SCN_MEM_EXECUTE | coffobj.IMAGE_SCN_MEM_READ,
		// sub $40,%rsp; call puts; add $40,%rsp; ret
		Data: []byte{0x48, 0x83, 0xec, 0x28, 0xe8, 0, 0, 0, 0, 0x48, 0x83, 0xc4, 0x28, 0xc3}}
	o.AddSection(text, nil)
	puts := &coffobj.Symbol{Name: "puts", Type: 0x20, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
	main := &coffobj.Symbol{Name: "main", Section: text, Type: 0x20, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
	o.Symbols = append(o.Symbols, main, puts)
	text.Relocs = []coffobj.Reloc{{Offset: 5, Type: coffobj.IMAGE_REL_AMD64_REL32, Symbol: puts}}

	var b bytes.Buffer
	if _, err := coffobj.Write(&b, o); err != nil {
		fmt.Println(err)
		return
	}
	f, err := coffobj.Read(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		fmt.Println(err)
		return
	}
	syms, _ := f.Symbols()
	for _, s := range f.Sections {
		rels, _ := f.Relocations(s)
		for _, r := range rels {
			fmt.Printf("%s+%d: %v %s\n", s.Name, r.Offset, coffobj.RelocTypeOf(f.Machine, r.Type), r.Symbol.Name)
		}
	}
	for _, s := range syms {
		fmt.Println(s.Index, s.Name, s.StorageClass)
	}
	// Output:
	// .text+5: IMAGE_REL_AMD64_REL32 puts
	// 0 .text IMAGE_SYM_CLASS_STATIC
	// 2 main IMAGE_SYM_CLASS_EXTERNAL
	// 3 puts IMAGE_SYM_CLASS_EXTERNAL
}
