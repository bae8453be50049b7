package main

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/goffload/goffload/coffobj"
)

func init() { hostileInputSources = append(hostileInputSources, hostileCOFFInputs) }

// hostileCOFFInputs builds into dir COFF objects built to multiply through
// what debug/pe copies (long names named by many sections or symbols,
// relocation tables shared by every section), one cut short, and one whose
// .llvm.offloading holds a binary cut short. The commands that read them
// through fatobj refuse the first ones with the bound's message.
func hostileCOFFInputs(t *testing.T, dir string) []hostileInput {
	t.Helper()
	write := func(name string, o *coffobj.Object) []byte {
		var b bytes.Buffer
		if _, err := coffobj.Write(&b, o); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	readers := []string{"list", "list-json", "list-23", "check", "check-json", "extract", "extract-raw", "extract-23"}
	says := func(msg string) map[string]string {
		m := map[string]string{}
		for _, c := range readers {
			m[c] = msg
		}
		return m
	}
	var ins []hostileInput
	data := coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ

	// 8,000 sections named by one 64 KiB string: 390 KB, whose names
	// debug/pe copies for each section (512 MiB).
	o := &coffobj.Object{Machine: coffobj.MachineAMD64}
	name := strings.Repeat("s", 64<<10)
	for range 8000 {
		o.Sections = append(o.Sections, &coffobj.Section{Name: name, Characteristics: data})
	}
	ins = append(ins, hostileInput{name: "coff-sections-one-name", path: writeInput(t, dir, "coff-sections-one-name.obj", write("", o)), any: true, says: says("over the limit")})

	// 4,000 symbols named by one 256 KiB string: 330 KB (1 GiB copied).
	o = &coffobj.Object{Machine: coffobj.MachineAMD64}
	text := &coffobj.Section{Name: ".text", Characteristics: coffobj.IMAGE_SCN_CNT_CODE | coffobj.IMAGE_SCN_MEM_EXECUTE | coffobj.IMAGE_SCN_MEM_READ, Data: []byte{0xc3}}
	o.AddSection(text, nil)
	sym := strings.Repeat("y", 256<<10)
	for range 4000 {
		o.Symbols = append(o.Symbols, &coffobj.Symbol{Name: sym, Section: text, StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC})
	}
	ins = append(ins, hostileInput{name: "coff-symbols-one-name", path: writeInput(t, dir, "coff-symbols-one-name.obj", write("", o)), any: true, says: says("over the limit")})

	// 8,000 sections whose relocation tables are one table of 6,500
	// records: 385 KB, 520 MB of relocation records.
	o = &coffobj.Object{Machine: coffobj.MachineAMD64}
	target := &coffobj.Symbol{Name: "t", StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
	o.Symbols = append(o.Symbols, target)
	first := &coffobj.Section{Name: ".data", Characteristics: data, Data: make([]byte, 8)}
	for range 6500 {
		first.Relocs = append(first.Relocs, coffobj.Reloc{Offset: 0, Type: coffobj.IMAGE_REL_AMD64_ADDR64, Symbol: target})
	}
	o.Sections = append(o.Sections, first)
	for range 7999 {
		o.Sections = append(o.Sections, &coffobj.Section{Name: ".data", Characteristics: data})
	}
	b := write("", o)
	ptr := binary.LittleEndian.Uint32(b[20+24:])
	for i := 1; i < 8000; i++ {
		at := 20 + 40*i
		binary.LittleEndian.PutUint32(b[at+24:], ptr)
		binary.LittleEndian.PutUint16(b[at+32:], 6500)
	}
	ins = append(ins, hostileInput{name: "coff-shared-relocations", path: writeInput(t, dir, "coff-shared-relocations.obj", b), any: true, says: says("over the limit")})

	// A .llvm.offloading holding the first 40 bytes of a binary, and an
	// object cut in the middle of its symbol table.
	o = &coffobj.Object{Machine: coffobj.MachineAMD64}
	bin := append([]byte{0x10, 0xff, 0x10, 0xad, 1, 0, 0, 0}, make([]byte, 32)...)
	binary.LittleEndian.PutUint64(bin[8:], 4096) // size
	o.AddSection(&coffobj.Section{Name: ".llvm.offloading", Characteristics: coffobj.IMAGE_SCN_LNK_REMOVE | coffobj.IMAGE_SCN_MEM_DISCARDABLE, Align: 8, Data: bin}, nil)
	ins = append(ins, hostileInput{name: "coff-binary-cut", path: writeInput(t, dir, "coff-binary-cut.obj", write("", o)), any: true,
		says: map[string]string{"list": ".llvm.offloading", "extract": ".llvm.offloading"}})
	cut := write("", sample1())
	ins = append(ins, hostileInput{name: "coff-cut", path: writeInput(t, dir, "coff-cut.obj", cut[:len(cut)-30]), any: true, says: says("coff: ")})
	return ins
}

// sample1 is a small object with a symbol table and long names.
func sample1() *coffobj.Object {
	o := &coffobj.Object{Machine: coffobj.MachineAMD64}
	s := &coffobj.Section{Name: "a_long_section_name", Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA, Data: make([]byte, 16)}
	o.AddSection(s, nil)
	for _, n := range []string{"a_long_symbol_name_one", "a_long_symbol_name_two"} {
		o.Symbols = append(o.Symbols, &coffobj.Symbol{Name: n, Section: s, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL})
	}
	return o
}
