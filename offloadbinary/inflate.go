package offloadbinary

import (
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/internal/zstddec"
)

// firstInflated is what reading a compressed binary inflates first: in any
// binary LLVM writes, its entries and strings (list reads no more). What is
// kept grows from it by doubling, up to keptInflated, within the budget's
// MaxInflatedMemory; past it, the body is decoded in chunks of
// inflateChunk, or straight into the caller's buffer.
const (
	firstInflated = 64 << 10
	inflateChunk  = 1 << 20
	keptInflated  = 4 << 20
)

// inflater is an io.ReaderAt of a compressed binary as LLVM reads it: the
// restored header, then the body its stream inflates to, inflated only as
// far as it is read. What it inflates it keeps in memory, from the start,
// while the budget has room; beyond that it decodes a read at the
// decoder's position straight into the caller's buffer, else into a chunk
// it keeps (the last decoded), and a read before the decoder's position
// inflates the stream again from the start (charged to the budget). So
// listing a binary inflates the start of its stream, and reading an image
// in order streams it with no copy.
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
	head    []byte // the body kept, from its start
	full    bool   // the budget keeps no more
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

// closeDecoder closes the decoder; dropDecoder also frees the chunk.
func (in *inflater) closeDecoder() {
	if in.closer != nil {
		in.closer()
	}
	in.dec, in.closer, in.src = nil, nil, nil
}

func (in *inflater) dropDecoder() {
	in.closeDecoder()
	in.win = nil
}

// maxZstdWindow is the largest window a frame may declare: zstd's level 22
// uses 2^27. A frame's window is besides at most twice the body it
// inflates to, or 8 MiB: libzstd declares the power of two that holds the
// content (LLVM compresses a binary in one call), github.com/klauspost's
// encoder 8 MiB whatever the content; and a decoder allocates the declared
// window (and two blocks of room) for its first block, so a few bytes
// declaring 128 MiB for a body of a kilobyte would cost 128 MiB.
const maxZstdWindow = 1 << 27

// open starts the decoder at the start of the body.
func (in *inflater) open() error {
	in.dropDecoder()
	in.src = &srcReader{r: io.NewSectionReader(in.ra, in.off, in.n)}
	if in.zstd {
		window := min(maxZstdWindow, max(2*in.body, 8<<20))
		d, err := zstddec.Get(in.src, window, max(in.body+1, window))
		if err != nil {
			return in.streamErr(0, err)
		}
		in.dec, in.closer = d, func() { zstddec.Put(d) }
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

// next decodes the bytes at in.pos onto head while the budget keeps them,
// else a chunk into win.
func (in *inflater) next() error {
	if in.pos == uint64(len(in.head)) && !in.full && in.pos < keptInflated {
		n := min(max(in.pos, firstInflated), keptInflated-in.pos, in.body-in.pos)
		if in.g.hold(n) {
			old := len(in.head)
			if uint64(cap(in.head)-old) < n {
				h := make([]byte, old, uint64(old)+n)
				copy(h, in.head)
				in.head = h
			}
			in.head = in.head[:uint64(old)+n]
			if err := in.fill(in.head[old:]); err != nil {
				in.head = in.head[:old]
				return err
			}
			return nil
		}
		in.full = true
	}
	n := min(inflateChunk, in.body-in.pos)
	if cap(in.win) < int(n) {
		in.win = make([]byte, inflateChunk)
	}
	in.win = in.win[:n]
	at := in.pos
	if err := in.fill(in.win); err != nil {
		in.win = nil
		return err
	}
	in.winOff = at
	return nil
}

// fill decodes the len(buf) bytes at in.pos into buf.
func (in *inflater) fill(buf []byte) error {
	if in.decoded {
		if err := in.g.inflate(uint64(len(buf))); err != nil {
			return fmt.Errorf("offload binary at %#x: inflating it again: %w", in.binOff, err)
		}
	}
	got := 0
	for got < len(buf) {
		m, err := in.dec.Read(buf[got:])
		got += m
		if err != nil && got < len(buf) {
			return in.streamErr(in.pos+uint64(got), err)
		}
	}
	in.pos += uint64(len(buf))
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
		in.closeDecoder() // a read of the body before here starts again
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
		if bo < uint64(len(in.head)) {
			done += copy(want[done:], in.head[bo:])
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
		var err error
		if rest := want[done:]; in.pos == bo && (in.full || bo != uint64(len(in.head)) || bo >= keptInflated) && len(want) >= firstInflated {
			// A large read (an image read in order) at the decoder's
			// position: straight into p, with no copy.
			rest = rest[:min(uint64(len(rest)), in.body-bo)]
			if err = in.fill(rest); err == nil {
				done += len(rest)
			}
		} else {
			// Decode on towards bo.
			err = in.next()
		}
		if err != nil {
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
