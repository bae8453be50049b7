package fatobj

import (
	"bytes"
	bin "encoding/binary"
	"errors"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// nestedShared is a version-3 binary of k entries all pointing at inner.
func nestedShared(inner []byte, k int) []byte {
	le := bin.LittleEndian
	img := (offloadbinary.HeaderSizeV3 + offloadbinary.ImageEntrySize*k + 7) &^ 7
	size := (img + len(inner) + 7) &^ 7
	b := make([]byte, size)
	copy(b, offloadbinary.Magic[:])
	le.PutUint32(b[4:], 3)
	le.PutUint64(b[8:], uint64(size))
	le.PutUint64(b[16:], offloadbinary.HeaderSizeV3)
	le.PutUint64(b[24:], uint64(k))
	for i := 0; i < k; i++ {
		e := b[offloadbinary.HeaderSizeV3+offloadbinary.ImageEntrySize*i:]
		le.PutUint16(e[0:], uint16(offload.ImageObject))
		le.PutUint16(e[2:], 1)
		le.PutUint64(e[8:], uint64(offloadbinary.HeaderSizeV3+offloadbinary.ImageEntrySize*k))
		le.PutUint64(e[24:], uint64(img))
		le.PutUint64(e[32:], uint64(len(inner)))
	}
	copy(b[img:], inner)
	return b
}

// TestNestedSharedImagesAreBounded: 8 entries a level pointing at one
// inner binary, 7 levels deep (2.6 KB, 8^7 images; list took 3.4 GB and
// was killed), lists at most one image per 40 bytes plus 4096 and says
// the rest is over the limit; 2 entries a level, 3 deep, is listed whole.
func TestNestedSharedImagesAreBounded(t *testing.T) {
	r24, _ := release.Lookup(24)
	build := func(k, d int) []byte {
		b := nestedShared(make([]byte, 8), 1)
		for i := 0; i < d; i++ {
			b = nestedShared(b, k)
		}
		return b
	}
	for _, opt := range []*offloadbinary.ReadOptions{nil, {Release: r24}} {
		in := build(8, 7)
		f, err := NewFile("nested.bin", bytes.NewReader(in), int64(len(in)), opt)
		if err != nil {
			t.Fatal(err)
		}
		var limited error
		for _, im := range f.Objects[0].Images {
			if im.NestedErr != nil && limited == nil {
				limited = im.NestedErr
			}
		}
		if n := len(f.Objects[0].Images); n > len(in)/40+4096 || !errors.Is(limited, goffload.ErrLimit) {
			t.Errorf("8^7: %d images, %v; want at most %d and ErrLimit", n, limited, len(in)/40+4096)
		}
		small := build(2, 3)
		f, err = NewFile("small.bin", bytes.NewReader(small), int64(len(small)), opt)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(f.Objects[0].Images); n != 2+4+8+8 {
			t.Errorf("2^3: %d images, want 22", n)
		}
	}
}
