package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNVIDIAFixturesAccepted: every object NVIDIA's tools had a hand in
// (offload/testdata/nvidia: cubins with shared memory, NVIDIA's section
// types and sh_info, OSABI 0x41; fatbins in .nv_fatbin; clang-linker-wrapper
// 22's CUDA registration object) is read by list, check and extract, and
// each object is planned by link --dry-run (as the release that made it), as
// NVIDIA's and LLVM's tools take them.
func TestNVIDIAFixturesAccepted(t *testing.T) {
	root := filepath.Join("..", "..", "offload", "testdata", "nvidia")
	var files []string
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".o") || strings.HasSuffix(path, ".cubin")) {
			files = append(files, path)
		}
		return nil
	})
	if len(files) < 8 {
		t.Fatalf("%d NVIDIA fixtures found under %s, want 8 or more", len(files), root)
	}
	for _, f := range files {
		name, _ := filepath.Rel(root, f)
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			runs := [][]string{{"list", f}, {"list", "--all", f}, {"list", "--json", f}, {"check", f}}
			if strings.HasSuffix(f, ".o") {
				dir := t.TempDir()
				runs = append(runs, []string{"extract", "-o", dir, f},
					[]string{"link", "--dry-run", "-o", filepath.Join(dir, "prog"), f})
			}
			for _, args := range runs {
				if _, stderr, code := cli(t, args...); code != 0 {
					t.Errorf("goffload %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
				}
			}
		})
	}
}
