package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goffload/goffload/fatobj"
)

// triples returns the triple and arch of every image of the file at path.
func triples(t *testing.T, path string) []string {
	t.Helper()
	f, err := fatobj.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s []string
	for _, im := range f.Images() {
		s = append(s, im.Triple()+":"+im.Arch())
	}
	return s
}

func TestEmbed(t *testing.T) {
	dir := t.TempDir()
	multi := "../../offload/testdata/llvm/packager/multi-llvm22.bin"
	single := "../../offload/testdata/llvm/packager/single-llvm15.bin"
	want := append(triples(t, multi), triples(t, single)...)

	// A new object.
	out := filepath.Join(dir, "new.o")
	if err := run(out, "", []string{multi, single}); err != nil {
		t.Fatal(err)
	}
	if got := triples(t, out); !slices.Equal(got, want) {
		t.Errorf("new object: images %v, want %v", got, want)
	}

	// Into a host object, written over it.
	host := filepath.Join(dir, "host.o")
	data, err := os.ReadFile("../../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host, data, 0o644); err != nil {
		t.Fatal(err)
	}
	hostImages := triples(t, host)
	if err := run(host, host, []string{multi, single}); err != nil {
		t.Fatal(err)
	}
	if got, want := triples(t, host), append(hostImages, want...); !slices.Equal(got, want) {
		t.Errorf("host object: images %v, want %v", got, want)
	}

	// What is no OffloadBinary is refused, and nothing is written.
	bad := filepath.Join(dir, "bad.o")
	if err := run(bad, "", []string{"../../offload/testdata/llvm/img1.bin"}); err == nil {
		t.Error("img1.bin, no OffloadBinary, was embedded")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the folder holds %d files, want new.o and host.o", len(entries))
	}
}
