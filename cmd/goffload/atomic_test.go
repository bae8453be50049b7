package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWritesAreWholeOrNothing runs every command that writes a file under a
// file-size limit (ulimit -f) that makes its write fail half-way: each one
// exits 1 and leaves neither the output nor a temporary file behind. The same
// commands without the limit succeed.
func TestWritesAreWholeOrNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds goffload")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	dir := t.TempDir()
	exe := goffloadExe(t)
	image := filepath.Join(dir, "image.o")
	if err := os.WriteFile(image, make([]byte, 256<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "image.bin")
	if _, stderr, code := cli(t, "package", "-o", bin, "--image", "file="+image+",triple=x86_64-pc-linux-gnu,kind=openmp"); code != 0 {
		t.Fatal(stderr)
	}
	fat := filepath.Join(dir, "fat.o")
	if _, stderr, code := cli(t, "embed", "-o", fat, bin); code != 0 {
		t.Fatal(stderr)
	}
	spec := filepath.Join(dir, "spec.json")
	os.WriteFile(spec, []byte(`[{"kind": "openmp", "name": "`+strings.Repeat("x", 4000)+`", "symbol": "x"}]`), 0o644)
	for _, c := range []struct {
		name string
		args func(out string) []string
	}{
		{"package", func(out string) []string {
			return []string{"package", "-o", out, "--image", "file=" + image + ",triple=x86_64-pc-linux-gnu,kind=openmp"}
		}},
		{"embed", func(out string) []string { return []string{"embed", "-o", out, bin} }},
		{"embed --into", func(out string) []string { return []string{"embed", "--into", fat, "-o", out, bin} }},
		{"strip", func(out string) []string { return []string{"strip", "--keep", "x86_64-pc-linux-gnu", "-o", out, fat} }},
		{"wrap", func(out string) []string { return []string{"wrap", "--llvm", "19", "-o", out, bin} }},
		{"entries", func(out string) []string { return []string{"entries", "--spec", spec, "-o", out} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			out := filepath.Join(work, "out")
			// 2 KiB: every output here is larger.
			cmd := exec.Command(bash, append([]string{"-c", `ulimit -f 4; exec "$0" "$@"`, exe}, c.args(out)...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			_, err := cmd.Output()
			msg := stderr.String()
			if err == nil {
				t.Fatalf("succeeded under the limit:\n%s", msg)
			}
			if ents, _ := os.ReadDir(work); len(ents) != 0 {
				t.Errorf("left %d files behind (%s): %s", len(ents), ents[0].Name(), msg)
			}
			if strings.Count(strings.TrimSpace(string(msg)), "\n") != 0 {
				t.Errorf("message is not one line: %q", msg)
			}
			if out2, err := exec.Command(exe, c.args(out)...).CombinedOutput(); err != nil {
				t.Errorf("without the limit: %v\n%s", err, out2)
			}
		})
	}
	t.Run("extract", func(t *testing.T) {
		work := t.TempDir()
		cmd := exec.Command(bash, "-c", `ulimit -f 4; exec "$0" "$@"`, exe, "extract", "--raw", "-o", work, fat)
		if msg, err := cmd.CombinedOutput(); err == nil {
			t.Fatalf("succeeded under the limit:\n%s", msg)
		}
		if ents, _ := os.ReadDir(work); len(ents) != 0 {
			t.Errorf("left %d files behind", len(ents))
		}
	})
}
