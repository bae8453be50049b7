package fatobj

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
)

// FuzzConvert converts any object from the release MadeBy tells (or 14, 19
// and 22) to 15, 19 and 22: an error or a result that writes, never a
// panic; to its own release nothing changes. Seeds: objects of clang 14
// (bundled), 15 (a C++ constructor), 15, 16, 19 and 22, and HIP 19.
func FuzzConvert(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "convert", "*.o"))
	more, _ := filepath.Glob(filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "*.o"))
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, uint8(0))
		}
	}
	targets := []int{15, 19, 22}
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		ef, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		from, _, err := MadeBy(ef)
		if err != nil {
			return
		}
		if from == nil || pick&1 != 0 {
			from, _ = offload.LookupRelease([]int{14, 19, 22}[int(pick>>1)%3])
		}
		o, err := ef.Object()
		if err != nil {
			return
		}
		to, _ := offload.LookupRelease(targets[int(pick>>3)%len(targets)])
		if from.Major == to.Major {
			if c, err := Convert(o, from, to); err == nil && c.Changed() {
				t.Fatalf("converted to its own release: %v", c.Changes)
			}
			return
		}
		if _, err := Convert(o, from, to); err != nil {
			return
		}
		_, _ = elfobj.Write(io.Discard, o)
	})
}
