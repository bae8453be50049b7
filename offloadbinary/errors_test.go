package offloadbinary

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// TestReadBinaryGivesFormatErrorsOfEachKind: ReadBinary and ReadAll report
// malformed binaries as FormatErrors at the field, matching the kind's
// sentinel.
func TestReadBinaryGivesFormatErrorsOfEachKind(t *testing.T) {
	im := LinkedImage(offload.OffloadOpenMP, "nvptx64-nvidia-cuda", "sm_70")
	bin, err := MarshalBinary(release.Default(), &im, []byte("code"))
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	v3 := le.AppendUint32(bytes.Clone(Magic[:]), VersionCompressed)
	v3 = le.AppendUint64(v3, 48)           // Size
	v3 = le.AppendUint64(v3, HeaderSizeV3) // EntriesOffset
	v3 = le.AppendUint64(v3, 1)            // EntriesCount
	v3 = le.AppendUint64(v3, 1<<30)        // InflatedSize
	v3 = append(v3, make([]byte, 8)...)
	badVersion := bytes.Clone(bin)
	le.PutUint32(badVersion[4:], 99)
	trailing := append(bytes.Clone(bin), make([]byte, 8)...)
	for _, c := range []struct {
		name string
		in   []byte
		opt  *ReadOptions
		off  int64
		is   []error
	}{
		{"bad magic", append(bytes.Repeat([]byte{0xab}, 4), bin[4:]...), nil, 0, nil},
		{"cut short", bin[:len(bin)-1], nil, 8, []error{goffload.ErrTruncated}},
		{"unknown version is invalid, as LLVM says", badVersion, nil, 4, nil},
		{"inflated size over the limit", v3, &ReadOptions{MaxInflated: 1 << 20}, 32, []error{goffload.ErrLimit}},
		{"bytes after the last binary, read by ReadAll", trailing, nil, int64(len(bin)), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadAll(bytes.NewReader(c.in), int64(len(c.in)), c.opt)
			tooltest.CheckFormatError(t, err, "offload binary", c.off, c.is...)
		})
	}
}

// TestOldDriverReleasesRefuseOffloadBinaries: LLVM 13 and 14 have no
// OffloadBinary and no clang-offload-packager, so writing one for them, or
// packaging, is refused rather than done as 15 would.
func TestOldDriverReleasesRefuseOffloadBinaries(t *testing.T) {
	for _, major := range []int{13, 14} {
		r := mustRelease(t, major)
		im := Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-pc-linux-gnu"}}}
		if b, err := MarshalBinary(r, &im, []byte("image")); b != nil || !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("MarshalBinary(%v): %d bytes, %v; want goffload.ErrUnsupported", r, len(b), err)
		}
		if _, _, err := BinaryReader(r, &im, nil, 0); !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("BinaryReader(%v): %v; want goffload.ErrUnsupported", r, err)
		}
		if _, err := ParseImageArg(r, "file=a.o,triple=x86_64-pc-linux-gnu"); !errors.Is(err, goffload.ErrUnsupported) || errors.Is(err, ErrPackagerArgs) {
			t.Errorf("%v ParseImageArg: %v; want goffload.ErrUnsupported", r, err)
		}
		for _, args := range [][]string{nil, {"file=a.o,triple=x86_64-pc-linux-gnu"}} {
			n, err := Package(r, io.Discard, args, func(string) (io.Reader, int64, error) { t.Fatal("opened a file"); return nil, 0, nil })
			if n != 0 || !errors.Is(err, goffload.ErrUnsupported) || !strings.Contains(err.Error(), "clang-offload-packager") {
				t.Errorf("%v Package(%q): %d, %v; want goffload.ErrUnsupported naming the packager", r, args, n, err)
			}
		}
	}
}
