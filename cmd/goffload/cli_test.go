package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

// amdgpuHeader returns the ELF header of an AMDGPU code object followed by
// size-64 bytes of code.
func amdgpuHeader(size int) []byte {
	b := make([]byte, size)
	copy(b, elfMagic)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1
	binary.LittleEndian.PutUint16(b[16:], uint16(elf.ET_DYN))
	binary.LittleEndian.PutUint16(b[18:], uint16(elf.EM_AMDGPU))
	return b
}

// TestFlagsAnywhere gives flags after the operands, as LLVM's tools take
// them, and operands that look like flags after "--".
func TestFlagsAnywhere(t *testing.T) {
	dir := t.TempDir()
	file := testdata("packager", "multi-llvm19.bin")
	stdout, stderr, code := cli(t, "list", file, "--json", "--llvm", "19")
	var got jsonFile
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil || len(got.Images) != 2 {
		t.Fatalf("list FILE --json: exit %d, %q %s", code, stdout, stderr)
	}
	// The README's HIP form: binaries, then --image.
	hipBin := filepath.Join(dir, "hip.bin")
	code1 := filepath.Join(dir, "k.out")
	os.WriteFile(code1, amdgpuHeader(256), 0o644)
	if _, stderr, code := cli(t, "package", "-o", hipBin, "--image", "file="+code1+",triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip"); code != 0 {
		t.Fatal(stderr)
	}
	wrapped := filepath.Join(dir, "w.o")
	if _, stderr, code := cli(t, "wrap", "--kind", "hip", "-o", wrapped, hipBin, "--image", "gfx90a:xnack+="+code1); code != 0 {
		t.Fatalf("wrap --kind hip -o OUT BINARY --image T=F: %s", stderr)
	}
	stdout, _, _ = cli(t, "list", "--all", wrapped)
	if !strings.Contains(stdout, "hip-amdgcn-amd-amdhsa--gfx90a ") || !strings.Contains(stdout, "hip-amdgcn-amd-amdhsa--gfx90a:xnack+ ") {
		t.Errorf("the wrapper's fatbin lacks an image:\n%s", stdout)
	}
	// "--" ends the flags: a file named like one.
	dash := filepath.Join(dir, "-x.bin")
	data, _ := os.ReadFile(file)
	os.WriteFile(dash, data, 0o644)
	t.Chdir(dir)
	if stdout, stderr, code := cli(t, "list", "--llvm=19", "--", "-x.bin"); code != 0 || !strings.Contains(stdout, "gfx90a") {
		t.Errorf("list -- -x.bin: exit %d %s", code, stderr)
	}
	if _, stderr, code := cli(t, "list", "-x.bin"); code != 1 || stderr != "goffload list: unknown flag -x.bin (see goffload list -h)\n" {
		t.Errorf("list -x.bin: exit %d %q", code, stderr)
	}
	if _, stderr, code := cli(t, "extract", "x.bin", "-o"); code != 1 || stderr != "goffload extract: flag -o needs a value\n" {
		t.Errorf("extract x.bin -o: exit %d %q", code, stderr)
	}
	if _, stderr, code := cli(t, "list", "--json=maybe", "x.bin"); code != 1 || !strings.HasPrefix(stderr, "goffload list: flag --json=maybe: bad value") {
		t.Errorf("list --json=maybe: exit %d %q", code, stderr)
	}
}

// TestExtractNeverWritesOneNameTwice extracts two inputs of the same name
// in different folders: the index counts on, and both images are written.
func TestExtractNeverWritesOneNameTwice(t *testing.T) {
	dir := t.TempDir()
	data, _ := os.ReadFile(testdata("packager", "single-llvm22.bin"))
	for _, d := range []string{"d1", "d2"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
		os.WriteFile(filepath.Join(dir, d, "k.o"), data, 0o644)
	}
	out := filepath.Join(dir, "out")
	stdout, stderr, code := cli(t, "extract", "-o", out, filepath.Join(dir, "d1", "k.o"), filepath.Join(dir, "d2", "k.o"))
	if code != 0 {
		t.Fatal(stderr)
	}
	ents, _ := os.ReadDir(out)
	if len(ents) != 2 || strings.Count(stdout, ": 1 image(s) extracted") != 2 {
		t.Errorf("%d files for two images:\n%s", len(ents), stdout)
	}
}

