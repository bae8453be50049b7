package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

func bitcodeTestdata(name string) string {
	return filepath.Join("..", "..", "bitcode", "testdata", name)
}

// TestListAndExtractLTOObjectsMatchOffloadBinary compiles an OpenMP target
// region with clang-19 and clang-22 -flto, -flto=thin and
// -ffat-lto-objects, archives them with llvm-ar-19, and checks that
// goffload extract writes the images llvm-offload-binary-22 extracts (as
// many, in the same order, byte for byte), that list lists as many, and
// that check reads each. A fat-LTO object is ELF whose .llvm.lto section
// holds the bitcode again: LLVM reads only its SHT_LLVM_OFFLOADING section,
// and so does goffload (llvm-objdump-22 --offloading lists one image too).
func TestListAndExtractLTOObjectsMatchOffloadBinary(t *testing.T) {
	t.Parallel()
	tool, objdump, llvmAr := tooltest.Tool(t, "llvm-offload-binary", 22), tooltest.Tool(t, "llvm-objdump", 22), tooltest.Tool(t, "llvm-ar", 19)
	for _, major := range []int{19, 22} {
		dir := t.TempDir()
		var objs []string
		for _, mode := range []string{"full", "thin", "fat"} {
			flags := map[string][]string{"full": {"-flto"}, "thin": {"-flto=thin"}, "fat": {"-flto", "-ffat-lto-objects"}}[mode]
			out := mode + strconv.Itoa(major) + ".o"
			compiled(t, "clang", major, "", append([]string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", "-o", filepath.Join(dir, out), bitcodeTestdata("omp.c")}, flags...), filepath.Join(dir, out))
			objs = append(objs, filepath.Join(dir, out))
		}
		lib := filepath.Join(dir, "lib"+strconv.Itoa(major)+".a")
		runCmd(t, dir, llvmAr, append([]string{"rcs", lib}, objs...)...)
		for _, in := range append(objs, lib) {
			want, got := filepath.Join(dir, "want"), filepath.Join(dir, "got")
			os.RemoveAll(want)
			os.RemoveAll(got)
			os.MkdirAll(want, 0o755)
			runCmd(t, want, tool, in, "--image=kind=openmp")
			if _, stderr, code := cli(t, "extract", "--raw", "-o", got, in); code != 0 {
				t.Fatalf("extract %s: %s", in, stderr)
			}
			w, g := dirContents(t, want), dirContents(t, got)
			n := len(strings.Fields(w))
			if w != g || n == 0 {
				t.Errorf("%s:\nllvm-offload-binary %s\ngoffload            %s", in, w, g)
			}
			stdout, stderr, code := cli(t, "list", "--all", in)
			if code != 0 || strings.Count(stdout, "OFFLOADING IMAGE") != n {
				t.Errorf("list %s: exit %d, %d images, want %d\n%s%s", in, code, strings.Count(stdout, "OFFLOADING IMAGE"), n, stdout, stderr)
			}
			if strings.HasPrefix(filepath.Base(in), "fat") {
				if dump := runCmd(t, dir, objdump, "--offloading", in); strings.Count(dump, "OFFLOADING IMAGE") != n {
					t.Errorf("%s: llvm-objdump-22 lists %d images, llvm-offload-binary-22 extracts %d", in, strings.Count(dump, "OFFLOADING IMAGE"), n)
				}
			} else if !strings.Contains(stdout, ":\tfile format bitcode\n") || !strings.Contains(stdout, "@llvm.embedded.object section=.llvm.offloading") {
				t.Errorf("list %s:\n%s", in, stdout)
			}
			if stdout, stderr, code := cli(t, "check", in); code != 0 || strings.HasSuffix(in, "full"+strconv.Itoa(major)+".o") && !strings.Contains(stdout, "LLVM bitcode: its offload entries are IR") {
				t.Errorf("check %s: exit %d\n%s%s", in, code, stdout, stderr)
			}
		}
		// As JSON: one object per member, the bitcode ones of format
		// bitcode whose images are not in place.
		stdout, stderr, code := cli(t, "list", "--json", lib)
		if code != 0 {
			t.Fatal(stderr)
		}
		dec := json.NewDecoder(strings.NewReader(stdout))
		var formats []string
		for dec.More() {
			var f jsonFile
			if err := dec.Decode(&f); err != nil {
				t.Fatal(err)
			}
			formats = append(formats, f.Format)
			for _, im := range f.Images {
				if f.Format == "bitcode" && (im.Source != "bitcode" || im.Offset != -1 || im.DataOffset != -1 || im.Global != "llvm.embedded.object") ||
					f.Format == "elf" && (im.Source != "binary" || im.DataOffset <= 0) {
					t.Errorf("%s: %+v", f.File, im)
				}
			}
		}
		if got := strings.Join(formats, " "); got != "bitcode bitcode elf" {
			t.Errorf("formats %s", got)
		}
	}
}

// TestListBitcodeModule lists a module of several embedded objects (and
// the nodes LLVM skips) as text and JSON; extract, check, strip and
// convert read it as the library does.
func TestListBitcodeModule(t *testing.T) {
	in := bitcodeTestdata("embedded.bc")
	stdout, stderr, code := cli(t, "list", in)
	if code != 0 || strings.Count(stdout, "OFFLOADING IMAGE") != 4 || !strings.Contains(stdout, in+":\tfile format bitcode\n") || strings.Contains(stdout, "EMBEDDED OBJECTS") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, stderr, code = cli(t, "list", "--all", in)
	if code != 0 {
		t.Fatalf("list --all: exit %d: %s", code, stderr)
	}
	for _, line := range []string{
		"EMBEDDED OBJECTS (llvm.embedded.objects):",
		"  [0] @bin.single section=.llvm.offloading binary version=1 size=160 images=1",
		"  [1] @bin.multi section=.llvm.offloading binary version=1 size=240 images=1",
		"  [2] @bin.multi section=.llvm.offloading binary version=1 size=160 images=1",
		"  [3] @bin.single section=.llvm.offloading binary version=1 size=160 images=1",
	} {
		if !strings.Contains(stdout, line+"\n") {
			t.Errorf("no line %q in\n%s", line, stdout)
		}
	}
	stdout, _, code = cli(t, "list", "--json", in)
	var f jsonFile
	if err := json.Unmarshal([]byte(stdout), &f); err != nil || code != 0 || f.Format != "bitcode" || len(f.Images) != 4 || f.Images[1].Global != "bin.multi" {
		t.Errorf("json: %v %+v", err, f)
	}
	got := filepath.Join(t.TempDir(), "x")
	if stdout, stderr, code := cli(t, "extract", "-o", got, in); code != 0 || !strings.Contains(stdout, "4 image(s) extracted") {
		t.Errorf("extract: %s%s", stdout, stderr)
	}
	if stdout, _, code := cli(t, "check", "--json", in); code != 0 || !strings.Contains(stdout, `"bitcode": true`) {
		t.Errorf("check: %s", stdout)
	}
	out := filepath.Join(t.TempDir(), "out.bc")
	if _, stderr, code := cli(t, "strip", "--keep", "nvptx64-nvidia-cuda", "-o", out, in); code != 1 || !strings.Contains(stderr, "goffload does not rewrite bitcode") {
		t.Errorf("strip: exit %d %s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("strip wrote output")
	}
	if _, stderr, code := cli(t, "convert", "--llvm", "19", "-o", out, in); code != 1 || !strings.Contains(stderr, "LLVM bitcode with device code") {
		t.Errorf("convert: exit %d %s", code, stderr)
	}
}
