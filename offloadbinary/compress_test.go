package offloadbinary

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
	"github.com/google/go-cmp/cmp"
)

// compressed returns a compressed version-3 binary of LLVM 24 holding data.
func compressed(t *testing.T, im *Image, data []byte, c Compression) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := WriteCompressedBinary(&buf, mustRelease(t, 24), im, bytes.NewReader(data), int64(len(data)), c)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || n%Alignment != 0 {
		t.Fatalf("wrote %d, returned %d", buf.Len(), n)
	}
	return buf.Bytes()
}

func TestCompressedRoundTrip(t *testing.T) {
	r24 := mustRelease(t, 24)
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadHIP, Strings: []KeyValue{{"triple", "amdgcn-amd-amdhsa"}, {"arch", "gfx90a"}}}
	for _, c := range []Compression{{Format: "zstd"}, {Format: "zlib"}, {Format: "zstd", Level: 19}, {Format: "zstd", Level: -5}, {Format: "zlib", Level: 9}, {Format: "zlib", Level: ZlibStored}} {
		for _, size := range []int{0, 1, 4, 100 << 10} {
			data := bytes.Repeat([]byte("device code "), size/12+1)[:size]
			b := compressed(t, &im, data, c)
			plain, err := MarshalBinary(r24, &im, data)
			if err != nil {
				t.Fatal(err)
			}
			// Two binaries in a row: the second starts at the next multiple of 8.
			two := append(append([]byte{}, b...), b...)
			bins, err := ReadAllBytes(two, &ReadOptions{Release: r24})
			if err != nil {
				t.Fatalf("%+v %d: %v", c, size, err)
			}
			if len(bins) != 2 || bins[0].Compression != c.Format || bins[0].InflatedSize != uint64(len(plain)) || bins[0].Version != 3 {
				t.Fatalf("%+v %d: %d binaries, %q, inflated %d (want %d)", c, size, len(bins), bins[0].Compression, bins[0].InflatedSize, len(plain))
			}
			if d := cmp.Diff(im, bins[1].Images[0].Image); d != "" {
				t.Errorf("%+v: (-wrote +read)\n%s", c, d)
			}
			got := readAll(t, bins[0], 0)
			if !bytes.Equal(got, data) {
				t.Errorf("%+v %d: image differs", c, size)
			}
			// The inflated binary is the uncompressed one but for Size.
			inflated := make([]byte, bins[0].Inflated().Size())
			bins[0].Inflated().ReadAt(inflated, 0)
			if !bytes.Equal(inflated, plain) {
				t.Errorf("%+v %d: the inflated binary is not the uncompressed one", c, size)
			}
			// Releases up to 22 refuse version 3 as LLVM 22 does.
			if _, err := ReadAllBytes(b, &ReadOptions{Release: mustRelease(t, 22)}); !errors.Is(err, goffload.ErrInvalid) {
				t.Errorf("LLVM 22 reads version 3: %v", err)
			}
		}
	}
	if _, err := WriteCompressedBinary(new(bytes.Buffer), mustRelease(t, 22), &im, nil, 0, Compression{Format: "zstd"}); !errors.Is(err, goffload.ErrUnsupported) {
		t.Errorf("compressed under LLVM 22: %v, want goffload.ErrUnsupported", err)
	}
	for _, c := range []Compression{{Format: "lz4"}, {Format: "zstd", Level: 23}, {Format: "zstd", Level: -131073}, {Format: "zlib", Level: 10}, {Format: "zlib", Level: -2}} {
		if _, err := WriteCompressedBinary(new(bytes.Buffer), r24, &im, nil, 0, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	// llvm-offload-binary's compress-level-zlib.test.
	_, err := WriteCompressedBinary(new(bytes.Buffer), r24, &im, nil, 0, Compression{Format: "zlib", Level: 12})
	if want := "invalid zlib compression level 12; expected a value in [0, 9]"; err == nil || !strings.HasPrefix(err.Error(), want) || !errors.Is(err, goffload.ErrLimit) {
		t.Errorf("zlib level 12: %v, want %q (goffload.ErrLimit)", err, want)
	}
	// zlib's level 0 stores: 64 KiB of zeros take more than 64 KiB.
	if b := compressed(t, &im, make([]byte, 64<<10), Compression{Format: "zlib", Level: ZlibStored}); len(b) < 64<<10 {
		t.Errorf("zlib level 0: %d bytes, want the data stored", len(b))
	}
}

func readAll(t *testing.T, b *Binary, i int) []byte {
	t.Helper()
	r, err := b.Open(i)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, r.Size())
	if _, err := r.ReadAt(out, 0); err != nil && r.Size() > 0 {
		t.Fatal(err)
	}
	return out
}

