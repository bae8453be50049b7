package main

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap"
)

func lookupRelease(t *testing.T, major int) *release.Release {
	t.Helper()
	r, err := release.Lookup(major)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writeTestFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// syclBinary returns an OffloadBinary of LLVM 22 of a SYCL image.
func syclBinary(t *testing.T, data, triple, symbols string) []byte {
	t.Helper()
	b, err := offloadbinary.MarshalBinary(lookupRelease(t, 22), &offloadbinary.Image{OffloadKind: offload.OffloadSYCL,
		Strings: []offloadbinary.KeyValue{{Key: "triple", Value: triple}, {Key: "symbols", Value: symbols}}}, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWrapSYCL: `wrap --kind sycl` wraps the SYCL images of every binary of
// every file given, in order, as wrap.SYCL does, for the host asked.
func TestWrapSYCL(t *testing.T) {
	dir := t.TempDir()
	two := append(syclBinary(t, "\x03\x02\x23\x07first image", "spirv64-unknown-unknown", "k1\nk2"),
		syclBinary(t, "abcd", "spirv64", "k1")...)
	one := syclBinary(t, strings.Repeat("\x00\x07", 50), "spirv64-unknown-unknown", "")
	paths := []string{writeTestFile(t, filepath.Join(dir, "two.bin"), two), writeTestFile(t, filepath.Join(dir, "one.bin"), one)}
	r := lookupRelease(t, 22)
	all := append(append([]byte(nil), two...), one...)
	for _, host := range []string{"x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"} {
		out := filepath.Join(dir, "w.o")
		if _, stderr, code := cli(t, append([]string{"wrap", "--kind", "sycl", "--triple", host, "-o", out}, paths...)...); code != 0 {
			t.Fatalf("%s: exit %d: %s", host, code, stderr)
		}
		images, err := wrap.SYCLImages(r, bytes.NewReader(all), int64(len(all)))
		if err != nil {
			t.Fatal(err)
		}
		o, err := wrap.SYCL(wrap.Options{Release: r, Triple: host}, images)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if _, err := elfobj.Write(&want, o); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(out)
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s: the CLI wrote %d bytes that differ from wrap.SYCL's %d", host, len(got), want.Len())
		}
		f, err := elfobj.Read(bytes.NewReader(got), int64(len(got)))
		if err != nil {
			t.Fatal(err)
		}
		syms, _ := f.Symbols()
		var entries []string
		for _, s := range syms {
			if strings.HasPrefix(s.Name, ".offloading.entry.") {
				entries = append(entries, s.Name)
			}
		}
		if strings.Join(entries, " ") != ".offloading.entry.k1 .offloading.entry.k2 .offloading.entry.k1.3" {
			t.Errorf("%s: entry symbols %q", host, entries)
		}
	}
}

// TestWrapSYCLRefuses: each bad use exits 1 with one line saying what is
// wrong (naming the release or the file) and writes nothing.
func TestWrapSYCLRefuses(t *testing.T) {
	dir := t.TempDir()
	good := writeTestFile(t, filepath.Join(dir, "k.bin"), syclBinary(t, "image", "spirv64", "k"))
	ompBin, err := offloadbinary.MarshalBinary(lookupRelease(t, 22), &offloadbinary.Image{OffloadKind: offload.OffloadOpenMP,
		Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "x86_64-unknown-linux-gnu"}}}, []byte("image"))
	if err != nil {
		t.Fatal(err)
	}
	omp := writeTestFile(t, filepath.Join(dir, "omp.bin"), ompBin)
	empty := writeTestFile(t, filepath.Join(dir, "empty.bin"), nil)
	v3bin, err := offloadbinary.MarshalBinary(lookupRelease(t, 24), &offloadbinary.Image{OffloadKind: offload.OffloadSYCL}, []byte("image"))
	if err != nil {
		t.Fatal(err)
	}
	v3 := writeTestFile(t, filepath.Join(dir, "v3.bin"), v3bin)
	ompV3Bin, err := offloadbinary.MarshalBinary(lookupRelease(t, 24), &offloadbinary.Image{OffloadKind: offload.OffloadOpenMP,
		Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "x86_64-unknown-linux-gnu"}}}, []byte("image"))
	if err != nil {
		t.Fatal(err)
	}
	ompV3 := writeTestFile(t, filepath.Join(dir, "omp3.bin"), ompV3Bin)
	twoV3 := writeTestFile(t, filepath.Join(dir, "two3.bin"), append(append([]byte(nil), v3bin...), v3bin...))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--llvm", "21", good}, "LLVM 21"},
		// 23 registers the whole binary from a constructor and destructor
		// of priority 1: a form goffload does not write.
		{[]string{"--llvm", "23", good}, "destructor of priority 1"},
		// Main after 23 registers one buffer: one file of one binary of
		// SYCL images.
		{[]string{"--llvm", "24", good, v3}, "one offload binary file"},
		{[]string{"--llvm", "24", ompV3}, ompV3},
		{[]string{"--llvm", "24", twoV3}, twoV3},
		{[]string{"--llvm", "24", empty}, empty},
		{[]string{"--llvm", "24", "--triple", "powerpc64le-unknown-linux-gnu", v3}, "powerpc64le"},
		{[]string{"--llvm", "24", "-r", v3}, "-r"},
		{[]string{good, omp}, omp},
		{[]string{good, empty}, empty},
		{[]string{v3}, v3},
		{[]string{"--triple", "powerpc64le-unknown-linux-gnu", good}, "powerpc64le"},
		{[]string{"-r", good}, "-r"},
		{[]string{"--suffix", "_x", good}, "--suffix"},
		{[]string{"--image", "gfx90a=" + good, good}, "--image"},
		{nil, "input"},
	} {
		out := filepath.Join(dir, "bad.o")
		_, stderr, code := cli(t, append([]string{"wrap", "--kind", "sycl", "-o", out}, c.args...)...)
		if code != 1 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("wrap --kind sycl %q: exit %d, %q; want 1 and one line with %q", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("wrap --kind sycl %q wrote %s", c.args, out)
			os.Remove(out)
		}
	}
}

