package offloadbinary

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// TestLLVM23WritesVersion2: LLVM 23 writes OffloadBinary version 2
// (llvm-project #169425; llvm-offload-binary puts every image in one binary
// since #197456): the 32-byte header with EntriesOffset 32 and
// EntriesCount, 24-byte string entries, and the layout of 24's binary
// without InflatedSize, every offset 8 bytes lower. 23 and 24 read it back.
func TestLLVM23WritesVersion2(t *testing.T) {
	r23, r24 := mustRelease(t, 23), mustRelease(t, 24)
	ims, data := multiImages(7)
	v2 := writeAll(t, r23, ims, data, nil)
	v3 := writeAll(t, r24, ims, data, nil)
	if le.Uint32(v2[4:]) != 2 || le.Uint64(v2[16:]) != HeaderSize || le.Uint64(v2[24:]) != 7 || le.Uint64(v2[8:]) != uint64(len(v2)) {
		t.Fatalf("header % x", v2[:HeaderSize])
	}
	// The same binary but for the header's 8 more bytes: the entries'
	// offsets move by 8, and the padding before the images absorbs them or
	// grows by 8.
	if le.Uint32(v3[4:]) != 3 || le.Uint64(v3[16:]) != HeaderSizeV3 {
		t.Fatalf("24's header % x", v3[:HeaderSizeV3])
	}
	for i := range 7 {
		e2, e3 := v2[HeaderSize+i*ImageEntrySize:], v3[HeaderSizeV3+i*ImageEntrySize:]
		if !bytes.Equal(e2[:8], e3[:8]) || le.Uint64(e2[8:])+8 != le.Uint64(e3[8:]) || le.Uint64(e2[16:]) != le.Uint64(e3[16:]) || le.Uint64(e2[32:]) != le.Uint64(e3[32:]) {
			t.Errorf("entry %d: % x, 24's % x", i, e2[:ImageEntrySize], e3[:ImageEntrySize])
		}
	}
	for _, r := range []*release.Release{r23, r24, nil} {
		opt := &ReadOptions{Release: r}
		bins, err := ReadAllBytes(v2, opt)
		if err != nil || len(bins) != 1 || len(bins[0].Images) != 7 || bins[0].Version != 2 {
			t.Fatalf("read by %v: %d binaries, %v", r, len(bins), err)
		}
		for i := range bins[0].Images {
			im := &bins[0].Images[i]
			got, err := bins[0].Open(i)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(got)
			if !bytes.Equal(b, data[i]) || im.Kind != ims[i].Kind || len(im.Strings) != len(ims[i].Strings) {
				t.Errorf("read by %v: image %d: %q %v %v", r, i, b, im.Kind, im.Strings)
			}
		}
	}
	// The packager of 23 writes one binary of all --image arguments too.
	var pkg bytes.Buffer
	fsys := &countingFiles{files: map[string][]byte{"a.o": []byte("\x7fELF a"), "b.o": []byte("\x7fELF bb")}}
	if _, err := Package(r23, &pkg, []string{"file=a.o,triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp", "file=b.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda"}, fsys.open); err != nil {
		t.Fatal(err)
	}
	if bins, err := ReadAllBytes(pkg.Bytes(), &ReadOptions{Release: r23}); err != nil || len(bins) != 1 || bins[0].Version != 2 || len(bins[0].Images) != 2 {
		t.Errorf("23's packager: %d binaries, %v", len(bins), err)
	}
}

// TestLLVM23RefusesVersion3: LLVM 23's extractHeader refuses a version
// above its own (2), so a binary of main's (version 3, compressed or not)
// is refused as 23 refuses it, with an error that says which release
// writes it; and 23 writes no compressed binary.
func TestLLVM23RefusesVersion3(t *testing.T) {
	r23, r24 := mustRelease(t, 23), mustRelease(t, 24)
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", "generic"}}}
	plain, err := MarshalBinary(r24, &im, []byte("image"))
	if err != nil {
		t.Fatal(err)
	}
	var packed bytes.Buffer
	if _, err := WriteCompressedBinary(&packed, r24, &im, bytes.NewReader([]byte("image")), 5, Compression{Format: "zstd"}); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"plain": plain, "compressed": packed.Bytes()} {
		_, err := ReadAllBytes(b, &ReadOptions{Release: r23})
		var fe *goffload.FormatError
		if !errors.Is(err, goffload.ErrInvalid) || !errors.As(err, &fe) || fe.Field != "Version" ||
			!strings.Contains(err.Error(), "LLVM 23 reads OffloadBinary versions 1 to 2, and version 3 is LLVM 24's") {
			t.Errorf("%s: %v", name, err)
		}
		if bins, err := ReadAllBytes(b, &ReadOptions{Release: r24}); err != nil || len(bins) != 1 {
			t.Errorf("%s, read by 24: %v", name, err)
		} else if bins[0].Version != 3 || name == "plain" && bins[0].InflatedSize != 0 {
			// Main's OffloadBinary::write value-initialises its header:
			// version 3 for every binary, InflatedSize 0 when it is not
			// compressed (OffloadBinary.h at 05ed393b, #222774).
			t.Errorf("%s: version %d, InflatedSize %d; want 3, 0 when plain", name, bins[0].Version, bins[0].InflatedSize)
		}
	}
	if _, err := WriteCompressedBinary(io.Discard, r23, &im, bytes.NewReader([]byte("image")), 5, Compression{Format: "zstd"}); !errors.Is(err, goffload.ErrUnsupported) {
		t.Errorf("23 compressing: %v, want goffload.ErrUnsupported", err)
	}
	if err := CheckCompression(r23, Compression{}); !errors.Is(err, goffload.ErrUnsupported) {
		t.Errorf("23's CheckCompression: %v", err)
	}
}

// TestLLVM23DoesNotAlignAfter: main (24) starts the next binary of a section
// at the next multiple of 8 after a binary's Size (the loop that came with
// compression, whose Size is not padded); 23 starts it right at Size, as 15
// to 22 do. A binary whose Size is 3 short of its padding, followed by
// another, is read whole by 24 and refused by 23 (zeros where it looks for
// the magic).
func TestLLVM23DoesNotAlignAfter(t *testing.T) {
	im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-unknown-linux-gnu"}, {"arch", "generic"}}}
	for _, w := range []int{23, 24} {
		first, err := MarshalBinary(mustRelease(t, w), &im, []byte("image"))
		if err != nil {
			t.Fatal(err)
		}
		le.PutUint64(first[8:], uint64(len(first)-3))
		two := append(append([]byte{}, first...), first...)
		le.PutUint64(two[len(first)+8:], uint64(len(first)))
		if bins, err := ReadAllBytes(two, &ReadOptions{Release: mustRelease(t, 24)}); err != nil || len(bins) != 2 || bins[1].Offset != int64(len(first)) {
			t.Errorf("written by %d, read by 24: %d binaries, %v", w, len(bins), err)
		}
		if w == 24 {
			continue // 23 refuses version 3 before it gets there
		}
		if _, err := ReadAllBytes(two, &ReadOptions{Release: mustRelease(t, 23)}); !errors.Is(err, goffload.ErrInvalid) {
			t.Errorf("written by %d, read by 23: %v, want goffload.ErrInvalid", w, err)
		}
	}
}
