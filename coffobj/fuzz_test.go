package coffobj_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/tooltest"
)

// FuzzRead reads, loads and writes back any input: an error or a file,
// never a panic, with allocations linear in the input's size.
func FuzzRead(f *testing.F) {
	var b bytes.Buffer
	if _, err := coffobj.Write(&b, sample()); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	if seeds, _ := filepath.Glob(filepath.Join("testdata", "*.obj")); len(seeds) > 0 {
		for _, p := range seeds {
			if s, err := os.ReadFile(p); err == nil {
				f.Add(s)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		tooltest.CheckAllocs(t, len(in), tooltest.AllocsPerByte, tooltest.AllocsFixed, func() {
			file, err := coffobj.Read(bytes.NewReader(in), int64(len(in)))
			if err != nil {
				return
			}
			for _, s := range file.Sections {
				if s.FileSize() <= 1<<20 {
					s.Data()
				}
				file.Relocations(s)
			}
			if o, err := file.Object(); err == nil {
				coffobj.Write(io.Discard, o)
			}
		})
	})
}
