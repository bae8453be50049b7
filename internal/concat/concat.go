// Package concat joins parts of io.ReaderAts, byte slices and runs of zeros
// into one io.ReaderAt of known size. It is how the module presents data made
// of several inputs (the binaries of a .llvm.offloading section, an
// OffloadBinary around its image, a bundle around its entries) to a writer
// without copying it anywhere first: read at random, as often as asked and
// from several goroutines at once, as long as the parts allow that (files and
// byte slices do).
package concat

import (
	"bytes"
	"io"
	"sort"
)

// ReaderAt is the concatenation of its parts. The zero value is empty.
// Parts are added before it is read; reads do not change it.
type ReaderAt struct {
	parts []part
	size  int64
}

type part struct {
	r     io.ReaderAt // nil: zeros
	off   int64       // in r
	n     int64
	start int64 // in the concatenation
}

// Add appends the n bytes of r from offset off. A part of 0 bytes is
// dropped; n must not be negative.
func (c *ReaderAt) Add(r io.ReaderAt, off, n int64) {
	if n < 0 {
		panic("concat: negative part size") // the callers check sizes first
	}
	if n > 0 {
		c.parts = append(c.parts, part{r: r, off: off, n: n, start: c.size})
		c.size += n
	}
}

// AddBytes appends b, which must not change afterwards.
func (c *ReaderAt) AddBytes(b []byte) { c.Add(bytes.NewReader(b), 0, int64(len(b))) }

// AddZeros appends n zero bytes.
func (c *ReaderAt) AddZeros(n int64) { c.Add(nil, 0, n) }

// Size returns the number of bytes of the concatenation.
func (c *ReaderAt) Size() int64 { return c.size }

// Section returns a reader of the whole concatenation, at its start.
func (c *ReaderAt) Section() *io.SectionReader { return io.NewSectionReader(c, 0, c.size) }

// ReadAt reads len(p) bytes at off, as io.ReaderAt does: io.EOF past the
// end, and io.ErrUnexpectedEOF when a part is shorter than it was said to
// be.
func (c *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, io.ErrUnexpectedEOF
	}
	// The first part that ends after off.
	i := sort.Search(len(c.parts), func(i int) bool { return c.parts[i].start+c.parts[i].n > off })
	n := 0
	for ; i < len(c.parts) && len(p) > 0; i++ {
		pt := &c.parts[i]
		at := off - pt.start
		k := min(int64(len(p)), pt.n-at)
		if pt.r == nil {
			clear(p[:k])
		} else if m, err := pt.r.ReadAt(p[:k], pt.off+at); m < int(k) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return n + m, err
		}
		n += int(k)
		p, off = p[k:], off+k
	}
	if len(p) > 0 {
		return n, io.EOF
	}
	return n, nil
}
