package elfobj

import (
	"bytes"
	"debug/elf"
	"errors"
	"slices"
	"testing"

	"github.com/goffload/goffload"
)

// TestNeededAsDebugElf links a PIE and a shared object against libm and
// compares Needed with debug/elf's ImportedLibraries; a relocatable object
// needs nothing.
func TestNeededAsDebugElf(t *testing.T) {
	for _, name := range []string{"pie", "so", "obj"} {
		out := dynBuild(t, name)
		f, _ := readFile(t, out)
		got, err := f.Needed()
		if err != nil {
			t.Fatal(err)
		}
		ef, err := elf.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := ef.ImportedLibraries()
		ef.Close()
		if !slices.Equal(got, want) || (name != "obj") != slices.Contains(got, "libm.so.6") {
			t.Errorf("%s: Needed %q, debug/elf %q", name, got, want)
		}
	}
}

// TestNeededMalformed: a name offset past the string table is an goffload.ErrInvalid
// error.
func TestNeededMalformed(t *testing.T) {
	out := dynBuild(t, "so")
	f, data := readFile(t, out)
	dyn := f.SectionsByType(elf.SHT_DYNAMIC)[0]
	for i := uint64(0); i < dyn.FileSize; i += dynSize {
		if elf.DynTag(f.order.Uint64(data[dyn.Offset+i:])) == elf.DT_NEEDED {
			f.order.PutUint64(data[dyn.Offset+i+8:], 1<<40)
			break
		}
	}
	bad, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Needed(); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("Needed of a name past the string table: %v", err)
	}
}
