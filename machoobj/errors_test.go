package machoobj_test

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/machoobj"
)

// sample is a small object: code with a relocation, data, a symbol table.
func sample(t testing.TB) []byte {
	t.Helper()
	o, err := machoobj.ForTriple("x86_64-apple-macosx10.15.0")
	if err != nil {
		t.Fatal(err)
	}
	text := &machoobj.Section{Seg: "__TEXT", Name: "__text", Align: 16, Flags: machoobj.S_ATTR_PURE_INSTRUCTIONS, Data: []byte{0xe8, 0, 0, 0, 0, 0xc3}}
	data := &machoobj.Section{Seg: "__DATA", Name: "__data", Align: 8, Data: make([]byte, 8)}
	o.Sections = []*machoobj.Section{text, data}
	f := &machoobj.Symbol{Name: "_f", Type: machoobj.N_SECT | machoobj.N_EXT, Section: text}
	g := &machoobj.Symbol{Name: "_g", Type: machoobj.N_UNDF | machoobj.N_EXT}
	o.Symbols = []*machoobj.Symbol{f, g}
	text.Relocs = []machoobj.Reloc{{Offset: 1, Symbol: g, Type: uint8(macho.X86_64_RELOC_BRANCH), PCRel: true, Length: 2}}
	data.Relocs = []machoobj.Reloc{{Offset: 0, Section: text, Type: uint8(macho.X86_64_RELOC_UNSIGNED), Length: 3}}
	var b bytes.Buffer
	if _, err := machoobj.Write(&b, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestReadMalformed: each corrupted field gives a FormatError of the
// right kind at the field's offset, before anything else is read.
func TestReadMalformed(t *testing.T) {
	good := sample(t)
	le := binary.LittleEndian
	const sect0 = 32 + 72 // the first section header
	for _, c := range []struct {
		name string
		edit func(b []byte) []byte
		off  int64
		is   []error
	}{
		{"empty", func(b []byte) []byte { return nil }, 0, []error{goffload.ErrTruncated}},
		{"32-bit", func(b []byte) []byte { le.PutUint32(b, 0xfeedface); return b }, 0, []error{goffload.ErrUnsupported}},
		{"big-endian", func(b []byte) []byte { le.PutUint32(b, 0xcffaedfe); return b }, 0, []error{goffload.ErrUnsupported}},
		{"universal", func(b []byte) []byte { copy(b, []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 1}); return b }, 0, []error{goffload.ErrUnsupported}},
		{"sizeofcmds", func(b []byte) []byte { le.PutUint32(b[20:], 1<<20); return b }, 20, []error{goffload.ErrTruncated}},
		{"ncmds", func(b []byte) []byte { le.PutUint32(b[16:], 1000); return b }, 16, nil},
		{"cmdsize", func(b []byte) []byte { le.PutUint32(b[36:], 7); return b }, 36, nil},
		{"nsects", func(b []byte) []byte { le.PutUint32(b[32+64:], 3); return b }, 32 + 64, nil},
		{"section offset", func(b []byte) []byte { le.PutUint32(b[sect0+48:], 1<<30); return b }, sect0 + 48, []error{goffload.ErrTruncated}},
		{"section size", func(b []byte) []byte { le.PutUint64(b[sect0+40:], 1<<40); return b }, sect0 + 40, []error{goffload.ErrTruncated}},
		{"relocations", func(b []byte) []byte { le.PutUint32(b[sect0+60:], 1<<20); return b }, sect0 + 56, []error{goffload.ErrTruncated}},
		{"align", func(b []byte) []byte { le.PutUint32(b[sect0+52:], 40); return b }, sect0 + 52, nil},
		{"cut", func(b []byte) []byte { return b[:len(b)-20] }, -2, []error{goffload.ErrTruncated}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.edit(bytes.Clone(good))
			_, err := machoobj.Read(bytes.NewReader(b), int64(len(b)))
			if c.off == -2 {
				// The string table's end is missing: LC_SYMTAB says so.
				if !errors.Is(err, goffload.ErrTruncated) {
					t.Fatalf("Read: %v, want ErrTruncated", err)
				}
				return
			}
			tooltest.CheckFormatError(t, err, "mach-o", c.off, c.is...)
		})
	}
}

