package elfobj

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/goffload/goffload"
)

// relocObject writes an x86-64 object whose .text has one relocation against
// a global symbol, and reads it back.
func relocObject(t *testing.T) ([]byte, *File) {
	t.Helper()
	text := &Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 16, Data: make([]byte, 16)}
	sym := &Symbol{Name: "target", Type: elf.STT_FUNC, Bind: elf.STB_GLOBAL}
	text.Relocs = []Reloc{{Offset: 8, Type: elf.R_X86_64_64, Symbol: sym}}
	var buf bytes.Buffer
	if _, err := Write(&buf, &Object{Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64, Sections: []*Section{text}, Symbols: []*Symbol{sym}}); err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), f
}

// patch returns a copy of b with v written at off.
func patch(b []byte, off int64, v ...byte) []byte {
	b = bytes.Clone(b)
	copy(b[off:], v)
	return b
}

// shortReader is a reader that holds fewer bytes than its caller says.
type shortReader struct{ b []byte }

func (r shortReader) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(r.b).ReadAt(p, off)
}

func TestReadMalformedGivesFormatErrorOfItsKind(t *testing.T) {
	obj, f := relocObject(t)
	le := binary.LittleEndian
	text := f.Section(".text")
	shoff := int64(le.Uint64(obj[40:]))
	pastEnd := bytes.Clone(obj)
	le.PutUint64(pastEnd[shoff+int64(text.Index)*shdrSize+shdrOffset:], uint64(len(obj)))
	for _, c := range []struct {
		name string
		in   []byte
		r    io.ReaderAt // nil: in
		off  int64
		is   error // besides goffload.ErrInvalid; nil for none
	}{
		{"bad magic", patch(obj, 0, 'M', 'Z'), nil, 0, nil},
		{"part of the magic is truncated", obj[:3], nil, 0, goffload.ErrTruncated},
		{"header cut short is truncated", obj[:63], nil, 0, goffload.ErrTruncated},
		{"ELF32 is unsupported", patch(obj, 4, byte(elf.ELFCLASS32)), nil, 4, goffload.ErrUnsupported},
		{"bad class", patch(obj, 4, 9), nil, 4, nil},
		{"bad byte order", patch(obj, 5, 9), nil, 5, nil},
		{"wrong section header size", patch(obj, 58, 40), nil, 58, nil},
		{"section header table past the end is truncated", obj[:len(obj)-1], nil, 40, goffload.ErrTruncated},
		{"section data past the end is truncated at its sh_offset", pastEnd, nil, shoff + int64(text.Index)*shdrSize + shdrOffset, goffload.ErrTruncated},
		{"reader shorter than the size given is truncated", obj, shortReader{obj[:32]}, 32, goffload.ErrTruncated},
		// Each rule of debug/elf's NewFile, refused first here at the field
		// at fault: debug/elf's own offsets are unexported, and its
		// messages are not parsed for them.
		{"ELF identification version", patch(obj, 6, 2), nil, 6, nil},
		{"e_version", patch(obj, 20, 2), nil, 20, nil},
		{"section headers at offset 0", patch(obj, 40, 0, 0, 0, 0, 0, 0, 0, 0), nil, 60, nil},
		{"e_shstrndx past the sections", patch(obj, 62, 200, 0), nil, 62, nil},
		{"section 0 of extended numbering not SHT_NULL", patch(patch(obj, 60, 0, 0), shoff+4, 1), nil, shoff + 4, nil},
		{"extended section count under SHN_LORESERVE", patch(obj, 60, 0, 0), nil, shoff + 32, nil},
		{"extended section-name index under SHN_LORESERVE", patch(obj, 62, 0xff, 0xff), nil, shoff + 40, nil},
		{"negative sh_offset", patch(obj, shoff+int64(text.Index)*shdrSize+shdrOffset+7, 0x80), nil, shoff + int64(text.Index)*shdrSize + shdrOffset, nil},
		{"negative sh_size", patch(obj, shoff+int64(text.Index)*shdrSize+32+7, 0x80), nil, shoff + int64(text.Index)*shdrSize + 32, nil},
		{"compressed section without a compression header", patch(obj, shoff+int64(text.Index)*shdrSize+8+1, 0x08), nil, shoff + int64(text.Index)*shdrSize + shdrOffset, goffload.ErrTruncated},
		{"section-name table not SHT_STRTAB", patch(obj, shoff+int64(f.ShStrNdx)*shdrSize+shdrType, 1), nil, shoff + int64(f.ShStrNdx)*shdrSize + shdrType, nil},
		{"section name past the name table", patch(obj, shoff+int64(text.Index)*shdrSize, 0xff, 0xff), nil, shoff + int64(text.Index)*shdrSize, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.r
			if r == nil {
				r = bytes.NewReader(c.in)
			}
			_, err := Read(r, int64(len(c.in)))
			checkFormatError(t, err, c.off, c.is)
			if err != nil && strings.Contains(err.Error(), "debug/elf") {
				t.Errorf("%v: refused by debug/elf, not here", err)
			}
		})
	}
}

func TestLoadMalformedGivesFormatErrorOfItsKind(t *testing.T) {
	obj, f := relocObject(t)
	le := binary.LittleEndian
	rela := f.Section(".rela.text")
	badSym := bytes.Clone(obj)
	le.PutUint32(badSym[rela.Offset+12:], 99) // the symbol half of r_info
	exec := patch(obj, ehdrType, byte(elf.ET_EXEC))
	for _, c := range []struct {
		name string
		in   []byte
		load func(*File) error
		off  int64
		is   error
	}{
		{"relocation symbol out of range, at the relocation", badSym, func(f *File) error {
			_, err := f.Relocations(f.Section(".rela.text"))
			return err
		}, int64(rela.Offset), nil},
		{"loading an executable is unsupported, at e_type", exec, func(f *File) error { _, err := f.Object(); return err }, ehdrType, goffload.ErrUnsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Read(bytes.NewReader(c.in), int64(len(c.in)))
			if err != nil {
				t.Fatal(err)
			}
			checkFormatError(t, c.load(f), c.off, c.is)
		})
	}
}

// checkFormatError fails t unless err holds an "elf" *goffload.FormatError
// at off matching goffload.ErrInvalid and is (if not nil), and no other
// sentinel.
func checkFormatError(t *testing.T, err error, off int64, is error) {
	t.Helper()
	var fe *goffload.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) holds no *goffload.FormatError", err, err)
	}
	t.Log(err)
	if fe.Format != "elf" || fe.Offset != off {
		t.Errorf("%v: Format %q at %#x, want \"elf\" at %#x", err, fe.Format, fe.Offset, off)
	}
	if !errors.Is(err, goffload.ErrInvalid) || is != nil && !errors.Is(err, is) {
		t.Errorf("%v does not match goffload.ErrInvalid and %v", err, is)
	}
	for _, other := range []error{goffload.ErrTruncated, goffload.ErrUnsupported, goffload.ErrLimit} {
		if other != is && errors.Is(err, other) {
			t.Errorf("%v matches %v too", err, other)
		}
	}
}

func TestRelocationsOfASectionWithoutThemIsAnArgumentError(t *testing.T) {
	_, f := relocObject(t)
	_, err := f.Relocations(f.Section(".text"))
	var fe *goffload.FormatError
	if !errors.Is(err, fs.ErrInvalid) || errors.As(err, &fe) {
		t.Errorf("%v: want an fs.ErrInvalid argument error, no FormatError", err)
	}
}
