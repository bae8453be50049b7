package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanListsTheSteps: the plan of a link of clang-22's fat object has its
// device link, the wrapper and the host link, and runs nothing.
func TestPlanListsTheSteps(t *testing.T) {
	obj := filepath.Join("..", "..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm22.o")
	prog := filepath.Join(t.TempDir(), "prog")
	r, w, _ := os.Pipe()
	stdout := os.Stdout
	os.Stdout = w
	err := run(22, []string{"-o", prog, obj, "-lm"})
	w.Close()
	os.Stdout = stdout
	out, _ := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LLVM 22 link of " + prog, "device-link x86_64-unknown-linux-gnu", "wrap openmp", "host-link"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if _, err := os.Stat(prog); err == nil {
		t.Errorf("the plan linked %s", prog)
	}
}
