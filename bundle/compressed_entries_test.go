package bundle

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/goffload/goffload"
	"github.com/google/go-cmp/cmp"
)

// countingReaderAt counts the bytes read from it.
type countingReaderAt struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// TestCompressedEntriesMatchTheDecompressedBundle reads the entries of the
// bundlers' compressed bundles without decompressing them whole, and each
// entry's data by OpenEntry: both equal what Decompress and Read give.
func TestCompressedEntriesMatchTheDecompressedBundle(t *testing.T) {
	plain := readTestdata(t, "hip-fatbin-clang-linker-wrapper-llvm22.bundle")
	hash, _ := Hash(bytes.NewReader(plain))
	inputs := map[string][]byte{"zlib-v3": ccob(3, MethodZlib, zlibCompress(plain), uint64(len(plain)), hash)}
	for _, name := range []string{"hip-fatbin-llvm19-zstd-v2.ccob", "hip-fatbin-llvm22-zstd-v3.ccob", "hip-fatbin-llvm22-zstd19-v2.ccob"} {
		inputs[name] = readTestdata(t, name)
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			if _, err := Decompress(&out, bytes.NewReader(data), int64(len(data))); err != nil {
				t.Fatal(err)
			}
			want := mustRead(t, out.Bytes())
			c, err := ReadCompressed(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Entries()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.Entries, got); diff != "" {
				t.Fatalf("entries (-Read +Entries):\n%s", diff)
			}
			for i, e := range got {
				data, err := io.ReadAll(c.OpenEntry(e))
				if err != nil || !bytes.Equal(data, entryData(t, want, i)) {
					t.Errorf("entry %d %s: %d bytes, %v", i, e.ID, len(data), err)
				}
			}
		})
	}
}

// TestCompressedEntriesOfABomb lists a bundle whose header declares 1 TiB
// and whose stream holds 64 MiB of zeros after the bundle header: Entries
// reads a few KiB of the input, and OpenEntry of an entry past the data's
// end stops at the end with goffload.ErrTruncated.
func TestCompressedEntriesOfABomb(t *testing.T) {
	const tib = 1 << 40
	header := craft(2,
		entryHeader(4096, 16, "host-x86_64-unknown-linux-gnu-", 30),
		entryHeader(tib-64, 64, "hip-amdgcn-amd-amdhsa--gfx90a", 29))
	stream := zlibCompress(append(header, make([]byte, 64<<20)...))
	data := ccob(3, MethodZlib, stream, tib, 0)
	in := &countingReaderAt{r: bytes.NewReader(data)}
	c, err := ReadCompressed(in, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	ents, err := c.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 || ents[1].Offset != tib-64 {
		t.Fatalf("entries %+v", ents)
	}
	if n := in.n.Load(); n > 16<<10 {
		t.Errorf("Entries read %d bytes of a %d-byte input", n, len(data))
	}
	if got, err := io.ReadAll(c.OpenEntry(ents[0])); err != nil || !bytes.Equal(got, make([]byte, 16)) {
		t.Errorf("entry 0: %q, %v", got, err)
	}
	if _, err := io.ReadAll(c.OpenEntry(ents[1])); !errors.Is(err, goffload.ErrTruncated) {
		t.Errorf("entry 1: %v, want goffload.ErrTruncated", err)
	}
	// Past the declared size, as Read refuses it.
	bad := ccob(3, MethodZlib, zlibCompress(craft(1, entryHeader(100, 200, "x", 1))), 250, 0)
	c, _ = ReadCompressed(bytes.NewReader(bad), int64(len(bad)))
	if _, err := c.Entries(); !errors.Is(err, goffload.ErrTruncated) {
		t.Errorf("an entry past UncompressedSize: %v", err)
	}
	short := ccob(3, MethodZlib, zlibCompress([]byte(Magic)), 1000, 0)
	c, _ = ReadCompressed(bytes.NewReader(short), int64(len(short)))
	if _, err := c.Entries(); !errors.Is(err, goffload.ErrTruncated) {
		t.Errorf("a header cut short: %v", err)
	}
	other := ccob(3, MethodZlib, zlibCompress(make([]byte, 100)), 100, 0)
	c, _ = ReadCompressed(bytes.NewReader(other), int64(len(other)))
	if _, err := c.Entries(); !errors.Is(err, ErrNotBundle) {
		t.Errorf("no bundle inside: %v", err)
	}
}

// TestCompressedEntriesOfHeadersBuiltToMultiply lists compressed bundles
// whose own header inflates: one ID of 64 MiB, 4 million empty entries (96
// MiB of entry headers), a header of many IDs just under the ID limit that
// passes the header limit. Each is refused with goffload.ErrLimit having
// read a few KiB of the input and allocated a few KiB, and raising
// MaxHeaderSize lets the last through.
func TestCompressedEntriesOfHeadersBuiltToMultiply(t *testing.T) {
	const bigID = 64 << 20
	id := entryHeader(1, 0, "", bigID)
	many := append([]byte(Magic), le.AppendUint64(nil, 4<<20)...)
	many = append(many, bytes.Repeat(entryHeader(1, 0, "", 0), 4<<20)...)
	longIDs := append([]byte(Magic), le.AppendUint64(nil, 300)...)
	for range 300 {
		longIDs = append(longIDs, entryHeader(1, 0, string(bytes.Repeat([]byte{'a'}, 4000)), 4000)...)
	}
	for _, c := range []struct {
		name   string
		header []byte
		usize  uint64
	}{
		{"id-64MiB", append(append(craft(1)[:headerSize], id...), make([]byte, bigID)...), uint64(headerSize + 24 + bigID)},
		{"4M-entries", many, uint64(len(many))},
		{"300-ids-of-4000", longIDs, uint64(len(longIDs))},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, m := range []Method{MethodZlib, MethodZstd} {
				var stream []byte
				if m == MethodZlib {
					stream = zlibCompress(c.header)
				} else {
					var buf bytes.Buffer
					if _, err := WriteCompressed(&buf, bytes.NewReader(c.header), int64(len(c.header)), CompressOptions{Version: 3, Method: MethodZstd, Level: 1}); err != nil {
						t.Fatal(err)
					}
					stream = buf.Bytes()[HeaderSize(3):]
				}
				data := ccob(3, m, stream, c.usize, 0)
				in := &countingReaderAt{r: bytes.NewReader(data)}
				cb, err := ReadCompressed(in, int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				ents, err := cb.Entries()
				runtime.ReadMemStats(&after)
				if !errors.Is(err, goffload.ErrLimit) {
					t.Fatalf("%v: %d entries, %v; want goffload.ErrLimit", m, len(ents), err)
				}
				// zstd's window is allocated whole for the frame's first block.
				if got := after.TotalAlloc - before.TotalAlloc; got > 2*DefaultMaxHeaderSize+uint64(len(c.header))/64+(8<<20) {
					t.Errorf("%v: %d bytes allocated for a %d-byte input (%v)", m, got, len(data), err)
				}
				if n := in.n.Load(); n > 256<<10 {
					t.Errorf("%v: read %d bytes", m, n)
				}
			}
		})
	}
	data := ccob(3, MethodZlib, zlibCompress(longIDs), uint64(len(longIDs)), 0)
	c, err := ReadCompressed(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	c.MaxHeaderSize = 2 << 20
	if ents, err := c.Entries(); err != nil || len(ents) != 300 {
		t.Errorf("with a 2 MiB limit: %d entries, %v", len(ents), err)
	}
}
