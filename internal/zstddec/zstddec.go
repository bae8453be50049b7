// Package zstddec hands out zstd stream decoders
// (github.com/klauspost/compress/zstd) run as plain streams: one block
// decoder and no goroutine, buffers grown only as blocks need them, and a
// window bound per stream.
//
// A decoder allocates the window its frame declares (and two blocks of
// room) for the frame's first block, whatever the frame then holds: a
// stream of a few bytes declaring a 128 MiB window costs 128 MiB. Decoders
// handed back are kept for the next stream, and keep that room, so a
// thousand such streams in one input (an archive of compressed bundles, a
// binary inflated again) cost one window, not a thousand.
package zstddec

import (
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

var pool sync.Pool

// Get returns a decoder of r refusing frames whose window exceeds
// maxWindow, and streams whose memory exceeds maxMemory (of a stream, its
// window too).
func Get(r io.Reader, maxWindow, maxMemory uint64) (*zstd.Decoder, error) {
	opts := []zstd.DOption{zstd.WithDecoderMaxWindow(maxWindow), zstd.WithDecoderMaxMemory(maxMemory)}
	if d, ok := pool.Get().(*zstd.Decoder); ok {
		if err := d.ResetWithOptions(r, opts...); err == nil {
			return d, nil
		}
		d.Close()
	}
	return zstd.NewReader(r, append(opts, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))...)
}

// Put keeps d, done with its stream, for another.
func Put(d *zstd.Decoder) {
	if d.Reset(nil) == nil {
		pool.Put(d)
	} else {
		d.Close()
	}
}
