package bundle

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/klauspost/compress/zstd"
)

// zstdTool returns the path of the zstd command, or ends the test.
func zstdTool(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("zstd")
	if err != nil {
		tooltest.Missing(t, "zstd not found in $PATH (Debian package zstd)")
	}
	return p
}

// zstdCompress runs `zstd args...` on data.
func zstdCompress(t testing.TB, tool string, data []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(tool, append([]string{"-q", "-c"}, args...)...)
	cmd.Stdin = bytes.NewReader(data)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zstd %v: %v: %s", args, err, stderr.Bytes())
	}
	return out.Bytes()
}

func unzstd(src []byte, maxWindow int64) ([]byte, error) {
	return io.ReadAll(newZstdReader(bytes.NewReader(src), 0, maxWindow))
}

// testCorpus returns data sets that exercise the block types and coders:
// empty, tiny, random (raw blocks), repetitive (RLE blocks, long matches,
// repeat offsets), text (Huffman literals, FSE sequences) and a mix, some
// larger than one 128 KiB block and than small windows. It is made once
// and shared: no test changes it (each data set's capacity is its length).
var testCorpus = sync.OnceValue(func() []corpusEntry {
	rng := rand.New(rand.NewSource(1))
	random := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	words := strings.Fields("kernel offload bundle device host image target triple gfx90a amdgcn " +
		"hip openmp section symbol entry linker wrapper register runtime binary the a of to and")
	text := func(n int) []byte {
		var b bytes.Buffer
		for b.Len() < n {
			b.WriteString(words[rng.Intn(len(words))])
			if rng.Intn(12) == 0 {
				fmt.Fprintf(&b, " %d,\n", rng.Intn(100000))
			} else {
				b.WriteByte(' ')
			}
		}
		return b.Bytes()[:n]
	}
	structured := func(n int) []byte { // like a code object: runs, tables, noise
		var b bytes.Buffer
		for b.Len() < n {
			switch rng.Intn(4) {
			case 0:
				b.Write(bytes.Repeat([]byte{byte(rng.Intn(4))}, rng.Intn(3000)))
			case 1:
				for i := 0; i < 200; i++ {
					b.Write([]byte{byte(i), 0, 0, 0x10, byte(rng.Intn(3)), 0, 0, 0})
				}
			case 2:
				b.Write(random(rng.Intn(500)))
			case 3:
				b.Write(text(rng.Intn(4000)))
			}
		}
		return b.Bytes()[:n]
	}
	var alphabet []byte
	for i := 0; i < 4<<20; i++ {
		alphabet = append(alphabet, byte(i%251), byte(i>>8))
	}
	corpus := []corpusEntry{
		{"empty", nil},
		{"one-byte", []byte{'x'}},
		{"short-text", text(100)},
		{"random-1MiB", random(1 << 20)},
		{"zeros-5MiB", make([]byte, 5<<20)},
		{"text-3MiB", text(3 << 20)},
		{"structured-2MiB", structured(2 << 20)},
		{"counter-8MiB", alphabet},
		{"random-then-copy", append(random(300<<10), bytes.Repeat(random(70<<10), 5)...)},
	}
	for i := range corpus {
		corpus[i].data = slices.Clip(corpus[i].data)
	}
	return corpus
})

// corpusEntry is a data set of testCorpus.
type corpusEntry struct {
	name string
	data []byte
}

