package main

import (
	"bytes"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// TestPackageCompress: package --compress under --llvm 24 writes compressed
// version-3 binaries (zstd or zlib, the levels llvm-offload-binary takes,
// as its compress.test and compress-level-zlib.test run them) that list and
// extract to the original image; releases that write version 1 refuse it.
func TestPackageCompress(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "k.o")
	data := bytes.Repeat([]byte("device code, device code\n"), 4000)
	if err := os.WriteFile(img, data, 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.bin")
	if _, stderr, code := cli(t, "package", "--llvm", "24", "-o", plain, "--image", "file="+img+",arch=abc,triple=x-y-z"); code != 0 {
		t.Fatalf("package: %s", stderr)
	}
	plainInfo, _ := os.Stat(plain)
	r24, err := release.Lookup(24)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		format string
	}{
		{nil, "zstd"},
		{[]string{"--compression-format", "zstd", "--compression-level", "-5"}, "zstd"},
		{[]string{"--compression-format", "zstd", "--compression-level", "19"}, "zstd"},
		{[]string{"--compression-format", "zlib"}, "zlib"},
		{[]string{"--compression-format", "zlib", "--compression-level", "9"}, "zlib"},
		{[]string{"--compression-format", "zlib", "--compression-level", "0"}, "zlib"},
	} {
		name := strings.Join(append([]string{"compress"}, c.args...), " ")
		out := filepath.Join(dir, "c.bin")
		args := append(append([]string{"package", "--llvm", "24", "--compress"}, c.args...), "-o", out, "--image", "file="+img+",arch=abc,triple=x-y-z")
		if _, stderr, code := cli(t, args...); code != 0 {
			t.Fatalf("%s: %s", name, stderr)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		bins, err := offloadbinary.ReadAllBytes(raw, &offloadbinary.ReadOptions{Release: r24})
		if err != nil || len(bins) != 1 || bins[0].Compression != c.format {
			t.Fatalf("%s: %d binaries, %v", name, len(bins), err)
		}
		stored := c.args != nil && c.args[len(c.args)-1] == "0"
		if small := int64(len(raw)) < plainInfo.Size()/4; small == stored {
			t.Errorf("%s: %d bytes, %d uncompressed", name, len(raw), plainInfo.Size())
		}
		want := "\nOFFLOADING IMAGE [0]:\nkind            elf\narch            abc\ntriple          x-y-z\nproducer        none\nimage size      100000 bytes\n"
		if stdout, stderr, code := cli(t, "list", "--llvm", "24", out); code != 0 || stdout != want {
			t.Errorf("%s: list: exit %d %s\n%s", name, code, stderr, stdout)
		}
		xdir := filepath.Join(dir, "x")
		os.RemoveAll(xdir)
		stdout, stderr, code := cli(t, "extract", "--llvm", "24", "--raw", "-o", xdir, out)
		if code != 0 || stdout != "Extracted: c-x-y-z-abc.0.o\n" {
			t.Fatalf("%s: extract: exit %d %s\n%q", name, code, stderr, stdout)
		}
		if got, err := os.ReadFile(filepath.Join(xdir, "c-x-y-z-abc.0.o")); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: the extracted image differs (%v)", name, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--llvm", "22", "--compress"}, "LLVM 22 writes OffloadBinary version 1, which has no compression"},
		{[]string{"--llvm", "24", "--compress", "--compression-format", "zlib", "--compression-level", "12"}, "invalid zlib compression level 12; expected a value in [0, 9]"},
		{[]string{"--llvm", "24", "--compress", "--compression-format", "zstd", "--compression-level", "23"}, "invalid zstd compression level 23"},
		{[]string{"--llvm", "24", "--compress", "--compression-format", "lz4"}, `compression format "lz4"`},
		{[]string{"--llvm", "24", "--compression-level", "3"}, "go with --compress"},
	} {
		out := filepath.Join(dir, "refused.bin")
		args := append(append([]string{"package"}, c.args...), "-o", out, "--image", "file="+img+",triple=x-y-z")
		if _, stderr, code := cli(t, args...); code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d %q, want %q", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the output was made", c.args)
		}
	}
}

