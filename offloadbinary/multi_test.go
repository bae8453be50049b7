package offloadbinary

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// multiImages returns n images for release 24 and their data: kinds and
// offload kinds in turn, strings that repeat from image to image (one
// string table serves them all), an empty value, an image with no strings,
// an empty image, and sizes that are not multiples of 8.
func multiImages(n int) ([]Image, [][]byte) {
	kinds := []offload.ImageKind{offload.ImageObject, offload.ImageBitcode, offload.ImageCubin, offload.ImageNone, offload.ImageFatbinary, offload.ImagePTX}
	offloadKinds := []offload.OffloadKind{offload.OffloadOpenMP, offload.OffloadCUDA, offload.OffloadHIP, offload.OffloadNone, offload.OffloadSYCL}
	var ims []Image
	var data [][]byte
	for i := range n {
		im := Image{Kind: kinds[i%len(kinds)], OffloadKind: offloadKinds[i%len(offloadKinds)], Flags: uint32(i % 2)}
		switch i % 4 {
		case 0:
			im.Strings = []KeyValue{{"triple", "nvptx64-nvidia-cuda"}, {"arch", fmt.Sprintf("sm_%d", 70+i)}}
		case 1:
			im.Strings = []KeyValue{{"triple", "amdgcn-amd-amdhsa"}, {"arch", "gfx90a:xnack+"}, {"feature", ""}}
		case 2:
			im.Strings = []KeyValue{{"arch", "sm_70"}, {"triple", "nvptx64-nvidia-cuda"}, {"ch", "arch"}}
		}
		ims = append(ims, im)
		d := bytes.Repeat([]byte{byte('a' + i)}, (i*13)%29)
		data = append(data, d)
	}
	return ims, data
}

// imageData returns the ImageData of ims reading data.
func imageData(ims []Image, data [][]byte) []ImageData {
	out := make([]ImageData, len(ims))
	for i := range ims {
		out[i] = ImageData{Image: ims[i], Data: bytes.NewReader(data[i]), Size: int64(len(data[i]))}
	}
	return out
}

