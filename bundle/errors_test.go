package bundle

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/goffload/goffload"
)

// wantFormatError fails t unless err holds an "offload bundle"
// *goffload.FormatError at off (any offset when off is -2) matching
// goffload.ErrInvalid and each of is, whose Field does not repeat the
// Format, and returns it.
func wantFormatError(t *testing.T, err error, off int64, is ...error) *goffload.FormatError {
	t.Helper()
	var fe *goffload.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) holds no *goffload.FormatError", err, err)
	}
	t.Log(err)
	if fe.Format != "offload bundle" || off != -2 && fe.Offset != off {
		t.Errorf("%v: Format %q at %d, want \"offload bundle\" at %d", err, fe.Format, fe.Offset, off)
	}
	for _, s := range append([]error{goffload.ErrInvalid}, is...) {
		if !errors.Is(err, s) {
			t.Errorf("%v does not match %v", err, s)
		}
	}
	// The Format says it; the sentinels (ErrNotBundle, ErrCompressed) may.
	if strings.Contains(fe.Field, "bundle") {
		t.Errorf("%q: Field %q says bundle again", err, fe.Field)
	}
	return fe
}

// truncatedReaderAt holds fewer bytes than the size its caller is given.
type truncatedReaderAt struct{ b []byte }

func (r truncatedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(r.b).ReadAt(p, off)
}

func TestReadReportsTheMagicBytesItRead(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want string // the FormatError's Value
		is   error
	}{
		{"0xAB bytes", bytes.Repeat([]byte{0xab}, 64), strings.Repeat("\xab", len(Magic)), ErrNotBundle},
		{"fewer bytes than the magic", []byte("ELF\x00\x01"), "ELF\x00\x01", ErrNotBundle},
		{"a compressed bundle", []byte("CCOB\x02\x00\x01\x00"), CompressedMagic, ErrCompressed},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(c.in), int64(len(c.in)))
			fe := wantFormatError(t, err, 0, c.is)
			if fe.Field != "magic" || fe.Value != c.want {
				t.Errorf("%v: %s %q, want magic %q", err, fe.Field, fe.Value, c.want)
			}
		})
	}
}

func TestMalformedBundleGivesFormatErrorOfItsKind(t *testing.T) {
	fb := readTestdata(t, "hip-fatbin-clang-linker-wrapper-llvm22.bundle")
	read := func(b []byte) error { _, err := Read(bytes.NewReader(b), int64(len(b))); return err }
	decompress := func(b []byte) error { _, err := Decompress(io.Discard, bytes.NewReader(b), int64(len(b))); return err }
	z := zlibCompress(fb)
	n := uint64(len(fb))
	// A zstd frame whose window (its content size, 2^30) is over the limit.
	bigWindow := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0x13, 0x00, 0x00, 'z'}
	for _, c := range []struct {
		name string
		read func([]byte) error
		in   []byte
		off  int64
		is   []error
	}{
		{"entry count cut short", read, []byte(Magic + "\x01\x00"), int64(len(Magic)), []error{goffload.ErrTruncated}},
		{"bundle cut inside an entry's data", read, fb[:len(fb)-1], -2, []error{goffload.ErrTruncated}},
		{"no CCOB magic", decompress, bytes.Repeat([]byte{0xab}, 40), 0, []error{ErrNotBundle}},
		{"compressed header cut short", decompress, ccob(3, MethodZlib, nil, n, 0)[:20], 20, []error{goffload.ErrTruncated}},
		{"compressed version unsupported", decompress, ccob(7, MethodZlib, z, n, 0), 4, []error{goffload.ErrUnsupported}},
		{"compression method unsupported", decompress, ccob(2, 5, z, n, 0), 6, []error{goffload.ErrUnsupported}},
		{"data inflating past UncompressedSize is over the limit", decompress, ccob(2, MethodZlib, z, n-1, 0), 12, []error{goffload.ErrLimit}},
		{"zstd window over the limit", decompress, ccob(2, MethodZstd, bigWindow, 1<<30, 0), -2, []error{goffload.ErrLimit}},
		{"zlib stream cut short", decompress, ccob(2, MethodZlib, z[:len(z)/2], n, 0), -2, []error{goffload.ErrTruncated}},
		{"zlib stream corrupt", decompress, ccob(2, MethodZlib, append([]byte{0x78, 0x9c, 0xff}, z[3:]...), n, 0), -2, []error{errCorrupt}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.read(c.in)
			fe := wantFormatError(t, err, c.off, c.is...)
			if fe.Offset < 0 || fe.Offset > int64(len(c.in)) {
				t.Errorf("%v: Offset %d outside the %d-byte input", err, fe.Offset, len(c.in))
			}
		})
	}
}