// TestExtractVersion3: under --llvm 24 extract writes what main's
// llvm-offload-binary writes: the images of nested binaries rather than the
// binary holding them, no "-ARCH" for an empty arch, `Extracted: NAME`
// lines; --member selects archive members by name (member-extract.test);
// --llvm 22 writes the outer image as LLVM 22 does.
func TestExtractVersion3(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pkg := func(out string, images ...string) []byte {
		llvm := "24"
		if strings.HasSuffix(out, ".v1") {
			llvm = "22"
		}
		args := []string{"package", "--llvm", llvm, "-o", filepath.Join(dir, out)}
		for _, im := range images {
			args = append(args, "--image", im)
		}
		if _, stderr, code := cli(t, args...); code != 0 {
			t.Fatalf("%v: %s", args, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := write("a.o", []byte("aaaa\n"))
	b := write("b.bc", []byte("bbbb\n"))
	pkg("inner.bin", "file="+a+",triple=x86_64-unknown-linux-gnu,kind=openmp", "file="+b+",triple=nvptx64-nvidia-cuda,arch=sm_90,kind=openmp")
	pkg("outer.bin", "file="+filepath.Join(dir, "inner.bin")+",triple=spirv64-unknown-unknown,arch=gen", "file="+a+",triple=amdgcn-amd-amdhsa,arch=gfx90a")

	extract := func(args ...string) (string, map[string]string) {
		t.Helper()
		x := filepath.Join(dir, "x")
		os.RemoveAll(x)
		stdout, stderr, code := cli(t, append(append([]string{"extract"}, args...), "-o", x)...)
		if code != 0 {
			t.Fatalf("extract %v: %s", args, stderr)
		}
		got := map[string]string{}
		ents, _ := os.ReadDir(x)
		for _, e := range ents {
			b, _ := os.ReadFile(filepath.Join(x, e.Name()))
			got[e.Name()] = string(b)
		}
		return stdout, got
	}
	stdout, got := extract("--llvm", "24", "--raw", filepath.Join(dir, "outer.bin"))
	if want := "Extracted: outer-x86_64-unknown-linux-gnu.0.o\nExtracted: outer-nvptx64-nvidia-cuda-sm_90.1.bc\nExtracted: outer-amdgcn-amd-amdhsa-gfx90a.2.o\n"; stdout != want {
		t.Errorf("--llvm 24: %q, want %q", stdout, want)
	}
	wantFiles := map[string]string{"outer-x86_64-unknown-linux-gnu.0.o": "aaaa\n", "outer-nvptx64-nvidia-cuda-sm_90.1.bc": "bbbb\n", "outer-amdgcn-amd-amdhsa-gfx90a.2.o": "aaaa\n"}
	if !maps.Equal(got, wantFiles) {
		t.Errorf("--llvm 24 wrote %v", slices.Sorted(maps.Keys(got)))
	}
	// A selector picks outer images; their nested images are all written.
	if stdout, _ := extract("--llvm", "24", "--raw", "--arch", "gen", filepath.Join(dir, "outer.bin")); strings.Count(stdout, "Extracted:") != 2 {
		t.Errorf("--arch gen: %q", stdout)
	}
	// LLVM 22 writes a nested binary as one image.
	inner := pkg("inner.v1", "file="+a+",triple=x86_64-unknown-linux-gnu,kind=openmp", "file="+b+",triple=nvptx64-nvidia-cuda,arch=sm_90,kind=openmp")
	pkg("outer.v1", "file="+filepath.Join(dir, "inner.v1")+",triple=spirv64-unknown-unknown,arch=gen")
	if _, got := extract("--llvm", "22", "--raw", "--arch", "gen", filepath.Join(dir, "outer.v1")); len(got) != 1 || got["outer-spirv64-unknown-unknown-gen.0."] != string(inner) {
		t.Errorf("--llvm 22 wrote %v", slices.Sorted(maps.Keys(got)))
	}

	// member-extract.test: two members alike but for their contents.
	var ms []ar.NewMember
	for _, m := range []struct{ name, content string }{{"a.o", "aaaa\n"}, {"b.o", "bbbb\n"}} {
		c := write("content-"+m.name, []byte(m.content))
		bin := pkg(m.name+".bin", "file="+c+",triple=x-y-z,arch=gfx90a,kind=openmp")
		ms = append(ms, ar.NewMember{Name: m.name, Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader(bin), 0, int64(len(bin)))})
	}
	var lib bytes.Buffer
	if err := ar.WriteGNU(&lib, ms); err != nil {
		t.Fatal(err)
	}
	libPath := write("lib.a", lib.Bytes())
	for _, m := range []struct{ name, content string }{{"a.o", "aaaa\n"}, {"b.o", "bbbb\n"}} {
		_, got := extract("--llvm", "24", "--raw", "--member", m.name, "--triple", "x-y-z", "--arch", "gfx90a", "--kind", "openmp", libPath)
		if len(got) != 1 {
			t.Errorf("--member %s: %v", m.name, slices.Sorted(maps.Keys(got)))
		}
		for _, c := range got {
			if c != m.content {
				t.Errorf("--member %s: %q", m.name, c)
			}
		}
	}
	if _, got := extract("--llvm", "24", "--raw", "--triple", "x-y-z", libPath); len(got) != 2 {
		t.Errorf("no --member: %v", slices.Sorted(maps.Keys(got)))
	}
	if _, got := extract("--llvm", "24", "--raw", "--member", "c.o", libPath); len(got) != 0 {
		t.Errorf("--member c.o: %v", slices.Sorted(maps.Keys(got)))
	}
	// A file that is no archive has no members.
	if _, got := extract("--llvm", "24", "--raw", "--member", "outer.bin", filepath.Join(dir, "outer.bin")); len(got) != 0 {
		t.Errorf("--member of a plain file: %v", slices.Sorted(maps.Keys(got)))
	}

	// A bad nested binary is refused, and nothing is written.
	bad, _ := os.ReadFile(filepath.Join(dir, "inner.bin"))
	bad[4] = 9 // version
	badImg := write("bad.img", bad)
	pkg("badouter.bin", "file="+badImg+",triple=x-y-z")
	x := filepath.Join(dir, "xbad")
	if _, stderr, code := cli(t, "extract", "--llvm", "24", "--raw", "-o", x, filepath.Join(dir, "badouter.bin")); code != 1 || !strings.Contains(stderr, "failed to extract nested OffloadBinary of image [0]") {
		t.Errorf("bad nested binary: exit %d %q", code, stderr)
	}
	if _, err := os.Stat(x); err == nil {
		t.Errorf("bad nested binary: %s was made", x)
	}
}

// TestLinkVersion3: link --llvm 24 reads the compressed version-3 binaries
// that main's toolchain embeds and links their device code; --llvm 22
// refuses them as LLVM 22's wrapper does.
func TestLinkVersion3(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x")
	if _, stderr, code := cli(t, "extract", "--raw", "-o", x, filepath.Join("..", "..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm22.o")); code != 0 {
		t.Fatal(stderr)
	}
	image := filepath.Join(x, "openmp-x86-llvm22-x86_64-unknown-linux-gnu-generic.0.o")
	bin, fat := filepath.Join(dir, "omp.bin"), filepath.Join(dir, "omp23.o")
	for _, args := range [][]string{
		{"package", "--llvm", "24", "--compress", "-o", bin, "--image", "file=" + image + ",triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp"},
		{"embed", "--llvm", "24", "-o", fat, bin},
	} {
		if _, stderr, code := cli(t, args...); code != 0 {
			t.Fatalf("%v: %s", args, stderr)
		}
	}
	stdout, stderr, code := cli(t, "link", "--llvm", "24", "--dry-run", "-o", filepath.Join(dir, "a.out"), fat)
	if code != 0 || !strings.Contains(stdout, "--target=x86_64-unknown-linux-gnu") || !strings.Contains(stdout, "omp23-x86_64-unknown-linux-gnu-generic.o") {
		t.Errorf("link --llvm 24: exit %d %s\n%s", code, stderr, stdout)
	}
	if _, stderr, code := cli(t, "link", "--llvm", "22", "--dry-run", "-o", filepath.Join(dir, "a.out"), fat); code != 1 || !strings.Contains(stderr, "Version 0x3") {
		t.Errorf("link --llvm 22: exit %d %s", code, stderr)
	}
}

// TestSPIRVImages: 23 and main name IMG_SPIRV (the packager's kind of a
// .spv file, llvm-objdump's "spir-v", the extension "spv"); 22 names it
// nowhere: a .spv file is packaged as <none>.
func TestSPIRVImages(t *testing.T) {
	dir := t.TempDir()
	spv := filepath.Join(dir, "k.spv")
	if err := os.WriteFile(spv, []byte{0x03, 0x02, 0x23, 0x07, 1, 2, 3, 4}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ llvm, kind, file string }{
		{"24", "spir-v", "b-spirv64-unknown-unknown.0.spv"},
		{"23", "spir-v", "b-spirv64-unknown-unknown.0.spv"},
		{"22", "<none>", "b-spirv64-unknown-unknown-.0."},
	} {
		bin := filepath.Join(dir, "b.bin")
		if _, stderr, code := cli(t, "package", "--llvm", c.llvm, "-o", bin, "--image", "file="+spv+",triple=spirv64-unknown-unknown,kind=sycl"); code != 0 {
			t.Fatal(stderr)
		}
		if stdout, stderr, code := cli(t, "list", "--llvm", c.llvm, bin); code != 0 || !strings.Contains(stdout, "\nkind            "+c.kind+"\n") {
			t.Errorf("--llvm %s: list: exit %d %s\n%s", c.llvm, code, stderr, stdout)
		}
		x := filepath.Join(dir, "x"+c.llvm)
		if _, stderr, code := cli(t, "extract", "--llvm", c.llvm, "--raw", "-o", x, bin); code != 0 {
			t.Fatal(stderr)
		}
		if _, err := os.Stat(filepath.Join(x, c.file)); err != nil {
			ents, _ := os.ReadDir(x)
			t.Errorf("--llvm %s: extract wrote %v, want %s", c.llvm, ents, c.file)
		}
	}
}

// TestMetadataCarried: an OIF_Metadata entry (strings, no image) is written
// by extract --raw as the empty file main's llvm-offload-binary writes,
// and extract (whole binaries) and strip keep its flag.
func TestMetadataCarried(t *testing.T) {
	dir := t.TempDir()
	r24, err := release.Lookup(24)
	if err != nil {
		t.Fatal(err)
	}
	im := offloadbinary.Image{Kind: offload.ImageNone, OffloadKind: offload.OffloadOpenMP, Flags: offloadbinary.FlagMetadata,
		Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "x86_64-unknown-linux-gnu"}, {Key: "arch", Value: "generic"}, {Key: "note", Value: "metadata only"}}}
	b, err := offloadbinary.MarshalBinary(r24, &im, nil)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "m.bin")
	if err := os.WriteFile(bin, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fat := filepath.Join(dir, "m.o")
	if _, stderr, code := cli(t, "embed", "--llvm", "24", "-o", fat, bin); code != 0 {
		t.Fatal(stderr)
	}
	x := filepath.Join(dir, "raw")
	if stdout, stderr, code := cli(t, "extract", "--llvm", "24", "--raw", "-o", x, bin); code != 0 || stdout != "Extracted: m-x86_64-unknown-linux-gnu-generic.0.\n" {
		t.Fatalf("extract --raw: exit %d %s\n%q", code, stderr, stdout)
	}
	if st, err := os.Stat(filepath.Join(x, "m-x86_64-unknown-linux-gnu-generic.0.")); err != nil || st.Size() != 0 {
		t.Errorf("extract --raw: %v", err)
	}
	flagged := func(what, path string) {
		t.Helper()
		stdout, stderr, code := cli(t, "list", "--llvm", "24", "--json", path)
		if code != 0 || !strings.Contains(stdout, `"metadata": true`) {
			t.Errorf("%s: the metadata flag is lost: exit %d %s\n%s", what, code, stderr, stdout)
		}
	}
	flagged("the input", fat)
	whole := filepath.Join(dir, "whole")
	if _, stderr, code := cli(t, "extract", "--llvm", "24", "-o", whole, fat); code != 0 {
		t.Fatal(stderr)
	}
	ents, _ := os.ReadDir(whole)
	if len(ents) != 1 {
		t.Fatalf("extract: %v", ents)
	}
	if got, _ := os.ReadFile(filepath.Join(whole, ents[0].Name())); !bytes.Equal(got, b) {
		t.Errorf("extract: %s is not the binary", ents[0].Name())
	}
	stripped := filepath.Join(dir, "s.o")
	if _, stderr, code := cli(t, "strip", "--llvm", "24", "--keep", "x86_64-unknown-linux-gnu:generic", "-o", stripped, fat); code != 0 {
		t.Fatal(stderr)
	}
	flagged("strip", stripped)
}
