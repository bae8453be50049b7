package offloadbinary

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/strtab"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// readerValidation is what llvm-objdump --offloading of LLVM 19 and 22 does
// with each file of testdata/llvm/reader-validation
// (docs/offload-binary.md#reader-validation): nil when it lists the file, else
// the class of its error. images is the count it lists.
var readerValidation = []struct {
	file   string
	err    error
	images int
}{
	{"bad_eoff.out", goffload.ErrTruncated, 0},   // EntryOffset past Size-40
	{"bad_imgoff.out", goffload.ErrTruncated, 0}, // ImageOffset past the buffer
	{"bad_imgsize.out", nil, 1},                  // ImageSize past the binary: not checked
	{"bad_size.out", goffload.ErrTruncated, 0},   // Size past the file
	{"bad_small.out", goffload.ErrTruncated, 0},  // Size = 16
	{"bad_stroff.out", goffload.ErrTruncated, 0}, // StringOffset past the buffer
	{"bad_v0.out", goffload.ErrInvalid, 0},
	{"bad_v2.out", goffload.ErrInvalid, 0},
	{"craft.out", nil, 7}, // unknown image and offload kinds are listed
	{"short.out", goffload.ErrInvalid, 0},
	{"trail.out", goffload.ErrInvalid, 0},  // 8 zero bytes after the binary
	{"trail4.out", goffload.ErrInvalid, 0}, // 4 zero bytes after the binary
}

var strict = &ReadOptions{Release: release.Default()}

func TestReaderValidationAsLLVM(t *testing.T) {
	for _, c := range readerValidation {
		t.Run(c.file, func(t *testing.T) {
			data := readTestdata(t, "reader-validation", c.file)
			bins, err := ReadAllBytes(data, strict)
			if c.err == nil {
				if err != nil {
					t.Fatalf("rejected: %v; LLVM accepts it", err)
				}
				if n := countImages(bins); n != c.images {
					t.Errorf("%d images, LLVM lists %d", n, c.images)
				}
				return
			}
			if !errors.Is(err, c.err) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			var fe *goffload.FormatError
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > int64(len(data)) {
				t.Errorf("error %v has no offset inside the input", err)
			}
		})
	}
}

func countImages(bins []*Binary) int {
	n := 0
	for _, b := range bins {
		n += len(b.Images)
	}
	return n
}

func TestReadErrorsSayWhere(t *testing.T) {
	single := readTestdata(t, "packager", "single-llvm22.bin")
	for _, c := range []struct {
		name  string
		data  []byte
		field string
		off   int64
		err   error
	}{
		{"version", patch64(single, 4, 2, 4), "Version", 4, goffload.ErrInvalid},
		{"magic", patch64(single, 0, 0x11, 1), "magic", 0, goffload.ErrInvalid},
		{"size", patch64(single, 8, 1<<40, 8), "Size", 8, goffload.ErrTruncated},
		{"entry offset", patch64(single, 16, 200, 8), "EntryOffset", 16, goffload.ErrTruncated},
		{"entry size", patch64(single, 24, 200, 8), "EntrySize", 24, goffload.ErrTruncated},
		{"string offset", patch64(single, 40, 400, 8), "StringOffset", 40, goffload.ErrTruncated},
		{"image offset", patch64(single, 56, 400, 8), "ImageOffset", 56, goffload.ErrTruncated},
		{"second binary", append(append([]byte{}, single...), patch64(single, 4, 0, 4)...), "Version", 160 + 4, goffload.ErrInvalid},
		{"huge string count", patch64(single, 48, 1<<60, 8), "string entries", 72, ErrUnchecked},
		{"string outside", patch64(single, 72, 1<<20, 8), "string offset", 72, ErrUnchecked},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadAllBytes(c.data, strict)
			var fe *goffload.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *goffload.FormatError", err)
			}
			if fe.Field != c.field || fe.Offset != c.off || !errors.Is(err, c.err) {
				t.Errorf("got %q at %d (%v), want %q at %d (%v)", fe.Field, fe.Offset, fe.Err, c.field, c.off, c.err)
			}
		})
	}
}

