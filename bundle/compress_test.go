package bundle

import (
	"bytes"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
	"github.com/google/go-cmp/cmp"
)

// semiCompressible returns n bytes that compress about as a code object
// does: random words from a small vocabulary, zero runs, and copies of
// earlier stretches.
func semiCompressible(n int, seed int64) []byte {
	rng := rand.New(rand.NewSource(seed))
	words := make([][8]byte, 256)
	for i := range words {
		rng.Read(words[i][:])
	}
	out := make([]byte, 0, n+4096)
	for len(out) < n {
		switch k := rng.Intn(10); {
		case k < 6:
			for range 64 {
				out = append(out, words[rng.Intn(rng.Intn(len(words))+1)][:]...)
			}
		case k < 7:
			out = append(out, make([]byte, rng.Intn(512))...)
		case len(out) > 4096:
			start := rng.Intn(len(out) - 2048)
			out = append(out, out[start:start+1+rng.Intn(2047)]...)
		}
	}
	return out[:n]
}

// compressTo compresses data with opt into a buffer (the spooled path).
func compressTo(t testing.TB, data []byte, opt CompressOptions) ([]byte, *CompressedHeader) {
	t.Helper()
	var buf bytes.Buffer
	h, err := WriteCompressed(&buf, bytes.NewReader(data), int64(len(data)), opt)
	if err != nil {
		t.Fatalf("WriteCompressed %+v: %v", opt, err)
	}
	return buf.Bytes(), h
}

// checkWritten reads the compressed bundle ccob back: its header must be
// h and what LLVM writes for data (all fields but the compressed size), and
// it must decompress to data.
func checkWritten(t testing.TB, ccob []byte, h *CompressedHeader, data []byte, opt CompressOptions) {
	t.Helper()
	c, err := ReadCompressed(bytes.NewReader(ccob), int64(len(ccob)))
	if err != nil {
		t.Fatal(err)
	}
	sum := md5.Sum(data)
	want := CompressedHeader{Version: opt.Version, Method: opt.Method, UncompressedSize: uint64(len(data)), Hash: le.Uint64(sum[:])}
	if opt.Version >= 2 {
		want.FileSize = uint64(len(ccob))
	}
	if diff := cmp.Diff(want, c.CompressedHeader); diff != "" {
		t.Errorf("header read back (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, *h); diff != "" {
		t.Errorf("header returned (-want +got):\n%s", diff)
	}
	if c.DataOffset != int64(HeaderSize(opt.Version)) {
		t.Errorf("data at %d", c.DataOffset)
	}
	var got bytes.Buffer
	if n, err := Decompress(&got, bytes.NewReader(ccob), int64(len(ccob))); err != nil || n != int64(len(data)) || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("Decompress: %d bytes of %d, %v, equal %v", n, len(data), err, bytes.Equal(got.Bytes(), data))
	}
}

var compressMethods = []Method{MethodZstd, MethodZlib}

