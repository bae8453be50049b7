package ar

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/goffload/goffload"
)

// chunk bounds what readAt allocates ahead of the data it has read.
const chunk = 1 << 20

// readAt reads n bytes at off. It allocates at most chunk bytes more than the
// reader has returned, so that a size the caller was told (Open's size
// argument, a member size within it) cannot make it allocate memory for data
// that is not there. A short read is an goffload.ErrTruncated goffload.FormatError.
func readAt(r io.ReaderAt, off, n int64) ([]byte, error) {
	if n < 0 {
		return nil, formatErr(off, goffload.ErrInvalid, "negative length %d", n)
	}
	var buf []byte
	for int64(len(buf)) < n {
		c := min(n-int64(len(buf)), chunk)
		start := len(buf)
		buf = slices.Grow(buf, int(c))[:start+int(c)]
		if err := readFull(r, buf[start:], off+int64(start)); err != nil {
			return nil, err
		}
	}
	if buf == nil {
		buf = []byte{}
	}
	return buf, nil
}

// readFull fills p from off; io.ReaderAt may return io.EOF with a full read.
// A reader that ends before the size its caller gave is an
// goffload.ErrTruncated FormatError at the byte where it ended.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return formatErr(off+int64(n), goffload.ErrTruncated, "input shorter than its size")
	}
	return fmt.Errorf("ar: reading %d bytes at byte %#x: %w", len(p), off, err)
}