// writeAll returns release r's binary of ims, compressed with c unless it
// is nil.
func writeAll(t *testing.T, r *release.Release, ims []Image, data [][]byte, c *Compression) []byte {
	t.Helper()
	var buf bytes.Buffer
	var n int64
	var err error
	if c == nil {
		n, err = WriteBinaries(&buf, r, imageData(ims, data))
	} else {
		n, err = WriteCompressedBinaries(&buf, r, imageData(ims, data), *c)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || n%Alignment != 0 {
		t.Fatalf("wrote %d bytes, returned %d", buf.Len(), n)
	}
	return buf.Bytes()
}

// checkMultiLayout checks b, the version-3 binary of ims and data, against
// what LLVM main's OffloadBinary::write(ArrayRef<OffloadingImage>) lays out:
// a 40-byte header (Size, EntriesOffset 40, EntriesCount, InflatedSize 0),
// the entries one after another, the 24-byte string entries of all entries
// in their order, one string table that starts with a NUL and holds each
// distinct string once for every entry, zeros to a multiple of 8, the images
// one after another with nothing between them, zeros to a multiple of 8.
func checkMultiLayout(t *testing.T, b []byte, ims []Image, data [][]byte) {
	t.Helper()
	n := uint64(len(ims))
	if !bytes.Equal(b[:4], Magic[:]) || le.Uint32(b[4:]) != 3 || le.Uint64(b[8:]) != uint64(len(b)) || len(b)%8 != 0 ||
		le.Uint64(b[16:]) != HeaderSizeV3 || le.Uint64(b[24:]) != n || le.Uint64(b[32:]) != 0 {
		t.Fatalf("header % x (%d bytes)", b[:40], len(b))
	}
	var nstr uint64
	for _, im := range ims {
		nstr += uint64(len(im.Strings))
	}
	table := HeaderSizeV3 + n*ImageEntrySize + nstr*StringEntrySizeV2
	if b[table] != 0 {
		t.Errorf("the string table at %#x does not start with a NUL", table)
	}
	tableEnd := table + 1
	at := map[string]uint64{} // every string's one offset
	str := func(off uint64, what string, s string) {
		t.Helper()
		if off < table || off+uint64(len(s)) >= uint64(len(b)) {
			t.Fatalf("%s %q at %#x: outside the string table at %#x", what, s, off, table)
		}
		if string(b[off:off+uint64(len(s))]) != s || b[off+uint64(len(s))] != 0 {
			t.Errorf("%s at %#x is not %q and a NUL", what, off, s)
		}
		if prev, ok := at[s]; ok && prev != off && s != "" {
			t.Errorf("%q at %#x and at %#x: not one table", s, prev, off)
		}
		at[s] = off
		tableEnd = max(tableEnd, off+uint64(len(s))+1)
	}
	strEntry := HeaderSizeV3 + n*ImageEntrySize
	var image uint64
	for i, im := range ims {
		e := b[HeaderSizeV3+uint64(i)*ImageEntrySize:]
		code, _ := offload.OffloadKindCode(mustRelease(t, 24), im.OffloadKind)
		if offload.ImageKind(le.Uint16(e)) != im.Kind || le.Uint16(e[2:]) != code || le.Uint32(e[4:]) != im.Flags {
			t.Errorf("entry %d: % x", i, e[:8])
		}
		if got := le.Uint64(e[8:]); got != strEntry {
			t.Errorf("entry %d: StringOffset %#x, want %#x (right after the previous entry's)", i, got, strEntry)
		}
		if le.Uint64(e[16:]) != uint64(len(im.Strings)) {
			t.Errorf("entry %d: NumStrings %d", i, le.Uint64(e[16:]))
		}
		for _, kv := range im.Strings {
			s := b[strEntry:]
			str(le.Uint64(s), "key", kv.Key)
			str(le.Uint64(s[8:]), "value", kv.Value)
			if le.Uint64(s[16:]) != uint64(len(kv.Value)) {
				t.Errorf("entry %d: ValueSize %d of %q", i, le.Uint64(s[16:]), kv.Value)
			}
			strEntry += StringEntrySizeV2
		}
		off, size := le.Uint64(e[24:]), le.Uint64(e[32:])
		if i == 0 {
			image = off
		}
		if off != image || size != uint64(len(data[i])) {
			t.Errorf("entry %d: image at %#x of %d bytes, want %#x, %d (right after the previous image)", i, off, size, image, len(data[i]))
		}
		if !bytes.Equal(b[off:off+size], data[i]) {
			t.Errorf("entry %d: image differs", i)
		}
		image += size
	}
	if first := le.Uint64(b[HeaderSizeV3+24:]); first != alignUp(tableEnd, 8) || !allZero(b[tableEnd:first]) {
		t.Errorf("the images start at %#x; the string table ends at %#x", first, tableEnd)
	}
	if uint64(len(b)) != alignUp(image, 8) || !allZero(b[image:]) {
		t.Errorf("%d bytes; the images end at %#x", len(b), image)
	}
}

func allZero(b []byte) bool { return bytes.Count(b, []byte{0}) == len(b) }

// TestWriteBinariesRoundTrip writes binaries of 1 to 7 images, plain and
// compressed, reads them back as release 24 reads them, and checks the
// layout against main's OffloadBinary::write.
func TestWriteBinariesRoundTrip(t *testing.T) {
	r24 := mustRelease(t, 24)
	for n := 1; n <= 7; n++ {
		ims, data := multiImages(n)
		plain := writeAll(t, r24, ims, data, nil)
		checkMultiLayout(t, plain, ims, data)
		for _, c := range []*Compression{nil, {Format: "zstd"}, {Format: "zlib"}, {Format: "zstd", Level: 19}, {Format: "zlib", Level: ZlibStored}} {
			name := fmt.Sprintf("%d images, %+v", n, c)
			b := writeAll(t, r24, ims, data, c)
			// Two in a row: ReadAll finds the second at the next multiple of 8.
			bins, err := ReadAllBytes(append(append([]byte{}, b...), b...), &ReadOptions{Release: r24})
			if err != nil || len(bins) != 2 {
				t.Fatalf("%s: %d binaries, %v", name, len(bins), err)
			}
			bin := bins[0]
			if bin.Version != 3 || len(bin.Images) != n {
				t.Fatalf("%s: version %d, %d images", name, bin.Version, len(bin.Images))
			}
			for i := range ims {
				if d := cmp.Diff(ims[i], bin.Images[i].Image, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("%s: image %d (-wrote +read)\n%s", name, i, d)
				}
				if got := readAll(t, bin, i); !bytes.Equal(got, data[i]) {
					t.Errorf("%s: image %d: %q, want %q", name, i, got, data[i])
				}
			}
			if c == nil {
				continue
			}
			if bin.Compression != c.Format || bin.InflatedSize != uint64(len(plain)) || le.Uint64(b[24:]) != uint64(n) {
				t.Errorf("%s: %q, inflated %d (want %d), EntriesCount %d", name, bin.Compression, bin.InflatedSize, len(plain), le.Uint64(b[24:]))
			}
			inflated := make([]byte, bin.Inflated().Size())
			bin.Inflated().ReadAt(inflated, 0)
			if !bytes.Equal(inflated, plain) {
				t.Errorf("%s: the inflated binary is not the uncompressed one", name)
			}
		}
		if n > 1 {
			continue
		}
		// One image: the bytes of the single-image writers.
		want, err := MarshalBinary(r24, &ims[0], data[0])
		if err != nil || !bytes.Equal(plain, want) {
			t.Errorf("one image: WriteBinaries differs from MarshalBinary (%v)", err)
		}
		for _, c := range []Compression{{Format: "zstd"}, {Format: "zlib"}} {
			var buf bytes.Buffer
			if _, err := WriteCompressedBinary(&buf, r24, &ims[0], bytes.NewReader(data[0]), int64(len(data[0])), c); err != nil {
				t.Fatal(err)
			}
			if got := writeAll(t, r24, ims, data, &c); !bytes.Equal(got, buf.Bytes()) {
				t.Errorf("one image, %+v: WriteCompressedBinaries differs from WriteCompressedBinary", c)
			}
		}
	}
}

// TestWriteBinariesRefused: releases that write version 1, no image, an
// image of a negative size, without a reader or shorter than its size.
func TestWriteBinariesRefused(t *testing.T) {
	r24 := mustRelease(t, 24)
	ims, data := multiImages(3)
	zstd := Compression{Format: "zstd"}
	for _, major := range []int{14, 15, 22} {
		if _, err := WriteBinaries(io.Discard, mustRelease(t, major), imageData(ims, data)); !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("LLVM %d: %v, want goffload.ErrUnsupported", major, err)
		}
		if _, err := WriteCompressedBinaries(io.Discard, mustRelease(t, major), imageData(ims, data), zstd); !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("LLVM %d compressed: %v, want goffload.ErrUnsupported", major, err)
		}
	}
	if _, err := WriteBinaries(io.Discard, r24, nil); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("no image: %v", err)
	}
	if _, err := WriteCompressedBinaries(io.Discard, r24, nil, zstd); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("no image, compressed: %v", err)
	}
	if _, err := WriteCompressedBinaries(io.Discard, r24, imageData(ims, data), Compression{Format: "lz4"}); !errors.Is(err, offload.ErrUnknownKind) {
		t.Errorf("lz4: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func([]ImageData)
		want error
		says string
	}{
		{"negative size", func(d []ImageData) { d[1].Size = -1 }, offload.ErrEncoding, "image 1 size -1"},
		{"no reader", func(d []ImageData) { d[2].Data = nil }, fs.ErrInvalid, "image 2 of"},
		{"short image", func(d []ImageData) { d[1].Size += 5 }, io.ErrUnexpectedEOF, "image 1: got"},
		{"offload kind of no code", func(d []ImageData) { d[0].OffloadKind = 200 }, offload.ErrEncoding, "offload kind"},
	} {
		for _, comp := range []*Compression{nil, &zstd} {
			d := imageData(ims, data)
			c.edit(d)
			var buf bytes.Buffer
			var err error
			if comp == nil {
				_, err = WriteBinaries(&buf, r24, d)
			} else {
				_, err = WriteCompressedBinaries(&buf, r24, d, *comp)
			}
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("%s (%v): %v, want %v saying %q", c.name, comp, err, c.want, c.says)
			}
			if c.want != io.ErrUnexpectedEOF && buf.Len() != 0 {
				t.Errorf("%s (%v): wrote %d bytes", c.name, comp, buf.Len())
			}
		}
	}
}