func patch64(data []byte, off int, v uint64, size int) []byte {
	out := append([]byte{}, data...)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	copy(out[off:off+size], b[:size])
	return out
}

func TestReadFixtures(t *testing.T) {
	img1, img2 := readTestdata(t, "img1.bin"), readTestdata(t, "img2.bin")
	for _, c := range []struct {
		major int
		hip   offload.OffloadKind // how the release reads the HIP image of a 19 binary
	}{{19, offload.OffloadHIP}, {22, offload.OffloadNone}} {
		data := readTestdata(t, "packager", "multi-llvm19.bin")
		bins, err := ReadAllBytes(data, &ReadOptions{Release: mustRelease(t, c.major)})
		if err != nil {
			t.Fatal(err)
		}
		if len(bins) != 2 || bins[1].Offset != 0xf0 {
			t.Fatalf("read %d binaries", len(bins))
		}
		got := []Image{bins[0].Images[0].Image, bins[1].Images[0].Image}
		want := []Image{
			{Kind: offload.ImageNone, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"feature", "+ptx63"}, {"arch", "sm_70"}, {"zeta", "1"}, {"triple", "nvptx64-nvidia-cuda"}, {"alpha", "2"}}},
			{Kind: offload.ImageObject, OffloadKind: c.hip, Strings: []KeyValue{{"arch", "gfx90a"}, {"triple", "amdgcn-amd-amdhsa"}}},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("LLVM %d reading: (-want +got)\n%s", c.major, d)
		}
		for i, img := range [][]byte{img1, img2} {
			r, err := bins[i].Open(0)
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := io.ReadAll(r); !bytes.Equal(b, img) {
				t.Errorf("image %d = %q, want %q", i, b, img)
			}
		}
	}
}