// TestWrapSYCLMain: `wrap --kind sycl --llvm 24` writes what
// wrap.SYCLBinary does for the file, for each host: the file embedded as it
// is (a compressed binary still compressed) and registered by its start and
// size; a binary of 22 (version 1) too, as main reads it.
func TestWrapSYCLMain(t *testing.T) {
	dir := t.TempDir()
	r24 := lookupRelease(t, 24)
	im := func(kernels string) offloadbinary.Image {
		return offloadbinary.Image{Kind: offload.ImageSPIRV, OffloadKind: offload.OffloadSYCL,
			Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "spirv64-unknown-unknown"}, {Key: "symbols", Value: kernels}}}
	}
	images := func() []offloadbinary.ImageData {
		return []offloadbinary.ImageData{
			{Image: im("vadd\nfill"), Data: strings.NewReader("\x03\x02\x23\x07first image"), Size: 15},
			{Image: im("scale"), Data: strings.NewReader(strings.Repeat("\x03\x02\x23\x07", 40)), Size: 160},
		}
	}
	var multi, packed bytes.Buffer
	if _, err := offloadbinary.WriteBinaries(&multi, r24, images()); err != nil {
		t.Fatal(err)
	}
	if _, err := offloadbinary.WriteCompressedBinaries(&packed, r24, images(), offloadbinary.Compression{Format: "zstd"}); err != nil {
		t.Fatal(err)
	}
	for name, bin := range map[string][]byte{"two-images": multi.Bytes(), "zstd": packed.Bytes(), "version-1": syclBinary(t, "abcd", "spirv64", "k")} {
		in := writeTestFile(t, filepath.Join(dir, name+".bin"), bin)
		for _, host := range []string{"x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"} {
			out := filepath.Join(dir, name+"-"+host+".o")
			if _, stderr, code := cli(t, "wrap", "--kind", "sycl", "--llvm", "24", "--triple", host, "-o", out, in); code != 0 {
				t.Fatalf("%s %s: exit %d: %s", name, host, code, stderr)
			}
			o, err := wrap.SYCLBinary(wrap.Options{Release: r24, Triple: host}, bytes.NewReader(bin), int64(len(bin)))
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if _, err := elfobj.Write(&want, o); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(out)
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("%s %s: the CLI wrote %d bytes that differ from wrap.SYCLBinary's %d", name, host, len(got), want.Len())
			}
			f, err := elfobj.Read(bytes.NewReader(got), int64(len(got)))
			if err != nil {
				t.Fatal(err)
			}
			secs := f.SectionsByType(elfobj.SHT_LLVM_OFFLOADING)
			if len(secs) != 1 {
				t.Fatalf("%s %s: %d offloading sections", name, host, len(secs))
			}
			if embedded, err := secs[0].Data(); err != nil || !bytes.Equal(embedded, bin) {
				t.Errorf("%s %s: .llvm.offloading holds %d bytes (%v), not the %d of the file", name, host, len(embedded), err, len(bin))
			}
			var names []string
			syms, _ := f.Symbols()
			for _, s := range syms {
				if s.Section == elf.SHN_UNDEF && s.Name != "" {
					names = append(names, s.Name)
				}
			}
			if strings.Join(names, " ") != "__sycl_register_lib atexit __sycl_unregister_lib" {
				t.Errorf("%s %s: undefined symbols %q", name, host, names)
			}
			if f.Section(".init_array.101") == nil || f.Section(".fini_array.1") != nil {
				t.Errorf("%s %s: not registered by .init_array.101 alone", name, host)
			}
		}
	}
}

