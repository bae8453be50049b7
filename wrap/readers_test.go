package wrap

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// openFile opens path for the test's lifetime and returns it with its size.
func openFile(t *testing.T, path string) (*os.File, int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return f, st.Size()
}

// tempFile writes data to a file of the test's and opens it.
func tempFile(t *testing.T, data []byte) (*os.File, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return openFile(t, path)
}

func writeTo(o *elfobj.Object) func(io.Writer) error {
	return func(w io.Writer) error { _, err := elfobj.Write(w, o); return err }
}

// TestOpenMPWritesAgainAndAtOnce: a wrapper of binaries read from files
// (whole, and made around a device image) writes the same bytes twice and
// from several goroutines at once.
func TestOpenMPWritesAgainAndAtOnce(t *testing.T) {
	r := lookupRelease(t, 22)
	bf, bsize := openFile(t, filepath.Join("..", "offload", "testdata", "llvm", "packager", "single-llvm22.bin"))
	whole, err := FromBinary(bf, bsize)
	if err != nil {
		t.Fatal(err)
	}
	imf, imsize := openFile(t, filepath.Join("..", "offload", "testdata", "llvm", "img2.bin"))
	made, err := FromImage(r, offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", ""), io.NewSectionReader(imf, 0, imsize))
	if err != nil {
		t.Fatal(err)
	}
	o, err := OpenMP(Options{Release: r, Triple: "x86_64-unknown-linux-gnu"}, []Binary{whole, made})
	if err != nil {
		t.Fatal(err)
	}
	f := readObject(t, tooltest.SameBytes(t, writeTo(o)))
	if got := embeddedBinary(t, f); int64(len(got)) != bsize+made.Data.Size() {
		t.Errorf("embedded %d bytes, want %d", len(got), bsize+made.Data.Size())
	}
}

// TestGPUWritesAgainAndAtOnce: CUDA and HIP wrappers of fatbins read from
// files, and of a HIP fatbin that package bundle makes as it is read, write
// the same bytes twice and from several goroutines at once.
func TestGPUWritesAgainAndAtOnce(t *testing.T) {
	r := lookupRelease(t, 22)
	cuda, cudaSize := tempFile(t, tooltest.CUDAFatbinary())
	hip, hipSize := openFile(t, filepath.Join("..", "bundle", "testdata", "hip-fatbin-clang-linker-wrapper-llvm22.bundle"))
	br, err := release.Lookup(22)
	if err != nil {
		t.Fatal(err)
	}
	img, imgSize := tempFile(t, []byte("\x7fELF a gfx90a code object"))
	made, err := bundle.HIPFatbin(br, []bundle.CodeObject{{TargetID: "gfx90a", Data: io.NewSectionReader(img, 0, imgSize)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		kind offload.OffloadKind
		fb   *io.SectionReader
	}{
		{"cuda", offload.OffloadCUDA, io.NewSectionReader(cuda, 0, cudaSize)},
		{"hip", offload.OffloadHIP, io.NewSectionReader(hip, 0, hipSize)},
		{"hip-made", offload.OffloadHIP, io.NewSectionReader(made, 0, made.Size())},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := GPU(Options{Release: r, Triple: "x86_64-unknown-linux-gnu"}, c.kind, c.fb)
			if err != nil {
				t.Fatal(err)
			}
			tooltest.SameBytes(t, writeTo(o))
		})
	}
}
