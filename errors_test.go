package goffload_test

import (
	"bytes"
	"compress/zlib"
	"debug/elf"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// This file pins the module's one error vocabulary across the packages that
// read files: malformed input of every kind gives a *goffload.FormatError
// naming its format, at an offset inside the input (in the file for fatobj,
// whatever the member or section), matching goffload.ErrInvalid and the
// sentinel of its kind; a caller's mistake (nil reader, negative size) is an
// fs.ErrInvalid argument error and no FormatError.

var le = binary.LittleEndian

// offloadBinary returns an OffloadBinary of LLVM 19 holding data.
func offloadBinary(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := release.Lookup(19)
	if err != nil {
		t.Fatal(err)
	}
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "nvptx64-nvidia-cuda", "sm_70")
	b, err := offloadbinary.MarshalBinary(r, &im, data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// elfObject returns an x86-64 relocatable object holding sections, and the
// file offset of each one's data, by name.
func elfObject(t *testing.T, machine elf.Machine, sections ...*elfobj.Section) ([]byte, map[string]int64) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, &elfobj.Object{Data: elf.ELFDATA2LSB, Machine: machine, Sections: sections}); err != nil {
		t.Fatal(err)
	}
	f, err := elfobj.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	offs := map[string]int64{}
	for _, s := range f.Sections[1:] {
		offs[s.Name] = int64(s.Offset)
	}
	return buf.Bytes(), offs
}

// archive returns a GNU archive of one member, and the offset of its data.
func archive(t *testing.T, name string, data []byte) ([]byte, int64) {
	t.Helper()
	var buf bytes.Buffer
	if err := ar.WriteGNU(&buf, []ar.NewMember{{Name: name, Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))}}); err != nil {
		t.Fatal(err)
	}
	a, err := ar.Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), a.Members()[0].DataOffset
}

// hipBundle returns an uncompressed bundle of a host and a device entry.
func hipBundle(t *testing.T) []byte {
	t.Helper()
	r, err := release.Lookup(19)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	code := []byte("\x7fELF code object")
	err = bundle.WriteHIPFatbin(&buf, r, []bundle.CodeObject{{TargetID: "gfx90a", Data: io.NewSectionReader(bytes.NewReader(code), 0, int64(len(code)))}})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ccob returns a compressed bundle of version 2 around a zlib stream of data
// whose header declares usize bytes.
func ccob(version, method uint16, data []byte, usize uint32) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write(data)
	w.Close()
	b := append([]byte(bundle.CompressedMagic), le.AppendUint16(nil, version)...)
	b = le.AppendUint16(b, method)
	b = le.AppendUint32(b, uint32(24+z.Len()))
	b = le.AppendUint32(b, usize)
	b = le.AppendUint64(b, 0)
	return append(b, z.Bytes()...)
}

// set returns a copy of b with v written at off.
func set(b []byte, off int, v ...byte) []byte {
	b = bytes.Clone(b)
	copy(b[off:], v)
	return b
}

// cut returns the first n bytes of b, copied.
func cut(b []byte, n int) []byte { return bytes.Clone(b[:n]) }

