package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestLinkLLVM14 links clang-14 objects with goffload link --llvm 14 (clang
// only for the device link, cc for the host, no clang-offload-wrapper): the
// program prints what the clang-14-linked one prints and runs its kernels on
// libomptarget 14. A program whose fat object comes from a static library,
// which clang-14 links into a program that fails at run time, runs when
// goffload links it, given the library as a file or as -L DIR -lNAME; the
// library's unused member, whose device code refers to a symbol nothing
// defines, is left out of the device link as ld leaves its host code out.
func TestLinkLLVM14(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	clang := tooltest.Tool(t, "clang", 14)
	lib := tooltest.OpenMPRuntime(t, 14)
	dir := t.TempDir()
	compile := func(src string) string {
		obj := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".c")+".o")
		compiled(t, "clang", 14, "", []string{"-O1", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", "-o", obj, src}, obj)
		return obj
	}
	clangLink := func(exe string, args ...string) error {
		args = append([]string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-o", exe, "-L" + lib, "-Wl,-rpath," + lib, tooltest.AllowShlibUndefined}, args...)
		out, err := exec.Command(clang, args...).CombinedOutput()
		if err != nil {
			t.Logf("clang-14: %s", out)
		}
		return err
	}
	ours := func(exe string, args ...string) {
		t.Helper()
		if _, stderr, code := cli(t, append([]string{"link", "--llvm", "14", "--libdir", lib, tooltest.AllowShlibUndefined, "-o", exe}, args...)...); code != 0 {
			t.Fatalf("goffload link %v: %s", args, stderr)
		}
	}

	prog := compile(filepath.Join("testdata", "prog.c"))
	if err := clangLink(filepath.Join(dir, "theirs"), prog); err != nil {
		t.Fatal(err)
	}
	ours(filepath.Join(dir, "ours"), prog)
	assertCheckPasses(t, prog, filepath.Join(dir, "theirs"), filepath.Join(dir, "ours"))
	want, wantKernels := runProgram(t, filepath.Join(dir, "theirs"), lib)
	got, kernels := runProgram(t, filepath.Join(dir, "ours"), lib)
	if got != want || kernels != wantKernels || kernels == 0 {
		t.Errorf("goffload-linked program printed %q with %d kernels, clang-14's %q with %d", got, kernels, want, wantKernels)
	}

	main, f, unused := compile(filepath.Join("testdata", "slib_main.c")), compile(filepath.Join("testdata", "slib_f.c")), compile(filepath.Join("testdata", "slib_unused.c"))
	libf := filepath.Join(dir, "libf.a")
	if out, err := exec.Command("ar", tooltest.ArArgs("rcs", libf, unused, f)...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// clang-14 drops the library's device code: the program fails.
	if err := clangLink(filepath.Join(dir, "clang-lib"), main, "-L"+dir, "-lf"); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "clang-lib"))
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("the clang-14-linked static-library program ran: %s", out)
	}
	// check sees why: the library's entries have no symbol in the device
	// image that clang-14's wrapper registers.
	if stdout, _, code := cli(t, "check", filepath.Join(dir, "clang-lib")); code != 1 || !strings.Contains(stdout, "no such symbol") {
		t.Errorf("check of the clang-14-linked static-library program: exit %d\n%s", code, stdout)
	}
	stdout, stderr, code := cli(t, "link", "--llvm", "14", "--dry-run", "--libdir", lib, "-o", filepath.Join(dir, "dry"), main, libf)
	if code != 0 || !strings.Contains(stdout, "/slib_f-x86_64") || strings.Contains(stdout, "slib_unused") {
		t.Errorf("the device link does not take exactly the used member: exit %d\n%s%s", code, stdout, stderr)
	}
	for name, args := range map[string][]string{"file": {main, libf}, "-l": {main, "-L" + dir, "-lf"}} {
		exe := filepath.Join(dir, "lib-"+strings.TrimPrefix(name, "-"))
		ours(exe, args...)
		assertCheckPasses(t, exe)
		out, kernels := runProgram(t, exe, lib)
		if out != "s = 7, f(10) = 135\n" || kernels != 2 {
			t.Errorf("static library as %s: %q, %d kernels", name, out, kernels)
		}
	}
}