// TestWriteBinariesStreamsLargeImage: a 2 GiB image between two small ones
// goes from its reader to the writer with memory that does not grow; the
// header and the end of the binary are where main's layout puts them.
func TestWriteBinariesStreamsLargeImage(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 GiB")
	}
	const size = 2<<30 + 3
	r24 := mustRelease(t, 24)
	small := func(s string) ImageData {
		return ImageData{Image: Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", s}}},
			Data: strings.NewReader(s), Size: int64(len(s))}
	}
	ims := []ImageData{small("first"), {Image: Image{Kind: offload.ImageCubin, OffloadKind: offload.OffloadCUDA, Strings: []KeyValue{{"triple", "nvptx64-nvidia-cuda"}, {"arch", "sm_90"}}},
		Data: io.LimitReader(&pattern{}, size), Size: size}, small("last")}
	w := &headTail{h: crc32.NewIEEE()}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n, err := WriteBinaries(w, r24, ims)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	grown := after.TotalAlloc - before.TotalAlloc
	t.Logf("a binary of %d bytes written with %d bytes allocated", n, grown)
	if grown > 1<<20 {
		t.Errorf("allocated %d bytes to stream a %d-byte image", grown, int64(size))
	}
	head := w.head
	if n != w.n || le.Uint64(head[8:]) != uint64(n) || n%8 != 0 || le.Uint64(head[24:]) != 3 {
		t.Fatalf("wrote %d bytes, returned %d, header % x", w.n, n, head[:40])
	}
	entry := func(i int) (off, sz uint64) {
		e := head[HeaderSizeV3+i*ImageEntrySize:]
		return le.Uint64(e[24:]), le.Uint64(e[32:])
	}
	o0, s0 := entry(0)
	o1, s1 := entry(1)
	o2, s2 := entry(2)
	if string(head[o0:o0+s0]) != "first" || o1 != o0+s0 || s1 != size || o2 != o1+s1 || s2 != 4 {
		t.Errorf("images at %#x+%d, %#x+%d, %#x+%d", o0, s0, o1, s1, o2, s2)
	}
	// The last image, then zeros to a multiple of 8.
	tail := w.tail[len(w.tail)-int(uint64(n)-o2):]
	if string(tail[:4]) != "last" || !allZero(tail[4:]) || len(tail) >= 4+8 {
		t.Errorf("the binary ends in % x", tail)
	}
}