func TestMalformedInputIsAFormatErrorInEveryReadingPackage(t *testing.T) {
	bin := offloadBinary(t, []byte("device code"))
	v3 := le.AppendUint32(append([]byte{}, offloadbinary.Magic[:]...), 3)
	v3 = le.AppendUint64(v3, 48)        // Size
	v3 = le.AppendUint64(v3, 40)        // EntriesOffset
	v3 = le.AppendUint64(v3, 1)         // EntriesCount
	v3 = le.AppendUint64(v3, 1<<30)     // InflatedSize
	v3 = append(v3, make([]byte, 8)...) // the compressed stream
	obj, _ := elfObject(t, elf.EM_X86_64, &elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Data: []byte{0xc3}})
	badBin := set(bin, 4, 99) // Version 99
	withBad, offs := elfObject(t, elf.EM_X86_64, &elfobj.Section{Name: ".llvm.offloading", Type: elfobj.SHT_LLVM_OFFLOADING, Flags: elfobj.SHF_EXCLUDE, Addralign: 8, Data: badBin})
	badBinAt := offs[".llvm.offloading"] + 4
	lib, member := archive(t, "bad.o", withBad)
	cutEntries, eoffs := elfObject(t, elf.EM_X86_64, &elfobj.Section{Name: "omp_offloading_entries", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Data: make([]byte, 40)})
	fb := hipBundle(t)

	readOffload := func(b []byte) error {
		_, err := offloadbinary.ReadBinary(bytes.NewReader(b), int64(len(b)), nil)
		return err
	}
	readELF := func(b []byte) error { _, err := elfobj.Read(bytes.NewReader(b), int64(len(b))); return err }
	readBundle := func(b []byte) error { _, err := bundle.Read(bytes.NewReader(b), int64(len(b))); return err }
	decompress := func(b []byte) error {
		_, err := bundle.Decompress(io.Discard, bytes.NewReader(b), int64(len(b)))
		return err
	}
	readEntries := func(b []byte) error {
		f, err := elfobj.Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return err
		}
		_, err = entries.Read(f, release.Default())
		return err
	}
	openFile := func(b []byte) error {
		_, err := fatobj.NewFile("in", bytes.NewReader(b), int64(len(b)), nil)
		return err
	}

	for _, c := range []struct {
		name   string
		read   func([]byte) error
		in     []byte
		format string
		is     []error // besides goffload.ErrInvalid
		off    int64   // -1: any offset inside the input
	}{
		{"offload: bad magic", readOffload, bytes.Repeat([]byte{0xab}, 80), "offload binary", nil, 0},
		{"offload: cut short", readOffload, cut(bin, 80), "offload binary", []error{goffload.ErrTruncated}, 8},
		{"offload: unknown version is invalid, as in LLVM", readOffload, badBin, "offload binary", nil, 4},
		{"offload: inflated size over the limit", func(b []byte) error {
			_, err := offloadbinary.ReadBinary(bytes.NewReader(b), int64(len(b)), &offloadbinary.ReadOptions{MaxInflated: 1 << 20})
			return err
		}, v3, "offload binary", []error{goffload.ErrLimit}, 32},

		{"elfobj: bad magic", readELF, set(obj, 0, 'M', 'Z'), "elf", nil, 0},
		{"elfobj: header cut short", readELF, cut(obj, 40), "elf", []error{goffload.ErrTruncated}, 0},
		{"elfobj: section headers cut off", readELF, cut(obj, len(obj)-10), "elf", []error{goffload.ErrTruncated}, -1},
		{"elfobj: ELF32 is unsupported", readELF, set(obj, 4, byte(elf.ELFCLASS32)), "elf", []error{goffload.ErrUnsupported}, 4},

		{"bundle: bad magic", readBundle, bytes.Repeat([]byte{0xab}, 64), "offload bundle", []error{bundle.ErrNotBundle}, 0},
		{"bundle: cut short", readBundle, cut(fb, 90), "offload bundle", []error{goffload.ErrTruncated}, -1},
		{"bundle: compressed version unsupported", decompress, ccob(9, 0, fb, uint32(len(fb))), "offload bundle", []error{goffload.ErrUnsupported}, 4},
		{"bundle: compression method unsupported", decompress, ccob(2, 7, fb, uint32(len(fb))), "offload bundle", []error{goffload.ErrUnsupported}, 6},
		{"bundle: data inflating past its declared size", decompress, ccob(2, 0, fb, 100), "offload bundle", []error{goffload.ErrLimit}, 12},

		{"entries: section cut short", readEntries, cutEntries, "offload entries", []error{goffload.ErrTruncated}, eoffs["omp_offloading_entries"] + 32},
		{"entries: unknown machine unsupported", func(b []byte) error {
			return readEntries(set(b, 18, byte(elf.EM_NONE), 0))
		}, cutEntries, "offload entries", []error{goffload.ErrUnsupported}, 18},

		{"fatobj: bad binary in a section, offset in the file", openFile, withBad, "offload binary", nil, badBinAt},
		{"fatobj: bad binary in an archive member, offset in the archive", openFile, lib, "offload binary", nil, member + badBinAt},
		{"fatobj: ELF cut short", openFile, cut(obj, 40), "elf", []error{goffload.ErrTruncated}, 0},
		{"fatobj: cut entries section, offset in the file", openFile, cutEntries, "offload entries", []error{goffload.ErrTruncated}, eoffs["omp_offloading_entries"] + 32},
		{"fatobj: bundle cut short", openFile, cut(fb, 90), "offload bundle", []error{goffload.ErrTruncated}, -1},
		{"fatobj: offload binary version unknown", openFile, badBin, "offload binary", nil, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.read(c.in)
			var fe *goffload.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) holds no *goffload.FormatError", err, err)
			}
			t.Log(err)
			if fe.Format != c.format {
				t.Errorf("%v: Format %q, want %q", err, fe.Format, c.format)
			}
			if c.off >= 0 && fe.Offset != c.off {
				t.Errorf("%v: Offset %#x, want %#x", err, fe.Offset, c.off)
			}
			if fe.Offset < 0 || fe.Offset >= int64(len(c.in)) {
				t.Errorf("%v: Offset %#x outside the %d-byte input", err, fe.Offset, len(c.in))
			}
			for _, s := range append([]error{goffload.ErrInvalid}, c.is...) {
				if !errors.Is(err, s) {
					t.Errorf("%v does not match %v", err, s)
				}
			}
			if len(c.is) == 0 && (errors.Is(err, goffload.ErrTruncated) || errors.Is(err, goffload.ErrUnsupported) || errors.Is(err, goffload.ErrLimit)) {
				t.Errorf("%v matches a sentinel of another kind", err)
			}
		})
	}
}

