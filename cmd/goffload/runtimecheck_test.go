package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckRuntimeAMDGPUCodeObjectVersions: AMDGPU code objects that
// clang-22 links for gfx90a at code object versions 4, 5 and 6, each
// registered for OpenMP by goffload package and wrap: check --runtime 19
// refuses version 6 (LLVM 19's libomptarget reads 4 and 5), --runtime 22
// refuses version 4 (22's reads 5 and 6), and both load version 5.
func TestCheckRuntimeAMDGPUCodeObjectVersions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "k.c")
	if err := os.WriteFile(src, []byte("void __attribute__((amdgpu_kernel)) k(int *p) { *p = 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		version int
		refused map[int]string // runtime: what check says ("" none)
	}{
		{4, map[int]string{19: "", 22: "code object of version 4 (EI_ABIVERSION 2), and libomptarget 22 reads versions 5 and 6"}},
		{5, map[int]string{19: "", 22: ""}},
		{6, map[int]string{19: "code object of version 6 (EI_ABIVERSION 4), and libomptarget 19 reads versions 4 and 5", 22: ""}},
	} {
		t.Run(fmt.Sprintf("v%d", c.version), func(t *testing.T) {
			so := filepath.Join(dir, fmt.Sprintf("k%d.so", c.version))
			compiled(t, "clang", 22, dir, []string{"--target=amdgcn-amd-amdhsa", "-mcpu=gfx90a", "-nogpulib", fmt.Sprintf("-mcode-object-version=%d", c.version), "-O1", "k.c", "-o", filepath.Base(so)}, filepath.Base(so))
			bin, obj := so+".bin", so+".wrapper.o"
			for _, args := range [][]string{
				{"package", "--llvm", "22", "--image", "file=" + so + ",triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=openmp", "-o", bin},
				{"wrap", "--llvm", "22", "-o", obj, bin},
			} {
				if _, stderr, code := cli(t, args...); code != 0 {
					t.Fatalf("goffload %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
				}
			}
			for rt, want := range c.refused {
				out, stderr, code := cli(t, "check", "--runtime", fmt.Sprint(rt), obj)
				switch {
				case want == "" && code != 0:
					t.Errorf("check --runtime %d: exit %d\n%s%s", rt, code, out, stderr)
				case want != "" && (code != 1 || !strings.Contains(out, "runtime-refuses-image: libomptarget "+fmt.Sprint(rt)+" will not load the device image for amdgcn-amd-amdhsa (arch \"gfx90a\"")):
					t.Errorf("check --runtime %d: exit %d, want the image refused:\n%s%s", rt, code, out, stderr)
				case want != "" && (!strings.Contains(out, want) || !strings.Contains(out, "Fix: compile the device code with -mcode-object-version=5")):
					t.Errorf("check --runtime %d does not say %q and the fix:\n%s", rt, want, out)
				}
			}
		})
	}
}
