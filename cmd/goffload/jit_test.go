package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestWrapperJITAsClangs: an OpenMP program for an AMDGPU target compiled
// and linked with clang-22 -fopenmp-target-jit (the wrapper's
// --embed-bitcode) through clang -B DIR, goffload as DIR's
// clang-linker-wrapper, is the same program, byte for byte, as clang-22's
// own link: the device link stops after its LTO (-Wl,--lto-emit-llvm) and
// the image registered is that bitcode, of kind LLVM IR. (Nothing here runs
// it: there is no AMD GPU. LLVM 22's JIT link of a CPU target fails in its
// own wrapper, whose device clang gives GNU ld --lto-emit-llvm.)
func TestWrapperJITAsClangs(t *testing.T) {
	t.Parallel()
	clang := tooltest.Tool(t, "clang", 22)
	clw := tooltest.Tool(t, "clang-linker-wrapper", 22)
	tooltest.Tool(t, "ld.lld", 22)
	rt := tooltest.OpenMPRuntime(t, 22)
	exe := goffloadExe(t)
	dir := t.TempDir()
	src := "int main(void) {\n  int x = 0;\n#pragma omp target map(tofrom: x)\n  x = 42;\n  return x != 42;\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "k.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-fopenmp-target-jit"}
	compiled(t, "clang", 22, dir, append(flags, "-c", "k.c", "-o", "k.o"), "k.o")
	wrapperBins(t, dir, clw, exe)
	progs := map[string][]byte{}
	for _, w := range []string{"theirs", "ours"} {
		work := filepath.Join(dir, w)
		if err := os.Mkdir(work, 0o755); err != nil {
			t.Fatal(err)
		}
		release := tooltest.Slot()
		runCmd(t, work, clang, append(flags, "-B", filepath.Join(dir, w+"-bin"), filepath.Join(dir, "k.o"), "-o", "prog", "-L"+rt, tooltest.AllowShlibUndefined)...)
		release()
		data, err := os.ReadFile(filepath.Join(work, "prog"))
		if err != nil {
			t.Fatal(err)
		}
		progs[w] = data
	}
	if !bytes.Equal(progs["theirs"], progs["ours"]) {
		t.Errorf("the programs differ: clang-22's own link %d bytes, through goffload %d", len(progs["theirs"]), len(progs["ours"]))
	}
	out, stderr, code := cli(t, "list", filepath.Join(dir, "ours", "prog"))
	if code != 0 || !strings.Contains(out, "kind            llvm ir\narch            gfx90a\ntriple          amdgcn-amd-amdhsa\nproducer        openmp\n") {
		t.Errorf("list of the program: exit %d %s\n%s\nwant one image of LLVM IR for gfx90a", code, stderr, out)
	}
}