func TestImageOutsideBinary(t *testing.T) {
	bins, err := ReadAllBytes(readTestdata(t, "reader-validation", "bad_imgsize.out"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bins[0].Open(0); !errors.Is(err, ErrImageRange) {
		t.Errorf("Open = %v, want ErrImageRange", err)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	for _, r := range release.All() {
		if r.BinaryVersion == 0 {
			continue // LLVM 13, 14: no OffloadBinary (TestOldDriverReleasesRefuseOffloadBinaries)
		}
		im := Image{Kind: offload.ImageBitcode, OffloadKind: offload.OffloadHIP, Flags: 7,
			Strings: []KeyValue{{"triple", "amdgcn-amd-amdhsa"}, {"arch", ""}, {"feature", "+xnack"}, {"k", "arch"}}}
		data := bytes.Repeat([]byte{0xab}, 13)
		b, err := MarshalBinary(r, &im, data)
		if err != nil {
			t.Fatal(err)
		}
		if len(b)%Alignment != 0 || uint64(len(b)) != im.LayoutFor(r, 13).Size {
			t.Fatalf("%v: size %d", r, len(b))
		}
		bins, err := ReadAllBytes(b, &ReadOptions{Release: r})
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		if d := cmp.Diff(im, bins[0].Images[0].Image); d != "" {
			t.Errorf("%v: (-wrote +read)\n%s", r, d)
		}
		if code, _ := offload.OffloadKindCode(r, offload.OffloadHIP); bins[0].Images[0].OffloadKindCode != code {
			t.Errorf("%v: HIP written as %d", r, bins[0].Images[0].OffloadKindCode)
		}
	}
}

func TestWriteRejects(t *testing.T) {
	im := Image{OffloadKind: offload.OffloadSYCL}
	if _, err := MarshalBinary(mustRelease(t, 19), &im, nil); !errors.Is(err, offload.ErrEncoding) {
		t.Errorf("SYCL in LLVM 19: %v, want ErrEncoding", err)
	}
	var buf bytes.Buffer
	_, err := WriteBinary(&buf, release.Default(), &Image{}, bytes.NewReader([]byte("abc")), 10)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short image: %v, want io.ErrUnexpectedEOF", err)
	}
}

// marshalV2 lays out a version-2 binary as post-22 LLVM main does: entries,
// then 24-byte string entries, one string table, and the images back to back.
func marshalV2(t *testing.T, r *release.Release, ims []Image, data [][]byte) []byte {
	t.Helper()
	var strs []string
	nstr := 0
	for _, im := range ims {
		for _, kv := range im.Strings {
			strs = append(strs, kv.Key, kv.Value)
		}
		nstr += len(im.Strings)
	}
	st := strtab.Build(strs)
	strTab := uint64(HeaderSize + ImageEntrySize*len(ims) + StringEntrySizeV2*nstr)
	dataOff := alignUp(strTab+uint64(len(st.Data)), Alignment)
	total := dataOff
	for _, d := range data {
		total += uint64(len(d))
	}
	total = alignUp(total, Alignment)
	b := append([]byte{}, Magic[:]...)
	b = le.AppendUint32(b, 2)
	b = le.AppendUint64(b, total)
	b = le.AppendUint64(b, HeaderSize)
	b = le.AppendUint64(b, uint64(len(ims)))
	strOff, imgOff := uint64(HeaderSize+ImageEntrySize*len(ims)), dataOff
	for i, im := range ims {
		code, _ := offload.OffloadKindCode(r, im.OffloadKind)
		b = le.AppendUint16(b, uint16(im.Kind))
		b = le.AppendUint16(b, code)
		b = le.AppendUint32(b, im.Flags)
		b = le.AppendUint64(b, strOff)
		b = le.AppendUint64(b, uint64(len(im.Strings)))
		b = le.AppendUint64(b, imgOff)
		b = le.AppendUint64(b, uint64(len(data[i])))
		strOff += StringEntrySizeV2 * uint64(len(im.Strings))
		imgOff += uint64(len(data[i]))
	}
	for _, im := range ims {
		for _, kv := range im.Strings {
			b = le.AppendUint64(b, strTab+st.Offset(kv.Key))
			b = le.AppendUint64(b, strTab+st.Offset(kv.Value))
			b = le.AppendUint64(b, uint64(len(kv.Value)))
		}
	}
	b = append(b, st.Data...)
	b = append(b, make([]byte, dataOff-uint64(len(b)))...)
	for _, d := range data {
		b = append(b, d...)
	}
	return append(b, make([]byte, total-uint64(len(b)))...)
}

func TestReadVersion2(t *testing.T) {
	r := release.Default()
	ims := []Image{
		{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "amdgcn-amd-amdhsa"}, {"arch", "gfx90a"}}},
		{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "amdgcn-amd-amdhsa"}, {"arch", "gfx1030"}}},
	}
	data := [][]byte{[]byte("first image"), []byte("second")}
	v2 := marshalV2(t, r, ims, data)
	bins, err := ReadAllBytes(v2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) != 1 || bins[0].Version != 2 || len(bins[0].Images) != 2 {
		t.Fatalf("read %+v", bins)
	}
	for i := range ims {
		if d := cmp.Diff(ims[i], bins[0].Images[i].Image); d != "" {
			t.Errorf("image %d: (-want +got)\n%s", i, d)
		}
		rd, err := bins[0].Open(i)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(rd); !bytes.Equal(got, data[i]) {
			t.Errorf("image %d data %q", i, got)
		}
	}
	if _, err := ReadAllBytes(v2, strict); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("LLVM 19/22 rules: %v, want goffload.ErrInvalid", err)
	}
	if _, err := ReadAllBytes(patch64(v2, 24, 1<<58, 8), nil); !errors.Is(err, goffload.ErrTruncated) {
		t.Errorf("huge entry count: %v, want goffload.ErrTruncated", err)
	}
}