// TestUnrecognizedInputToFatobjIsAFormatError: fatobj.NewFile of bytes that
// are no format it reads. Skipped while fatobj reports it as a plain error.
func TestUnrecognizedInputToFatobjIsAFormatError(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"bad magic", bytes.Repeat([]byte{0xab}, 64)},
		{"empty", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := fatobj.NewFile("in", bytes.NewReader(c.in), int64(len(c.in)), nil)
			if !errors.Is(err, goffload.ErrInvalid) {
				t.Fatalf("%v does not match goffload.ErrInvalid", err)
			}
			var fe *goffload.FormatError
			if !errors.As(err, &fe) {
				t.Skipf("fatobj.NewFile: %q is not a *goffload.FormatError yet", err)
			}
			if fe.Offset < -1 || fe.Offset > int64(len(c.in)) {
				t.Errorf("%v: Offset %#x outside the input", err, fe.Offset)
			}
		})
	}
}

func TestArgumentErrorsAreFsErrInvalidNotFormatErrors(t *testing.T) {
	type reader func(io.ReaderAt, int64) error
	readers := []struct {
		name string
		read reader
	}{
		{"offloadbinary.ReadBinary", func(r io.ReaderAt, n int64) error { _, err := offloadbinary.ReadBinary(r, n, nil); return err }},
		{"offloadbinary.ReadAll", func(r io.ReaderAt, n int64) error { _, err := offloadbinary.ReadAll(r, n, nil); return err }},
		{"elfobj.Read", func(r io.ReaderAt, n int64) error { _, err := elfobj.Read(r, n); return err }},
		{"bundle.Read", func(r io.ReaderAt, n int64) error { _, err := bundle.Read(r, n); return err }},
		{"bundle.ReadCompressed", func(r io.ReaderAt, n int64) error { _, err := bundle.ReadCompressed(r, n); return err }},
		{"fatobj.NewFile", func(r io.ReaderAt, n int64) error { _, err := fatobj.NewFile("in", r, n, nil); return err }},
	}
	for _, rd := range readers {
		for _, c := range []struct {
			name string
			r    io.ReaderAt
			size int64
		}{
			{"nil reader", nil, 10},
			{"negative size", bytes.NewReader(nil), -1},
		} {
			t.Run(rd.name+" "+c.name, func(t *testing.T) {
				err := rd.read(c.r, c.size)
				var fe *goffload.FormatError
				if !errors.Is(err, fs.ErrInvalid) || errors.As(err, &fe) || errors.Is(err, goffload.ErrInvalid) {
					t.Errorf("%v: want an fs.ErrInvalid argument error, not a FormatError", err)
				}
			})
		}
	}
}

func TestUnknownReleaseIsErrUnknownReleaseNotAFormatError(t *testing.T) {
	for name, lookup := range map[string]func(int) error{
		"release.Lookup": func(m int) error { _, err := release.Lookup(m); return err },
		"release.Parse":  func(m int) error { _, err := release.Parse(strconv.Itoa(m)); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := lookup(99)
			var fe *goffload.FormatError
			if !errors.Is(err, goffload.ErrUnknownRelease) || errors.As(err, &fe) || errors.Is(err, goffload.ErrInvalid) {
				t.Errorf("%s(99): %v, want goffload.ErrUnknownRelease and no FormatError", name, err)
			}
			if n := strings.Count(strings.ToLower(err.Error()), "llvm"); n > 1 {
				t.Errorf("%q says LLVM %d times", err, n)
			}
		})
	}
}
