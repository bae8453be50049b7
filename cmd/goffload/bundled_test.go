package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

// hipRDC compiles testdata/k.hip of entries with clang-N -fgpu-rdc for the
// arches.
func hipRDC(t *testing.T, major int, dir, name string, archs ...string) string {
	t.Helper()
	obj := filepath.Join(dir, name)
	args := []string{"-x", "hip", "-nogpulib", "-nogpuinc", "-fgpu-rdc", "-c", "-o", obj, filepath.Join("..", "..", "entries", "testdata", "k.hip")}
	for _, a := range archs {
		args = append(args, "--offload-arch="+a)
	}
	compiled(t, "clang", major, "", args, obj)
	return obj
}

// listBundled returns the bundled-object entry IDs that list --json gives.
func listBundled(t *testing.T, path string, llvm int) []string {
	t.Helper()
	stdout, stderr, code := cli(t, "list", "--json", "--llvm", fmt.Sprint(llvm), path)
	if code != 0 {
		t.Fatalf("list %s: %s", path, stderr)
	}
	var ids []string
	dec := json.NewDecoder(strings.NewReader(stdout))
	for dec.More() {
		var f jsonFile
		if err := dec.Decode(&f); err != nil {
			t.Fatal(err)
		}
		for _, b := range f.Bundled {
			ids = append(ids, string(b.ID))
		}
	}
	return ids
}

// bundlerIO returns the bundler's input and output options: -inputs and
// -outputs up to LLVM 14.
func bundlerIO(tool string) (in, out string) {
	if strings.HasSuffix(tool, "-14") || strings.HasSuffix(tool, "-13") {
		return "-inputs=", "-outputs="
	}
	return "-input=", "-output="
}

// checkAgainstBundler lists obj with goffload and with the bundler (-list),
// then, for every device entry, compares goffload extract --raw's file with
// the bundler's -unbundle output.
func checkAgainstBundler(t *testing.T, tool string, llvm int, obj string) {
	t.Helper()
	in, outOpt := bundlerIO(tool)
	ours := listBundled(t, obj, llvm)
	out, err := exec.Command(tool, "-list", "-type=o", in+obj).CombinedOutput()
	if err != nil {
		t.Fatalf("%s -list: %v\n%s", tool, err, out)
	}
	theirs := strings.Fields(string(out))
	sort.Strings(theirs)
	sorted := slices.Sorted(slices.Values(ours))
	if !slices.Equal(sorted, theirs) {
		t.Errorf("%s: list names %v, the bundler %v", obj, sorted, theirs)
	}
	dir := t.TempDir()
	got := filepath.Join(dir, "got")
	if _, stderr, code := cli(t, "extract", "--raw", "--llvm", fmt.Sprint(llvm), "-o", got, obj); code != 0 {
		t.Fatalf("extract %s: %s", obj, stderr)
	}
	devices := 0
	for _, id := range ours {
		r, _ := release.Lookup(llvm)
		parsed, _ := bundle.ParseID(id, r)
		if parsed.IsHost() {
			continue
		}
		devices++
		want := filepath.Join(dir, "want")
		if out, err := exec.Command(tool, "-unbundle", "-type=o", in+obj, "-targets="+id, outOpt+want).CombinedOutput(); err != nil {
			t.Fatalf("%s -unbundle %s: %v\n%s", tool, id, err, out)
		}
		wantData, _ := os.ReadFile(want)
		name := bundle.DeviceMemberName(filepath.Base(obj), id, parsed.TargetID)
		gotData, err := os.ReadFile(filepath.Join(got, name))
		if err != nil || !bytes.Equal(gotData, wantData) || len(wantData) == 0 {
			t.Errorf("%s %s: extract wrote %d bytes (%v), the bundler %d", filepath.Base(obj), id, len(gotData), err, len(wantData))
		}
	}
	if devices == 0 {
		t.Errorf("%s: no device entry", obj)
	}
	if ents, _ := os.ReadDir(got); len(ents) != devices {
		t.Errorf("%s: extract wrote %d files for %d device entries", obj, len(ents), devices)
	}
}

