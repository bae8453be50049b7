package main

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

func init() { hostileInputSources = append(hostileInputSources, hostileMachOInputs) }

// hostileMachOInputs builds into dir Mach-O objects built to multiply
// (symbols naming one long string, relocation tables shared by every
// section), one whose __LLVM,__offloading holds a binary cut short, one
// cut short, and a universal file, which goffload does not read.
func hostileMachOInputs(t *testing.T, dir string) []hostileInput {
	t.Helper()
	write := func(o *machoobj.Object) []byte {
		var b bytes.Buffer
		if _, err := machoobj.Write(&b, o); err != nil {
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
	newObject := func() *machoobj.Object {
		return &machoobj.Object{Cpu: machoobj.CpuArm64, Flags: machoobj.MH_SUBSECTIONS_VIA_SYMBOLS}
	}
	var ins []hostileInput

	// An entries section (so that the symbols are read) and 4,000 symbols
	// named by one 256 KiB string: 330 KB, 1 GiB of names.
	o := newObject()
	ents := &machoobj.Section{Seg: "__LLVM", Name: "offload_entries", Align: 8, Data: make([]byte, 56)}
	o.Sections = append(o.Sections, ents)
	name := strings.Repeat("y", 256<<10)
	for range 4000 {
		o.Symbols = append(o.Symbols, &machoobj.Symbol{Name: name, Type: machoobj.N_SECT, Section: ents})
	}
	ins = append(ins, hostileInput{name: "macho-symbols-one-name", path: writeInput(t, dir, "macho-symbols-one-name.o", write(o)), any: true, says: says("over the limit")})

	// 255 sections whose relocation tables are one table of 6,500 records:
	// 73 KB, 13 MB of relocation records.
	o = newObject()
	target := &machoobj.Symbol{Name: "_t", Type: machoobj.N_UNDF | machoobj.N_EXT}
	o.Symbols = append(o.Symbols, target)
	first := &machoobj.Section{Seg: "__DATA", Name: "__data", Align: 8, Data: make([]byte, 8)}
	for range 6500 {
		first.Relocs = append(first.Relocs, machoobj.Reloc{Symbol: target, Type: uint8(macho.ARM64_RELOC_UNSIGNED), Length: 3})
	}
	o.Sections = append(o.Sections, first)
	for range 254 {
		o.Sections = append(o.Sections, &machoobj.Section{Seg: "__DATA", Name: "__data", Align: 1, Data: []byte{}})
	}
	b := write(o)
	const sections = 32 + 72
	reloff := binary.LittleEndian.Uint32(b[sections+56:])
	for i := 1; i < 255; i++ {
		at := sections + 80*i
		binary.LittleEndian.PutUint32(b[at+56:], reloff)
		binary.LittleEndian.PutUint32(b[at+60:], 6500)
	}
	ins = append(ins, hostileInput{name: "macho-shared-relocations", path: writeInput(t, dir, "macho-shared-relocations.o", b), any: true, says: says("over the limit")})

	// A __LLVM,__offloading holding the first 40 bytes of a binary, and an
	// object cut in the middle of its symbol table.
	o = newObject()
	bin := append([]byte{0x10, 0xff, 0x10, 0xad, 1, 0, 0, 0}, make([]byte, 32)...)
	binary.LittleEndian.PutUint64(bin[8:], 4096) // size
	o.Sections = append(o.Sections, &machoobj.Section{Seg: "__LLVM", Name: "__offloading", Align: 8, Data: bin})
	ins = append(ins, hostileInput{name: "macho-binary-cut", path: writeInput(t, dir, "macho-binary-cut.o", write(o)), any: true,
		says: map[string]string{"list": "__LLVM,__offloading", "extract": "__LLVM,__offloading"}})
	o = newObject()
	ents = &machoobj.Section{Seg: "__LLVM", Name: "offload_entries", Align: 8, Data: make([]byte, 56)}
	o.Sections = append(o.Sections, ents)
	for _, n := range []string{"_a_long_symbol_name_one", "_a_long_symbol_name_two"} {
		o.Symbols = append(o.Symbols, &machoobj.Symbol{Name: n, Type: machoobj.N_SECT | machoobj.N_EXT, Section: ents})
	}
	cut := write(o)
	ins = append(ins, hostileInput{name: "macho-cut", path: writeInput(t, dir, "macho-cut.o", cut[:len(cut)-30]), any: true, says: says("mach-o: ")})

	// A section declaring 2^40 bytes, and a binary whose triple leads out
	// of the output folder (extract refuses its name; the others read it).
	o = newObject()
	o.Sections = append(o.Sections, &machoobj.Section{Seg: "__DATA", Name: "__data", Align: 8, Data: make([]byte, 8)})
	b = write(o)
	binary.LittleEndian.PutUint64(b[sections+40:], 1<<40)
	ins = append(ins, hostileInput{name: "macho-huge-section", path: writeInput(t, dir, "macho-huge-section.o", b), any: true, says: says("more than the file's")})
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "/../../escape/x", "y")
	evil, err := offloadbinary.MarshalBinary(release.Default(), &im, []byte("image"))
	if err != nil {
		t.Fatal(err)
	}
	o = newObject()
	o.Sections = append(o.Sections, &machoobj.Section{Seg: "__LLVM", Name: "__offloading", Align: 8, Data: evil})
	ins = append(ins, hostileInput{name: "macho-evil-dotdot", path: writeInput(t, dir, "macho-evil-dotdot.o", write(o)), any: true,
		says: map[string]string{"extract": "not a safe file name", "extract-raw": "not a safe file name"}})

	// A universal file of two architectures, which no command reads.
	fat := []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2}
	fat = append(fat, make([]byte, 40)...)
	ins = append(ins, hostileInput{name: "macho-universal", path: writeInput(t, dir, "macho-universal", fat), any: true, says: says("universal")})
	return ins
}
