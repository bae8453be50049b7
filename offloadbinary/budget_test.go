package offloadbinary

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
)

// sharedStringBinary is a version-1 binary of n string entries whose keys
// and values all point at one string of l bytes.
func sharedStringBinary(n, l int) []byte {
	str := 72 + 16*n
	size := int(alignUp(uint64(str+l+1), Alignment))
	b := make([]byte, size)
	copy(b, Magic[:])
	le.PutUint32(b[4:], 1)
	le.PutUint64(b[8:], uint64(size))
	le.PutUint64(b[16:], HeaderSize)
	le.PutUint64(b[24:], ImageEntrySize)
	e := b[HeaderSize:]
	le.PutUint16(e[0:], uint16(offload.ImageObject))
	le.PutUint16(e[2:], 1)
	le.PutUint64(e[8:], 72)
	le.PutUint64(e[16:], uint64(n))
	le.PutUint64(e[24:], uint64(size))
	for i := 0; i < n; i++ {
		le.PutUint64(b[72+16*i:], uint64(str))
		le.PutUint64(b[72+16*i+8:], uint64(str))
	}
	copy(b[str:], bytes.Repeat([]byte{'a'}, l))
	return b
}

// aliasedBinary is a version-3 binary of k entries all pointing at image.
func aliasedBinary(image []byte, k int) []byte {
	img := int(alignUp(uint64(HeaderSizeV3+ImageEntrySize*k), Alignment))
	size := int(alignUp(uint64(img+len(image)), Alignment))
	b := make([]byte, size)
	copy(b, Magic[:])
	le.PutUint32(b[4:], 3)
	le.PutUint64(b[8:], uint64(size))
	le.PutUint64(b[16:], HeaderSizeV3)
	le.PutUint64(b[24:], uint64(k))
	for i := 0; i < k; i++ {
		e := b[HeaderSizeV3+ImageEntrySize*i:]
		le.PutUint16(e[0:], uint16(offload.ImageObject))
		le.PutUint16(e[2:], 1)
		le.PutUint64(e[8:], uint64(HeaderSizeV3+ImageEntrySize*k))
		le.PutUint64(e[24:], uint64(img))
		le.PutUint64(e[32:], uint64(len(image)))
	}
	copy(b[img:], image)
	return b
}

