package entries

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/release"

	"github.com/goffload/goffload/internal/tooltest"
)

// FuzzRead: entries and release mixing read from any ELF file give a
// result or an error, never a panic, and allocate within
// tooltest.CheckAllocs's bound (fatobj's FuzzNewFile fuzzes the device
// images and check).
func FuzzRead(f *testing.F) {
	for _, glob := range []string{"../offload/testdata/llvm/host-objects/*.o", "../offload/testdata/llvm/wrapper/*.o"} {
		files, _ := filepath.Glob(glob)
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tooltest.CheckAllocs(t, len(data), tooltest.AllocsPerByte, tooltest.AllocsFixed, func() {
			file, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				return
			}
			for _, r := range []*release.Release{release.Default(), mustLookup(19)} {
				Read(file, r)
				Mixing(file, r)
			}
		})
	})
}

func mustLookup(n int) *release.Release {
	r, err := release.Lookup(n)
	if err != nil {
		panic(err)
	}
	return r
}
