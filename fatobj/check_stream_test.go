package fatobj

import (
	"bytes"
	encbin "encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// A compressed binary whose stream ends before its InflatedSize: reading it
// inflates only the start (its entries and strings), so Open takes it, as
// list does; Check inflates every stream whole, as LLVM main's reader does,
// and refuses it. The same binary, sound, passes.
func TestCheckInflatesEveryStreamWhole(t *testing.T) {
	r24, err := release.Lookup(24)
	if err != nil {
		t.Fatal(err)
	}
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "generic")
	img := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB, past what reading inflates
	var sound bytes.Buffer
	if _, err := offloadbinary.WriteCompressedBinary(&sound, r24, &im, bytes.NewReader(img), int64(len(img)), offloadbinary.Compression{}); err != nil {
		t.Fatal(err)
	}
	cut := bytes.Clone(sound.Bytes())
	// InflatedSize (at 32) 64 bytes more than the stream inflates to.
	encbin.LittleEndian.PutUint64(cut[32:], encbin.LittleEndian.Uint64(cut[32:])+64)
	for _, c := range []struct {
		name string
		data []byte
		bad  bool
	}{{"sound", sound.Bytes(), false}, {"cut", cut, true}} {
		t.Run(c.name, func(t *testing.T) {
			f, err := NewFile(c.name+".bin", bytes.NewReader(c.data), int64(len(c.data)), &offloadbinary.ReadOptions{Release: r24})
			if err != nil {
				t.Fatalf("NewFile: %v", err)
			}
			defer f.Close()
			_, err = Check(f.Objects)
			switch {
			case !c.bad && err != nil:
				t.Errorf("Check: %v", err)
			case c.bad && (err == nil || !errors.Is(err, goffload.ErrInvalid) && !errors.Is(err, goffload.ErrTruncated)):
				t.Errorf("Check: %v, want the cut stream refused as invalid data", err)
			case c.bad && !strings.Contains(err.Error(), c.name+".bin"):
				t.Errorf("Check: %v does not name the file", err)
			}
		})
	}
}