// TestCompressedRefused: the checks of LLVM main's extractHeader and
// decompressOffloadBinary, each a goffload.FormatError at its field.
func TestCompressedRefused(t *testing.T) {
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", ""}}}
	good := compressed(t, &im, []byte("an image of some bytes"), Compression{Format: "zlib"})
	size := le.Uint64(good[8:])
	set := func(off int, v uint64) []byte {
		b := append([]byte{}, good...)
		le.PutUint64(b[off:], v)
		return b
	}
	uncompressed, _ := MarshalBinary(mustRelease(t, 24), &im, []byte("x"))
	for _, c := range []struct {
		name  string
		data  []byte
		field string
		err   error
	}{
		{"inflated size too large", set(32, le.Uint64(good[32:])+8), "InflatedSize", goffload.ErrInvalid},
		{"inflated size too small", set(32, le.Uint64(good[32:])-8), "InflatedSize", goffload.ErrInvalid},
		{"inflated size under the header", set(32, 16), "InflatedSize", goffload.ErrTruncated},
		{"entries offset past Size", set(16, size+8), "EntriesOffset", goffload.ErrTruncated},
		{"entries offset into the compressed part", set(16, 48), "EntriesOffset", goffload.ErrTruncated},
		{"size past the input", set(8, uint64(len(good))+8), "Size", goffload.ErrTruncated},
		{"size under the header", set(8, 32), "Size", goffload.ErrTruncated},
		{"corrupt stream", append(append([]byte{}, good[:48]...), bytes.Repeat([]byte{0xff}, len(good)-48)...), "zlib stream", goffload.ErrInvalid},
		{"inflated over the limit", set(32, 1<<40), "InflatedSize", goffload.ErrLimit},
		{"entries count beyond the data", func() []byte { b := append([]byte{}, uncompressed...); le.PutUint64(b[24:], 99); return b }(), "EntriesCount", goffload.ErrTruncated},
	} {
		_, err := ReadAllBytes(c.data, &ReadOptions{Release: mustRelease(t, 24)})
		var fe *goffload.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, c.err) || !bytes.Contains([]byte(fe.Field), []byte(c.field)) {
			t.Errorf("%s: %v, want a goffload.FormatError at %s matching %v", c.name, err, c.field, c.err)
		}
	}
}

// TestCompressedZstdCommand: the body of a zstd-compressed binary is one
// zstd stream that the zstd command inflates to the uncompressed binary's
// bytes after its header, image included.
func TestCompressedZstdCommand(t *testing.T) {
	zstdCmd, err := exec.LookPath("zstd")
	if err != nil {
		tooltest.Missing(t, "no zstd command (Debian package zstd)")
	}
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", "generic"}}}
	data := bytes.Repeat([]byte("offload image "), 5000)
	b := compressed(t, &im, data, Compression{Format: "zstd", Level: 3})
	dir := t.TempDir()
	in := filepath.Join(dir, "body.zst")
	if err := os.WriteFile(in, b[HeaderSizeV3:le.Uint64(b[8:])], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(zstdCmd, "-d", "-c", in).Output()
	if err != nil {
		t.Fatalf("zstd -d: %v", err)
	}
	plain, _ := MarshalBinary(mustRelease(t, 24), &im, data)
	if !bytes.Equal(out, plain[HeaderSizeV3:]) {
		t.Fatalf("zstd -d gives %d bytes, want the %d after the header", len(out), len(plain)-HeaderSizeV3)
	}
	l := im.LayoutFor(mustRelease(t, 24), uint64(len(data)))
	if !bytes.Equal(out[l.ImageOffset-HeaderSizeV3:][:len(data)], data) {
		t.Error("the image is not where the layout says")
	}
}

// FuzzReadVersion3 reads inputs as LLVM main after 23 (24) does (versions 1 to
// 3, compressed bodies inflated, at most 1 MiB): no panic, every image
// readable or ErrImageRange, and reading allocates at most
// readFuzzPerByte a byte plus readFuzzFixed.
func FuzzReadVersion3(f *testing.F) {
	r24, err := release.Lookup(24)
	if err != nil {
		f.Fatal(err)
	}
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", "generic"}}}
	for _, c := range []Compression{{Format: "zstd"}, {Format: "zlib"}} {
		var buf bytes.Buffer
		if _, err := WriteCompressedBinary(&buf, r24, &im, bytes.NewReader([]byte("image bytes")), 11, c); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	plain, _ := MarshalBinary(r24, &im, []byte("image"))
	f.Add(plain)
	opt := &ReadOptions{Release: r24}
	opt.MaxInflated = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		var bins []*Binary
		var err error
		checkAllocated(t, len(data), readFuzzPerByte, readFuzzFixed, func() { bins, err = ReadAllBytes(data, opt) })
		if err != nil {
			return
		}
		checkImages(t, bins)
	})
}