// TestZstdMatchesZstdTool decodes what the zstd command writes of each
// input of testCorpus with each of its settings. The inputs × settings are
// sampled (tooltest.Sampled), the settings in an order that gives each
// input of the sample a setting that tells something of it.
func TestZstdMatchesZstdTool(t *testing.T) {
	tool := zstdTool(t)
	// High levels are slow to compress: they get the first 512 KiB of each
	// input, and --ultra -22 (slow to set up) 128 KiB of text.
	settings := [][]string{
		{"-1"}, {"-9"}, {"-12", "--check"}, {"--fast=5"}, {"-3"}, {"-19"},
		{"-6", "-B4096"}, {"-3", "--no-check"}, {"-3", "--long=27"}, {"-3", "--no-content-size"},
	}
	corpus := testCorpus()
	for ci, c := range corpus {
		for si, s := range settings {
			data := c.data
			if s[0] == "-19" {
				data = data[:min(len(data), 512<<10)]
			}
			if testing.Short() && len(data) > 1<<20 && len(s) > 1 {
				continue
			}
			t.Run(c.name+"/"+strings.Join(s, ""), func(t *testing.T) {
				tooltest.Sample(t, ci, si, len(corpus), len(settings))
				checkZstd(t, tool, data, s...)
			})
		}
	}
	// From a stream of unknown size, --ultra -22 sets up its 128 MiB window
	// and tables (3 s of CPU, 650 MiB); told the size with --size-hint, zstd
	// writes the same blocks, with a 128 KiB window in the frame header.
	text := corpus[5].data[:128<<10]
	t.Run("text/--ultra-22--size-hint", func(t *testing.T) {
		checkZstd(t, tool, text, "--ultra", "-22", fmt.Sprintf("--size-hint=%d", len(text)))
	})
	t.Run("text/--ultra-22", func(t *testing.T) {
		if !tooltest.Exhaustive() {
			t.Skipf("3 s of CPU; text/--ultra-22--size-hint has its blocks (%s=1 runs it)", tooltest.ExhaustiveEnv)
		}
		checkZstd(t, tool, text, "--ultra", "-22")
	})
}

func checkZstd(t *testing.T, tool string, data []byte, args ...string) {
	z := zstdCompress(t, tool, data, args...)
	got, err := unzstd(z, 1<<30)
	if err != nil {
		t.Fatalf("%d compressed bytes: %v", len(z), err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("decoded %d bytes differ from the %d bytes compressed", len(got), len(data))
	}
}

func TestZstdFramesAndSkippableFrames(t *testing.T) {
	tool := zstdTool(t)
	a, b := []byte(strings.Repeat("first frame ", 1000)), []byte(strings.Repeat("second ", 3000))
	skip := []byte{0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'}
	var src []byte
	src = append(src, skip...)
	src = append(src, zstdCompress(t, tool, a, "-3", "--check")...)
	src = append(src, skip...)
	src = append(src, zstdCompress(t, tool, b, "-19")...)
	got, err := unzstd(src, DefaultMaxWindow)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(append([]byte{}, a...), b...); !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, want %d", len(got), len(want))
	}
}

func TestZstdRefuses(t *testing.T) {
	tool := zstdTool(t)
	data := testCorpus()[5].data // text
	checked := zstdCompress(t, tool, data, "-3", "--check")
	badSum := append([]byte{}, checked...)
	badSum[len(badSum)-1] ^= 1
	streamed := zstdCompress(t, tool, data, "-3", "--long=27", "--no-content-size")
	for _, c := range []struct {
		name      string
		src       []byte
		maxWindow int64
		want      error
	}{
		{"checksum", badSum, DefaultMaxWindow, errCorrupt},
		{"truncated", checked[:len(checked)/2], DefaultMaxWindow, goffload.ErrTruncated},
		{"truncated-magic", append(append([]byte{}, checked...), 0x28, 0xb5), DefaultMaxWindow, goffload.ErrTruncated},
		{"trailing-garbage", append(append([]byte{}, checked...), "garbage"...), DefaultMaxWindow, errCorrupt},
		{"window-over-limit", streamed, 1 << 20, goffload.ErrLimit},
		// A single-segment frame declaring 1 GiB: its window is its size.
		{"single-segment-over-limit", []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0x13, 0x00, 0x00, 'z'}, DefaultMaxWindow, goffload.ErrLimit},
		// A raw block larger than its frame's 1 KiB window: the library says
		// "window size exceeded" of it too, but it is corrupt.
		{"block-over-window", append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x01, 0x40, 0x00}, make([]byte, 2048)...), DefaultMaxWindow, errCorrupt},
		{"dictionary", []byte{0x28, 0xb5, 0x2f, 0xfd, 0x21, 0x07, 0x01, 0x00, 0x00}, DefaultMaxWindow, goffload.ErrUnsupported},
		{"reserved-bit", []byte{0x28, 0xb5, 0x2f, 0xfd, 0x28, 0x00, 0x01, 0x00, 0x00}, DefaultMaxWindow, errCorrupt},
		{"reserved-block", []byte{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x07, 0x00, 0x00}, DefaultMaxWindow, errCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := unzstd(c.src, c.maxWindow)
			var fe *goffload.FormatError
			if !errors.Is(err, c.want) || !errors.As(err, &fe) {
				t.Fatalf("got %v, want a goffload.FormatError matching %v", err, c.want)
			}
		})
	}
	if got, err := unzstd(streamed, DefaultMaxWindow); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("with the default limit: %v", err)
	}
}

