package elfobj

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
)

// manySections returns an object of n sections besides the null one: n-4
// one-byte sections .s0..., then what the writer adds, with a global symbol
// in the last and the first section and a relocation against the last.
func manySections(t *testing.T, n int) ([]byte, *Object) {
	t.Helper()
	o, err := ForTriple("x86_64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	var first, last *Section
	for i := range n - 4 {
		s := &Section{Name: fmt.Sprintf(".s%d", i), Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addralign: 1, Data: []byte{byte(i)}}
		o.AddSection(s, false)
		if i == 0 {
			first = s
		}
		last = s
	}
	hi := &Symbol{Name: "high", Type: elf.STT_OBJECT, Bind: elf.STB_GLOBAL, Section: last, Size: 1}
	lo := &Symbol{Name: "low", Type: elf.STT_OBJECT, Bind: elf.STB_GLOBAL, Section: first, Size: 1}
	o.Symbols = append(o.Symbols, hi, lo)
	data := &Section{Name: ".data.ref", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Data: make([]byte, 8)}
	data.Relocs = []Reloc{{Offset: 0, Type: elf.R_X86_64_64, Symbol: hi}}
	o.AddSection(data, false)
	var b bytes.Buffer
	if _, err := Write(&b, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), o
}

// TestExtendedSectionIndices: an object of more sections than st_shndx and
// e_shnum hold is written with extended numbering (e_shnum 0 and the count
// in section 0, SHN_XINDEX and SHT_SYMTAB_SHNDX), read back with each
// symbol's true section, loaded and written again the same; llvm-readelf-22
// reads it as the writer meant. An object of fewer sections has no
// SHT_SYMTAB_SHNDX.
func TestExtendedSectionIndices(t *testing.T) {
	const n = 66000
	data, _ := manySections(t, n)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sections) < n || len(f.SectionsByType(elf.SHT_SYMTAB_SHNDX)) != 1 || binary.LittleEndian.Uint16(data[60:]) != 0 {
		t.Fatalf("%d sections, %d SHT_SYMTAB_SHNDX, e_shnum %d", len(f.Sections), len(f.SectionsByType(elf.SHT_SYMTAB_SHNDX)), binary.LittleEndian.Uint16(data[60:]))
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]FileSymbol{}
	for _, s := range syms {
		found[s.Name] = s
	}
	if hi := found["high"]; !hi.XIndex || f.Sections[hi.Section].Name != fmt.Sprintf(".s%d", n-5) {
		t.Errorf("high: %+v, in %q", hi, f.Sections[min(int(hi.Section), len(f.Sections)-1)].Name)
	}
	if lo := found["low"]; lo.XIndex || f.Sections[lo.Section].Name != ".s0" {
		t.Errorf("low: %+v", lo)
	}
	// Loaded and written again (laid out as the first was): the same
	// bytes.
	o, err := f.Object()
	if err != nil {
		t.Fatal(err)
	}
	o.AssemblerLayout = true
	var again bytes.Buffer
	if _, err := Write(&again, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), data) {
		t.Errorf("written again: %d bytes, not the %d read", again.Len(), len(data))
	}
	small, _ := manySections(t, 100)
	if sf, err := Read(bytes.NewReader(small), int64(len(small))); err != nil || len(sf.SectionsByType(elf.SHT_SYMTAB_SHNDX)) != 0 {
		t.Errorf("100 sections: %v, %d SHT_SYMTAB_SHNDX", err, len(sf.SectionsByType(elf.SHT_SYMTAB_SHNDX)))
	}

	readelf := tooltest.Tool(t, "llvm-readelf", 22)
	path := filepath.Join(t.TempDir(), "many.o")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(readelf, "-h", "-s", "-r", path).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, tooltest.Clip(out))
	}
	text := string(out)
	if !strings.Contains(text, fmt.Sprintf("Number of section headers:         0 (%d)", len(f.Sections))) ||
		!regexp.MustCompile(fmt.Sprintf(`(?m)\s%d high$`, f.Sections[found["high"].Section].Index)).MatchString(text) ||
		!regexp.MustCompile(`(?m)R_X86_64_64\s+0+ high \+ 0$`).MatchString(text) || strings.Contains(text, "warning") {
		t.Errorf("llvm-readelf-22 reads otherwise:\n%s", tooltest.Clip(out))
	}
}

// TestExtendedSectionIndicesMalformed: a symbol whose st_shndx is SHN_XINDEX
// with no SHT_SYMTAB_SHNDX, or one too short, or an extended index past the
// sections, is a FormatError, never a panic or a wrong section.
func TestExtendedSectionIndicesMalformed(t *testing.T) {
	data, _ := manySections(t, 66000)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	x := f.SectionsByType(elf.SHT_SYMTAB_SHNDX)[0]
	for name, mend := range map[string]func(b []byte){
		"no table": func(b []byte) { // its type made SHT_PROGBITS
			binary.LittleEndian.PutUint32(b[f.headerField(x.Index, shdrType):], uint32(elf.SHT_PROGBITS))
		},
		"short table": func(b []byte) { binary.LittleEndian.PutUint64(b[f.headerField(x.Index, 32):], 4) },
		"index past the sections": func(b []byte) {
			for i := int(x.Offset) + 4; i+4 <= int(x.Offset+x.FileSize); i += 4 {
				if binary.LittleEndian.Uint32(b[i:]) != 0 {
					binary.LittleEndian.PutUint32(b[i:], 0x7fffffff)
				}
			}
		},
	} {
		b := bytes.Clone(data)
		mend(b)
		g, err := Read(bytes.NewReader(b), int64(len(b)))
		if err == nil {
			_, err = g.Symbols()
		}
		var fe *goffload.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, goffload.ErrInvalid) {
			t.Errorf("%s: %v, want a FormatError", name, err)
		}
	}
}
