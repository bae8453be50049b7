package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap"
)

// TestWrapRawImagesForLLVM14: `wrap --llvm 13|14` takes raw device images
// and writes what wrap.OpenMP writes for them; an offload binary or an
// empty file is refused, naming the file.
func TestWrapRawImagesForLLVM14(t *testing.T) {
	dir := t.TempDir()
	images := [][]byte{append([]byte("\x7fELF\x02\x01\x01\x00"), bytes.Repeat([]byte{1, 0, 2}, 300)...), append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 77)...)}
	var paths []string
	for i, img := range images {
		paths = append(paths, filepath.Join(dir, []string{"a.out", "b.out"}[i]))
		if err := os.WriteFile(paths[i], img, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, major := range []int{13, 14} {
		r, err := release.Lookup(major)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "w.o")
		if _, stderr, code := cli(t, append([]string{"wrap", "--llvm", strconv.Itoa(major), "-o", out}, paths...)...); code != 0 {
			t.Fatalf("LLVM %d: exit %d: %s", major, code, stderr)
		}
		var bins []wrap.Binary
		for _, img := range images {
			bins = append(bins, wrap.RawImage(io.NewSectionReader(bytes.NewReader(img), 0, int64(len(img)))))
		}
		o, err := wrap.OpenMP(wrap.Options{Release: r, Triple: "x86_64-unknown-linux-gnu"}, bins)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if _, err := elfobj.Write(&want, o); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("LLVM %d: the CLI wrote %d bytes that differ from wrap.OpenMP's %d", major, len(got), want.Len())
		}
	}

	r19, _ := release.Lookup(19)
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "")
	ob, err := offloadbinary.MarshalBinary(r19, &im, images[0])
	if err != nil {
		t.Fatal(err)
	}
	binPath, empty := filepath.Join(dir, "x.offload"), filepath.Join(dir, "empty.out")
	if err := os.WriteFile(binPath, ob, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{binPath, empty} {
		out := filepath.Join(dir, "bad.o")
		_, stderr, code := cli(t, "wrap", "--llvm", "14", "-o", out, paths[0], bad)
		if code != 1 || !strings.Contains(stderr, bad) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("wrap --llvm 14 %s: exit %d, %q; want 1 and one line naming it", bad, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("wrap --llvm 14 %s wrote %s", bad, out)
		}
	}
}