// TestZstdErrorOffsets checks where errors say the damage is: a frame
// header's field, or how far the input was read.
func TestZstdErrorOffsets(t *testing.T) {
	tool := zstdTool(t)
	small := zstdCompress(t, tool, []byte("first frame"), "-3", "--zstd=wlog=17")
	large := zstdCompress(t, tool, testCorpus()[5].data, "-3", "--long=27")
	dict := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x01, 0x00, 0x07, 0x01, 0x00, 0x00}
	for _, c := range []struct {
		name string
		src  []byte
		off  int64
		want error
	}{
		{"window-of-second-frame", append(append([]byte{}, small...), large...), int64(len(small)) + 5, goffload.ErrLimit},
		{"dictionary-after-window", append(append([]byte{}, small...), dict...), int64(len(small)) + 6, goffload.ErrUnsupported},
		{"cut", small[:len(small)-2], int64(len(small)) - 2, goffload.ErrTruncated},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := unzstd(c.src, 1<<20)
			var fe *goffload.FormatError
			if !errors.As(err, &fe) || !errors.Is(err, c.want) || fe.Offset != c.off {
				t.Fatalf("got %v, want %v at byte %#x", err, c.want, c.off)
			}
		})
	}
}

// TestZstdInputErrorPassesThrough checks that an error of the input is
// returned as it is, not taken for bad data.
func TestZstdInputErrorPassesThrough(t *testing.T) {
	tool := zstdTool(t)
	src := zstdCompress(t, tool, testCorpus()[5].data, "-3")
	broken := errors.New("disk on fire")
	r := io.MultiReader(bytes.NewReader(src[:len(src)/2]), iotestErrReader{broken})
	_, err := io.Copy(io.Discard, newZstdReader(r, 0, DefaultMaxWindow))
	var fe *goffload.FormatError
	if !errors.Is(err, broken) || errors.As(err, &fe) {
		t.Fatalf("got %v, want the input's error", err)
	}
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

// TestZstdMemoryBoundedByWindow decodes 32 MiB from frames whose window is
// 128 KiB and 1 MiB: what the decoder allocates follows the window, not the
// output.
func TestZstdMemoryBoundedByWindow(t *testing.T) {
	tool := zstdTool(t)
	data := bytes.Repeat(testCorpus()[6].data, 16) // structured, 32 MiB
	for _, wlog := range []int{17, 20} {
		window := int64(1) << wlog
		src := zstdCompress(t, tool, data, "-3", fmt.Sprintf("--zstd=wlog=%d", wlog))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		n, err := io.Copy(io.Discard, newZstdReader(bytes.NewReader(src), 0, window))
		runtime.ReadMemStats(&after)
		if err != nil || n != int64(len(data)) {
			t.Fatalf("decoded %d of %d bytes: %v", n, len(data), err)
		}
		alloc := int64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("window %d KiB: %d KiB allocated to decode %d MiB", window>>10, alloc>>10, n>>20)
		if alloc > window+zstdOverhead {
			t.Errorf("window %d KiB: %d KiB allocated, more than the window and %d KiB", window>>10, alloc>>10, zstdOverhead>>10)
		}
	}
}

// zstdOverhead is what decoding allocates beyond the window (compressed.go
// promises it): the window's two blocks of room, one block's buffers, the
// input's read-ahead.
const zstdOverhead = 1 << 20

// TestZstdStartsNoGoroutine checks that the decoder runs in the caller's
// goroutine: a reader left half read leaves nothing running.
func TestZstdStartsNoGoroutine(t *testing.T) {
	tool := zstdTool(t)
	src := zstdCompress(t, tool, testCorpus()[5].data, "-3")
	before := runtime.NumGoroutine()
	z := newZstdReader(bytes.NewReader(src), 0, DefaultMaxWindow)
	if _, err := io.ReadFull(z, make([]byte, 300<<10)); err != nil {
		t.Fatal(err)
	}
	if after := runtime.NumGoroutine(); after != before {
		t.Fatalf("%d goroutines while decoding, %d before", after, before)
	}
}

func FuzzZstd(f *testing.F) {
	if tool, err := exec.LookPath("zstd"); err == nil {
		for _, c := range testCorpus()[:4] {
			for _, lvl := range []string{"-1", "-19"} {
				data := c.data
				if len(data) > 64<<10 {
					data = data[:64<<10]
				}
				f.Add(zstdCompress(f, tool, data, lvl, "--check"))
			}
		}
	}
	seeds, _ := os.ReadDir("testdata")
	for _, e := range seeds {
		if strings.HasSuffix(e.Name(), ".zst") {
			if b, err := os.ReadFile("testdata/" + e.Name()); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		z := newZstdReader(bytes.NewReader(src), 0, 1<<20)
		// Output is bounded by the input only through the format; read at
		// most 16 MiB so that RLE bombs do not slow the fuzzer down.
		n, err := io.Copy(io.Discard, io.LimitReader(z, 16<<20))
		if err != nil {
			var fe *goffload.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v after %d bytes is not a goffload.FormatError", err, n)
			}
		}
	})
}

