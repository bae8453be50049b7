package bundle

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/goffload/goffload"
)

// Entries reads the header of the bundle that c holds, decompressing only
// the bytes the header takes: listing a bundle that declares terabytes costs
// what its header does. Each entry is checked, as [Read] checks it, against
// the header's UncompressedSize. The header itself is bounded, as a few
// bytes of zstd decompress to gigabytes: at most c.MaxHeaderSize bytes
// ([DefaultMaxHeaderSize], 1 MiB), so at most 43690 entries, and IDs of at
// most [MaxCompressedIDLength] bytes; a count or an ID length beyond them
// gives [goffload.ErrLimit] before the entries or the ID are read. Errors of the decompression are
// [*goffload.FormatError]s with their offset in the input; those of the
// decompressed bundle are FormatErrors whose Field says where in the
// decompressed bytes ("decompressed byte 0x56: entry 1 offset") and whose
// Offset is -1, as no byte of the input holds them.
func (c *Compressed) Entries() ([]Entry, error) {
	d := c.Open().(*decompressor)
	defer d.release() // the header read, its decoder serves the next stream
	src := &errRecorder{r: d}
	br := bufio.NewReaderSize(src, 4096)
	var head [headerSize]byte
	if n, err := io.ReadFull(br, head[:]); err != nil {
		return nil, decompressedErr(src, readErr(0, fmt.Sprintf("header cut to %d of %d bytes", n, headerSize), err))
	}
	if string(head[:len(Magic)]) != Magic {
		return nil, decompressedErr(src, fieldErr(0, "magic", string(head[:len(Magic)]), ErrNotBundle))
	}
	maxHeader := c.MaxHeaderSize
	if maxHeader <= 0 {
		maxHeader = DefaultMaxHeaderSize
	}
	lim := &headerLimit{size: uint64(max(maxHeader, int64(headerSize))), id: MaxCompressedIDLength}
	entries, err := readEntries(br, le.Uint64(head[len(Magic):]), c.UncompressedSize, lim)
	if err != nil {
		return nil, decompressedErr(src, err)
	}
	return entries, nil
}

// errRecorder keeps the error, other than io.EOF, that its reader returned.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// decompressedErr returns err, the error of reading the decompressed bundle
// from src: the decompression's own error as it is, or a FormatError about
// the decompressed bytes, whose offset it moves to the Field.
func decompressedErr(src *errRecorder, err error) error {
	var fe *goffload.FormatError
	if src.err != nil || !errors.As(err, &fe) {
		return err
	}
	where := "decompressed data"
	if fe.Offset >= 0 {
		where = fmt.Sprintf("decompressed byte %#x", fe.Offset)
	}
	fe.Field, fe.Offset = where+": "+fe.Field, -1
	return err
}

// OpenEntry returns a reader of the data of e, an entry [Compressed.Entries]
// returned. It decompresses the stream from its start and discards the
// bytes before the entry, so its memory is that of [Compressed.Open]
// whatever the entry's size; data that ends before the entry does gives
// [goffload.ErrTruncated].
func (c *Compressed) OpenEntry(e Entry) io.Reader {
	return &entryReader{src: c.Open(), e: e, left: e.Size}
}

type entryReader struct {
	src     io.Reader
	e       Entry
	skipped bool
	left    uint64
	err     error
}

func (r *entryReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if !r.skipped {
		n, err := io.CopyN(io.Discard, r.src, int64(r.e.Offset))
		if err != nil {
			r.err = r.fail(uint64(n), err)
			return 0, r.err
		}
		r.skipped = true
	}
	if r.left == 0 {
		r.err = io.EOF
		return 0, io.EOF
	}
	if uint64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.src.Read(p)
	r.left -= uint64(n)
	switch {
	case r.left == 0:
		err = nil
	case err == io.EOF:
		r.err = r.fail(r.e.Offset+r.e.Size-r.left, err)
		return n, r.err
	case err != nil:
		r.err = err
	}
	return n, err
}

// fail reports that the decompressed data ended at off, before the entry's
// end, or the decompression's own error.
func (r *entryReader) fail(off uint64, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fieldErr(-1, fmt.Sprintf("decompressed data ends at byte %#x, before entry %q ends at %#x", off, r.e.ID, r.e.Offset+r.e.Size), nil, goffload.ErrTruncated)
	}
	return err
}
