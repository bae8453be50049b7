package link

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestWriteNinjaPaths: a path with a space, a colon and a '$' is one path
// to ninja (`ninja -t query`); one holding '|' (where ninja ends a path:
// "x|y.o" would be the explicit input x and the implicit y.o) or a line
// break is refused, naming it.
func TestWriteNinjaPaths(t *testing.T) {
	plan := func(in string) *Link {
		return &Link{LLVM: 22, Output: "prog", Steps: []Step{{Kind: StepHostLink, Tool: "cc",
			Args: []string{"-o", "prog", in}, Inputs: []string{in}, Outputs: []string{"prog"}}}}
	}
	for _, in := range []string{"x|y.o", "x |y.o", "|", "a\nb.o"} {
		var b bytes.Buffer
		err := plan(in).WriteNinja(&b)
		if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(strings.ReplaceAll(in, "\n", `\n`))) {
			t.Errorf("%q: %v, want an error naming the path", in, err)
		}
	}
	in := "a b:$c.o"
	var b bytes.Buffer
	if err := plan(in).WriteNinja(&b); err != nil {
		t.Fatal(err)
	}
	ninja := tooltest.Program(t, "ninja")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "build.ninja"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ninja, "-t", "query", "prog")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ninja -t query: %v\n%s", err, out)
	}
	if want := "  input: step\n    " + in + "\n  outputs:\n"; !strings.Contains(string(out), want) {
		t.Errorf("ninja reads the plan's input as\n%s\nwant\n%s", out, want)
	}
}
