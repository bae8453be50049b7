package offload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/release"
)

// checkFormatError fails t unless err holds a *goffload.FormatError of format
// at off that matches goffload.ErrInvalid and every one of is, and names its
// format once.
func checkFormatError(t *testing.T, err error, format string, off int64, is ...error) {
	t.Helper()
	var fe *goffload.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) holds no *goffload.FormatError", err, err)
	}
	t.Log(err)
	if fe.Format != format || fe.Offset != off {
		t.Errorf("%v: Format %q at %#x, want %q at %#x", err, fe.Format, fe.Offset, format, off)
	}
	for _, s := range append([]error{goffload.ErrInvalid}, is...) {
		if !errors.Is(err, s) {
			t.Errorf("%v does not match %v", err, s)
		}
	}
	if n := strings.Count(err.Error(), format); n != 1 {
		t.Errorf("%q names %q %d times", err, format, n)
	}
}

// TestDecodersGiveFormatErrorsWithOffsetsInTheSlice: the byte-slice decoders
// report malformed bytes as FormatErrors whose offset is in the slice given.
func TestDecodersGiveFormatErrorsWithOffsetsInTheSlice(t *testing.T) {
	le := binary.LittleEndian
	var entries []byte
	for range 2 {
		entries, _ = EntryV1.AppendEncode(entries, le, RawEntry{Version: 1, Kind: 1})
	}
	unsorted := IndirectTable{{Host: 0x20}, {Host: 0x10}}.Encode(le)
	for _, c := range []struct {
		name   string
		decode func() error
		format string
		off    int64
		is     []error
	}{
		{"one entry cut short is truncated at its start", func() error { _, err := EntryLegacy.Decode(le, make([]byte, 20)); return err },
			"offload entries", 0, []error{goffload.ErrTruncated}},
		{"a section ending in a partial entry is truncated at that entry", func() error { _, err := EntryV1.DecodeAll(le, entries[:len(entries)-5]); return err },
			"offload entries", 56, []error{goffload.ErrTruncated}},
		{"__tgt_device_image cut short", func() error { _, err := DecodeDeviceImage(le, make([]byte, 31)); return err },
			"__tgt_device_image", 0, []error{goffload.ErrTruncated}},
		{"__tgt_device_image array shorter than its count is truncated at the first image missing", func() error {
			_, err := DecodeDeviceImages(le, make([]byte, 80), 3)
			return err
		}, "__tgt_device_image array", 64, []error{goffload.ErrTruncated}},
		{"__tgt_device_image array of a negative count", func() error { _, err := DecodeDeviceImages(le, nil, -1); return err },
			"__tgt_device_image array", -1, nil},
		{"__tgt_bin_desc cut short", func() error { _, err := DecodeBinDesc(le, make([]byte, 4)); return err },
			"__tgt_bin_desc", 0, []error{goffload.ErrTruncated}},
		{"indirect call table ending in a partial pair", func() error { _, err := DecodeIndirectTable(le, make([]byte, 40)); return err },
			"indirect call table", 32, []error{goffload.ErrTruncated}},
		{"indirect call table out of order is invalid at the pair", func() error { _, err := DecodeIndirectTable(le, unsorted); return err },
			"indirect call table", 16, nil},
		{"ident_t cut short", func() error { _, _, err := DecodeIdent(le, make([]byte, IdentSize-1)); return err },
			"ident_t", 0, []error{goffload.ErrTruncated}},
		{"psource of another form, no offset", func() error { _, err := ParseSourceLocation(";f;g;x;1;;"); return err },
			"source location", -1, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.decode()
			checkFormatError(t, err, c.format, c.off, c.is...)
			if len(c.is) == 0 && errors.Is(err, goffload.ErrTruncated) {
				t.Errorf("%v matches goffload.ErrTruncated", err)
			}
		})
	}
}

// TestReadBinaryGivesFormatErrorsOfEachKind: ReadBinary and ReadAll report
// malformed binaries as FormatErrors at the field, matching the kind's
// sentinel.
func TestReadBinaryGivesFormatErrorsOfEachKind(t *testing.T) {
	im := LinkedImage(OffloadOpenMP, "nvptx64-nvidia-cuda", "sm_70")
	bin, err := MarshalBinary(release.Default(), &im, []byte("code"))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	v3 := le.AppendUint32(bytes.Clone(Magic[:]), VersionCompressed)
	v3 = le.AppendUint64(v3, 48)           // Size
	v3 = le.AppendUint64(v3, HeaderSizeV3) // EntriesOffset
	v3 = le.AppendUint64(v3, 1)            // EntriesCount
	v3 = le.AppendUint64(v3, 1<<30)        // InflatedSize
	v3 = append(v3, make([]byte, 8)...)
	badVersion := bytes.Clone(bin)
	le.PutUint32(badVersion[4:], 99)
	trailing := append(bytes.Clone(bin), make([]byte, 8)...)
	for _, c := range []struct {
		name string
		in   []byte
		opt  *ReadOptions
		off  int64
		is   []error
	}{
		{"bad magic", append(bytes.Repeat([]byte{0xab}, 4), bin[4:]...), nil, 0, nil},
		{"cut short", bin[:len(bin)-1], nil, 8, []error{goffload.ErrTruncated}},
		{"unknown version is invalid, as LLVM says", badVersion, nil, 4, nil},
		{"inflated size over the limit", v3, &ReadOptions{MaxInflated: 1 << 20}, 32, []error{goffload.ErrLimit}},
		{"bytes after the last binary, read by ReadAll", trailing, nil, int64(len(bin)), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadAll(bytes.NewReader(c.in), int64(len(c.in)), c.opt)
			checkFormatError(t, err, "offload binary", c.off, c.is...)
		})
	}
}

// TestDecodeWithAnUnknownLayoutIsAnArgumentError: the layout is the
// caller's, not the input's.
func TestDecodeWithAnUnknownLayoutIsAnArgumentError(t *testing.T) {
	for name, decode := range map[string]func() error{
		"Decode":    func() error { _, err := EntryLayout(7).Decode(binary.LittleEndian, make([]byte, 64)); return err },
		"DecodeAll": func() error { _, err := EntryLayout(7).DecodeAll(binary.LittleEndian, make([]byte, 64)); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := decode()
			var fe *goffload.FormatError
			if !errors.Is(err, fs.ErrInvalid) || errors.As(err, &fe) {
				t.Errorf("%v: want an fs.ErrInvalid argument error, no FormatError", err)
			}
		})
	}
}
