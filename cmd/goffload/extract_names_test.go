package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// extract checks every name before it writes the first file: a symbolic
// link at the second name leaves the first unwritten too.
func TestExtractChecksEveryNameFirst(t *testing.T) {
	dir := t.TempDir()
	img, err := filepath.Abs(testdata("img1.bin"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "two.bin")
	if _, stderr, code := cli(t, "package", "-o", bin, "--image", "file="+img+",triple=x86_64-unknown-linux-gnu,arch=a",
		"--image", "file="+img+",triple=x86_64-unknown-linux-gnu,arch=b"); code != 0 {
		t.Fatal(stderr)
	}
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(out, "two-x86_64-unknown-linux-gnu-b.1.offload")); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := cli(t, "extract", "-o", out, bin)
	if code != 1 || !strings.Contains(stderr, "not a regular file") {
		t.Errorf("extract: exit %d, %q; want 1, not a regular file", code, stderr)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 1 {
		t.Errorf("extract wrote files before it refused the second name: %v", ents)
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere")); err == nil {
		t.Errorf("extract wrote through the link")
	}
}

// Entries that share one binary multiply what extract writes: each entry
// written as the binary holding it, 400 entries of one binary of 40 KB
// write 16 MB (as raw images, 400 KB: the reader bounds those, see
// offloadbinary.Budget). The files are bounded by 16 times the input plus 1 MiB,
// refused (ErrLimit's message) before anything is written; --max-bytes -1
// lifts the bound.
func TestExtractBoundsAliasedImages(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "aliased.bin")
	os.WriteFile(in, aliasedBinary(400, 1<<10), 0o644)
	out := filepath.Join(dir, "out")
	_, stderr, code := cli(t, "extract", "-o", out, in)
	if code != 1 || !strings.Contains(stderr, "over the limit") {
		t.Errorf("extract: exit %d, %q; want 1, over the limit", code, stderr)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Errorf("extract made %s", out)
	}
	if _, stderr, code := cli(t, "extract", "--max-bytes", "-1", "-o", out, in); code != 0 {
		t.Errorf("extract --max-bytes -1: exit %d, %s", code, stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 400 {
		t.Errorf("extract --max-bytes -1 wrote %d files, want 400", len(ents))
	}
}

// A compressed image counts by what it inflates to against the inflation
// limit, once: 64 MiB compressed in a version-3 binary (package --llvm 24
// --compress), or in the compressed bundle of an object's .hip_fatbin
// (wrap --kind hip --compress), extract without --max-bytes.
func TestExtractCompressedImages(t *testing.T) {
	dir := t.TempDir()
	const size = 64 << 20
	code := filepath.Join(dir, "k.out")
	if err := os.WriteFile(code, amdgpuHeader(size), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "v3.bin")
	if _, stderr, c := cli(t, "package", "--llvm", "24", "--compress", "-o", bin, "--image", "file="+code+",triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip"); c != 0 {
		t.Fatal(stderr)
	}
	obj := filepath.Join(dir, "hip.o")
	if _, stderr, c := cli(t, "wrap", "--llvm", "22", "--kind", "hip", "--compress", "-o", obj, "--image", "gfx90a="+code); c != 0 {
		t.Fatal(stderr)
	}
	for _, in := range []string{bin, obj} {
		st, _ := os.Stat(in)
		if st.Size() > 1<<20 {
			t.Fatalf("%s: %d bytes", in, st.Size())
		}
		out := filepath.Join(dir, "out-"+filepath.Base(in))
		if _, stderr, code := cli(t, "extract", "--llvm", "24", "--raw", "-o", out, in); code != 0 {
			t.Errorf("extract %s (%d bytes): exit %d, %s", filepath.Base(in), st.Size(), code, stderr)
			continue
		}
		ents, _ := os.ReadDir(out)
		if len(ents) != 1 {
			t.Errorf("extract %s wrote %v, want one file", filepath.Base(in), ents)
		} else if got, err := os.Stat(filepath.Join(out, ents[0].Name())); err != nil || got.Size() != size {
			t.Errorf("extract %s: %s: %v", filepath.Base(in), ents[0].Name(), err)
		}
	}
}
