package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestWrapMatchesTheCommand: the example's object is byte for byte what
// `goffload wrap` writes for the same binaries.
func TestWrapMatchesTheCommand(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join("..", "..", "offload", "testdata", "llvm", "packager", "multi-llvm19.bin")
	ours := filepath.Join(dir, "ours.o")
	if err := run(ours, 19, "x86_64-unknown-linux-gnu", []string{bin}); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(dir, "theirs.o")
	cmd := exec.Command("go", "run", "../../cmd/goffload", "wrap", "--llvm", "19", "-o", theirs, bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goffload wrap: %v\n%s", err, out)
	}
	a, _ := os.ReadFile(ours)
	b, _ := os.ReadFile(theirs)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("the example wrote %d bytes, goffload wrap %d, not the same", len(a), len(b))
	}
	if err := run(filepath.Join(dir, "bad.o"), 19, "x86_64-unknown-linux-gnu", []string{ours}); err == nil {
		t.Error("an object that is no offload binary was wrapped")
	}
}