// TestReaderShorterThanItsSizeIsTruncated: an io.ReaderAt that ends before
// the size it was given with is input cut short.
func TestReaderShorterThanItsSizeIsTruncated(t *testing.T) {
	fb := readTestdata(t, "hip-fatbin-clang-linker-wrapper-llvm22.bundle")
	for name, read := range map[string]func(io.ReaderAt, int64) error{
		"Read":           func(r io.ReaderAt, n int64) error { _, err := Read(r, n); return err },
		"ReadCompressed": func(r io.ReaderAt, n int64) error { _, err := ReadCompressed(r, n); return err },
	} {
		t.Run(name, func(t *testing.T) {
			wantFormatError(t, read(truncatedReaderAt{fb[:10]}, int64(len(fb))), 10, goffload.ErrTruncated)
		})
	}
}

// TestEntriesOfACompressedBundleSayWhereInTheDecompressedData: a FormatError
// about the decompressed bytes has no offset in the input (-1) and names the
// decompressed byte in its Field; one of the decompression keeps its offset
// in the input.
func TestEntriesOfACompressedBundleSayWhereInTheDecompressedData(t *testing.T) {
	notBundle := ccob(3, MethodZlib, zlibCompress(make([]byte, 100)), 100, 0)
	pastEnd := ccob(3, MethodZlib, zlibCompress(craft(1, entryHeader(100, 200, "x", 1))), 250, 0)
	cutStream := zlibCompress(craft(1, entryHeader(100, 20, "x", 1)))
	cutStream = ccob(3, MethodZlib, cutStream[:len(cutStream)/2], 250, 0)
	for _, c := range []struct {
		name     string
		in       []byte
		inInput  bool // the offset is in the input, not in the decompressed data
		is       error
		fieldHas string
	}{
		{"no bundle inside", notBundle, false, ErrNotBundle, "decompressed byte 0x0: magic"},
		{"entry past the declared size", pastEnd, false, goffload.ErrTruncated, "decompressed byte 0x28: entry 0 size"},
		{"decompression error", cutStream, true, goffload.ErrTruncated, "zlib"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cb, err := ReadCompressed(bytes.NewReader(c.in), int64(len(c.in)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = cb.Entries()
			fe := wantFormatError(t, err, -2, c.is)
			if c.inInput != (fe.Offset >= 0 && fe.Offset <= int64(len(c.in))) {
				t.Errorf("%v: offset %d, in the input: %v", err, fe.Offset, c.inInput)
			}
			if !strings.Contains(fe.Field, c.fieldHas) {
				t.Errorf("%v: Field %q, want it to hold %q", err, fe.Field, c.fieldHas)
			}
		})
	}
	// OpenEntry of an entry past the decompressed data.
	cb, _ := ReadCompressed(bytes.NewReader(pastEnd), int64(len(pastEnd)))
	_, err := io.ReadAll(cb.OpenEntry(Entry{ID: "x", Offset: 100, Size: 200}))
	if fe := wantFormatError(t, err, -1, goffload.ErrTruncated); !strings.Contains(fe.Field, "decompressed data ends") {
		t.Errorf("%v: Field %q", err, fe.Field)
	}
}

func TestArgumentErrorsAreNotFormatErrors(t *testing.T) {
	for name, read := range map[string]func(io.ReaderAt, int64) error{
		"Read":           func(r io.ReaderAt, n int64) error { _, err := Read(r, n); return err },
		"ReadCompressed": func(r io.ReaderAt, n int64) error { _, err := ReadCompressed(r, n); return err },
		"Decompress":     func(r io.ReaderAt, n int64) error { _, err := Decompress(io.Discard, r, n); return err },
	} {
		for _, c := range []struct {
			name string
			r    io.ReaderAt
			size int64
		}{{"nil reader", nil, 8}, {"negative size", bytes.NewReader(nil), -1}} {
			t.Run(name+" "+c.name, func(t *testing.T) {
				err := read(c.r, c.size)
				var fe *goffload.FormatError
				if !errors.Is(err, fs.ErrInvalid) || errors.As(err, &fe) || errors.Is(err, goffload.ErrInvalid) {
					t.Errorf("%v: want an fs.ErrInvalid argument error, no FormatError", err)
				}
			})
		}
	}
}