// headTail is a writer that keeps the first and the last 4 KiB written.
type headTail struct {
	head, tail []byte
	n          int64
	h          io.Writer
}

func (w *headTail) Write(p []byte) (int, error) {
	if len(w.head) < 4096 {
		w.head = append(w.head, p[:min(len(p), 4096-len(w.head))]...)
	}
	if len(p) >= 4096 {
		w.tail = append(w.tail[:0], p[len(p)-4096:]...)
	} else {
		w.tail = append(w.tail, p...)
		if len(w.tail) > 8192 {
			w.tail = append(w.tail[:0], w.tail[len(w.tail)-4096:]...)
		}
	}
	w.n += int64(len(p))
	return w.h.Write(p)
}

// TestWriteCompressedBinariesStreams: images of 256 MiB in all compress with
// memory that does not grow with them, and read back.
func TestWriteCompressedBinariesStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("compresses 256 MiB")
	}
	const size = 256<<20 - 5
	r24 := mustRelease(t, 24)
	ims := []ImageData{
		{Image: Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}}}, Data: strings.NewReader("small"), Size: 5},
		{Image: Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "amdgcn-amd-amdhsa"}}}, Data: io.LimitReader(&pattern{}, size), Size: size},
	}
	f, err := os.CreateTemp(t.TempDir(), "v3")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n, err := WriteCompressedBinaries(f, r24, ims, Compression{Format: "zstd"})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	grown := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes of images compressed into %d with %d bytes allocated", size+5, n, grown)
	if grown > 32<<20 {
		t.Errorf("allocated %d bytes to compress %d bytes of images", grown, size+5)
	}
	bins, err := ReadAll(f, n, &ReadOptions{Release: r24})
	if err != nil || len(bins) != 1 || len(bins[0].Images) != 2 {
		t.Fatalf("%d binaries, %v", len(bins), err)
	}
	if got := readAll(t, bins[0], 0); string(got) != "small" {
		t.Errorf("image 0: %q", got)
	}
	r, err := bins[0].Open(1)
	if err != nil {
		t.Fatal(err)
	}
	h1, h2 := crc32.NewIEEE(), crc32.NewIEEE()
	io.Copy(h1, io.NewSectionReader(r, 0, r.Size()))
	io.Copy(h2, io.LimitReader(&pattern{}, size))
	if r.Size() != size || h1.Sum32() != h2.Sum32() {
		t.Errorf("image 1: %d bytes, crc %#x; want %d, %#x", r.Size(), h1.Sum32(), size, h2.Sum32())
	}
}