func BenchmarkZstdDecode(b *testing.B) {
	tool := zstdTool(b)
	data := testCorpus()[5].data
	z := zstdCompress(b, tool, data, "-3")
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := io.Copy(io.Discard, newZstdReader(bytes.NewReader(z), 0, DefaultMaxWindow)); err != nil {
			b.Fatal(err)
		}
	}
}

var update = flag.Bool("update", false, "regenerate testdata/*.zst and testdata/zstd-vectors.txt with the zstd command")

// zstdVectors are frozen zstd outputs, for machines without the zstd command:
// name, input (from testCorpus), zstd arguments.
var zstdVectors = []struct {
	name, input string
	args        []string
}{
	{"text-19-check.zst", "text", []string{"-19", "--check"}},
	{"structured-3-long-stream.zst", "structured", []string{"-3", "--long=27", "--no-content-size"}},
	{"mixed-1.zst", "mixed", []string{"-1"}},
	{"text-9-blocks4k.zst", "text", []string{"-9", "-B4096"}},
}

// vectorInputs returns the inputs of zstdVectors: 128 KiB of text, 128 KiB
// of structured data, and 16 KiB of random bytes (raw blocks), 64 KiB of
// zeros (RLE blocks) and 48 KiB of text.
func vectorInputs() map[string][]byte {
	in := map[string][]byte{}
	for _, c := range testCorpus() {
		in[c.name] = c.data
	}
	mixed := append(append(append([]byte{}, in["random-1MiB"][:16<<10]...), make([]byte, 64<<10)...), in["text-3MiB"][:48<<10]...)
	return map[string][]byte{"text": slices.Clip(in["text-3MiB"][:128<<10]), "structured": slices.Clip(in["structured-2MiB"][:128<<10]), "mixed": mixed}
}

// TestZstdFrozenVectors decodes testdata/*.zst and checks the SHA-256 and
// size recorded in testdata/zstd-vectors.txt; -update regenerates them.
func TestZstdFrozenVectors(t *testing.T) {
	if *update {
		tool := zstdTool(t)
		inputs := vectorInputs()
		var list bytes.Buffer
		for _, v := range zstdVectors {
			in := inputs[v.input]
			if err := os.WriteFile("testdata/"+v.name, zstdCompress(t, tool, in, v.args...), 0o644); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&list, "%s %x %d zstd %s < %s\n", v.name, sha256.Sum256(in), len(in), strings.Join(v.args, " "), v.input)
		}
		if err := os.WriteFile("testdata/zstd-vectors.txt", list.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list := readTestdata(t, "zstd-vectors.txt")
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		var name, sum string
		var size int
		if _, err := fmt.Sscan(line, &name, &sum, &size); err != nil {
			t.Fatalf("zstd-vectors.txt: %q: %v", line, err)
		}
		t.Run(name, func(t *testing.T) {
			got, err := unzstd(readTestdata(t, name), DefaultMaxWindow)
			if err != nil {
				t.Fatal(err)
			}
			if s := fmt.Sprintf("%x", sha256.Sum256(got)); s != sum || len(got) != size {
				t.Fatalf("decoded %d bytes with SHA-256 %s, want %d bytes with %s", len(got), s, size, sum)
			}
		})
	}
}

