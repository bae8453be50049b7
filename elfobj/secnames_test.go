package elfobj

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/goffload/goffload"
)

// TestSectionNamesSizeIsWhatDebugELFCopies compares checkTables with
// the names debug/elf reads from LLVM's objects.
func TestSectionNamesSizeIsWhatDebugELFCopies(t *testing.T) {
	files, _ := filepath.Glob("../offload/testdata/llvm/host-objects/*.o")
	if len(files) == 0 {
		t.Skip("no host objects")
	}
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var want uint64
		for _, s := range ef.Sections {
			want += uint64(len(s.Name))
		}
		if got, err := checkTablesOf(t, data); err != nil || got != want {
			t.Errorf("%s: %d, %v; debug/elf copies %d", p, got, err, want)
		}
	}
}

// TestSectionsNamingOneString reads an object of 8,000 sections all named
// by one 64 KiB string (590 KB; debug/elf would copy 512 MiB): refused
// with goffload.ErrLimit, having allocated about the file's size, while
// 20 sections naming it (1.3 MB of names for 66 KB) are read.
func TestSectionsNamingOneString(t *testing.T) {
	long := strings.Repeat("n", 64<<10)
	object := func(n int) []byte {
		o, err := ForTriple("x86_64-unknown-linux-gnu")
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			o.AddSection(&Section{Name: long, Type: elf.SHT_PROGBITS, Addralign: 1}, false)
		}
		var buf bytes.Buffer
		if _, err := Write(&buf, o); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	data := object(8000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read(bytes.NewReader(data), int64(len(data)))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, goffload.ErrLimit) {
		t.Fatalf("%d bytes: %v, want goffload.ErrLimit", len(data), err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*uint64(len(data)) {
		t.Errorf("%d bytes allocated reading %d", got, len(data))
	}
	data = object(20)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("20 sections: %v", err)
	}
	named := 0
	for _, s := range f.Sections {
		if s.Name == long {
			named++
		}
	}
	if named != 20 {
		t.Errorf("20 sections: %d named by the string", named)
	}
}

// checkTablesOf is checkTables of the file data, its header checked first
// as Read checks it.
func checkTablesOf(t *testing.T, data []byte) (uint64, error) {
	t.Helper()
	_, h, err := checkHeader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return 0, err
	}
	names, _, err := checkTables(bytes.NewReader(data), int64(len(data)), h)
	return names, err
}
