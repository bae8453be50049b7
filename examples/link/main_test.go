package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestLinkTwiceWithAMemoryCache links clang-22's fat object with a main,
// for LLVM 22, twice: the first run puts its device link in the program's
// cache, the second takes it from there, and the program runs.
func TestLinkTwiceWithAMemoryCache(t *testing.T) {
	tooltest.Tool(t, "clang", 22)
	cc := tooltest.Program(t, "cc")
	rt := tooltest.OpenMPRuntime(t, 22)
	dir := t.TempDir()
	mainC := filepath.Join(dir, "main.c")
	if err := os.WriteFile(mainC, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mainO := filepath.Join(dir, "main.o")
	if out, err := exec.Command(cc, "-c", mainC, "-o", mainO).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	obj := filepath.Join("..", "..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm22.o")
	prog := filepath.Join(dir, "prog")
	r, w, _ := os.Pipe()
	stdout := os.Stdout
	os.Stdout = w
	err := run(22, rt, []string{"-o", prog, mainO, obj, "-Wl,-rpath," + rt, tooltest.AllowShlibUndefined})
	w.Close()
	os.Stdout = stdout
	out, _ := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"LLVM 22 link of " + prog, "device-link x86_64-unknown-linux-gnu",
		"run 1: 0 device links from the cache, 1 entries in it", "run 2: 1 device links from the cache, 1 entries in it"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	cmd := exec.Command(prog)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+rt, "TMPDIR="+dir) // libomptarget leaves a file there
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: %v\n%s", prog, err, msg)
	}
}