// TestZstdCorruptAgreesWithZstdTool flips bits of zstd frames (without
// checksums, so that the decoders see the damage) and decodes them with this
// package and with `zstd -d`: when both decode, the outputs must be equal, and
// this package must not decode what zstd refuses. zstd (libzstd 1.5, which
// LLVM links) decodes some damaged frames that RFC 8878 calls corrupt, mostly
// Huffman streams that its fast decoder does not check are used up exactly;
// those are counted, not failed. One zstd command decodes all the frames,
// each from its file to its own output file: zstd goes on after a frame it
// refuses, and removes that frame's output.
func TestZstdCorruptAgreesWithZstdTool(t *testing.T) {
	tool := zstdTool(t)
	rng := rand.New(rand.NewSource(5))
	in := vectorInputs()
	srcs := [][]byte{
		zstdCompress(t, tool, in["text"][:20000], "-19", "--no-check"),
		zstdCompress(t, tool, in["structured"][:30000], "-3", "--no-check"),
		zstdCompress(t, tool, in["mixed"][:90000], "-1", "--no-check"),
		zstdCompress(t, tool, in["text"][:5000], "-6", "--no-check"),
	}
	n := 1000
	if testing.Short() {
		n = 100
	}
	dir := t.TempDir()
	damaged := make([][]byte, n)
	args := []string{"-d", "-q", "--no-progress", "--"}
	name := func(i int) string { return filepath.Join(dir, fmt.Sprintf("frame%04d", i)) }
	for i := range damaged {
		s := append([]byte{}, srcs[rng.Intn(len(srcs))]...)
		for k := 0; k <= rng.Intn(3); k++ {
			s[rng.Intn(len(s))] ^= byte(1 << rng.Intn(8))
		}
		damaged[i] = s
		if err := os.WriteFile(name(i)+".zst", s, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, name(i)+".zst")
	}
	cmd := exec.Command(tool, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("zstd -d: %v", err)
	}
	var both, onlyTool, neither int
	for i, s := range damaged {
		ours, err := unzstd(s, DefaultMaxWindow)
		theirs, terr := os.ReadFile(name(i))
		if terr != nil && !errors.Is(terr, fs.ErrNotExist) {
			t.Fatal(terr)
		}
		switch {
		case err == nil && terr == nil:
			both++
			if !bytes.Equal(ours, theirs) {
				t.Errorf("case %d: decoded %d bytes, zstd %d different ones", i, len(ours), len(theirs))
			}
		case err == nil:
			t.Errorf("case %d: decoded %d bytes, zstd refuses", i, len(ours))
		case terr == nil:
			onlyTool++
		default:
			var fe *goffload.FormatError
			if !errors.As(err, &fe) {
				t.Errorf("case %d: %v is not a goffload.FormatError", i, err)
			}
			neither++
		}
	}
	if refused := n - both - onlyTool; (refused > 0) != (err != nil) {
		t.Errorf("zstd refused %d frames and exited with %v\n%s", refused, err, stderr.String())
	}
	t.Logf("%d damaged frames: %d decoded by both, %d refused by both, %d decoded by zstd only", n, both, neither, onlyTool)
}

// A stream of a few bytes whose frame declares a 64 MiB window makes the
// decoder allocate that window; decoders are reused, so forty such streams
// read one after another (an archive of compressed bundles) allocate it
// about once, not forty times.
func TestZstdDecodersAreReused(t *testing.T) {
	small := craft(1, entryHeader(200, 5, devID, uint64(len(devID))))
	var stream bytes.Buffer
	zw, err := zstd.NewWriter(&stream, zstd.WithSingleSegment(false), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(small) // streamed: the frame has no content size, its window is the descriptor's
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	// The encoder declares the window the data needs (1 KiB): declare
	// 64 MiB (exponent 16), as a hostile or careless writer may.
	if b := stream.Bytes(); b[4]&^0x04 != 0 { // a checksum flag may be there
		t.Fatalf("frame descriptor %#x, want a frame with a window descriptor and no content size", b[4])
	} else {
		b[5] = 16 << 3
	}
	hash, _ := Hash(bytes.NewReader(small))
	data := ccob(2, MethodZstd, stream.Bytes(), uint64(len(small)), hash)
	read := func() {
		c, err := ReadCompressed(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Entries(); err != nil {
			t.Fatal(err)
		}
	}
	read() // a decoder with its window, kept
	runtime.GC()
	got := tooltest.Allocated(func() {
		for range 40 {
			read()
		}
	})
	if got > 3*64<<20 {
		t.Errorf("40 streams declaring a 64 MiB window allocated %d MiB", got>>20)
	}
}