// TestWriteCompressedRoundTrip: every version and method, sizes 0, 1 and 1
// MiB, written to a buffer (spooled through a temporary file) and to a file
// (the header written last, in place), read back by ReadCompressed and
// Decompress.
func TestWriteCompressedRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 1 << 20} {
		data := semiCompressible(size, int64(size))
		for _, v := range []uint16{1, 2, 3} {
			for _, m := range compressMethods {
				opt := CompressOptions{Version: v, Method: m, TempDir: dir}
				t.Run(fmt.Sprintf("%d/v%d/%v", size, v, m), func(t *testing.T) {
					spooled, h := compressTo(t, data, opt)
					checkWritten(t, spooled, h, data, opt)
					f, err := os.Create(filepath.Join(t.TempDir(), "out"))
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					h2, err := WriteCompressed(f, bytes.NewReader(data), int64(len(data)), opt)
					if err != nil {
						t.Fatal(err)
					}
					if off, _ := f.Seek(0, io.SeekCurrent); off != int64(len(spooled)) {
						t.Errorf("the file's offset is %d after the bundle, want %d", off, len(spooled))
					}
					inPlace, _ := os.ReadFile(f.Name())
					if !bytes.Equal(inPlace, spooled) {
						t.Errorf("written in place: %d bytes that differ from the %d spooled", len(inPlace), len(spooled))
					}
					checkWritten(t, inPlace, h2, data, opt)
				})
			}
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestWriteCompressedInPlaceAtOffset: a file written from an offset other
// than 0 gets its header there; one opened for appending gets the bundle
// spooled (it cannot be written at an offset).
func TestWriteCompressedInPlaceAtOffset(t *testing.T) {
	data := semiCompressible(300<<10, 5)
	opt := CompressOptions{Version: 3, Method: MethodZstd}
	want, _ := compressTo(t, data, opt)
	for _, flag := range []int{os.O_WRONLY, os.O_WRONLY | os.O_APPEND, os.O_RDWR} {
		name := filepath.Join(t.TempDir(), "out")
		os.WriteFile(name, []byte("prefix"), 0o644)
		f, err := os.OpenFile(name, flag, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Seek(6, io.SeekStart)
		if _, err := WriteCompressed(f, bytes.NewReader(data), int64(len(data)), opt); err != nil {
			t.Fatal(err)
		}
		f.Close()
		got, _ := os.ReadFile(name)
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("flags %#x: %d bytes, want the prefix and %d", flag, len(got), len(want))
		}
	}
}

// TestWriteCompressedHIPFatbin: the fatbin of images of 0, 1 and 1 MiB
// bytes, compressed with each release's defaults, read back entry by entry.
func TestWriteCompressedHIPFatbin(t *testing.T) {
	images := []CodeObject{}
	var datas [][]byte
	for i, n := range []int{0, 1, 1 << 20} {
		d := semiCompressible(n, int64(i))
		datas = append(datas, d)
		images = append(images, CodeObject{TargetID: []string{"gfx906", "gfx90a:xnack+", "gfx1030"}[i], Data: io.NewSectionReader(bytes.NewReader(d), 0, int64(n))})
	}
	for _, r := range HIPReleases() {
		t.Run(releaseName(r.Major), func(t *testing.T) {
			opt := CompressDefaults(r)
			var buf bytes.Buffer
			h, err := WriteCompressedHIPFatbin(&buf, r, images, opt)
			if r.Bundle.HIPFatbin.CompressedVersion == 0 {
				if !errors.Is(err, ErrCompressOptions) {
					t.Fatalf("LLVM %d: %v, want ErrCompressOptions", r.Major, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var plain bytes.Buffer
			if err := WriteHIPFatbin(&plain, r, images); err != nil {
				t.Fatal(err)
			}
			checkWritten(t, buf.Bytes(), h, plain.Bytes(), opt)
			c, _ := ReadCompressed(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			entries, err := c.Entries()
			if err != nil || len(entries) != 4 {
				t.Fatalf("entries %v, %v", entries, err)
			}
			for i, e := range entries[1:] {
				got, err := io.ReadAll(c.OpenEntry(e))
				if err != nil || !bytes.Equal(got, datas[i]) || e.ID != DeviceID(r, images[i].TargetID) {
					t.Errorf("entry %s: %d bytes, %v", e.ID, len(got), err)
				}
			}
		})
	}
	r, _ := release.Lookup(22)
	opt := CompressDefaults(r)
	opt.Version = 0 // the release's
	if h, err := WriteCompressedHIPFatbin(io.Discard, r, images, opt); err != nil || h.Version != 3 {
		t.Errorf("version 0: %+v, %v", h, err)
	}
}

// TestCompressLevels: level 0 is the method's default, zstd levels past
// libzstd's range are its ends, zlib's -1 is its default; higher levels
// compress semi-compressible data better (512 KiB of it: level 9 is 16%
// (zlib) to 22% (zstd) smaller than level 1, as for 2 MiB).
func TestCompressLevels(t *testing.T) {
	data := semiCompressible(512<<10, 7)
	size := func(m Method, level int) []byte {
		b, h := compressTo(t, data, CompressOptions{Version: 3, Method: m, Level: level})
		checkWritten(t, b, h, data, CompressOptions{Version: 3, Method: m})
		return b
	}
	same := func(m Method, a, b int) {
		if !bytes.Equal(size(m, a), size(m, b)) {
			t.Errorf("%v: levels %d and %d differ", m, a, b)
		}
	}
	same(MethodZstd, 0, ZstdDefaultLevel)
	same(MethodZstd, 100, ZstdMaxLevel)
	same(MethodZstd, math.MinInt, -5)
	same(MethodZlib, 0, ZlibDefaultLevel)
	same(MethodZlib, -1, ZlibDefaultLevel)
	for _, m := range compressMethods {
		fast, best := len(size(m, 1)), len(size(m, 9))
		if best >= fast {
			t.Errorf("%v: level 9 gives %d bytes, level 1 %d", m, best, fast)
		}
		t.Logf("%v: %d bytes at level 1, %d at level 9", m, fast, best)
	}
	for _, c := range []struct {
		opt  CompressOptions
		want int
	}{
		{CompressOptions{Method: MethodZstd}, 3}, {CompressOptions{Method: MethodZstd, Level: 30}, 22},
		{CompressOptions{Method: MethodZstd, Level: -1}, -1}, {CompressOptions{Method: MethodZstd, Level: -1 << 20}, ZstdMinLevel},
		{CompressOptions{Method: MethodZlib}, 6}, {CompressOptions{Method: MethodZlib, Level: -1}, 6},
		{CompressOptions{Method: MethodZlib, Level: 9}, 9},
	} {
		if got := c.opt.EffectiveLevel(); got != c.want {
			t.Errorf("%+v: level %d, want %d", c.opt, got, c.want)
		}
	}
}

// TestCompressWindow: a wider zstd window finds matches further back, and
// the frame says so.
func TestCompressWindow(t *testing.T) {
	chunk := semiCompressible(3<<20, 9)
	data := append(bytes.Clone(chunk), semiCompressible(6<<20, 10)...)
	data = append(data, chunk...) // 9 MiB after its first copy
	def, h := compressTo(t, data, CompressOptions{Version: 3, Method: MethodZstd})
	checkWritten(t, def, h, data, CompressOptions{Version: 3, Method: MethodZstd})
	wide, h := compressTo(t, data, CompressOptions{Version: 3, Method: MethodZstd, Window: 16 << 20})
	checkWritten(t, wide, h, data, CompressOptions{Version: 3, Method: MethodZstd})
	if len(wide) >= len(def)-(300<<10) { // the second copy of chunk, about 450 KiB compressed
		t.Errorf("a 16 MiB window: %d bytes, 8 MiB: %d", len(wide), len(def))
	}
	// Compressed.Open refuses a window wider than its MaxWindow.
	c, _ := ReadCompressed(bytes.NewReader(wide), int64(len(wide)))
	c.MaxWindow = 8 << 20
	if _, err := io.Copy(io.Discard, c.Open()); !errors.Is(err, goffload.ErrLimit) {
		t.Errorf("a 16 MiB window read with an 8 MiB limit: %v", err)
	}
}

// TestCompressDeterministic: the bytes do not depend on the number of
// processors (the zstd encoder's goroutines) or on the writer. The input is
// 1 MiB (eight 128 KiB blocks, which two goroutines pipeline), 3 MiB with
// OFFLOAD_TEST_EXHAUSTIVE.
func TestCompressDeterministic(t *testing.T) {
	size := 1 << 20
	if tooltest.Exhaustive() {
		size = 3 << 20
	}
	data := semiCompressible(size, 11)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, level := range []int{1, 3, 7, 19} {
		var outs [][]byte
		for _, procs := range []int{1, 2, 4} {
			runtime.GOMAXPROCS(procs)
			b, _ := compressTo(t, data, CompressOptions{Version: 3, Method: MethodZstd, Level: level})
			outs = append(outs, b)
		}
		for i := range outs[1:] {
			if !bytes.Equal(outs[0], outs[i+1]) {
				t.Errorf("level %d: the output of %d goroutines differs", level, i+2)
			}
		}
	}
}

// TestCompressOptionsErrors: options that no bundler writes with.
func TestCompressOptionsErrors(t *testing.T) {
	for _, opt := range []CompressOptions{
		{Version: 0, Method: MethodZstd}, {Version: 4, Method: MethodZstd},
		{Version: 3, Method: 2},
		{Version: 3, Method: MethodZlib, Level: 10}, {Version: 3, Method: MethodZlib, Level: -2},
		{Version: 3, Method: MethodZlib, Window: 1 << 15},
		{Version: 3, Method: MethodZstd, Window: 512}, {Version: 3, Method: MethodZstd, Window: 3 << 20},
		{Version: 3, Method: MethodZstd, Window: 256 << 20},
	} {
		_, err := WriteCompressed(io.Discard, bytes.NewReader(nil), 0, opt)
		if !errors.Is(err, ErrCompressOptions) || opt.Check() == nil {
			t.Errorf("%+v: %v, want ErrCompressOptions", opt, err)
		}
	}
	opt := CompressOptions{Version: 3, Method: MethodZstd}
	if _, err := WriteCompressed(nil, bytes.NewReader(nil), 0, opt); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("nil writer: %v", err)
	}
	if _, err := WriteCompressed(io.Discard, nil, 0, opt); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("nil reader: %v", err)
	}
	if _, err := WriteCompressed(io.Discard, bytes.NewReader(nil), -1, opt); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("negative size: %v", err)
	}
	for _, m := range compressMethods {
		opt.Method = m
		_, err := WriteCompressed(io.Discard, bytes.NewReader(make([]byte, 100)), 200, opt)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%v: a short input: %v", m, err)
		}
		_, err = WriteCompressed(io.Discard, failingReaderAt{errors.New("disk on fire")}, 200, opt)
		if err == nil || err.Error() != "disk on fire" {
			t.Errorf("%v: a failing input: %v", m, err)
		}
	}
	if _, err := WriteCompressed(failingWriter{}, bytes.NewReader(make([]byte, 100)), 100, opt); !errors.Is(err, errWrite) {
		t.Errorf("a failing writer: %v", err)
	}
}

var errWrite = errors.New("no room")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

// hugeReaderAt stands for an input that must not be read.
type hugeReaderAt struct{}

func (hugeReaderAt) ReadAt(p []byte, off int64) (int, error) {
	panic("read from a size the version cannot hold")
}

// TestCompressSizeLimit: versions 1 and 2 hold sizes in 32 bits, as LLVM's
// bundler checks; version 3 does not.
func TestCompressSizeLimit(t *testing.T) {
	for _, v := range []uint16{1, 2} {
		_, err := WriteCompressed(io.Discard, hugeReaderAt{}, 1<<32, CompressOptions{Version: v, Method: MethodZstd})
		var le *SizeLimitError
		if !errors.As(err, &le) || !errors.Is(err, goffload.ErrLimit) || le.Version != v || le.Size != 1<<32 || le.Field != "uncompressed size" {
			t.Errorf("version %d, 4 GiB: %v", v, err)
		}
	}
	h := &CompressedHeader{Version: 2}
	err := h.finish(1<<32, 0)
	var sle *SizeLimitError
	if !errors.As(err, &sle) || sle.Field != "total file size" {
		t.Errorf("a 4 GiB version 2 bundle: %v", err)
	}
	if h := (&CompressedHeader{Version: 3}); h.finish(1<<32, 0) != nil || h.FileSize != 1<<32 {
		t.Errorf("version 3: %+v", h)
	}
	t.Log(sle)
}

// TestCompressMemory: compressing 192 MiB allocates a bounded amount,
// whatever the size, in both methods.
func TestCompressMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 192 MiB")
	}
	src := genReaderAt{size: 192 << 20}
	for _, m := range compressMethods {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		h, err := WriteCompressed(io.Discard, src, src.size, CompressOptions{Version: 3, Method: m, Level: 1})
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%v: %d MiB into %d MiB, %d MiB allocated", m, src.size>>20, h.FileSize>>20, alloc>>20)
		if alloc > 64<<20 {
			t.Errorf("%v: %d MiB allocated", m, alloc>>20)
		}
	}
}

// genReaderAt is size bytes of a pattern with some redundancy, made as read.
type genReaderAt struct{ size int64 }

func (g genReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= g.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), g.size-off)
	for i := range n {
		x := uint64(off + i)
		p[i] = byte((x * 0x9E3779B97F4A7C15 >> 59) * (x >> 12 & 3))
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}
