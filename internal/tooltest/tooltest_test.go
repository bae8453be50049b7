package tooltest

import (
	"os"
	"path/filepath"
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
