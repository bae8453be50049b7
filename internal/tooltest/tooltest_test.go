package tooltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindInUnpackedPackage(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(bin, "goffload-test-tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OFFLOAD_LLVM_99", root)
	if got := Find("goffload-test-tool", 99); got != tool {
		t.Errorf("Find = %q, want %q", got, tool)
	}
	if got := Find("goffload-no-such-tool", 99); got != "" {
		t.Errorf("Find of a missing tool = %q", got)
	}
}

func TestRequired(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "true": true, "0": false, "": false, "yes": false} {
		t.Setenv(RequireEnv, v)
		if Required() != want {
			t.Errorf("%s=%q: Required() = %v", RequireEnv, v, !want)
		}
	}
}

// TestOwnTempDir: the test binary's and its children's temporary folder is
// the new one, and what they leave there goes when it is removed.
func TestOwnTempDir(t *testing.T) {
	before := os.TempDir()
	remove, err := OwnTempDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := os.TempDir()
	if filepath.Dir(dir) != before {
		t.Errorf("the folder %s is not in %s", dir, before)
	}
	out, err := exec.Command("sh", "-c", `mktemp "$TMPDIR/tmpfile_XXXXXX"`).Output()
	if err != nil {
		t.Fatal(err)
	}
	left := strings.TrimSpace(string(out))
	if filepath.Dir(left) != dir {
		t.Errorf("a child wrote %s, not in %s", left, dir)
	}
	// As libomptarget's x86-64 plugin writes them: in /tmp, whatever
	// $TMPDIR says; an image naming the folder, and another.
	ours, err := os.CreateTemp("/tmp", "tmpfile_")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(ours, "\x7fELF...%s/001\x00", dir)
	ours.Close()
	other, err := os.CreateTemp("/tmp", "tmpfile_")
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	defer os.Remove(other.Name())
	remove()
	if _, err := os.Stat(ours.Name()); !os.IsNotExist(err) {
		t.Errorf("%s, an image naming %s, left behind (%v)", ours.Name(), dir, err)
	}
	if _, err := os.Stat(other.Name()); err != nil {
		t.Errorf("%s, naming something else, removed: %v", other.Name(), err)
	}
	if os.TempDir() != before {
		t.Errorf("TMPDIR not restored: %s", os.TempDir())
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("%s left behind (%v)", left, err)
	}
}
