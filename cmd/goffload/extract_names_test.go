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

// Entries that share one image multiply what extract writes: the files
// are bounded by 16 times the input plus 1 MiB, refused (ErrLimit's
// message) before anything is written; --max-bytes raises the bound.
func TestExtractBoundsAliasedImages(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "aliased.bin")
	os.WriteFile(in, aliasedBinary(400, 50<<10), 0o644) // 20 MB from 90 KB
	out := filepath.Join(dir, "out")
	_, stderr, code := cli(t, "extract", "--raw", "-o", out, in)
	if code != 1 || !strings.Contains(stderr, "over the limit") {
		t.Errorf("extract: exit %d, %q; want 1, over the limit", code, stderr)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Errorf("extract made %s", out)
	}
	if _, stderr, code := cli(t, "extract", "--raw", "--max-bytes", "-1", "-o", out, in); code != 0 {
		t.Errorf("extract --max-bytes -1: exit %d, %s", code, stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 400 {
		t.Errorf("extract --max-bytes -1 wrote %d files, want 400", len(ents))
	}
}
