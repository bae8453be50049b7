package offload

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
)

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
			tooltest.CheckFormatError(t, err, c.format, c.off, c.is...)
			if len(c.is) == 0 && errors.Is(err, goffload.ErrTruncated) {
				t.Errorf("%v matches goffload.ErrTruncated", err)
			}
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
