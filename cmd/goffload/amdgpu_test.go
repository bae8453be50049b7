package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListAMDGPUCodeObjects: list --all names each AMDGPU code object's
// version, target ID and kernels (package amdgpu, checked against
// llvm-readelf-22 there), for a code object in an OffloadBinary and for the
// one clang-22 bundles into a HIP object's .hip_fatbin (named by its bundle
// entry); list --json gives the same; a code object whose metadata note
// does not read is listed as not read, and list still succeeds; plain list
// (llvm-objdump's listing) has no such lines.
func TestListAMDGPUCodeObjects(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "gfx908.bin")
	if err := os.WriteFile(bin, amdgpuBinary(t, func([]byte) {}), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := cli(t, "list", "--all", bin)
	want := "\nAMDGPU CODE OBJECT [0] (llvm-readelf -h --notes):\n  version 5, target ID gfx908:xnack-, amdhsa.target amdgcn-amd-amdhsa--gfx908:xnack-\n" +
		"  kernel _Z2k1Pi symbol=_Z2k1Pi.kd sgprs=6 vgprs=2 agprs=0 lds=0 scratch=0 kernarg=8 wavefront=64\n" +
		"  kernel _Z2kkPi symbol=_Z2kkPi.kd sgprs=6 vgprs=2 agprs=0 lds=256 scratch=0 kernarg=8 wavefront=64\n"
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("list --all: exit %d %s\n%s\nwant the lines\n%s", code, stderr, out, want)
	}
	if plain, _, _ := cli(t, "list", bin); strings.Contains(plain, "CODE OBJECT") {
		t.Errorf("list (llvm-objdump's listing) names the code object:\n%s", plain)
	}
	js, _, code := cli(t, "list", "--json", bin)
	var doc struct {
		Images []struct {
			CodeObject struct {
				Version  int
				TargetID string `json:"target_id"`
				Kernels  []struct {
					Name string
					LDS  int64
				}
			} `json:"code_object"`
		}
	}
	if err := json.Unmarshal([]byte(js), &doc); code != 0 || err != nil || len(doc.Images) != 1 || doc.Images[0].CodeObject.Version != 5 ||
		doc.Images[0].CodeObject.TargetID != "gfx908:xnack-" || len(doc.Images[0].CodeObject.Kernels) != 2 || doc.Images[0].CodeObject.Kernels[1].LDS != 256 {
		t.Errorf("list --json: exit %d, %v: %+v\n%s", code, err, doc, js)
	}

	broken := filepath.Join(dir, "nested.bin")
	if err := os.WriteFile(broken, amdgpuBinary(t, func(desc []byte) {
		for i := range desc {
			desc[i] = 0x91
		}
	}), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, stderr, code := cli(t, "list", "--all", broken); code != 0 || !strings.Contains(out, "AMDGPU CODE OBJECT [0]:\n  not read: ") || !strings.Contains(out, "deeper than amdgpu.MaxDepth") {
		t.Errorf("list --all of a code object whose note nests too deep: exit %d %s\n%s", code, stderr, out)
	}

	// clang-22's HIP object: the code object in its .hip_fatbin's bundle
	// (version 6, clang-22's default).
	if err := os.WriteFile(filepath.Join(dir, "k.hip"), mustReadFile(t, filepath.Join("..", "..", "amdgpu", "testdata", "k.hip")), 0o644); err != nil {
		t.Fatal(err)
	}
	compiled(t, "clang", 22, dir, []string{"-x", "hip", "--offload-arch=gfx90a:xnack+", "-nogpulib", "-nogpuinc", "--offload-new-driver", "-O1", "-c", "k.hip", "-o", "k.o"}, "k.o")
	out, stderr, code = cli(t, "list", "--all", filepath.Join(dir, "k.o"))
	if code != 0 || !strings.Contains(out, "\nAMDGPU CODE OBJECT [hip-amdgcn-amd-amdhsa--gfx90a:xnack+] (llvm-readelf -h --notes):\n  version 6, target ID gfx90a:xnack+, amdhsa.target amdgcn-amd-amdhsa--gfx90a:xnack+\n  kernel _Z2k1Pi ") {
		t.Errorf("list --all of clang-22's HIP object: exit %d %s\n%s", code, stderr, out)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
