package bundle

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/zstddec"
	"github.com/klauspost/compress/zstd"
)

// zstd frames are decoded by github.com/klauspost/compress/zstd through
// internal/zstddec (decoders kept for the next stream), run as a
// plain stream: one block decoder and no goroutine
// (WithDecoderConcurrency(1)), buffers grown only as blocks need them
// (WithDecoderLowmem), and frames whose window exceeds the reader's limit
// refused before anything is allocated for them (WithDecoderMaxWindow).
// Its memory is then the frame's window plus two blocks of room for it
// (allocated when the frame's first block is decoded) and the buffers of
// one block; this file turns its errors into the package's FormatErrors.

// zstdInputBuffer is the read-ahead of the compressed input.
const zstdInputBuffer = 64 << 10

// zstdFrameHeaderMax is the size of the largest zstd frame header: magic,
// descriptor, window descriptor, 4-byte dictionary ID, 8-byte content size.
const zstdFrameHeaderMax = 4 + 1 + 1 + 4 + 8

type zstdReader struct {
	in        *zstdInput
	maxWindow uint64
	dec       *zstd.Decoder // nil before the first Read and after the last
	err       error
}

// newZstdReader decodes the zstd frames of r, whose first byte is at offset
// base of the input (for error offsets), refusing windows over maxWindow
// (at least 1 KiB, zstd's smallest window).
func newZstdReader(r io.Reader, base, maxWindow int64) *zstdReader {
	w := uint64(max(maxWindow, zstd.MinWindowSize))
	return &zstdReader{in: &zstdInput{r: bufio.NewReaderSize(r, zstdInputBuffer), off: base}, maxWindow: w}
}

func (z *zstdReader) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	if z.dec == nil {
		dec, err := zstddec.Get(z.in, z.maxWindow, z.maxWindow) // for a stream the memory bound bounds the window too
		if err != nil {                                         // only for options out of range, which newZstdReader rules out
			z.err = fmt.Errorf("offload bundle: zstd decoder: %w", err)
			return 0, z.err
		}
		z.dec = dec
	}
	n, err := z.dec.Read(p)
	if err != nil {
		z.err = z.fail(err)
		zstddec.Put(z.dec)
		z.dec = nil
	}
	return n, z.err
}

// release gives z's decoder, if it has one, to the next stream.
func (z *zstdReader) release() {
	if z.dec != nil {
		zstddec.Put(z.dec)
		z.dec = nil
	}
	if z.err == nil {
		z.err = errReleased
	}
}

// fail turns an error of the decoder into the package's: io.EOF after the
// last frame, the input's own errors as they are, and a goffload.FormatError for bad
// data, at the offset up to which the decoder had read the input when it
// failed (it reads a block whole before decoding it), or at the frame header
// for a window or a dictionary.
func (z *zstdReader) fail(err error) error {
	off := z.in.off
	switch {
	case err == io.EOF:
		return err
	case z.in.err != nil && errors.Is(err, z.in.err):
		return fmt.Errorf("offload bundle: zstd data at byte %#x: %w", off, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return zstdErr(off, "zstd data", goffload.ErrTruncated)
	case errors.Is(err, zstd.ErrUnknownDictionary):
		if h, at, ok := z.in.frameHeader(); ok {
			if !h.SingleSegment {
				at++ // the window descriptor comes first
			}
			return formatErr(at+5, "zstd dictionary ID", uint64(h.DictionaryID), goffload.ErrUnsupported)
		}
		return zstdErr(off, "zstd dictionary ID", goffload.ErrUnsupported)
	case errors.Is(err, zstd.ErrWindowSizeExceeded), errors.Is(err, zstd.ErrDecoderSizeExceeded):
		// The library says this of a frame's window and of a block larger
		// than its frame's window; only the first is a frame too large.
		if h, at, ok := z.in.frameHeader(); ok {
			if w := frameWindow(h); w > z.maxWindow {
				if h.SingleSegment {
					return formatErr(at+4, "zstd frame content size (the window)", w, goffload.ErrLimit)
				}
				return formatErr(at+5, "zstd window size", w, goffload.ErrLimit)
			}
		}
	}
	return zstdErr(off, "zstd data", fmt.Errorf("%w: %w", errCorrupt, err))
}

// zstdErr is a goffload.FormatError without a value: the library does not say
// which field it refused.
func zstdErr(off int64, what string, err error) error {
	return &goffload.FormatError{Format: "offload bundle", Offset: off, Field: what, Err: err}
}

// frameWindow returns the window of a frame: its window descriptor's, or
// for a single-segment frame its content size (at least 1 KiB, as the
// library takes it).
func frameWindow(h *zstd.Header) uint64 {
	if h.SingleSegment {
		return max(h.FrameContentSize, zstd.MinWindowSize)
	}
	return h.WindowSize
}

// zstdInput is the decoder's input: it counts the bytes read, for error
// offsets, keeps the last ones, in which the decoder's last frame header
// ends when the decoder refuses the header, and keeps the input's own error.
type zstdInput struct {
	r    *bufio.Reader
	off  int64
	tail [zstdFrameHeaderMax]byte
	n    int // bytes in tail
	err  error
}

func (in *zstdInput) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	in.off += int64(n)
	in.remember(p[:n])
	if err != nil && err != io.EOF {
		in.err = err
	}
	return n, err
}

func (in *zstdInput) remember(b []byte) {
	if len(b) >= len(in.tail) {
		in.n = copy(in.tail[:], b[len(b)-len(in.tail):])
		return
	}
	keep := min(in.n, len(in.tail)-len(b))
	copy(in.tail[:], in.tail[in.n-keep:in.n])
	in.n = keep + copy(in.tail[keep:], b)
}

// frameHeader returns the zstd frame header that ends where the input has
// been read up to, and its offset, if the bytes there are one: the decoder
// refuses a frame's window or dictionary right after reading its header.
func (in *zstdInput) frameHeader() (*zstd.Header, int64, bool) {
	tail := in.tail[:in.n]
	for s := 0; s+4 <= len(tail); s++ {
		var h zstd.Header
		if h.Decode(tail[s:]) == nil && !h.Skippable && h.HeaderSize == len(tail)-s {
			return &h, in.off - int64(len(tail)-s), true
		}
	}
	return nil, 0, false
}
