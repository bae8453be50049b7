package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

func runCmd(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// runAr runs GNU ar with args in dir, as runCmd does, without the LLVM
// plugins (tooltest.Ar): for archives of objects that are not bitcode.
func runAr(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return runCmd(t, dir, "ar", tooltest.ArArgs(args...)...)
}

// TestEmbedIntoHostObject joins a host-only object and a device-only object
// of clang-19 with goffload package and embed --into; the real clang-19
// links the result, and the program runs offloaded. A gcc object with a
// binary embedded still links and runs with gcc.
func TestEmbedIntoHostObject(t *testing.T) {
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	clang := tooltest.Tool(t, "clang", 19)
	lib := tooltest.OpenMPRuntime(t, 19)
	dir := t.TempDir()
	flags := []string{"-O1", "-fopenmp", "-fopenmp-version=52", "-DNEW_OPENMP", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", filepath.Join("testdata", "prog.c")}
	compiled(t, "clang", 19, "", append(flags, "--offload-host-only", "-o", filepath.Join(dir, "host.o")), filepath.Join(dir, "host.o"))
	compiled(t, "clang", 19, "", append(flags, "--offload-device-only", "-o", filepath.Join(dir, "dev.o")), filepath.Join(dir, "dev.o"))
	bin, fat := filepath.Join(dir, "dev.bin"), filepath.Join(dir, "fat.o")
	if _, stderr, code := cli(t, "package", "--llvm", "19", "-o", bin, "--image", "file="+filepath.Join(dir, "dev.o")+",triple=x86_64-pc-linux-gnu,arch=,kind=openmp"); code != 0 {
		t.Fatalf("package: %s", stderr)
	}
	if _, stderr, code := cli(t, "embed", "--llvm", "19", "--into", filepath.Join(dir, "host.o"), "-o", fat, bin); code != 0 {
		t.Fatalf("embed: %s", stderr)
	}
	runCmd(t, dir, clang, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "fat.o", "-o", "prog", "-L"+lib, "-Wl,-rpath,"+lib, tooltest.AllowShlibUndefined)
	out, kernels := runProgram(t, filepath.Join(dir, "prog"), lib)
	if out != "a=6 b=5 c=21\n" || kernels != 3 {
		t.Errorf("program printed %q, %d kernels on device 0", out, kernels)
	}

	gcc, err := exec.LookPath("gcc")
	if err != nil {
		tooltest.Missing(t, "gcc not found")
	}
	os.WriteFile(filepath.Join(dir, "hello.c"), []byte("#include <stdio.h>\nint main(void) { puts(\"gcc object\"); return 0; }\n"), 0o644)
	runCmd(t, dir, gcc, "-c", "hello.c", "-o", "hello.o")
	if _, stderr, code := cli(t, "embed", "--into", filepath.Join(dir, "hello.o"), "-o", filepath.Join(dir, "hello-fat.o"), bin); code != 0 {
		t.Fatalf("embed into gcc's object: %s", stderr)
	}
	listing, _, _ := cli(t, "list", filepath.Join(dir, "hello-fat.o"))
	if !strings.Contains(listing, "OFFLOADING IMAGE [0]:") {
		t.Errorf("no image in the gcc object:\n%s", listing)
	}
	runCmd(t, dir, gcc, "hello-fat.o", "-o", "hello")
	if got := runCmd(t, dir, filepath.Join(dir, "hello")); got != "gcc object\n" {
		t.Errorf("gcc program printed %q", got)
	}
}

// twoTargets compiles testdata/two.c for x86-64 and amdgcn.
func twoTargets(t *testing.T, dir, out string, defs ...string) string {
	t.Helper()
	args := append([]string{"-O1", "-fopenmp", "-fopenmp-version=52", "-fopenmp-targets=x86_64-pc-linux-gnu,amdgcn-amd-amdhsa",
		"-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx90a", "-nogpulib", "-c", filepath.Join("testdata", "two.c"), "-o", filepath.Join(dir, out)}, defs...)
	compiled(t, "clang", 19, "", args, filepath.Join(dir, out))
	return filepath.Join(dir, out)
}

// TestStripDropsTarget strips the amdgcn image from an object and from an
// archive; clang-19 links each for x86-64 alone and the programs run, and
// llvm-objdump lists only the kept image.
func TestStripDropsTarget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	clang := tooltest.Tool(t, "clang", 19)
	objdump := tooltest.Tool(t, "llvm-objdump", 19)
	lib := tooltest.OpenMPRuntime(t, 19)
	dir := t.TempDir()
	two := twoTargets(t, dir, "two.o")
	if got := runCmd(t, dir, objdump, "--offloading", two); !strings.Contains(got, "amdgcn-amd-amdhsa") {
		t.Fatalf("the object lacks its amdgcn image:\n%s", got)
	}
	checkKept := func(file string) {
		t.Helper()
		got := runCmd(t, dir, objdump, "--offloading", file)
		if strings.Contains(got, "amdgcn") || strings.Count(got, "OFFLOADING IMAGE") == 0 || !strings.Contains(got, "x86_64-pc-linux-gnu") {
			t.Errorf("llvm-objdump --offloading %s:\n%s", file, got)
		}
	}
	stripped := filepath.Join(dir, "x86.o")
	if _, stderr, code := cli(t, "strip", "--llvm", "19", "--keep", "x86_64-pc-linux-gnu", "-o", stripped, two); code != 0 {
		t.Fatalf("strip: %s", stderr)
	}
	checkKept(stripped)
	runCmd(t, dir, clang, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", stripped, "-o", "prog", "-L"+lib, "-Wl,-rpath,"+lib, tooltest.AllowShlibUndefined)
	if out, kernels := runProgram(t, filepath.Join(dir, "prog"), lib); out != "kernel_sum(5)=15\n" || kernels != 1 {
		t.Errorf("stripped program printed %q, %d kernels", out, kernels)
	}

	// An archive of such objects.
	libObj := twoTargets(t, dir, "lib.o", "-DNO_MAIN")
	os.WriteFile(filepath.Join(dir, "main.c"), []byte("#include <stdio.h>\nint kernel_sum(int);\nint main(void) { printf(\"kernel_sum(5)=%d\\n\", kernel_sum(5)); return 0; }\n"), 0o644)
	runAr(t, dir, "rcs", "libtwo.a", libObj)
	if _, stderr, code := cli(t, "strip", "--llvm", "19", "--keep", "x86_64-pc-linux-gnu", "-o", filepath.Join(dir, "libx86.a"), filepath.Join(dir, "libtwo.a")); code != 0 {
		t.Fatalf("strip archive: %s", stderr)
	}
	checkKept(filepath.Join(dir, "libx86.a"))
	runCmd(t, dir, clang, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "main.c", "-L.", "-lx86", "-o", "app", "-L"+lib, "-Wl,-rpath,"+lib, tooltest.AllowShlibUndefined)
	if out, kernels := runProgram(t, filepath.Join(dir, "app"), lib); out != "kernel_sum(5)=15\n" || kernels != 1 {
		t.Errorf("program of the stripped archive printed %q, %d kernels", out, kernels)
	}
}

// TestExtractMatchesPackager extracts with the selections of
// clang-offload-packager-19 from an object, a GNU archive and a thin archive,
// and compares the files.
func TestExtractMatchesPackager(t *testing.T) {
	packager := tooltest.Tool(t, "clang-offload-packager", 19)
	dir := t.TempDir()
	two := twoTargets(t, dir, "two.o")
	runAr(t, dir, "rcs", "libtwo.a", "two.o")
	runAr(t, dir, "rcsT", "libthin.a", "two.o")
	for _, in := range []string{two, filepath.Join(dir, "libtwo.a"), filepath.Join(dir, "libthin.a")} {
		for _, sel := range []struct{ packager, ours []string }{
			{[]string{"--image=triple=x86_64-pc-linux-gnu"}, []string{"--triple", "x86_64-pc-linux-gnu"}},
			{[]string{"--image=kind=openmp"}, []string{"--kind", "openmp"}},
			{[]string{"--image=triple=amdgcn-amd-amdhsa,arch=gfx90a"}, []string{"--triple", "amdgcn-amd-amdhsa", "--arch", "gfx90a"}},
			{[]string{"--image=arch="}, []string{"--arch", ""}},
		} {
			want, got := filepath.Join(dir, "want"), filepath.Join(dir, "got")
			os.RemoveAll(want)
			os.RemoveAll(got)
			os.MkdirAll(want, 0o755)
			os.MkdirAll(got, 0o755)
			runCmd(t, want, packager, append([]string{in}, sel.packager...)...)
			if _, stderr, code := cli(t, append(append([]string{"extract", "--llvm", "19", "--raw", "-o", got}, sel.ours...), in)...); code != 0 {
				t.Fatalf("extract %q: %s", sel.ours, stderr)
			}
			if w, g := dirContents(t, want), dirContents(t, got); w != g || w == "" {
				t.Errorf("%s %q:\npackager %s\ngoffload %s", filepath.Base(in), sel.ours, w, g)
			}
		}
	}
}

// dirContents lists the files of dir with a digest of their bytes.
func dirContents(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out = append(out, e.Name()+":"+digest(data))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func digest(b []byte) string {
	var h uint64 = 14695981039346656037
	for _, c := range b {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return fmt.Sprintf("%x/%d", h, len(b))
}

// TestListExecutableMatchesObjdump lists a linked program (the wrapper's
// SHF_ALLOC copy of the image) as llvm-objdump-19 does.
func TestListExecutableMatchesObjdump(t *testing.T) {
	if testing.Short() {
		t.Skip("links a program")
	}
	clang := tooltest.Tool(t, "clang", 19)
	objdump := tooltest.Tool(t, "llvm-objdump", 19)
	lib := tooltest.OpenMPRuntime(t, 19)
	dir := t.TempDir()
	two := twoTargets(t, dir, "two.o")
	stripped := filepath.Join(dir, "x86.o")
	cli(t, "strip", "--llvm", "19", "--keep", "x86_64-pc-linux-gnu", "-o", stripped, two)
	runCmd(t, dir, clang, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", stripped, "-o", "prog", "-L"+lib)
	exe := filepath.Join(dir, "prog")
	assertCheckPasses(t, stripped, exe)
	want := runCmd(t, dir, objdump, "--offloading", exe)
	got, stderr, code := cli(t, "list", "--llvm", "19", exe)
	if code != 0 || got != want {
		t.Errorf("exit %d %s\n got %q\nwant %q", code, stderr, got, want)
	}
}