// TestWrapVersion3Binaries: `wrap --llvm 24` takes OffloadBinaries of
// version 3, compressed or not, as 23 reads them, and embeds each as the
// runtime reads it (a compressed one inflated), its __tgt_device_image
// pointing at its image; `wrap --llvm 22` refuses version 3 as 22 does.
func TestWrapVersion3Binaries(t *testing.T) {
	dir := t.TempDir()
	r24 := lookupRelease(t, 24)
	image := bytes.Repeat([]byte("device code "), 200)
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "generic")
	plain, err := offloadbinary.MarshalBinary(r24, &im, image)
	if err != nil {
		t.Fatal(err)
	}
	var packed bytes.Buffer
	if _, err := offloadbinary.WriteCompressedBinary(&packed, r24, &im, bytes.NewReader(image), int64(len(image)), offloadbinary.Compression{Format: "zstd"}); err != nil {
		t.Fatal(err)
	}
	if packed.Len() >= len(plain) {
		t.Fatalf("compressed binary of %d bytes, plain %d", packed.Len(), len(plain))
	}
	for name, bin := range map[string][]byte{"plain": plain, "zstd": packed.Bytes()} {
		in := writeTestFile(t, filepath.Join(dir, name+".bin"), bin)
		out := filepath.Join(dir, name+".o")
		if _, stderr, code := cli(t, "wrap", "--llvm", "24", "-o", out, in); code != 0 {
			t.Fatalf("%s: wrap --llvm 24: exit %d: %s", name, code, stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		f, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		secs := f.SectionsByType(elfobj.SHT_LLVM_OFFLOADING)
		if len(secs) != 1 {
			t.Fatalf("%s: %d offloading sections", name, len(secs))
		}
		embedded, err := secs[0].Data()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(embedded, plain) {
			t.Errorf("%s: embedded %d bytes, not the %d of the uncompressed binary", name, len(embedded), len(plain))
		}
		bins, err := offloadbinary.ReadAllBytes(embedded, &offloadbinary.ReadOptions{Release: r24})
		if err != nil || len(bins) != 1 {
			t.Fatalf("%s: embedded binary: %v", name, err)
		}
		img := bins[0].Images[0]
		var starts []int64
		rels, err := f.Relocations(f.Section(".rela.data.rel.ro"))
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range rels[:2] {
			if rel.Symbol == nil || rel.Symbol.Type() != elf.STT_SECTION {
				t.Fatalf("%s: ImageStart/End relocated against %v", name, rel.Symbol)
			}
			starts = append(starts, rel.Addend)
		}
		if starts[0] != int64(img.ImageOffset) || starts[1] != int64(img.ImageOffset+img.ImageSize) {
			t.Errorf("%s: ImageStart/End at %d, %d; the image is at %d, %d bytes", name, starts[0], starts[1], img.ImageOffset, img.ImageSize)
		}

		_, stderr, code := cli(t, "wrap", "--llvm", "22", "-o", filepath.Join(dir, "22.o"), in)
		if code != 1 || !strings.Contains(stderr, in) || !strings.Contains(stderr, "Version") {
			t.Errorf("%s: wrap --llvm 22 of a version-3 binary: exit %d, %q", name, code, stderr)
		}
	}
}