// TestCompressedStreamsLargeImage: a 2 GiB image compresses with memory that
// does not grow with it, and a binary inflating to 256 MiB (past what is
// inflated in memory) is read, and its image copied out, the same way.
func TestCompressedStreamsLargeImage(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 2 GiB")
	}
	r24 := mustRelease(t, 24)
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", "generic"}}}
	for _, c := range []struct {
		size  int64
		bound uint64 // bytes allocated at most
	}{{2<<30 + 3, 32 << 20}, {256 << 20, 32 << 20}} {
		f, err := os.CreateTemp(t.TempDir(), "v3")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n, err := WriteCompressedBinary(f, r24, &im, io.LimitReader(&pattern{}, c.size), c.size, Compression{Format: "zstd"})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		grown := after.TotalAlloc - before.TotalAlloc
		t.Logf("%d-byte image: %d bytes compressed, %d allocated", c.size, n, grown)
		if grown > c.bound {
			t.Errorf("allocated %d bytes to compress a %d-byte image into %d bytes", grown, c.size, n)
		}
		if c.size > 1<<30 {
			continue // reading it back inflates 2 GiB to disk
		}
		runtime.GC()
		runtime.ReadMemStats(&before)
		bins, err := ReadAll(f, n, &ReadOptions{Release: r24})
		if err != nil {
			t.Fatal(err)
		}
		r, err := bins[0].Open(0)
		if err != nil {
			t.Fatal(err)
		}
		h1, h2 := crc32.NewIEEE(), crc32.NewIEEE()
		if _, err := io.Copy(h1, io.NewSectionReader(r, 0, r.Size())); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		io.Copy(h2, io.LimitReader(&pattern{}, c.size))
		if r.Size() != c.size || h1.Sum32() != h2.Sum32() {
			t.Errorf("read back %d bytes, crc %#x; want %d, %#x", r.Size(), h1.Sum32(), c.size, h2.Sum32())
		}
		grown = after.TotalAlloc - before.TotalAlloc
		t.Logf("read back with %d bytes allocated", grown)
		if grown > c.bound {
			t.Errorf("allocated %d bytes to read a binary inflating to %d", grown, c.size)
		}
	}
}

// TestZeroCompressionIsZstd: the zero Compression is llvm-offload-binary's
// default, zstd at its default level.
func TestZeroCompressionIsZstd(t *testing.T) {
	r24 := mustRelease(t, 24)
	im := LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "generic")
	var buf bytes.Buffer
	if _, err := WriteCompressedBinary(&buf, r24, &im, bytes.NewReader([]byte("image")), 5, Compression{}); err != nil {
		t.Fatal(err)
	}
	bins, err := ReadAllBytes(buf.Bytes(), nil)
	if err != nil || len(bins) != 1 || bins[0].Compression != "zstd" {
		t.Fatalf("%v, %v", bins, err)
	}
}
