package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// -o - writes the one output file to standard output, as LLVM's tools do,
// the same bytes as -o FILE, and makes no file named "-".
func TestOutputDashIsStdout(t *testing.T) {
	img, err := filepath.Abs(testdata("img1.bin"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	bin := filepath.Join(dir, "k.bin")
	obj := filepath.Join(dir, "k.o")
	spec := filepath.Join(dir, "spec.json")
	os.WriteFile(spec, []byte(`[{"kind": "openmp", "name": "x", "symbol": "x", "size": 4}]`), 0o644)
	image := "file=" + img + ",triple=x86_64-unknown-linux-gnu,arch=generic"
	for _, c := range []struct {
		name string
		args []string // OUT where the output goes
		keep string   // write OUT to this file for the commands after
	}{
		{"package", []string{"package", "-o", "OUT", "--image", image}, bin},
		{"embed", []string{"embed", "-o", "OUT", bin}, obj},
		{"strip", []string{"strip", "--keep", "x86_64-unknown-linux-gnu", "-o", "OUT", obj}, ""},
		{"convert", []string{"convert", "--llvm", "19", "-o", "OUT", obj}, ""},
		{"wrap", []string{"wrap", "-o", "OUT", bin}, ""},
		{"entries", []string{"entries", "--spec", spec, "-o", "OUT"}, ""},
	} {
		file := filepath.Join(dir, c.name+".out")
		with := func(out string) []string {
			args := append([]string{}, c.args...)
			for i, a := range args {
				if a == "OUT" {
					args[i] = out
				}
			}
			return args
		}
		if _, stderr, code := cli(t, with(file)...); code != 0 {
			t.Fatalf("%s -o FILE: exit %d: %s", c.name, code, stderr)
		}
		want, _ := os.ReadFile(file)
		stdout, stderr, code := cli(t, with("-")...)
		if code != 0 || !bytes.Equal([]byte(stdout), want) {
			t.Errorf("%s -o -: exit %d, %s; %d bytes on stdout, want the %d of -o FILE", c.name, code, stderr, len(stdout), len(want))
		}
		if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
			t.Errorf("%s -o -: made a file named -", c.name)
			os.Remove(filepath.Join(dir, "-"))
		}
		if c.keep != "" {
			os.WriteFile(c.keep, want, 0o644)
		}
	}
}
