package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestExtendedSectionIndicesCommands: an OpenMP object of clang-22 with
// more sections than st_shndx holds (65,300 globals, -fdata-sections: its
// entries, their names and the offloading section lie past section 65,279,
// their symbols' st_shndx is SHN_XINDEX, e_shnum is 0) is read as
// llvm-objdump reads it (list prints what llvm-objdump --offloading prints;
// list --all names its entries g and the kernel), checked with nothing to
// report, extracted, planned, and edited (strip, convert to 19, embed
// --into): each output's symbols are the input's, as llvm-readelf-22 lists
// them. The compile takes seconds: in the exhaustive run.
func TestExtendedSectionIndicesCommands(t *testing.T) {
	if !tooltest.Exhaustive() {
		t.Skipf("compiles an object of 65,300 sections: in the exhaustive run (%s=1)", tooltest.ExhaustiveEnv)
	}
	t.Parallel()
	clang := tooltest.Tool(t, "clang", 22)
	readelf := tooltest.Tool(t, "llvm-readelf", 22)
	objdump := tooltest.Tool(t, "llvm-objdump", 22)
	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n")
	for i := range 65300 {
		fmt.Fprintf(&src, "int v%d = %d;\n", i, i)
	}
	src.WriteString("int g = 5;\n#pragma omp declare target to(g)\nint main(void) {\n  int r = 0;\n#pragma omp target map(from: r)\n  r = g + 1;\n  printf(\"%d\\n\", r + v1);\n  return r != 6;\n}\n")
	if err := os.WriteFile(filepath.Join(dir, "many.c"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	release := tooltest.Slot()
	runCmd(t, dir, clang, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-fdata-sections", "-c", "many.c", "-o", "many.o")
	release()
	in := filepath.Join(dir, "many.o")
	if head := runCmdOut(t, dir, readelf, "-h", in); !strings.Contains(head, "Number of section headers:         0 (") {
		t.Fatalf("not an object of extended section numbering:\n%s", head)
	}
	symbols := func(path string) string {
		out, err := exec.Command(readelf, "-s", path).Output()
		if err != nil {
			t.Fatalf("llvm-readelf -s %s: %v", path, err)
		}
		var rows []string
		for _, l := range strings.Split(string(out), "\n") {
			f := strings.Fields(l)
			if len(f) == 8 && strings.HasSuffix(f[0], ":") {
				rows = append(rows, strings.Join(append(f[3:5], f[6:]...), " "))
			}
		}
		return strings.Join(rows, "\n")
	}
	want := symbols(in)

	out, stderr, code := cli(t, "list", in)
	theirs, err := exec.Command(objdump, "--offloading", in).Output()
	if code != 0 || err != nil || out != string(theirs) {
		t.Errorf("list: exit %d %s (llvm-objdump: %v)\n%s\nllvm-objdump --offloading:\n%s", code, stderr, err, out, theirs)
	}
	if all, _, code := cli(t, "list", "--all", in); code != 0 || !strings.Contains(all, "  [0] openmp name=g symbol=g size=4") || !strings.Contains(all, "  [1] openmp name=__omp_offloading_") {
		t.Errorf("list --all: exit %d\n%s", code, all)
	}
	if out, stderr, code := cli(t, "check", in); code != 0 {
		t.Errorf("check: exit %d\n%s%s", code, out, stderr)
	}
	x := filepath.Join(dir, "x")
	if _, stderr, code := cli(t, "extract", "-o", x, in); code != 0 {
		t.Fatalf("extract: %s", stderr)
	}
	if _, stderr, code := cli(t, "link", "--dry-run", "-o", filepath.Join(dir, "prog"), in); code != 0 {
		t.Errorf("link --dry-run: %s", stderr)
	}
	images, _ := filepath.Glob(filepath.Join(x, "*"))
	for _, args := range [][]string{
		{"strip", "--keep", "x86_64-pc-linux-gnu", "-o", filepath.Join(dir, "strip.o"), in},
		{"convert", "--llvm", "19", "-o", filepath.Join(dir, "convert.o"), in},
		append([]string{"embed", "--into", in, "-o", filepath.Join(dir, "embed.o")}, images...),
	} {
		outFile := args[len(args)-2]
		if args[0] == "embed" {
			outFile = filepath.Join(dir, "embed.o")
		}
		if _, stderr, code := cli(t, args...); code != 0 {
			t.Errorf("%s: exit %d %s", args[0], code, stderr)
			continue
		}
		if got := symbols(outFile); got != want {
			t.Errorf("%s: llvm-readelf-22 -s of the output differs from the input's", args[0])
		}
		if all, _, code := cli(t, "list", "--all", outFile); code != 0 || !strings.Contains(all, " openmp name=g symbol=g size=4") {
			t.Errorf("%s: list --all of the output: exit %d\n%s", args[0], code, all)
		}
	}
}
