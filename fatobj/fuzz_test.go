package fatobj

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzNewFile: any bytes give a File or an error, never a panic, and so do
// checking its objects, planning an extraction of it and reading every
// image it lists.
func FuzzNewFile(f *testing.F) {
	for _, glob := range []string{"host-objects/*.o", "wrapper/*.o", "packager/*.bin"} {
		files, _ := filepath.Glob(llvmTestdata(glob))
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := NewFile("fuzz", bytes.NewReader(data), int64(len(data)), nil)
		if err != nil {
			return
		}
		Check(file.Objects)
		PlanExtract([]*File{file}, &ExtractOptions{Raw: true})
		for _, im := range file.Images() {
			if r, err := im.Reader(); err == nil {
				io.Copy(io.Discard, io.LimitReader(r, 1<<20))
			}
		}
	})
}
