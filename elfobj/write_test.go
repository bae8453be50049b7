package elfobj

import (
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/goffload/goffload"
)

func writeBytes(t *testing.T, o *Object) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	_, err := Write(&buf, o)
	return buf.Bytes(), err
}

func TestWriteRejectsNULInNames(t *testing.T) {
	for _, o := range []*Object{
		{Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64, Symbols: []*Symbol{{Name: "nul\x00inside", Bind: elf.STB_GLOBAL}}},
		{Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64, Sections: []*Section{{Name: ".te\x00xt", Type: elf.SHT_PROGBITS}}},
	} {
		if _, err := writeBytes(t, o); !errors.Is(err, ErrInconsistent) {
			t.Errorf("got %v, want ErrInconsistent", err)
		}
	}
}

// TestZeroWidthRelocationAtEnd: `.reloc ., R_X86_64_NONE, bar` in an empty
// section, as assemblers write it.
func TestZeroWidthRelocationAtEnd(t *testing.T) {
	bar := &Symbol{Name: "bar", Bind: elf.STB_GLOBAL}
	empty := &Section{Name: ".empty", Type: elf.SHT_PROGBITS, Relocs: []Reloc{{Offset: 0, Type: elf.R_X86_64_NONE, Symbol: bar}}}
	o := &Object{Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64, Sections: []*Section{empty}, Symbols: []*Symbol{bar}}
	if _, err := writeBytes(t, o); err != nil {
		t.Fatal(err)
	}
	empty.Relocs[0].Type = elf.R_X86_64_8
	if _, err := writeBytes(t, o); !errors.Is(err, ErrInconsistent) {
		t.Errorf("a 1-byte relocation in an empty section: %v, want ErrInconsistent", err)
	}
}

func TestGroupRules(t *testing.T) {
	text := &Section{Name: ".text.f", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR | elf.SHF_GROUP, Data: []byte{0xc3}}
	sig := &Symbol{Name: "f", Type: elf.STT_FUNC, Bind: elf.STB_WEAK, Section: text, Size: 1}
	group := &Section{Name: ".group", Type: elf.SHT_GROUP, Addralign: 4, Group: &Group{Signature: sig, Flags: GRP_COMDAT, Members: []*Section{text}}}
	o := &Object{Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64, Sections: []*Section{group, text}, Symbols: []*Symbol{sig}}
	data, err := writeBytes(t, o)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if g := f.Section(".group"); g.Entsize != 4 || g.Size != 8 {
		t.Errorf("group entsize %d size %d, want 4 and 8", g.Entsize, g.Size)
	}
	o.Sections = []*Section{text, group}
	if _, err := writeBytes(t, o); !errors.Is(err, ErrInconsistent) {
		t.Errorf("group after its member: %v, want ErrInconsistent", err)
	}
	o.Sections = []*Section{group, text}
	group.Group.Signature = nil
	if _, err := writeBytes(t, o); !errors.Is(err, ErrInconsistent) {
		t.Errorf("group without signature: %v, want ErrInconsistent", err)
	}
}

type zeroReader struct{}

func (zeroReader) ReadAt(p []byte, _ int64) (int, error) { clear(p); return len(p), nil }

// TestWriteStreamsLargeSection writes a 1 GiB section from a reader: the
// memory allocated does not grow with it.
func TestWriteStreamsLargeSection(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1 GiB")
	}
	const size = 1 << 30
	big := &Section{Name: ".llvm.offloading", Type: SHT_LLVM_OFFLOADING, Flags: SHF_EXCLUDE, Addralign: 8, Reader: zeroReader{}, Size: size}
	o := &Object{Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64, Sections: []*Section{big}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	n, err := Write(io.Discard, o)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n < size {
		t.Errorf("wrote %d bytes", n)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
		t.Errorf("allocated %d bytes to stream a %d-byte section", grown, size)
	}
}

func TestForTriple(t *testing.T) {
	for triple, want := range map[string]Object{
		"x86_64-unknown-linux-gnu":      {Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64},
		"aarch64-linux-gnu":             {Data: elf.ELFDATA2LSB, Machine: elf.EM_AARCH64},
		"powerpc64le-unknown-linux-gnu": {Data: elf.ELFDATA2LSB, Machine: elf.EM_PPC64, Flags: 2},
		"powerpc64-unknown-linux-gnu":   {Data: elf.ELFDATA2MSB, Machine: elf.EM_PPC64},
		"riscv64-unknown-linux-gnu":     {Data: elf.ELFDATA2LSB, Machine: elf.EM_RISCV, Flags: 5},
	} {
		o, err := ForTriple(triple)
		if err != nil || o.Data != want.Data || o.Machine != want.Machine || o.Flags != want.Flags {
			t.Errorf("ForTriple(%q) = %+v, %v", triple, o, err)
		}
	}
	if _, err := ForTriple("nvptx64-nvidia-cuda"); err == nil {
		t.Error("ForTriple(nvptx64) succeeded")
	}
}

// TestForTripleRefusesOtherObjectFormats: a host whose objects LLVM makes in
// another format than ELF gets goffload.ErrUnsupported, not an ELF object; an
// environment that names ELF, and the ELF systems, do not.
func TestForTripleRefusesOtherObjectFormats(t *testing.T) {
	for _, c := range []struct {
		triple, format string // format "" for ELF
	}{
		{"x86_64-pc-windows-msvc", "COFF"},
		{"x86_64-w64-windows-gnu", "COFF"},
		{"aarch64-pc-windows-msvc", "COFF"},
		{"x86_64-pc-win32", "COFF"},
		{"x86_64-unknown-uefi", "COFF"},
		{"x86_64-apple-macosx", "Mach-O"},
		{"x86_64-apple-macosx14.0.0", "Mach-O"},
		{"arm64-apple-darwin23.1.0", "Mach-O"},
		{"aarch64-apple-ios17.0", "Mach-O"},
		{"aarch64-apple-xros", "Mach-O"},
		{"powerpc64-ibm-aix7.2", "XCOFF"},
		{"x86_64-unknown-linux-coff", "COFF"},
		{"x86_64-apple-macosx-elf", ""},
		{"x86_64-pc-windows-elf", ""},
		{"x86_64-unknown-linux-gnu", ""},
		{"aarch64-linux-gnu", ""},
		{"x86_64-unknown-freebsd14.0", ""},
		{"riscv64-unknown-linux-musl", ""},
		{"x86_64", ""},
	} {
		o, err := ForTriple(c.triple)
		switch {
		case c.format == "" && err != nil:
			t.Errorf("ForTriple(%q): %v, want an ELF object", c.triple, err)
		case c.format != "" && (o != nil || !errors.Is(err, goffload.ErrUnsupported) || !strings.Contains(err.Error(), c.format+" objects are not written")):
			t.Errorf("ForTriple(%q) = %v, %v; want goffload.ErrUnsupported for %s", c.triple, o, err, c.format)
		}
	}
}