// TestSymbolsAndRelocationsChecked: a symbol's n_strx or n_sect out of
// range, or a relocation's symbol, is a FormatError of Symbols and
// Relocations.
func TestSymbolsAndRelocationsChecked(t *testing.T) {
	good := sample(t)
	f, err := machoobj.Read(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Symbols(); err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Sections {
		if _, err := f.Relocations(s); err != nil {
			t.Fatal(err)
		}
	}
	// The symbol table is at the end, before the string table: find it
	// from LC_SYMTAB.
	var symoff, stroff uint32
	for _, l := range f.Loads {
		if l.Cmd == machoobj.LC_SYMTAB {
			symoff, stroff = binary.LittleEndian.Uint32(good[l.Offset+8:]), binary.LittleEndian.Uint32(good[l.Offset+16:])
		}
	}
	_ = stroff
	for _, c := range []struct {
		name string
		edit func(b []byte)
	}{
		{"n_strx", func(b []byte) { binary.LittleEndian.PutUint32(b[symoff:], 1<<20) }},
		{"n_sect", func(b []byte) { b[symoff+5] = 9 }},
	} {
		b := bytes.Clone(good)
		c.edit(b)
		f, err := machoobj.Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Symbols(); !errors.Is(err, goffload.ErrInvalid) {
			t.Errorf("%s: Symbols: %v, want a FormatError", c.name, err)
		}
	}
	b := bytes.Clone(good)
	reloff := f.Sections[0].Reloff
	binary.LittleEndian.PutUint32(b[reloff+4:], binary.LittleEndian.Uint32(b[reloff+4:])|0xffffff)
	f, err = machoobj.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Relocations(f.Sections[0]); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("relocation symbol: %v, want a FormatError", err)
	}
}

// TestWriteRefusesInconsistent: what cannot be written is refused before a
// byte is.
func TestWriteRefusesInconsistent(t *testing.T) {
	sec := &machoobj.Section{Seg: "__DATA", Name: "__data", Align: 8, Data: make([]byte, 8)}
	other := &machoobj.Section{Seg: "__DATA", Name: "__other", Align: 8, Data: make([]byte, 8)}
	for _, c := range []struct {
		name string
		o    *machoobj.Object
	}{
		{"cpu", &machoobj.Object{Cpu: 7}},
		{"align", &machoobj.Object{Cpu: machoobj.CpuArm64, Sections: []*machoobj.Section{{Seg: "__DATA", Name: "__x", Align: 3}}}},
		{"symbol elsewhere", &machoobj.Object{Cpu: machoobj.CpuArm64, Sections: []*machoobj.Section{sec},
			Symbols: []*machoobj.Symbol{{Name: "_x", Type: machoobj.N_SECT, Section: other}}}},
		{"relocation past the section", &machoobj.Object{Cpu: machoobj.CpuArm64, Sections: []*machoobj.Section{{Seg: "__DATA", Name: "__d", Align: 8, Data: make([]byte, 8),
			Relocs: []machoobj.Reloc{{Offset: 4, Num: 0, Type: uint8(macho.ARM64_RELOC_UNSIGNED), Length: 3}}}}}},
		{"name", &machoobj.Object{Cpu: machoobj.CpuArm64, Sections: []*machoobj.Section{{Seg: "__DATA", Name: "__a_name_of_17_by", Align: 1}}}},
	} {
		var b bytes.Buffer
		if _, err := machoobj.Write(&b, c.o); !errors.Is(err, machoobj.ErrInconsistent) || b.Len() != 0 {
			t.Errorf("%s: %v, %d bytes written; want ErrInconsistent and nothing", c.name, err, b.Len())
		}
	}
}