// TestSharedStringsAreBounded: 4000 string entries pointing at one 128 KiB
// string (listing them would print 1 GB; it took 1.6 GB to read) are
// refused over the limit with little allocated, and strings shared by a
// few entries are read once and shared.
func TestSharedStringsAreBounded(t *testing.T) {
	bin := sharedStringBinary(4000, 128<<10)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ReadAllBytes(bin, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, goffload.ErrLimit) {
		t.Errorf("4000 x 128 KiB: got %v, want ErrLimit", err)
	}
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 16*uint64(len(bin))+1<<20 {
		t.Errorf("allocated %d bytes for %d bytes of input", grown, len(bin))
	}
	bins, err := ReadAllBytes(sharedStringBinary(8, 1000), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := bins[0].Images[0].Strings
	if len(s) != 8 || len(s[7].Value) != 1000 || s[0].Key != s[7].Value {
		t.Fatalf("strings %d, want 8 of 1000 bytes", len(s))
	}
	if unsafeData(s[0].Key) != unsafeData(s[7].Value) {
		t.Errorf("the 16 references to one string are not one string")
	}
}

// TestOneBudgetForManyReads: reads sharing a Budget count together. A
// binary of 16 entries sharing one 64 KiB image lists 1 MiB of image bytes:
// within the budget of its 65 KiB alone (16 times plus 1 MiB), read alone;
// read nested 3 times (as fatobj reads the images of images) the budget
// refuses it.
func TestOneBudgetForManyReads(t *testing.T) {
	bin := aliasedBinary(make([]byte, 64<<10), 16)
	if _, err := ReadAllBytes(bin, nil); err != nil {
		t.Fatalf("alone: %v", err)
	}
	g := &Budget{}
	_, err := ReadAll(bytes.NewReader(bin), int64(len(bin)), &ReadOptions{Budget: g})
	for i := 0; i < 3 && err == nil; i++ {
		_, err = ReadAll(bytes.NewReader(bin), int64(len(bin)), &ReadOptions{Budget: g, Nested: true})
	}
	if !errors.Is(err, goffload.ErrLimit) {
		t.Errorf("nested: got %v, want ErrLimit", err)
	}
}

// TestInflationBudgetIsShared: 20 binaries inflating to 4 MiB each, read
// with one budget of 32 MiB of inflation, are refused at the ninth; each
// is inflated only as far as it is read.
func TestInflationBudgetIsShared(t *testing.T) {
	r24 := mustRelease(t, 24)
	im := LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "generic")
	var one bytes.Buffer
	if _, err := WriteCompressedBinary(&one, r24, &im, bytes.NewReader(make([]byte, 4<<20)), 4<<20, Compression{}); err != nil {
		t.Fatal(err)
	}
	all := bytes.Repeat(one.Bytes(), 20)
	if _, err := ReadAllBytes(all, nil); err != nil {
		t.Fatalf("default budget: %v", err)
	}
	g := &Budget{MaxInflated: 32 << 20}
	bins, err := ReadAll(bytes.NewReader(all), int64(len(all)), &ReadOptions{Budget: g})
	if !errors.Is(err, goffload.ErrLimit) || len(bins) != 7 {
		t.Errorf("32 MiB for 20 x 4 MiB: %d read, %v; want 7 and ErrLimit", len(bins), err)
	}
	if g.held > 8*inflateChunk {
		t.Errorf("%d bytes held to list 7 binaries", g.held)
	}
	r, err := bins[6].Open(0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil || len(got) != 4<<20 || !bytes.Equal(got, make([]byte, 4<<20)) {
		t.Errorf("image read back: %d bytes, %v", len(got), err)
	}
}

// cutReaderAt serves the first n bytes of b, then fails.
type cutReaderAt struct {
	b []byte
	n int64
}

var errDisk = errors.New("input/output error")

func (f cutReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.n {
		return 0, errDisk
	}
	return copy(p, f.b[off:]), nil
}

// TestInflateReadErrorIsNotInvalid: an input that fails to read while its
// stream is inflated gives its own error, not invalid data. Reading the
// binary inflates the start of its stream only: the failure near its end
// is met reading the image.
func TestInflateReadErrorIsNotInvalid(t *testing.T) {
	r24 := mustRelease(t, 24)
	im := LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "generic")
	var one bytes.Buffer
	if _, err := WriteCompressedBinary(&one, r24, &im, bytes.NewReader(bytes.Repeat([]byte("0123456789abcdef"), 1<<16)), 1<<20, Compression{}); err != nil {
		t.Fatal(err)
	}
	b := one.Bytes()
	bins, err := ReadAll(cutReaderAt{b, int64(len(b)) - 16}, int64(len(b)), nil)
	if err != nil {
		t.Fatalf("reading the binary, not its image: %v", err)
	}
	r, err := bins[0].Open(0)
	if err == nil {
		_, err = io.ReadAll(r)
	}
	if !errors.Is(err, errDisk) || errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("got %v, want the read error, not ErrInvalid", err)
	}
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

// TestInflatedRandomReads: reads of an inflated image at any offset and of
// any length, in order and not (kept part, chunks, straight into the
// caller's buffer, inflating again), give the image's bytes.
func TestInflatedRandomReads(t *testing.T) {
	r24 := mustRelease(t, 24)
	im := LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "generic")
	img := make([]byte, 6<<20+12345)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img {
		img[i] = byte(i/7) ^ byte(rng.IntN(4))
	}
	var one bytes.Buffer
	if _, err := WriteCompressedBinary(&one, r24, &im, bytes.NewReader(img), int64(len(img)), Compression{}); err != nil {
		t.Fatal(err)
	}
	for _, held := range []uint64{0, 100 << 10} {
		bins, err := ReadAllBytes(one.Bytes(), &ReadOptions{Budget: &Budget{MaxInflatedMemory: held}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := bins[0].Open(0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, img) {
			t.Fatalf("held %d: read in order: %d bytes, %v", held, len(got), err)
		}
		for i := 0; i < 40; i++ {
			off := rng.Int64N(int64(len(img)))
			n := rng.Int64N(3 << 20)
			if i%4 == 0 {
				n = rng.Int64N(100)
			}
			p := make([]byte, n)
			m, err := r.ReadAt(p, off)
			want := img[off:min(off+n, int64(len(img)))]
			if m != len(want) || !bytes.Equal(p[:m], want) || (m < len(p)) != (err == io.EOF) || err != nil && err != io.EOF {
				t.Fatalf("held %d: ReadAt(%d bytes, %d) = %d, %v", held, n, off, m, err)
			}
		}
	}
}
