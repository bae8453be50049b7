package fatobj

import (
	"bytes"
	bin "encoding/binary"
	"errors"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
)

// TestCompressedBundleFileSizeInsideItsHeader reads compressed bundles
// whose FileSize ends inside their own header, or is past 2^63: refused
// with goffload.ErrInvalid, or read to the end of the input, never a panic
// (issue 24 item 5).
func TestCompressedBundleFileSizeInsideItsHeader(t *testing.T) {
	le := bin.LittleEndian
	plain := le.AppendUint64([]byte(bundle.Magic), 0)
	var z bytes.Buffer
	if _, err := bundle.WriteCompressed(&z, bytes.NewReader(plain), int64(len(plain)), bundle.CompressOptions{Version: 3, Method: bundle.MethodZlib, Level: 6}); err != nil {
		t.Fatal(err)
	}
	stream := z.Bytes()[bundle.HeaderSize(3):]
	for _, fs := range []uint64{1, 8, 10, 31, 1 << 63, 1<<64 - 1} {
		data := append([]byte(bundle.CompressedMagic), 3, 0, 0, 0)
		data = le.AppendUint64(data, fs)
		data = le.AppendUint64(data, uint64(len(plain)))
		data = le.AppendUint64(data, 0)
		data = append(data, stream...)
		_, err := NewFile("x.hipfb", bytes.NewReader(data), int64(len(data)), nil)
		switch {
		case fs < 32 && !errors.Is(err, goffload.ErrInvalid):
			t.Errorf("FileSize %d: %v, want goffload.ErrInvalid", fs, err)
		case fs >= 32 && err != nil:
			t.Errorf("FileSize %#x past the input: %v, want the bundle read to the input's end", fs, err)
		}
	}
}
