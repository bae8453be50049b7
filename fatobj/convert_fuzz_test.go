package fatobj

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/release"
)

// The allocation budget of FuzzConvert: reading the object decodes its
// section headers, symbols and string tables (each no larger than the
// input, a symbol's 24 bytes to a structure of about 100), converting
// rewrites its offloading sections (no larger than the input) and writing
// makes an object of about the input's size: 64 a byte; plus 1 MiB for
// the tables of a release and the writer's buffers.
const (
	convertFuzzPerByte = 64
	convertFuzzFixed   = 1 << 20
)

// FuzzConvert converts any object from the release MadeBy tells (or 14, 19,
// 22, 23 and 24) to 15, 19, 22, 23 and 24: an error or a result that writes, never a
// panic, allocating at most convertFuzzPerByte a byte plus
// convertFuzzFixed; to its own release nothing changes. Seeds: objects of clang 14
// (bundled), 15 (a C++ constructor), 15, 16, 19 and 22, HIP 19, and 22's
// converted to 23 and 24 (OffloadBinaries of versions 2 and 3).
func FuzzConvert(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "convert", "*.o"))
	more, _ := filepath.Glob(filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "*.o"))
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b, uint8(0))
		}
	}
	// And clang-22's converted to 23 and 24: binaries of versions 2 and 3.
	if b, err := os.ReadFile(filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm22.o")); err == nil {
		for _, major := range []int{23, 24} {
			ef, err := elfobj.Read(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				f.Fatal(err)
			}
			o, err := ef.Object()
			if err != nil {
				f.Fatal(err)
			}
			from, _ := release.Lookup(22)
			to, _ := release.Lookup(major)
			if _, err := Convert(o, from, to); err != nil {
				f.Fatal(err)
			}
			var out bytes.Buffer
			if _, err := elfobj.Write(&out, o); err != nil {
				f.Fatal(err)
			}
			f.Add(out.Bytes(), uint8(0))
		}
	}
	targets := []int{15, 19, 22, 23, 24}
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		defer func() {
			runtime.ReadMemStats(&after)
			if got, bound := after.TotalAlloc-before.TotalAlloc, convertFuzzPerByte*uint64(len(data))+convertFuzzFixed; got > bound {
				t.Errorf("%d bytes of input allocated %d bytes, more than %d", len(data), got, bound)
			}
		}()
		ff, err := NewFile("fuzz.o", bytes.NewReader(data), int64(len(data)), nil)
		if err != nil || len(ff.Objects) != 1 || ff.Objects[0].ELF == nil {
			return
		}
		ef := ff.Objects[0].ELF
		from, _, err := ff.Objects[0].MadeBy()
		if err != nil {
			return
		}
		if from == nil || pick&1 != 0 {
			from, _ = release.Lookup([]int{14, 19, 22, 23, 24}[int(pick>>1)%5])
		}
		o, err := ef.Object()
		if err != nil {
			return
		}
		to, _ := release.Lookup(targets[int(pick>>4)%len(targets)])
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
