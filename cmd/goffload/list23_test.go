package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// TestListVersion3: under --llvm 24 (LLVM main after 23) list prints what
// main's llvm-objdump --offloading prints for its tests
// Offloading/compressed.test (a zstd-compressed binary: an `image size`
// line) and Offloading/nested-offload-binary.test (an image that is itself
// a binary of two images: `nested images 2`, [i.j], indented); --llvm 22
// refuses version 3 as LLVM 22 does.
func TestListVersion3(t *testing.T) {
	dir := t.TempDir()
	r24, err := release.Lookup(24)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	im := offloadbinary.Image{Kind: offload.ImageCubin, OffloadKind: offload.OffloadHIP, Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "amdgcn-amd-amdhsa"}, {Key: "arch", Value: "gfx90a"}}}
	if _, err := offloadbinary.WriteCompressedBinary(&buf, r24, &im, bytes.NewReader([]byte{0xde, 0xad, 0xbe, 0xef}), 4, offloadbinary.Compression{Format: "zstd"}); err != nil {
		t.Fatal(err)
	}
	compressed := filepath.Join(dir, "compressed.bin")
	if err := os.WriteFile(compressed, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "\nOFFLOADING IMAGE [0]:\nkind            cubin\narch            gfx90a\ntriple          amdgcn-amd-amdhsa\nproducer        hip\nimage size      4 bytes\n"
	if stdout, stderr, code := cli(t, "list", "--llvm", "24", compressed); code != 0 || stdout != want {
		t.Errorf("list --llvm 24 (compressed): exit %d %s\n%q\nwant\n%q", code, stderr, stdout, want)
	}
	if _, stderr, code := cli(t, "list", "--llvm", "22", compressed); code == 0 {
		t.Errorf("list --llvm 22 reads version 3")
	} else {
		t.Logf("--llvm 22: %s", stderr)
	}

	for name, data := range map[string]string{"a1.bc": "BC\xc0\xdeabc", "a2.bc": "BC\xc0\xdexyz1"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	if _, stderr, code := cli(t, "package", "--llvm", "24", "-o", "inner.o",
		"--image", "file=a1.bc,triple=x-y-z,arch=arch1,kind=openmp", "--image", "file=a2.bc,triple=x-y-z,arch=arch2,kind=openmp"); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := cli(t, "package", "--llvm", "24", "-o", "outer.bin",
		"--image", "file=inner.o,triple=x-y-z,arch=none,kind=openmp", "--image", "file=inner.o,triple=a-b-c,arch=none,kind=openmp"); code != 0 {
		t.Fatal(stderr)
	}
	inner := func(n string) string {
		return "\n  OFFLOADING IMAGE [" + n + ".0]:\n  kind            llvm ir\n  arch            arch1\n  triple          x-y-z\n  producer        openmp\n  image size      7 bytes\n" +
			"\n  OFFLOADING IMAGE [" + n + ".1]:\n  kind            llvm ir\n  arch            arch2\n  triple          x-y-z\n  producer        openmp\n  image size      8 bytes\n"
	}
	want = "\nOFFLOADING IMAGE [0]:\nkind            elf\narch            none\ntriple          x-y-z\nproducer        openmp\nimage size      264 bytes\nnested images   2\n" + inner("0") +
		"\nOFFLOADING IMAGE [1]:\nkind            elf\narch            none\ntriple          a-b-c\nproducer        openmp\nimage size      264 bytes\nnested images   2\n" + inner("1")
	if stdout, stderr, code := cli(t, "list", "--llvm", "24", "outer.bin"); code != 0 || stdout != want {
		t.Errorf("list --llvm 24 (nested): exit %d %s\n%s\nwant\n%s", code, stderr, stdout, want)
	}
	// A malformed inner binary is refused, as main's objdump reports it.
	b, _ := os.ReadFile("outer.bin")
	innerAt := bytes.Index(b[4:], offloadbinary.Magic[:]) + 4
	bad := append([]byte{}, b...)
	bad[innerAt+4] = 9 // the first inner binary's version
	os.WriteFile("bad.bin", bad, 0o644)
	if _, stderr, code := cli(t, "list", "--llvm", "24", "bad.bin"); code == 0 || !bytes.Contains([]byte(stderr), []byte("failed to extract nested OffloadBinary of image [0]")) {
		t.Errorf("a bad nested binary: exit %d %s", code, stderr)
	}
}