// TestHIPRDCMatchesBundler: for HIP -fgpu-rdc objects of clang 19 and 22
// (one and two arches, xnack and sramecc target IDs), list names every
// bundle entry as clang-offload-bundler -list does, extract --raw writes
// each device entry as -unbundle -type=o does, and device-archive of a
// library of them writes what -unbundle -type=a does; a .hipfb bundle file,
// compressed and not, gives the bundler's code object.
func TestHIPRDCMatchesBundler(t *testing.T) {
	t.Parallel()
	for _, major := range []int{19, 22} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			dir := t.TempDir()
			one := hipRDC(t, major, dir, "one.o", "gfx90a")
			two := hipRDC(t, major, dir, "two.o", "gfx90a:xnack+", "gfx908:sramecc-:xnack-")
			for _, obj := range []string{one, two} {
				checkAgainstBundler(t, tool, major, obj)
			}
			lib := filepath.Join(dir, "libk.a")
			if out, err := exec.Command("ar", tooltest.ArArgs("rcs", lib, one, two)...).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, target := range []string{"hip-amdgcn-amd-amdhsa-unknown-gfx90a", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "hip-amdgcn-amd-amdhsa--gfx908:sramecc-:xnack-"} {
				want, got := filepath.Join(dir, "want.a"), filepath.Join(dir, "got.a")
				if out, err := exec.Command(tool, "-unbundle", "-type=a", "-input="+lib, "-targets="+target, "-output="+want, "-allow-missing-bundles", "-hip-openmp-compatible").CombinedOutput(); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				if _, stderr, code := cli(t, "device-archive", "--llvm", fmt.Sprint(major), "--hip-openmp-compatible", "--target", target, "-o", got, lib); code != 0 {
					t.Fatalf("device-archive %s: %s", target, stderr)
				}
				w, _ := os.ReadFile(want)
				g, _ := os.ReadFile(got)
				if !bytes.Equal(w, g) || len(w) <= 8 {
					t.Errorf("device archive for %s: %d bytes, the bundler's %d", target, len(g), len(w))
				}
				// extract --raw of the library writes each of the device
				// archive's members under the member's name, with its bytes.
				all := filepath.Join(dir, "all")
				os.RemoveAll(all)
				if _, stderr, code := cli(t, "extract", "--raw", "--llvm", fmt.Sprint(major), "-o", all, lib); code != 0 {
					t.Fatalf("extract %s: %s", lib, stderr)
				}
				a, err := ar.Open(bytes.NewReader(w), int64(len(w)))
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range a.Members() {
					sr, _ := a.Open(m)
					want := make([]byte, sr.Size())
					sr.ReadAt(want, 0)
					if got, err := os.ReadFile(filepath.Join(all, m.Name)); err != nil || !bytes.Equal(got, want) {
						t.Errorf("extract --raw %s: member %s of the device archive: %d bytes, %v", lib, m.Name, len(got), err)
					}
				}
			}
			code := filepath.Join(dir, "code.o")
			os.WriteFile(code, amdgpuHeader(8192), 0o644)
			for _, compress := range []bool{false, true} {
				hipfb := filepath.Join(dir, fmt.Sprintf("x%v.hipfb", compress))
				args := []string{"-type=o", "-bundle-align=4096", "-targets=host-x86_64-unknown-linux-gnu,hipv4-amdgcn-amd-amdhsa--gfx90a", "-input=/dev/null", "-input=" + code, "-output=" + hipfb}
				if compress {
					args = append(args, "-compress")
				}
				if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				got := filepath.Join(dir, fmt.Sprintf("fb%v", compress))
				if _, stderr, code := cli(t, "extract", "--raw", "-o", got, hipfb); code != 0 {
					t.Fatalf("extract %s: %s", hipfb, stderr)
				}
				ents, _ := os.ReadDir(got)
				want, _ := os.ReadFile(code)
				if len(ents) != 1 {
					t.Fatalf("%s: %d files extracted", hipfb, len(ents))
				}
				if data, _ := os.ReadFile(filepath.Join(got, ents[0].Name())); !bytes.Equal(data, want) {
					t.Errorf("%s: the code object differs", hipfb)
				}
				if stdout, _, code := cli(t, "list", "--json", hipfb); code != 0 || !strings.Contains(stdout, `"id": "hipv4-amdgcn-amd-amdhsa--gfx90a"`) {
					t.Errorf("list %s: %s", hipfb, stdout)
				}
			}
		})
	}
}

