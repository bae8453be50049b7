package fatobj

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
)

func writeTo(o *elfobj.Object) func(io.Writer) error {
	return func(w io.Writer) error { _, err := elfobj.Write(w, o); return err }
}

// TestEmbeddedObjectWritesAgainAndAtOnce: an object with binaries embedded
// from readers writes the same bytes twice and from several goroutines at
// once.
func TestEmbeddedObjectWritesAgainAndAtOnce(t *testing.T) {
	o, _ := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	o.AddSection(&elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Data: []byte{0xc3}}, true)
	x86, amd := binary(t, "x86_64-pc-linux-gnu", ""), binary(t, "amdgcn-amd-amdhsa", "gfx90a")
	if err := Embed(o, Source{bytes.NewReader(x86), int64(len(x86))}); err != nil {
		t.Fatal(err)
	}
	if err := Embed(o, Source{bytes.NewReader(amd), int64(len(amd))}); err != nil {
		t.Fatal(err)
	}
	tooltest.SameBytes(t, writeTo(o))
	if got := triples(section(t, o)); len(got) != 2 {
		t.Errorf("embedded %v", got)
	}
}

// TestLoadedFileEmbeddedWritesAgainAndAtOnce: an object loaded from a file,
// its binaries still in the file, with another binary embedded, writes the
// same bytes twice and from several goroutines at once.
func TestLoadedFileEmbeddedWritesAgainAndAtOnce(t *testing.T) {
	loaded := loadedFatObject(t)
	nv := binary(t, "nvptx64-nvidia-cuda", "sm_70")
	if err := Embed(loaded, Source{bytes.NewReader(nv), int64(len(nv))}); err != nil {
		t.Fatal(err)
	}
	tooltest.SameBytes(t, writeTo(loaded))
	if got := triples(section(t, loaded)); len(got) != 3 || got[2] != "nvptx64-nvidia-cuda:sm_70" {
		t.Errorf("after embedding %v", got)
	}
}

// TestStrippedFileWritesAgainAndAtOnce: an object loaded from a file and
// stripped, the binaries it keeps still in the file, writes the same bytes
// twice and from several goroutines at once.
func TestStrippedFileWritesAgainAndAtOnce(t *testing.T) {
	loaded := loadedFatObject(t)
	st, err := Strip(loaded, offload.Default(), []Target{{"amdgcn-amd-amdhsa", "gfx90a"}})
	if err != nil || st.Kept != 1 {
		t.Fatalf("%+v, %v", st, err)
	}
	tooltest.SameBytes(t, writeTo(loaded))
	if got := triples(section(t, loaded)); len(got) != 1 || got[0] != "amdgcn-amd-amdhsa:gfx90a" {
		t.Errorf("after strip %v", got)
	}
}

// loadedFatObject returns an object loaded from a file that holds an x86-64
// and a gfx90a binary; the file stays open for the test.
func loadedFatObject(t *testing.T) *elfobj.Object {
	t.Helper()
	o, _ := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	x86, amd := binary(t, "x86_64-pc-linux-gnu", ""), binary(t, "amdgcn-amd-amdhsa", "gfx90a")
	if err := Embed(o, Source{bytes.NewReader(x86), int64(len(x86))}, Source{bytes.NewReader(amd), int64(len(amd))}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fat.o")
	if err := os.WriteFile(path, tooltest.SameBytes(t, writeTo(o)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	ef, err := elfobj.Read(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := ef.Object()
	if err != nil {
		t.Fatal(err)
	}
	return loaded
}

// TestEmbedRefusesBadSources: a negative size or no reader is an error.
func TestEmbedRefusesBadSources(t *testing.T) {
	for _, s := range []Source{{bytes.NewReader(nil), -8}, {nil, 8}} {
		o, _ := elfobj.ForTriple("x86_64-unknown-linux-gnu")
		if err := Embed(o, s); err == nil {
			t.Errorf("Embed(%+v) succeeded", s)
		}
	}
}
