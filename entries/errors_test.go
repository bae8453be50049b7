package entries

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/release"
)

// entriesObject writes a relocatable x86-64 object with an entries section
// named section holding data and a .rodata holding rodata, then sets its
// e_machine to m; the name pointer of the first entry (at nameAt in the
// section) is relocated to .rodata+addend unless addend is negative. It
// returns the object's bytes and the file offset of the entries section.
func entriesObject(t *testing.T, m elf.Machine, section string, data []byte, nameAt uint64, rodata []byte, addend int64) ([]byte, int64) {
	t.Helper()
	ro := &elfobj.Section{Name: ".rodata", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addralign: 1, Data: rodata}
	sec := &elfobj.Section{Name: section, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Data: data}
	name := &elfobj.Symbol{Name: ".str", Type: elf.STT_OBJECT, Bind: elf.STB_LOCAL, Section: ro}
	if addend >= 0 {
		sec.Relocs = []elfobj.Reloc{{Offset: nameAt, Type: elf.R_X86_64_64, Symbol: name, Addend: addend}}
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, &elfobj.Object{Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64, Sections: []*elfobj.Section{ro, sec}, Symbols: []*elfobj.Symbol{name}}); err != nil {
		t.Fatal(err)
	}
	f, err := elfobj.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	binary.LittleEndian.PutUint16(out[18:], uint16(m))
	return out, int64(f.Section(section).Offset)
}

func readEntriesOf(t *testing.T, obj []byte) error {
	t.Helper()
	f, err := elfobj.Read(bytes.NewReader(obj), int64(len(obj)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Read(f, release.Default())
	return err
}

// TestMalformedEntriesGiveFormatErrorsAtTheirByteInTheFile: every error about
// the entries is a FormatError of "offload entries" naming the section once,
// at its offset in the ELF file (not in the section), matching the kind's
// sentinel.
func TestMalformedEntriesGiveFormatErrorsAtTheirByteInTheFile(t *testing.T) {
	const legacy, v1 = "omp_offloading_entries", "llvm_offload_entries"
	str := []byte("__omp_offloading_f\x00")
	type obj struct {
		m       elf.Machine
		section string
		data    []byte
		nameAt  uint64
		rodata  []byte
		addend  int64
	}
	for _, c := range []struct {
		name string
		obj  obj
		at   int64 // in the section
		is   error // besides goffload.ErrInvalid; nil for none
		says string
	}{
		{"legacy section cut inside its second entry is truncated at that entry", obj{elf.EM_X86_64, legacy, make([]byte, 40), 8, str, 0}, 32, goffload.ErrTruncated, "entry 1 cut to 8 of 32 bytes"},
		{"v1 section cut inside its first entry is truncated at it", obj{elf.EM_X86_64, v1, make([]byte, 50), 24, str, 0}, 0, goffload.ErrTruncated, "entry 0 cut to 50 of 56 bytes"},
		{"a machine without relocation rules is unsupported, at e_machine", obj{elf.EM_NONE, legacy, make([]byte, 32), 8, str, 0}, -1, goffload.ErrUnsupported, "EM_NONE"},
		{"a name pointer without relocation is invalid, at the pointer", obj{elf.EM_X86_64, legacy, make([]byte, 32), 8, str, -1}, 8, nil, "entry 0 name pointer"},
		{"a name past the end of its section is invalid, at the pointer", obj{elf.EM_X86_64, v1, make([]byte, 56), 24, str, 100}, 24, nil, "past the end"},
		{"a name without its NUL is invalid, at the pointer", obj{elf.EM_X86_64, legacy, make([]byte, 32), 8, []byte("abc"), 0}, 8, nil, "not NUL-terminated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.obj
			in, secAt := entriesObject(t, o.m, o.section, o.data, o.nameAt, o.rodata, o.addend)
			err := readEntriesOf(t, in)
			var fe *goffload.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) holds no *goffload.FormatError", err, err)
			}
			t.Log(err)
			want := secAt + c.at
			if c.at < 0 {
				want = 18 // e_machine
			}
			if fe.Format != "offload entries" || fe.Offset != want {
				t.Errorf("%v: Format %q at %#x, want \"offload entries\" at %#x", err, fe.Format, fe.Offset, want)
			}
			if !errors.Is(err, goffload.ErrInvalid) || c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%v does not match goffload.ErrInvalid and %v", err, c.is)
			}
			if c.is == nil && (errors.Is(err, goffload.ErrTruncated) || errors.Is(err, goffload.ErrUnsupported)) {
				t.Errorf("%v matches a sentinel of another kind", err)
			}
			msg := err.Error()
			if n := strings.Count(msg, "offload entries"); n != 1 {
				t.Errorf("%q says offload entries %d times", msg, n)
			}
			if !strings.Contains(msg, c.says) || c.at >= 0 && !strings.Contains(msg, `"`+o.section+`"`) {
				t.Errorf("%q does not say %q and name the section", msg, c.says)
			}
		})
	}
}

// TestErrorsOfTheELFFileStayElfobjs: a relocation that names no symbol of
// the table is the ELF file's error, an "elf" FormatError at its byte.
func TestErrorsOfTheELFFileStayElfobjs(t *testing.T) {
	in, _ := entriesObject(t, elf.EM_X86_64, "omp_offloading_entries", make([]byte, 32), 8, []byte("f\x00"), 0)
	f, err := elfobj.Read(bytes.NewReader(in), int64(len(in)))
	if err != nil {
		t.Fatal(err)
	}
	rela := f.Section(".relaomp_offloading_entries")
	if rela == nil {
		t.Fatal("no relocation section")
	}
	in = bytes.Clone(in)
	binary.LittleEndian.PutUint32(in[rela.Offset+12:], 99) // the symbol of r_info
	err = readEntriesOf(t, in)
	var fe *goffload.FormatError
	if !errors.As(err, &fe) || fe.Format != "elf" || fe.Offset != int64(rela.Offset) || !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("%v: want an \"elf\" FormatError at %#x", err, rela.Offset)
	}
}