// compileOldOpenMP compiles testdata/prog.c with clang-N (13 or 14) for the
// targets.
func compileOldOpenMP(t *testing.T, major int, dir, name string, targets ...string) string {
	t.Helper()
	obj := filepath.Join(dir, name)
	args := []string{"-O1", "-fopenmp", "-fopenmp-targets=" + strings.Join(targets, ","), "-c", "-o", obj, filepath.Join("testdata", "prog.c")}
	compiled(t, "clang", major, "", args, obj)
	return obj
}

// TestOldOpenMPObjects: clang 13 and 14 OpenMP objects (one and two
// targets) list and extract as clang-offload-bundler-14 unbundles them, and
// check finds their device images. strip --keep of the x86-64 target leaves
// an object that clang-14 links and that runs on libomptarget 14.
func TestOldOpenMPObjects(t *testing.T) {
	t.Parallel()
	tool := tooltest.Tool(t, "clang-offload-bundler", 14)
	for _, major := range []int{13, 14} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			dir := t.TempDir()
			one := compileOldOpenMP(t, major, dir, "one.o", "x86_64-pc-linux-gnu")
			two := compileOldOpenMP(t, major, dir, "two.o", "x86_64-pc-linux-gnu", "aarch64-unknown-linux-gnu")
			for _, obj := range []string{one, two} {
				checkAgainstBundler(t, tool, 22, obj)
				stdout, stderr, code := cli(t, "check", obj)
				if code != 0 || !strings.Contains(stdout, "every entry has its symbol") {
					t.Errorf("check %s: exit %d\n%s%s", obj, code, stdout, stderr)
				}
			}
			stripped := filepath.Join(dir, "stripped.o")
			stdout, stderr, code := cli(t, "strip", "--keep", "x86_64-pc-linux-gnu", "-o", stripped, two)
			if code != 0 || !strings.Contains(stdout, "kept 1, dropped 1") {
				t.Fatalf("strip: exit %d\n%s%s", code, stdout, stderr)
			}
			if ids := listBundled(t, stripped, 22); !slices.Equal(ids, []string{"openmp-x86_64-pc-linux-gnu", "host-x86_64-pc-linux-gnu"}) {
				t.Errorf("after strip: %v", ids)
			}
			if major != 14 {
				return
			}
			lib := tooltest.OpenMPRuntime(t, 14)
			clang := tooltest.Tool(t, "clang", 14)
			outputs := map[string]string{}
			for name, obj := range map[string]string{"one": one, "stripped": stripped} {
				exe := filepath.Join(dir, name)
				if out, err := exec.Command(clang, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", obj, "-o", exe, "-L"+lib, "-Wl,-rpath,"+lib, tooltest.AllowShlibUndefined).CombinedOutput(); err != nil {
					t.Fatalf("clang-14 links %s: %v\n%s", name, err, out)
				}
				assertCheckPasses(t, exe)
				out, kernels := runProgram(t, exe, lib)
				if kernels == 0 || out == "" {
					t.Errorf("%s: %d kernels on device 0\n%s", name, kernels, out)
				}
				outputs[name] = out
			}
			if outputs["one"] != outputs["stripped"] {
				t.Errorf("the stripped two-target program prints %q, the one-target program %q", outputs["stripped"], outputs["one"])
			}
		})
	}
}