// TestStripKeepMustMatch: a --keep that matches no image is refused and
// nothing is written, even in place; a --keep that matches keeps.
func TestStripKeepMustMatch(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "k.bin")
	if _, stderr, code := cli(t, "package", "-o", bin, "--image", "file="+testdata("img1.bin")+",triple=x86_64-unknown-linux-gnu,kind=openmp"); code != 0 {
		t.Fatal(stderr)
	}
	fat := filepath.Join(dir, "fat.o")
	if _, stderr, code := cli(t, "embed", "-o", fat, bin); code != 0 {
		t.Fatal(stderr)
	}
	lib := filepath.Join(dir, "lib.a")
	fatData, _ := os.ReadFile(fat)
	os.WriteFile(lib, archiveOf(t, map[string][]byte{"fat.o": fatData}), 0o644)
	for _, in := range []string{fat, lib} {
		before, _ := os.ReadFile(in)
		stdout, stderr, code := cli(t, "strip", "--keep", "x86_64-unknown-linux-gn", "-o", in, in)
		if code != 1 || stdout != "" || !strings.Contains(stderr, "target x86_64-unknown-linux-gn matches no device image") {
			t.Errorf("%s: exit %d, %q %q", in, code, stdout, stderr)
		}
		if after, _ := os.ReadFile(in); !bytes.Equal(before, after) {
			t.Errorf("%s changed", in)
		}
		// Two targets, one of them a typing error: still refused.
		if _, _, code := cli(t, "strip", "--keep", "x86_64-unknown-linux-gnu", "--keep", "nvptx64", "-o", in, in); code != 1 {
			t.Errorf("%s: a --keep that matches nothing beside one that does: exit %d", in, code)
		}
		if stdout, stderr, code := cli(t, "strip", "--keep", "x86_64-unknown-linux-gnu", "-o", in, in); code != 0 || !strings.Contains(stdout, "kept 1, dropped 0") {
			t.Errorf("%s: exit %d, %q %q", in, code, stdout, stderr)
		}
	}
}

// TestExtractArchiveOfBinariesMatchesOffloadBinary extracts the images of
// an archive whose members are raw OffloadBinaries, as llvm-offload-binary
// 22 extracts them (llvm-objdump refuses such an archive).
func TestExtractArchiveOfBinariesMatchesOffloadBinary(t *testing.T) {
	tool := tooltest.Tool(t, "llvm-offload-binary", 22)
	dir := t.TempDir()
	multi, _ := os.ReadFile(testdata("packager", "multi-llvm22.bin"))
	single, _ := os.ReadFile(testdata("packager", "single-llvm22.bin"))
	lib := filepath.Join(dir, "lib.a")
	os.WriteFile(lib, archiveOf(t, map[string][]byte{"a.bin": multi, "b.bin": single}), 0o644)
	for _, sel := range []struct{ tool, ours []string }{
		{[]string{"--image=triple=nvptx64-nvidia-cuda"}, []string{"--triple", "nvptx64-nvidia-cuda"}},
		{[]string{"--image=triple=amdgcn-amd-amdhsa,arch=gfx90a"}, []string{"--triple", "amdgcn-amd-amdhsa", "--arch", "gfx90a"}},
		{[]string{"--image=kind=openmp"}, []string{"--kind", "openmp"}},
	} {
		want, got := filepath.Join(dir, "want"), filepath.Join(dir, "got")
		os.RemoveAll(want)
		os.RemoveAll(got)
		os.MkdirAll(want, 0o755)
		runCmd(t, want, tool, append([]string{lib}, sel.tool...)...)
		if _, stderr, code := cli(t, append(append([]string{"extract", "--raw", "-o", got}, sel.ours...), lib)...); code != 0 {
			t.Fatalf("extract %q: %s", sel.ours, stderr)
		}
		if w, g := dirContents(t, want), dirContents(t, got); w != g || w == "" {
			t.Errorf("%q:\nllvm-offload-binary %s\ngoffload            %s", sel.ours, w, g)
		}
	}
	stdout, stderr, code := cli(t, "list", lib)
	if code != 0 || !strings.Contains(stdout, lib+"(a.bin):\tfile format offload-binary") || strings.Count(stdout, "OFFLOADING IMAGE") != 3 {
		t.Errorf("list: exit %d %s\n%s", code, stderr, stdout)
	}
}

// TestVersion: `goffload version` and `--version` print the module's version
// and the releases of the table.
func TestVersion(t *testing.T) {
	// linker-wrapper --version: as clang-linker-wrapper --version, the
	// version and no link.
	for _, args := range [][]string{{"version"}, {"--version"}, {"linker-wrapper", "--version", "-o", "nothing", "missing.o"}} {
		arg := strings.Join(args, " ")
		stdout, stderr, code := cli(t, args...)
		if code != 0 || !strings.HasPrefix(stdout, "goffload ") || !strings.Contains(stdout, "module github.com/goffload/goffload") ||
			!strings.Contains(stdout, "LLVM releases: LLVM 13-24 (default 22") || !strings.Contains(stdout, "main checked against its sources on "+release.MainCheckedOn) {
			t.Errorf("%s: exit %d %q %s", arg, code, stdout, stderr)
		}
	}
}

// TestWrapperHelp: linker-wrapper --help (and -help, --help-hidden), as
// clang-linker-wrapper --help, prints the options it takes and links
// nothing; each option LLVM's wrapper documents that clang passes is among
// them.
func TestWrapperHelp(t *testing.T) {
	for _, h := range []string{"--help", "-help", "--help-hidden"} {
		stdout, stderr, code := cli(t, "linker-wrapper", h, "-o", "nothing", "missing.o")
		if code != 0 || stderr != "" {
			t.Errorf("%s: exit %d %s", h, code, stderr)
		}
		for _, o := range []string{"--embed-bitcode", "--print-wrapped-module", "--override-image=VALUE", "--offload-opt=VALUE", "--wrapper-time-trace=VALUE", "--device-compiler=VALUE", "-mllvm OPT", "--plan=json|ninja"} {
			if !strings.Contains(stdout, "\n  "+o) {
				t.Errorf("%s: no %s in\n%s", h, o, stdout)
			}
		}
	}
}
