package bundle

import (
	"bufio"
	"fmt"
	"io"

	"github.com/goffload/goffload"
)

// Entries reads the header of the bundle that c holds, decompressing only
// the bytes the header takes: listing a bundle that declares terabytes costs
// what its header does. Each entry is checked, as [Read] checks it, against
// the header's UncompressedSize; errors are [*goffload.FormatError]s whose offsets
// are in the decompressed bundle, or errors of the decompression (offsets in
// the input).
func (c *Compressed) Entries() ([]Entry, error) {
	br := bufio.NewReaderSize(c.Open(), 4096)
	var head [headerSize]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return nil, decompressedErr(readErr(0, err))
	}
	if string(head[:len(Magic)]) != Magic {
		return nil, decompressedErr(formatErr(0, "magic", 0, ErrNotBundle))
	}
	entries, err := readEntries(br, le.Uint64(head[len(Magic):]), c.UncompressedSize)
	if err != nil {
		return nil, decompressedErr(err)
	}
	return entries, nil
}

// decompressedErr says that err is about the decompressed bundle.
func decompressedErr(err error) error { return fmt.Errorf("decompressed bundle: %w", err) }

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
		return decompressedErr(formatErr(int64(off), fmt.Sprintf("entry %q data", r.e.ID), r.e.Offset+r.e.Size, goffload.ErrTruncated))
	}
	return err
}
