package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestMachOEmbedListExtract: embed puts an OffloadBinary of two images into
// a new Mach-O host object (x86-64, arm64) and into one clang-22 compiled;
// list prints them under llvm-objdump's format name, extract writes them,
// and check reports the object as a Mach-O host's.
func TestMachOEmbedListExtract(t *testing.T) {
	clang := tooltest.Tool(t, "clang", 22)
	dir := t.TempDir()
	bin := filepath.Join("..", "..", "offload", "testdata", "llvm", "packager", "multi-llvm19.bin")
	src := filepath.Join(dir, "h.c")
	if err := os.WriteFile(src, []byte("int counter = 3;\nint f(int x) { return x + counter; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ triple, format string }{
		{"x86_64-apple-macosx10.15.0", "mach-o 64-bit x86-64"}, {"arm64-apple-macos11", "mach-o arm64"},
	} {
		host := filepath.Join(dir, c.triple+".o")
		if msg, err := exec.Command(clang, "--target="+c.triple, "-c", src, "-o", host).CombinedOutput(); err != nil {
			t.Fatalf("clang-22: %v\n%s", err, msg)
		}
		for k, embed := range [][]string{{"--triple", c.triple}, {"--into", host}} {
			obj := filepath.Join(dir, "fat.o")
			if _, stderr, code := cli(t, append(append([]string{"embed"}, embed...), "-o", obj, bin)...); code != 0 {
				t.Fatalf("embed %v: %s", embed, stderr)
			}
			out, stderr, code := cli(t, "list", obj)
			if code != 0 || !strings.Contains(out, "file format "+c.format) || strings.Count(out, "OFFLOADING IMAGE") != 2 ||
				!strings.Contains(out, "arch            gfx90a") || !strings.Contains(out, "arch            sm_70") {
				t.Fatalf("list of embed %v: exit %d\n%s%s", embed, code, out, stderr)
			}
			exDir := filepath.Join(dir, c.triple+"-ex"+strconv.Itoa(k))
			if err := os.Mkdir(exDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if _, stderr, code := cli(t, "extract", "-o", exDir, obj); code != 0 {
				t.Fatalf("extract: %s", stderr)
			}
			files, _ := filepath.Glob(filepath.Join(exDir, "*"))
			if len(files) != 2 {
				t.Errorf("extract of embed %v wrote %v, want 2 files", embed, files)
			}
			out, stderr, code = cli(t, "check", "--json", obj)
			var rep struct {
				MachO  bool `json:"macho"`
				Images int  `json:"images"`
				Raw    bool `json:"raw_binary"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.MachO || rep.Images != 2 || rep.Raw {
				t.Errorf("check --json of embed %v: exit %d, %+v (%v)\n%s%s", embed, code, rep, err, out, stderr)
			}
			if _, stderr, code := cli(t, "strip", "--keep", "amdgcn-amd-amdhsa", "-o", filepath.Join(dir, "s.o"), obj); code != 1 ||
				!strings.Contains(stderr, "a Mach-O file: strip and convert rewrite ELF and COFF objects only") {
				t.Errorf("strip of a Mach-O object: exit %d, %s", code, stderr)
			}
		}
	}
}

// TestMachOWrapCommand: wrap --kind hip --llvm 24 for a macOS host writes
// the Mach-O registration object whose fatbin list reads back; LLVM 22
// has no Mach-O wrapper, and OpenMP has none in main.
func TestMachOWrapCommand(t *testing.T) {
	dir := t.TempDir()
	fb := filepath.Join(dir, "k.hipfb")
	if err := os.WriteFile(fb, tooltest.HIPFatbin(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, triple := range []string{"x86_64-apple-macosx10.15.0", "arm64-apple-macos"} {
		obj := filepath.Join(dir, "w.o")
		if _, stderr, code := cli(t, "wrap", "--kind", "hip", "--llvm", "24", "--triple", triple, "-o", obj, fb); code != 0 {
			t.Fatalf("%s: wrap: %s", triple, stderr)
		}
		out, stderr, code := cli(t, "list", "--all", "--json", obj)
		if code != 0 || !strings.Contains(out, "__HIP,__hip_fatbin") {
			t.Errorf("%s: list --all --json: exit %d\n%s%s", triple, code, out, stderr)
		}
		var lst struct {
			Format string `json:"format"`
			MadeBy []int  `json:"made_by"`
		}
		if err := json.Unmarshal([]byte(out), &lst); err != nil || lst.Format != "mach-o" || !slices.Equal(lst.MadeBy, []int{24}) {
			t.Errorf("%s: format %q, made_by %v (%v), want mach-o, [24] (only main writes Mach-O entries)", triple, lst.Format, lst.MadeBy, err)
		}
		if _, stderr, code := cli(t, "wrap", "--kind", "hip", "--triple", triple, "-o", obj, fb); code == 0 || !strings.Contains(stderr, "LLVM 22 for a macOS host") {
			t.Errorf("%s: wrap with LLVM 22: exit %d, %s", triple, code, stderr)
		}
	}
	bin := filepath.Join("..", "..", "offload", "testdata", "llvm", "packager", "multi-llvm19.bin")
	if _, stderr, code := cli(t, "wrap", "--kind", "openmp", "--llvm", "24", "--triple", "arm64-apple-macos", "-o", filepath.Join(dir, "o.o"), bin); code == 0 || !strings.Contains(stderr, "no Mach-O section") {
		t.Errorf("wrap --kind openmp for macOS: exit %d, %s", code, stderr)
	}
}
