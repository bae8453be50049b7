package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
)

// TestPackage23OneBinary: goffload package --llvm 24 writes what main's
// llvm-offload-binary writes for several --image arguments, one binary
// holding every image (main's OffloadBinary::write of all of them, laid
// out by hand in lmBinary), which list --llvm 24 prints as main's
// llvm-objdump --offloading prints it and extract --raw takes apart;
// compressed, one compressed binary. --llvm 22 writes a binary per image.
func TestPackage23OneBinary(t *testing.T) {
	dir := t.TempDir()
	files := []struct {
		name string
		data string
	}{
		{"k.o", "\x7fELF an x86-64 device object"},
		{"k.bc", "BC\xc0\xde bitcode"},
		{"k.cubin", "a cubin of 13"},
		{"k.hsaco", "a code object, no kind by name"},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	args := []string{
		"file=" + path("k.o") + ",triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp",
		"file=" + path("k.bc") + ",file=" + path("k.cubin") + ",triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda",
		"file=" + path("k.hsaco") + ",triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+,kind=hip",
	}
	kinds := []offload.ImageKind{offload.ImageObject, offload.ImageBitcode, offload.ImageCubin, offload.ImageNone}
	codes := []uint16{1, 2, 2, 4}
	listed := []string{
		lmListed(0, "0", "elf", "generic", "x86_64-unknown-linux-gnu", "openmp", len(files[0].data)),
		lmListed(0, "1", "llvm ir", "sm_70", "nvptx64-nvidia-cuda", "cuda", len(files[1].data)),
		lmListed(0, "2", "cubin", "sm_70", "nvptx64-nvidia-cuda", "cuda", len(files[2].data)),
		lmListed(0, "3", "<none>", "gfx90a:xnack+", "amdgcn-amd-amdhsa", "hip", len(files[3].data)),
	}
	extracted := []string{
		"pkg-x86_64-unknown-linux-gnu-generic.0.o", "pkg-nvptx64-nvidia-cuda-sm_70.1.bc",
		"pkg-nvptx64-nvidia-cuda-sm_70.2.cubin", "pkg-amdgcn-amd-amdhsa-gfx90a:xnack+.3.",
	}
	// The images as main's OffloadBinary::write takes them, the strings in
	// the order of 23's packager.
	r24 := lmRelease(t, 24)
	var ims []lmImage
	for _, arg := range args {
		pis, err := offloadbinary.ParseImageArg(r24, arg)
		if err != nil {
			t.Fatal(err)
		}
		for _, pi := range pis {
			i := len(ims)
			ims = append(ims, lmImage{kind: kinds[i], code: codes[i], strs: pi.Image.Strings, data: []byte(files[i].data)})
		}
	}
	pkg := func(t *testing.T, llvm string, flags ...string) []byte {
		t.Helper()
		out := path("pkg.bin")
		cmd := append(append([]string{"package", "--llvm", llvm}, flags...), "-o", out)
		for _, a := range args {
			cmd = append(cmd, "--image", a)
		}
		if _, stderr, code := cli(t, cmd...); code != 0 {
			t.Fatalf("%v: exit %d %s", cmd, code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	check := func(t *testing.T, compression string) {
		t.Helper()
		if stdout, stderr, code := cli(t, "list", "--llvm", "24", path("pkg.bin")); code != 0 || stdout != strings.Join(listed, "") {
			t.Errorf("list: exit %d %s\n%s\nwant\n%s", code, stderr, stdout, strings.Join(listed, ""))
		}
		x := path("x")
		os.RemoveAll(x)
		stdout, stderr, code := cli(t, "extract", "--llvm", "24", "--raw", "-o", x, path("pkg.bin"))
		var want strings.Builder
		for _, name := range extracted {
			fmt.Fprintf(&want, "Extracted: %s\n", name)
		}
		if code != 0 || stdout != want.String() {
			t.Fatalf("extract: exit %d %s\n%s\nwant\n%s", code, stderr, stdout, want.String())
		}
		for i, name := range extracted {
			if got, err := os.ReadFile(filepath.Join(x, name)); err != nil || string(got) != files[i].data {
				t.Errorf("%s: %q, %v; want %q", name, got, err, files[i].data)
			}
		}
		b, _ := os.ReadFile(path("pkg.bin"))
		bins, err := offloadbinary.ReadAllBytes(b, &offloadbinary.ReadOptions{Release: r24})
		if err != nil || len(bins) != 1 || len(bins[0].Images) != len(files) || bins[0].Compression != compression {
			t.Errorf("%d binaries, %v; want one of %d images, compression %q", len(bins), err, len(files), compression)
		}
	}

	t.Run("plain", func(t *testing.T) {
		b := pkg(t, "24")
		if want := lmBinary(t, 3, ims...); !bytes.Equal(b, want) {
			t.Errorf("package --llvm 24 wrote\n% x\nmain's llvm-offload-binary writes\n% x", b, want)
		}
		check(t, "")
	})
	// 23's llvm-offload-binary writes the same binary as version 2 (the
	// layout main had before version 3), and refuses --compress; 23 reads
	// its binary, and refuses main's.
	t.Run("23", func(t *testing.T) {
		b := pkg(t, "23")
		if want := lmBinary(t, 2, ims...); !bytes.Equal(b, want) {
			t.Errorf("package --llvm 23 wrote\n% x\nversion 2 of the images is\n% x", b, want)
		}
		if stdout, stderr, code := cli(t, "list", "--llvm", "23", path("pkg.bin")); code != 0 || stdout != strings.Join(listed, "") {
			t.Errorf("list --llvm 23: exit %d %s\n%s", code, stderr, stdout)
		}
		cmd := []string{"package", "--llvm", "23", "--compress", "-o", path("c.bin")}
		for _, a := range args {
			cmd = append(cmd, "--image", a)
		}
		if _, stderr, code := cli(t, cmd...); code != 1 || !strings.Contains(stderr, "no compression") {
			t.Errorf("%v: exit %d %s", cmd, code, stderr)
		}
		pkg(t, "24")
		if _, stderr, code := cli(t, "list", "--llvm", "23", path("pkg.bin")); code != 1 || !strings.Contains(stderr, "LLVM 23 reads OffloadBinary versions 1 to 2, and version 3 is LLVM 24's") {
			t.Errorf("list --llvm 23 of version 3: exit %d %s", code, stderr)
		}
	})
	for _, format := range []string{"zstd", "zlib"} {
		t.Run(format, func(t *testing.T) {
			b := pkg(t, "24", "--compress", "--compression-format", format)
			bins, err := offloadbinary.ReadAllBytes(b, &offloadbinary.ReadOptions{Release: r24})
			if err != nil || len(bins) != 1 {
				t.Fatalf("%d binaries, %v", len(bins), err)
			}
			var inflated bytes.Buffer
			if _, err := inflated.ReadFrom(bins[0].Inflated()); err != nil || !bytes.Equal(inflated.Bytes(), lmBinary(t, 3, ims...)) {
				t.Errorf("does not inflate to main's binary of the images (%v)", err)
			}
			check(t, format)
		})
	}
	t.Run("22", func(t *testing.T) {
		b := pkg(t, "22")
		bins, err := offloadbinary.ReadAllBytes(b, &offloadbinary.ReadOptions{Release: lmRelease(t, 22)})
		if err != nil || len(bins) != len(files) {
			t.Fatalf("%d binaries, %v; want one per image", len(bins), err)
		}
		for i, bin := range bins {
			if bin.Version != 1 || len(bin.Images) != 1 || bin.Images[0].Kind != kinds[i] {
				t.Errorf("binary %d: version %d, %+v", i, bin.Version, bin.Images)
			}
		}
	})
}
