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
