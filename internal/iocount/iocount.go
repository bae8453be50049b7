// Package iocount counts the bytes written through a writer: what the
// object and bundle writers return as the size they wrote.
package iocount

import (
	"bufio"
	"io"
)

// Writer passes writes to W and counts in N the bytes W took.
type Writer struct {
	W io.Writer
	N int64
}

func (c *Writer) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}

// ReadFrom lets a file-to-file copy reach the destination's ReadFrom.
func (c *Writer) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(c.W, r)
	c.N += n
	return n, err
}

var zeroBlock [4096]byte

// Zeros writes n zero bytes to w: the padding the object writers put
// between sections.
func Zeros(w io.Writer, n uint64) error {
	for n > 0 {
		k := min(n, uint64(len(zeroBlock)))
		if _, err := w.Write(zeroBlock[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// Buffered runs write on a 64 KiB buffer over w, flushes it, and returns
// the bytes w took: the frame of the object writers' Write.
func Buffered(w io.Writer, write func(*bufio.Writer) error) (int64, error) {
	cw := &Writer{W: w}
	bw := bufio.NewWriterSize(cw, 64<<10)
	if err := write(bw); err != nil {
		return cw.N, err
	}
	err := bw.Flush()
	return cw.N, err
}
