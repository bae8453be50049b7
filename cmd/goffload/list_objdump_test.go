package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
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
// entries with --all. llvm-objdump reads the inputs in batches
// (objdumpBatch): one process per input would cost a minute of this
// package's run.
func TestListIsObjdumpOnEveryInput(t *testing.T) {
	t.Parallel()
	files := moduleInputs(t)
	if len(files) < 40 {
		t.Fatalf("%d test inputs found, want the module's 40 or more", len(files))
	}
	for _, major := range []int{19, 22} {
		t.Run("llvm"+strconv.Itoa(major), func(t *testing.T) {
			objdump := tooltest.Tool(t, "llvm-objdump", major)
			// A copy of each input, in a folder of its own: llvm-objdump-22
			// writes the bundles' entries beside its input.
			copies := make([]string, len(files))
			for i, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				copies[i] = filepath.Join(t.TempDir(), filepath.Base(f))
				if err := os.WriteFile(copies[i], data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			outs := objdumpBatch(t, objdump, copies)
			read := 0
			for i, f := range files {
				name, _ := filepath.Rel(filepath.Join("..", ".."), f)
				out, ok := outs[copies[i]]
				if ok {
					read++
				}
				t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
					t.Parallel()
					if !ok {
						t.Skipf("llvm-objdump-%d does not read it", major)
					}
					listAsObjdump(t, major, copies[i], out)
				})
			}
			if read < 30 {
				t.Errorf("llvm-objdump-%d read %d of the %d inputs, want 30 or more", major, read, len(files))
			}
		})
	}
}

// objdumpBatch runs objdump --offloading on the files, as few times as it
// can, and returns what it printed for each file it read. llvm-objdump
// reads its inputs in order and stops at the first it cannot read, naming
// it: that file is left out and the run goes on from the next. Between
// two inputs it reads an ELF object of no sections, whose output is one
// line naming it: the output of each input lies between two of those (an
// OffloadBinary's has no line naming it).
func objdumpBatch(t *testing.T, objdump string, files []string) map[string]string {
	t.Helper()
	sep := filepath.Join(t.TempDir(), "separator.o")
	o, err := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sep, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := "\n" + sep + ":\tfile format elf64-x86-64\n"
	outs := map[string]string{}
	for len(files) > 0 {
		args := []string{"--offloading", sep}
		for _, f := range files {
			args = append(args, f, sep)
		}
		cmd := exec.Command(objdump, args...)
		cmd.Dir = filepath.Dir(sep)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		release := tooltest.Slot()
		stdout, err := cmd.Output()
		release()
		chunks := strings.Split(string(stdout), marker)
		if chunks[0] != "" {
			t.Fatalf("%s printed %q before its first input", objdump, chunks[0])
		}
		chunks = chunks[1:]
		// Each input read is followed by a marker: chunks[i] is files[i]'s
		// output for i < len(chunks)-1; the last chunk is what objdump
		// printed of the file it stopped at, or "" when it read them all.
		read := len(chunks) - 1
		if err == nil {
			if read != len(files) || chunks[read] != "" {
				t.Fatalf("%s read %d of %d inputs and exited 0:\n%s", objdump, read, len(files), stdout)
			}
		} else if read >= len(files) || !strings.Contains(stderr.String(), "'"+files[read]+"'") {
			t.Fatalf("%s stopped after %d of %d inputs (%v), not naming the next:\n%s", objdump, read, len(files), err, stderr.String())
		}
		for i := 0; i < read; i++ {
			outs[files[i]] = chunks[i]
		}
		if err == nil {
			break
		}
		files = files[read+1:]
	}
	return outs
}

// listAsObjdump compares goffload list with what llvm-objdump-major printed
// for the file in.
func listAsObjdump(t *testing.T, major int, in, out string) {
	var want strings.Builder
	extracted := 0
	for _, line := range strings.SplitAfter(out, "\n") {
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
}
