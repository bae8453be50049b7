package offload

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"runtime"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// pattern is an endless reader of the bytes 0, 1, ..., 255, 0, ...
type pattern struct{ i byte }

func (p *pattern) Read(b []byte) (int, error) {
	for j := range b {
		b[j] = p.i
		p.i++
	}
	return len(b), nil
}

// TestWriteBinaryStreamsLargeImage writes a binary with a 2 GiB image: the
// image goes from the reader to the writer with memory that does not grow.
func TestWriteBinaryStreamsLargeImage(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 GiB")
	}
	const size = 2<<30 + 3
	im := Image{Kind: ImageObject, OffloadKind: OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", "generic"}}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h := crc32.NewIEEE()
	n, err := WriteBinary(h, Default(), &im, io.LimitReader(&pattern{}, size), size)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if l := im.Layout(size); uint64(n) != l.Size || l.Size%8 != 0 {
		t.Errorf("wrote %d bytes, layout says %d", n, l.Size)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
		t.Errorf("allocated %d bytes to stream a %d-byte image", grown, int64(size))
	}
}

func TestBinaryReaderMatchesWriteBinary(t *testing.T) {
	im := Image{Kind: ImageObject, OffloadKind: OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", ""}}}
	data := []byte("0123456789abc")
	want, err := MarshalBinary(Default(), &im, data)
	if err != nil {
		t.Fatal(err)
	}
	r, l, err := BinaryReader(Default(), &im, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, want) || l.Size != uint64(len(want)) {
		t.Fatalf("BinaryReader: %d bytes (layout %d), %v; WriteBinary %d bytes", len(got), l.Size, err, len(want))
	}
	// Read again, and from several goroutines at once: the same bytes.
	again := tooltest.SameBytes(t, func(w io.Writer) error {
		_, err := io.Copy(w, io.NewSectionReader(r, 0, r.Size()))
		return err
	})
	if !bytes.Equal(again, want) {
		t.Error("read again: differs")
	}
	r, _, _ = BinaryReader(Default(), &im, bytes.NewReader(data[:5]), int64(len(data)))
	if _, err := io.ReadAll(r); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short data: %v", err)
	}
	if _, err := WriteBinary(io.Discard, Default(), &im, bytes.NewReader(data[:5]), int64(len(data))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("WriteBinary of short data: %v", err)
	}
}
