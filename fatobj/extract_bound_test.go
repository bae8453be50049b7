package fatobj

import (
	"bytes"
	bin "encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/klauspost/compress/zstd"
)

// zeros reads as zero bytes wherever it is read.
type zeros struct{}

func (zeros) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	return len(p), nil
}

// compressedV3 returns a compressed version-3 binary (LLVM main after 23)
// of one image of size zero bytes.
func compressedV3(t *testing.T, size int64) []byte {
	t.Helper()
	im := offloadbinary.Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP,
		Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "amdgcn-amd-amdhsa"}, {Key: "arch", Value: "gfx90a"}}}
	var b bytes.Buffer
	if _, err := offloadbinary.WriteCompressedBinary(&b, mustRelease(t, 24), &im, io.NewSectionReader(zeros{}, 0, size), size, offloadbinary.Compression{Format: "zstd"}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// aliasedV3 returns a version-3 binary of n entries, for n arches, that all
// point at the one image, its body compressed with zstd: what a writer
// that shares images would make, n × len(image) bytes to extract from an
// inflated binary of about len(image) + 80 × n bytes.
func aliasedV3(t *testing.T, n int, image []byte) []byte {
	t.Helper()
	le := bin.LittleEndian
	const hdr = offloadbinary.HeaderSizeV3
	strEntries := uint64(hdr) + uint64(n)*offloadbinary.ImageEntrySize
	strTab := strEntries + uint64(n)*2*offloadbinary.StringEntrySizeV2
	tab := []byte("triple\x00amdgcn-amd-amdhsa\x00arch\x00")
	archAt := make([]uint64, n)
	for i := range archAt {
		archAt[i] = uint64(len(tab))
		tab = fmt.Appendf(tab, "cpu%d\x00", i)
	}
	imageAt := (strTab + uint64(len(tab)) + 7) &^ 7
	size := (imageAt + uint64(len(image)) + 7) &^ 7

	var body []byte
	for i := range n {
		body = le.AppendUint16(body, uint16(offload.ImageObject))
		body = le.AppendUint16(body, uint16(offload.OffloadOpenMP))
		body = le.AppendUint32(body, 0)
		body = le.AppendUint64(body, strEntries+uint64(i)*2*offloadbinary.StringEntrySizeV2)
		body = le.AppendUint64(body, 2)
		body = le.AppendUint64(body, imageAt)
		body = le.AppendUint64(body, uint64(len(image)))
	}
	for i := range n {
		for _, kv := range [][3]uint64{{0, 7, 17}, {25, archAt[i], uint64(len(fmt.Sprintf("cpu%d", i)))}} {
			body = le.AppendUint64(body, strTab+kv[0])
			body = le.AppendUint64(body, strTab+kv[1])
			body = le.AppendUint64(body, kv[2])
		}
	}
	body = append(body, tab...)
	body = append(body, make([]byte, imageAt-hdr-uint64(len(body)))...)
	body = append(body, image...)
	body = append(body, make([]byte, size-hdr-uint64(len(body)))...)

	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	stream := enc.EncodeAll(body, nil)
	b := append([]byte{}, offloadbinary.Magic[:]...)
	b = le.AppendUint32(b, 3)
	b = le.AppendUint64(b, hdr+uint64(len(stream)))
	b = le.AppendUint64(b, hdr)
	b = le.AppendUint64(b, uint64(n))
	b = le.AppendUint64(b, size)
	b = append(b, stream...)
	return append(b, make([]byte, (8-len(b)%8)%8)...)
}

func planOf(t *testing.T, data []byte, opt *ExtractOptions) (*Extraction, error) {
	t.Helper()
	f, err := NewFile("in.bin", bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return PlanExtract([]*File{f}, opt)
}

// An image inflated from a compressed binary counts by its inflated size
// against the inflation limit, not against 16 times the input: 64 MiB of
// zeros compressed to a few KB extract without raising MaxBytes; a bound
// asked for holds.
func TestExtractCompressedImage(t *testing.T) {
	const size = 64 << 20
	data := compressedV3(t, size)
	if len(data) > 64<<10 {
		t.Fatalf("%d bytes compressed", len(data))
	}
	x, err := planOf(t, data, &ExtractOptions{Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Files) != 1 || x.Total != size {
		t.Errorf("%d files of %d bytes, want 1 of %d", len(x.Files), x.Total, size)
	}
	var n countWriter
	if err := x.Files[0].Copy(&n); err != nil || n != size {
		t.Errorf("copied %d bytes, %v", n, err)
	}
	if _, err := planOf(t, data, &ExtractOptions{Raw: true, MaxBytes: size - 1}); !errors.Is(err, goffload.ErrLimit) {
		t.Errorf("MaxBytes %d: %v", size-1, err)
	}
	// Not raw: the binary as it is stored, nothing inflated.
	if x, err := planOf(t, data, nil); err != nil || x.Total > int64(len(data)) {
		t.Errorf("not raw: %v", err)
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// Entries that alias one inflated image count each file, the inflated
// bytes once: two files of one 8 MiB image are more than the 8 MiB
// inflated plus 16 times the input plus 1 MiB; 4,000 of one 800-byte
// image (3.2 MB from about 13 KB) too. MaxBytes -1 lifts the bound.
func TestExtractAliasedCompressedImages(t *testing.T) {
	for _, c := range []struct{ n, size int }{{1, 8 << 20}, {2, 8 << 20}, {4000, 800}} {
		t.Run(fmt.Sprintf("%dx%d", c.n, c.size), func(t *testing.T) {
			data := aliasedV3(t, c.n, bytes.Repeat([]byte{0x90}, c.size))
			_, err := planOf(t, data, &ExtractOptions{Raw: true})
			if c.n == 1 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, goffload.ErrLimit) {
				t.Fatalf("%d bytes, %d files of %d bytes: %v", len(data), c.n, c.size, err)
			}
			x, err := planOf(t, data, &ExtractOptions{Raw: true, MaxBytes: -1})
			if err != nil || len(x.Files) != c.n {
				t.Fatalf("MaxBytes -1: %v", err)
			}
			var n countWriter
			if err := x.Files[c.n-1].Copy(&n); err != nil || n != countWriter(c.size) {
				t.Errorf("copied %d bytes, %v", n, err)
			}
		})
	}
}

// Nested binaries (LLVM 23 and main) count the inflated bytes of each
// stream once too, however many entries point at the binary holding it:
// one entry of an outer compressed binary holding an inner one of 8 MiB
// of zeros extracts, two entries pointing at it are refused.
func TestExtractNestedCompressedImages(t *testing.T) {
	inner := compressedV3(t, 8<<20)
	for n := 1; n <= 2; n++ {
		data := aliasedV3(t, n, inner)
		x, err := planOf(t, data, &ExtractOptions{Raw: true})
		switch {
		case n == 1 && err != nil:
			t.Fatal(err)
		case n == 1 && (len(x.Files) != 1 || x.Files[0].Image.Source != SourceNested || x.Total != 8<<20):
			t.Errorf("one entry: %d files of %d bytes", len(x.Files), x.Total)
		case n == 2 && !errors.Is(err, goffload.ErrLimit):
			t.Errorf("two entries of one nested binary: %v", err)
		}
	}
}

// ccob returns a compressed bundle (version 3, zstd) of the host's empty
// entry and one entry per target ID, each pointing at the one code object.
func ccob(t *testing.T, code []byte, targets ...string) []byte {
	t.Helper()
	le := bin.LittleEndian
	ids := []string{"host-x86_64-unknown-linux-gnu-"}
	for _, tg := range targets {
		ids = append(ids, "hipv4-amdgcn-amd-amdhsa--"+tg)
	}
	at := uint64(24 + 8)
	for _, id := range ids {
		at += 24 + uint64(len(id))
	}
	at = (at + 4095) &^ 4095
	b := []byte(bundle.Magic)
	b = le.AppendUint64(b, uint64(len(ids)))
	for i, id := range ids {
		off, size := at, uint64(len(code))
		if i == 0 {
			size = 0
		}
		b = le.AppendUint64(b, off)
		b = le.AppendUint64(b, size)
		b = le.AppendUint64(b, uint64(len(id)))
		b = append(b, id...)
	}
	b = append(b, make([]byte, at-uint64(len(b)))...)
	// The header, then the code object, read from where they are.
	src := io.NewSectionReader(concatReaderAt{b, code}, 0, int64(len(b)+len(code)))
	var out bytes.Buffer
	if _, err := bundle.WriteCompressed(&out, src, src.Size(), bundle.CompressOptions{Version: 3, Method: bundle.MethodZstd}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// concatReaderAt reads as its two slices end to end.
type concatReaderAt [2][]byte

func (c concatReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for _, s := range c {
		if off >= int64(len(s)) {
			off -= int64(len(s))
			continue
		}
		m := copy(p[n:], s[off:])
		n, off = n+m, 0
		if n == len(p) {
			return n, nil
		}
	}
	return n, io.EOF
}

// The code object of a compressed bundle counts as the inflated bytes of
// an OffloadBinary do: 32 MiB from a few KB extract; two entries of one
// 32 MiB range are refused.
func TestExtractCompressedBundle(t *testing.T) {
	code := make([]byte, 32<<20)
	copy(code, "\x7fELF")
	one := ccob(t, code, "gfx90a")
	x, err := planOf(t, one, &ExtractOptions{Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Files) != 1 || x.Total != int64(len(code)) {
		t.Fatalf("%d files, %d bytes", len(x.Files), x.Total)
	}
	if _, err := planOf(t, one, nil); err != nil {
		t.Errorf("not raw: %v", err)
	}
	two := ccob(t, code, "gfx90a", "gfx908")
	if _, err := planOf(t, two, &ExtractOptions{Raw: true}); !errors.Is(err, goffload.ErrLimit) {
		t.Errorf("two entries of one range: %v", err)
	}
}