// TestReadStreamsFromReaderAt reads a binary through an io.ReaderAt that counts
// the bytes asked for: the image is not read.
func TestReadStreamsFromReaderAt(t *testing.T) {
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}}}
	big := make([]byte, 1<<20)
	b, err := MarshalBinary(release.Default(), &im, big)
	if err != nil {
		t.Fatal(err)
	}
	cr := &countingReaderAt{r: bytes.NewReader(b)}
	if _, err := ReadAll(cr, int64(len(b)), nil); err != nil {
		t.Fatal(err)
	}
	if cr.n > 4096 {
		t.Errorf("read %d bytes of a %d-byte binary to parse it", cr.n, len(b))
	}
}

type countingReaderAt struct {
	r io.ReaderAt
	n int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += n
	return n, err
}

// TestReadFailingReader: an input that cannot be read gives its error.
func TestReadFailingReader(t *testing.T) {
	_, err := ReadAll(failingReaderAt{}, 1000, nil)
	if !errors.Is(err, os.ErrClosed) {
		t.Errorf("got %v", err)
	}
}

type failingReaderAt struct{}

func (failingReaderAt) ReadAt([]byte, int64) (int, error) { return 0, os.ErrClosed }

// FuzzReadAll: any bytes give binaries covering them or an error at an
// offset inside them, never a panic; every image is readable or
// ErrImageRange; reading allocates at most readFuzzPerByte a byte plus
// readFuzzFixed.
func FuzzReadAll(f *testing.F) {
	for _, dir := range []string{"packager", "reader-validation"} {
		ents, _ := os.ReadDir(filepath.Join("..", "offload", "testdata", "llvm", dir))
		for _, e := range ents {
			data, err := os.ReadFile(filepath.Join("..", "offload", "testdata", "llvm", dir, e.Name()))
			if err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var bins []*Binary
		var err error
		checkAllocated(t, len(data), readFuzzPerByte, readFuzzFixed, func() { bins, err = ReadAllBytes(data, nil) })
		if err != nil {
			var fe *goffload.FormatError
			if errors.As(err, &fe) && (fe.Offset < 0 || fe.Offset > int64(len(data))) {
				t.Fatalf("error offset %d outside %d bytes: %v", fe.Offset, len(data), err)
			}
			return
		}
		// Back to back, each aligned after as ReadAll aligns (a compressed
		// binary's Size leaves out its padding), they reach the end.
		var end uint64
		for i, b := range bins {
			end += b.Size
			if i < len(bins)-1 && (*ReadOptions)(nil).alignsAfter(b.Version) {
				end = alignUp(end, Alignment)
			}
		}
		checkImages(t, bins)
		if len(bins) == 0 {
			if len(data) != 0 {
				t.Fatalf("no binary read of %d bytes", len(data))
			}
			return
		}
		if last := bins[len(bins)-1]; end != uint64(len(data)) && !((*ReadOptions)(nil).alignsAfter(last.Version) && alignUp(end, Alignment) == alignUp(uint64(len(data)), Alignment) && end < uint64(len(data))) {
			t.Fatalf("binaries cover %d of %d bytes", end, len(data))
		}
	})
}

// TestReadArgumentErrors: a nil reader or a negative size is an argument
// error (fs.ErrInvalid), not malformed input and not an empty success.
func TestReadArgumentErrors(t *testing.T) {
	single := readTestdata(t, "packager", "single-llvm22.bin")
	for _, c := range []struct {
		name string
		r    io.ReaderAt
		size int64
	}{
		{"nil reader", nil, 100},
		{"nil reader, size 0", nil, 0},
		{"negative size", bytes.NewReader(single), -5},
		{"very negative size", bytes.NewReader(single), -1 << 62},
	} {
		t.Run(c.name, func(t *testing.T) {
			bins, err := ReadAll(c.r, c.size, nil)
			if bins != nil || !errors.Is(err, fs.ErrInvalid) || errors.Is(err, goffload.ErrInvalid) {
				t.Errorf("ReadAll: %v, %v; want an argument error", bins, err)
			}
			b, err := ReadBinary(c.r, c.size, nil)
			if b != nil || !errors.Is(err, fs.ErrInvalid) || errors.Is(err, goffload.ErrInvalid) {
				t.Errorf("ReadBinary: %v, %v; want an argument error", b, err)
			}
		})
	}
}

