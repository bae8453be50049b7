package tooltest_test

import (
	"bytes"
	"io"
	"os/exec"
	"testing"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/internal/tooltest"
)

// TestStandInFatbinary: the stand-in fatbinary tool writes CUDAFatbinary.
func TestStandInFatbinary(t *testing.T) {
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("CUDAStandIns needs cc")
	}
	dir := tooltest.CUDAStandIns(t, t.TempDir())
	out := dir + "/out.fatbin"
	if msg, err := exec.Command(dir+"/bin/fatbinary", "--create="+out, "--image3=kind=elf,sm=70,file=x").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	got, err := exec.Command("cat", out).Output()
	if err != nil || !bytes.Equal(got, tooltest.CUDAFatbinary()) || len(got) != 20 {
		t.Errorf("fatbinary wrote %q (%v), want %q", got, err, tooltest.CUDAFatbinary())
	}
}

// TestHIPFatbinIsABundle: HIPFatbin reads as a bundle of a host entry and a
// gfx90a entry.
func TestHIPFatbinIsABundle(t *testing.T) {
	data := tooltest.HIPFatbin()
	b, err := bundle.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Entries) != 2 || b.Entries[1].ID != "hip-amdgcn-amd-amdhsa--gfx90a" || b.End() != uint64(len(data)) {
		t.Fatalf("entries %+v, end %d of %d", b.Entries, b.End(), len(data))
	}
	if img, _ := io.ReadAll(b.Open(1)); string(img) != "\x7fELF fake gfx90a object" {
		t.Errorf("gfx90a entry %q", img)
	}
}
