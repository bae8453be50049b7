package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// objectMagics are the starts of the files llvm-objdump may read: ELF, an
// archive, an OffloadBinary, an x86-64 or AArch64 COFF object.
var objectMagics = []string{"\x7fELF", "!<arch>\n", "!<thin>\n", "\x10\xff\x10\xad", "\x64\x86", "\x64\xaa"}

// moduleInputs returns the module's test inputs that llvm-objdump may read:
// the files of every testdata folder (but fuzz corpora) that start with
// one of objectMagics; the fixtures of real tools among them.
func moduleInputs(t *testing.T) []string {
	t.Helper()
	var files []string
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "fuzz" || strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !strings.Contains(filepath.ToSlash(path), "/testdata/") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range objectMagics {
			if bytes.HasPrefix(data, []byte(m)) {
				files = append(files, path)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestListIsObjdumpOnEveryInput: on every test input of the module that
// llvm-objdump-N --offloading reads (the fixtures of LLVM's and NVIDIA's
// tools among them), `goffload list --llvm N` prints what it prints, line
// for line, for N = 19 and 22, and `goffload list` what llvm-objdump-22
// prints. But for one line: llvm-objdump-22 extracts each entry of a
// clang offload bundle (a .hip_fatbin section) to a file beside its input,
// named from the bundle's data, and says "Extracting offload bundle: FILE";
// list writes nothing (goffload extract does that), and prints those
// entries with --all.
func TestListIsObjdumpOnEveryInput(t *testing.T) {
	t.Parallel()
	files := moduleInputs(t)
	if len(files) < 40 {
		t.Fatalf("%d test inputs found, want the module's 40 or more", len(files))
	}
	for _, major := range []int{19, 22} {
		t.Run("llvm"+strconv.Itoa(major), func(t *testing.T) {
			objdump := tooltest.Tool(t, "llvm-objdump", major)
			var read atomic.Int32
			t.Cleanup(func() {
				if n := read.Load(); n < 30 {
					t.Errorf("llvm-objdump-%d read %d of the %d inputs, want 30 or more", major, n, len(files))
				}
			})
			for _, f := range files {
				name, _ := filepath.Rel(filepath.Join("..", ".."), f)
				t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
					t.Parallel()
					if listAsObjdump(t, objdump, major, f) {
						read.Add(1)
					}
				})
			}
		})
	}
}

// listAsObjdump compares goffload list with llvm-objdump-major on the file
// f, and reports whether llvm-objdump read it.
func listAsObjdump(t *testing.T, objdump string, major int, f string) bool {
	// A copy of its own, in a folder of its own: llvm-objdump-22 writes the
	// bundles' entries beside its input.
	dir := t.TempDir()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, filepath.Base(f))
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(objdump, "--offloading", in)
	cmd.Dir = dir
	release := tooltest.Slot()
	out, err := cmd.Output()
	release()
	if err != nil {
		return false // llvm-objdump does not read it
	}
	var want strings.Builder
	extracted := 0
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if strings.HasPrefix(line, "Extracting offload bundle: ") {
			extracted++
			continue
		}
		want.WriteString(line)
	}
	runs := [][]string{{"list", "--llvm", strconv.Itoa(major), in}}
	if major == 22 {
		runs = append(runs, []string{"list", in})
	}
	for _, args := range runs {
		got, stderr, code := cli(t, args...)
		if code != 0 || got != want.String() {
			t.Errorf("goffload %s: exit %d %s\n got %q\nwant %q", strings.Join(args[:len(args)-1], " "), code, stderr, got, want.String())
		}
	}
	if extracted > 0 {
		all, _, _ := cli(t, "list", "--all", "--llvm", strconv.Itoa(major), in)
		if n := strings.Count(all, "\n  ["); !strings.Contains(all, "OFFLOAD BUNDLE [") || n < extracted {
			t.Errorf("llvm-objdump-%d extracts %d bundle entries, list --all lists %d:\n%s", major, extracted, n, all)
		}
	}
	return true
}