// checkImages reads every image of bins: each is whole, or out of its
// binary (ErrImageRange).
func checkImages(t *testing.T, bins []*Binary) {
	t.Helper()
	for _, b := range bins {
		for i := range b.Images {
			r, err := b.Open(i)
			if err != nil {
				if !errors.Is(err, ErrImageRange) {
					t.Fatal(err)
				}
				continue
			}
			if got, err := io.ReadAll(r); err != nil || uint64(len(got)) != b.Images[i].ImageSize {
				t.Fatalf("image %d: %d bytes, %v", i, len(got), err)
			}
		}
	}
}

// TestReadStringEntriesAsMain: LLVM 23 and later refuse an entry whose
// string entries, at 24 bytes each whatever the version, run past the
// buffer (unexpected_eof, goffload.ErrTruncated at NumStrings; llvm-project
// #177029); LLVM 15 to 22 do not check them (here ErrUnchecked when they are
// read).
func TestReadStringEntriesAsMain(t *testing.T) {
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", "generic"}}}
	for _, c := range []struct {
		writer, reader int
		numStrings     uint64
		err            error
	}{
		{24, 24, 1 << 40, goffload.ErrTruncated},
		{23, 23, 1 << 40, goffload.ErrTruncated},
		{22, 24, 1 << 40, goffload.ErrTruncated},
		{22, 23, 1 << 40, goffload.ErrTruncated},
		{22, 22, 1 << 40, ErrUnchecked},
	} {
		b, err := MarshalBinary(mustRelease(t, c.writer), &im, []byte("image"))
		if err != nil {
			t.Fatal(err)
		}
		hdr := int(le.Uint64(b[16:]))
		le.PutUint64(b[hdr+16:], c.numStrings)
		_, err = ReadAllBytes(b, &ReadOptions{Release: mustRelease(t, c.reader)})
		var fe *goffload.FormatError
		if !errors.Is(err, c.err) || !errors.As(err, &fe) {
			t.Errorf("written by %d, read by %d, %d strings: %v, want %v", c.writer, c.reader, c.numStrings, err, c.err)
		}
	}
	// The two strings it has are read by both.
	for _, r := range []int{22, 23, 24} {
		b, _ := MarshalBinary(mustRelease(t, 22), &im, []byte("image"))
		if bins, err := ReadAllBytes(b, &ReadOptions{Release: mustRelease(t, r)}); err != nil || bins[0].Images[0].Arch() != "generic" {
			t.Errorf("read by %d: %v", r, err)
		}
	}
	// A version-1 binary of two one-letter keys, empty values and no image
	// is 112 bytes: its 16-byte string entries fit, main's count of 24
	// bytes each (72 + 48 > 112) does not.
	tiny := Image{Strings: []KeyValue{{"a", ""}, {"b", ""}}}
	b, _ := MarshalBinary(mustRelease(t, 22), &tiny, nil)
	if _, err := ReadAllBytes(b, &ReadOptions{Release: mustRelease(t, 22)}); len(b) != 112 || err != nil {
		t.Errorf("%d bytes, read by 22: %v", len(b), err)
	}
	for _, r := range []int{23, 24} {
		if _, err := ReadAllBytes(b, &ReadOptions{Release: mustRelease(t, r)}); !errors.Is(err, goffload.ErrTruncated) {
			t.Errorf("read by %d: %v, want goffload.ErrTruncated", r, err)
		}
	}
}
