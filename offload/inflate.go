package offload

import (
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/klauspost/compress/zstd"
)

// inflateChunk is the unit in which an inflated body is decoded and kept;
// keptInflated the most kept of one binary (its entries and strings, in
// any binary LLVM writes), within the budget's MaxInflatedMemory.
const (
	inflateChunk = 1 << 20
	keptInflated = 4 << 20
)

// inflater is an io.ReaderAt of a compressed binary as LLVM reads it: the
// restored header, then the body its stream inflates to, inflated only as
// far as it is read. What it inflates it keeps in memory, chunk by chunk,
// while the budget has room; beyond that it keeps the last chunk decoded,
// and a read before it inflates the stream again from the start (charged
// to the budget). So listing a binary inflates the start of its stream,
// and reading an image in order streams it.
type inflater struct {
	g      *Budget
	ra     io.ReaderAt // the input
	off    int64       // of the compressed stream in ra
	n      int64       // of the compressed stream
	zstd   bool
	hdr    [HeaderSizeV3]byte
	body   uint64 // InflatedSize - 40
	binOff int64  // of the binary, for errors

	mu      sync.Mutex
	head    [][]byte // body chunks kept, from the start
	full    bool     // the budget keeps no more chunks
	dec     io.Reader
	closer  func()
	src     *srcReader
	pos     uint64 // body offset of the decoder's next byte
	win     []byte // the last chunk decoded past head
	winOff  uint64
	decoded bool // the body has been inflated once: more is charged
	err     error
}

// srcReader reads the compressed stream, keeping the input's own error so
// that a failing read is not taken for bad data.
type srcReader struct {
	r   io.Reader
	err error
}

func (s *srcReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

func (in *inflater) headLen() uint64 {
	if len(in.head) == 0 {
		return 0
	}
	return uint64(len(in.head)-1)*inflateChunk + uint64(len(in.head[len(in.head)-1]))
}

func (in *inflater) dropDecoder() {
	if in.closer != nil {
		in.closer()
	}
	in.dec, in.closer, in.src, in.win = nil, nil, nil, nil
}

// open starts the decoder at the start of the body.
func (in *inflater) open() error {
	in.dropDecoder()
	in.src = &srcReader{r: io.NewSectionReader(in.ra, in.off, in.n)}
	if in.zstd {
		d, err := zstd.NewReader(in.src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxMemory(max(in.body+1, 1<<27)), zstd.WithDecoderMaxWindow(1<<27)) // zstd level 22 uses up to 2^27
		if err != nil {
			return in.streamErr(0, err)
		}
		in.dec, in.closer = d, d.Close
	} else {
		z, err := zlib.NewReader(in.src)
		if err != nil {
			return in.streamErr(0, err)
		}
		in.dec, in.closer = z, func() { z.Close() }
	}
	in.pos = 0
	in.g.use(in)
	return nil
}

// streamErr is the error of the stream failing after got bytes: the
// input's own error if reading it failed, else bad data.
func (in *inflater) streamErr(got uint64, err error) error {
	if in.src != nil && in.src.err != nil {
		return fmt.Errorf("offload binary at %#x: reading its compressed stream: %w", in.binOff, in.src.err)
	}
	name := "zlib"
	if in.zstd {
		name = "zstd"
	}
	if err == io.EOF {
		// The stream ends well, early.
		return errAt(in.binOff, 32, fmt.Sprintf("InflatedSize (the body inflates to %d bytes, not InflatedSize-40)", got), in.body+HeaderSizeV3, goffload.ErrInvalid)
	}
	return ferr.New("offload binary", in.binOff+HeaderSizeV3, name+" stream ("+err.Error()+")", got, goffload.ErrInvalid)
}

// next decodes the chunk at in.pos, into head while the budget keeps it,
// else into win.
func (in *inflater) next() error {
	n := min(inflateChunk, in.body-in.pos)
	if in.decoded {
		if err := in.g.inflate(n); err != nil {
			return fmt.Errorf("offload binary at %#x: inflating it again: %w", in.binOff, err)
		}
	}
	var buf []byte
	keep := in.pos == in.headLen() && !in.full && in.pos+n <= keptInflated
	if keep && !in.g.hold(n) {
		in.full, keep = true, false
	}
	if keep {
		buf = make([]byte, n)
	} else {
		if cap(in.win) < int(n) {
			in.win = make([]byte, inflateChunk)
		}
		buf = in.win[:n]
	}
	got := 0
	for got < len(buf) {
		m, err := in.dec.Read(buf[got:])
		got += m
		if err != nil && got < len(buf) {
			return in.streamErr(in.pos+uint64(got), err)
		}
	}
	if keep {
		in.head = append(in.head, buf)
	} else {
		in.win, in.winOff = buf, in.pos
	}
	in.pos += n
	if in.pos == in.body {
		// The stream must end here, as LLVM's decompress checks.
		var one [1]byte
		if m, _ := io.ReadFull(in.dec, one[:]); m != 0 {
			return errAt(in.binOff, 32, "InflatedSize (the body inflates to more bytes than InflatedSize-40)", in.body+HeaderSizeV3, goffload.ErrInvalid)
		}
		if in.src.err != nil {
			return in.streamErr(in.pos, in.src.err)
		}
		in.decoded = true
		if keep {
			in.dropDecoder() // all is kept: the decoder is done
		}
	}
	return nil
}

// ReadAt reads the inflated binary.
func (in *inflater) ReadAt(p []byte, off int64) (int, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	size := int64(in.body + HeaderSizeV3)
	if off < 0 {
		return 0, errors.New("offload: negative offset")
	}
	if off >= size {
		return 0, io.EOF
	}
	want := p[:min(int64(len(p)), size-off)]
	done := 0
	if off < HeaderSizeV3 {
		done = copy(want, in.hdr[off:])
	}
	for done < len(want) {
		bo := uint64(off) + uint64(done) - HeaderSizeV3
		if bo < in.headLen() {
			c := in.head[bo/inflateChunk]
			done += copy(want[done:], c[bo%inflateChunk:])
			continue
		}
		if in.win != nil && bo >= in.winOff && bo < in.winOff+uint64(len(in.win)) {
			done += copy(want[done:], in.win[bo-in.winOff:])
			continue
		}
		if in.err != nil {
			return done, in.err
		}
		if in.dec == nil || in.pos > bo {
			if in.pos > 0 || in.dec == nil && in.decoded {
				in.decoded = true // inflating again: charged from here on
			}
			if err := in.open(); err != nil {
				in.err = err
				return done, err
			}
		}
		// Decode on to the chunk that holds bo.
		if err := in.next(); err != nil {
			in.err = err
			in.dropDecoder()
			return done, err
		}
	}
	if len(want) < len(p) {
		return done, io.EOF
	}
	return done, nil
}
