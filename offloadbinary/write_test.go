package offloadbinary

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"runtime"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// pattern is an endless reader of the bytes 0, 1, ..., 255, 0, ...
type pattern struct{ i byte }

// patternBytes is two periods of pattern's bytes: each Read copies from it
// at the reader's phase rather than counting byte by byte, so that the
// tests' images of gigabytes cost their copies alone.
var patternBytes = func() []byte {
	b := make([]byte, 512)
	for j := range b {
		b[j] = byte(j)
	}
	return b
}()

func (p *pattern) Read(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		c := copy(b, patternBytes[p.i:int(p.i)+256])
		b = b[c:]
		p.i += byte(c)
	}
	return n, nil
}

// TestWriteBinaryStreamsLargeImage writes a binary with a 2 GiB image: the
// image goes from the reader to the writer with memory that does not grow.
func TestWriteBinaryStreamsLargeImage(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 GiB")
	}
	const size = 2<<30 + 3
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", "generic"}}}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	h := crc32.NewIEEE()
	n, err := WriteBinary(h, release.Default(), &im, io.LimitReader(&pattern{}, size), size)
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
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", ""}}}
	data := []byte("0123456789abc")
	want, err := MarshalBinary(release.Default(), &im, data)
	if err != nil {
		t.Fatal(err)
	}
	r, l, err := BinaryReader(release.Default(), &im, bytes.NewReader(data), int64(len(data)))
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
	r, _, _ = BinaryReader(release.Default(), &im, bytes.NewReader(data[:5]), int64(len(data)))
	if _, err := io.ReadAll(r); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short data: %v", err)
	}
	if _, err := WriteBinary(io.Discard, release.Default(), &im, bytes.NewReader(data[:5]), int64(len(data))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("WriteBinary of short data: %v", err)
	}
}

// TestBinariesReaderMatchesWriteBinaries: for every release with
// OffloadBinaries, the reader gives the bytes WriteBinaries (WriteBinary for
// one image) writes; several images where the release writes version 1, and
// a Data that is not an io.ReaderAt, are refused.
func TestBinariesReaderMatchesWriteBinaries(t *testing.T) {
	ims := func(n int) []ImageData {
		var out []ImageData
		for i := range n {
			data := bytes.Repeat([]byte{byte('a' + i)}, 5+7*i)
			out = append(out, ImageData{Image: Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP,
				Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", fmt.Sprint("a", i)}}}, Data: bytes.NewReader(data), Size: int64(len(data))})
		}
		return out
	}
	for _, r := range release.Known().Rows() {
		if r.BinaryVersion == 0 {
			continue
		}
		for _, n := range []int{1, 3} {
			var want bytes.Buffer
			var err error
			if n == 1 {
				one := ims(1)
				_, err = WriteBinary(&want, r, &one[0].Image, one[0].Data, one[0].Size)
			} else {
				_, err = WriteBinaries(&want, r, ims(n))
			}
			sr, rerr := BinariesReader(r, ims(n))
			if (err == nil) != (rerr == nil) {
				t.Fatalf("%v, %d images: WriteBinaries %v, BinariesReader %v", r, n, err, rerr)
			}
			if err != nil {
				continue
			}
			got, err := io.ReadAll(sr)
			if err != nil || !bytes.Equal(got, want.Bytes()) {
				t.Errorf("%v, %d images: BinariesReader gives %d bytes (%v), WriteBinaries %d", r, n, len(got), err, want.Len())
			}
		}
	}
	im := ims(1)
	im[0].Data = io.MultiReader(im[0].Data)
	if _, err := BinariesReader(release.Default(), im); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("a Data that is not an io.ReaderAt: %v", err)
	}
}

// TestPattern: pattern reads the bytes 0, 1, ..., 255, 0, ... whatever the
// sizes of the reads.
func TestPattern(t *testing.T) {
	p := &pattern{}
	var i byte
	for _, n := range []int{0, 1, 255, 256, 257, 3, 1000, 4096 + 7} {
		b := make([]byte, n)
		if got, err := p.Read(b); got != n || err != nil {
			t.Fatalf("Read of %d bytes: %d, %v", n, got, err)
		}
		for j, c := range b {
			if c != i {
				t.Fatalf("byte %d of a read of %d is %d, want %d", j, n, c, i)
			}
			i++
		}
	}
}
