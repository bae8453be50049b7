package fatobj

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The allocation budget of FuzzNewFile: per input byte, and fixed (the
// inflated start of compressed OffloadBinaries is held within the
// offloadbinary.Budget's 64 MiB, 4 MiB a binary, nothing in temporary files; a
// zstd window takes up to 128 MiB; each image read takes a 1 MiB buffer).
const (
	fuzzBytesPerByte = 1024
	fuzzFixedBytes   = 256 << 20
)

// FuzzNewFile: any bytes give a File or an error, never a panic, and so do
// checking its objects, planning an extraction of it and reading every
// image it lists (1 MiB of each at most); and what that allocates is
// bounded by the input's size: fuzzBytesPerByte a byte, plus what a
// compressed binary may inflate to in memory.
func FuzzNewFile(f *testing.F) {
	for _, glob := range []string{"host-objects/*.o", "wrapper/*.o", "packager/*.bin"} {
		files, _ := filepath.Glob(llvmTestdata(glob))
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	// Bitcode host objects (clang -flto) and their embedded binaries.
	bcs, _ := filepath.Glob(bitcodeTestdata("*.bc"))
	for _, p := range bcs {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	// Objects of Windows hosts (COFF): clang-22's HIP -fgpu-rdc object, and
	// an MSVC host object with an embedded binary.
	coffs, _ := filepath.Glob(filepath.Join("testdata", "coff", "*.obj"))
	// And of Apple hosts (Mach-O): an embedded object, a HIP -fgpu-rdc
	// object with entries, a HIP registration object.
	machos, _ := filepath.Glob(filepath.Join("testdata", "macho", "*.o"))
	for _, p := range append(coffs, machos...) {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		defer func() {
			runtime.ReadMemStats(&after)
			if got, bound := after.TotalAlloc-before.TotalAlloc, fuzzBytesPerByte*uint64(len(data))+fuzzFixedBytes; got > bound {
				t.Errorf("%d bytes of input allocated %d bytes, more than %d", len(data), got, bound)
			}
		}()
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
