package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
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

// TestListCUDAFatbinary: list --all of clang-22's whole-program CUDA object
// names the cubin of its .nv_fatbin as cuobjdump -lelf -lptx does (the
// fixture's listing), and list --json gives it with where it lies; plain
// list prints what llvm-objdump prints, which has no such line; extract
// --raw writes the cubin.
func TestListCUDAFatbinary(t *testing.T) {
	dir := filepath.Join("..", "..", "offload", "testdata", "nvidia", "cuda-llvm22")
	in := filepath.Join(dir, "vadd.o")
	want, err := os.ReadFile(in + ".cuobjdump.txt")
	if err != nil {
		t.Fatal(err)
	}
	all, stderr, code := cli(t, "list", "--all", in)
	if code != 0 || !strings.Contains(all, "\nCUDA FATBINARY [.nv_fatbin at 0x4b0] (cuobjdump -lelf -lptx):\n"+string(want)) {
		t.Errorf("list --all: exit %d %s\n%s\nwant the lines\n%s", code, stderr, all, want)
	}
	plain, _, _ := cli(t, "list", in)
	if strings.Contains(plain, "cubin") {
		t.Errorf("list (llvm-objdump's listing) names the cubin:\n%s", plain)
	}
	out, _, code := cli(t, "list", "--json", in)
	var doc struct {
		Images []struct {
			Source        string `json:"source"`
			FatbinEntries []struct {
				Kind, Name, Arch string
				Number           int
				Offset, Size     int64
			} `json:"fatbin_entries"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("list --json: exit %d, %v", code, err)
	}
	if len(doc.Images) != 1 || len(doc.Images[0].FatbinEntries) != 1 {
		t.Fatalf("list --json: %+v, want one image with one fatbin entry", doc.Images)
	}
	e := doc.Images[0].FatbinEntries[0]
	data, _ := os.ReadFile(in)
	if e.Kind != "elf" || e.Arch != "sm_90" || e.Number != 1 || e.Name != "vadd.1.sm_90.cubin" ||
		e.Offset < 0 || e.Offset+e.Size > int64(len(data)) || string(data[e.Offset:e.Offset+4]) != "\x7fELF" {
		t.Errorf("fatbin entry %+v: want the sm_90 cubin where its ELF header lies", e)
	}
	// extract --raw writes the cubin as cuobjdump -xelf names it: its bytes
	// where list --json says they lie; extract writes the fat binary in an
	// OffloadBinary, as it does a bundle.
	x := t.TempDir()
	if _, stderr, code := cli(t, "extract", "--raw", "-o", x, in); code != 0 {
		t.Fatalf("extract --raw: exit %d %s", code, stderr)
	}
	cubin, err := os.ReadFile(filepath.Join(x, "vadd.1.sm_90.cubin"))
	if err != nil || e.Offset < 0 || !bytes.Equal(cubin, data[e.Offset:e.Offset+e.Size]) {
		t.Errorf("extract --raw: %v; want the cubin's %d bytes", err, e.Size)
	}
	y := t.TempDir()
	if _, stderr, code := cli(t, "extract", "-o", y, in); code != 0 {
		t.Fatalf("extract: exit %d %s", code, stderr)
	}
	if bins, _ := filepath.Glob(filepath.Join(y, "*.offload")); len(bins) != 1 {
		t.Errorf("extract: %v, want one OffloadBinary", bins)
	} else if l, _, code := cli(t, "list", bins[0]); code != 0 || !strings.Contains(l, "kind            fatbinary\n") || !strings.Contains(l, "triple          nvptx64-nvidia-cuda\n") {
		t.Errorf("list of the extracted binary: exit %d\n%s", code, l)
	}
}

// TestCheckRuntimeRefusesCUDA13Cubin: check --runtime 19 of the program
// clang 19 linked of an OpenMP object whose cubin CUDA 13's ptxas made says
// that LLVM 19's libomptarget will not load it, and why (what that runtime
// said on the GPU: "No images found compatible with the installed
// hardware"); libomptarget 22 loads it, and check without --runtime finds
// nothing.
func TestCheckRuntimeRefusesCUDA13Cubin(t *testing.T) {
	prog := filepath.Join("..", "..", "offload", "testdata", "nvidia", "openmp-llvm19", "vadd-linked-by-clang19")
	out, stderr, code := cli(t, "check", "--runtime", "19", prog)
	if code != 1 {
		t.Fatalf("check --runtime 19: exit %d, want 1\n%s%s", code, out, stderr)
	}
	for _, want := range []string{"runtime-refuses-image: libomptarget 19 will not load the device image for nvptx64-nvidia-cuda (arch \"sm_90\"",
		"ELF ABI version 8", "0x6005a04", "Invalid CUDA addressing mode", "No images found compatible with the installed hardware", "Fix: run it with libomptarget 22"} {
		if !strings.Contains(out, want) {
			t.Errorf("check --runtime 19 does not say %q:\n%s", want, out)
		}
	}
	out, _, code = cli(t, "check", "--runtime", "19", "--json", prog)
	if flat := strings.Join(strings.Fields(out), ""); code != 1 || !strings.Contains(flat, `"kind":"runtime-refuses-image"`) || !strings.Contains(flat, `"releases":[19]`) {
		t.Errorf("check --runtime 19 --json: exit %d, no finding of the runtime 19:\n%s", code, out)
	}
	for _, args := range [][]string{{"check", "--runtime", "22", prog}, {"check", prog}} {
		if out, stderr, code := cli(t, args...); code != 0 {
			t.Errorf("goffload %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
		}
	}
	if _, stderr, code := cli(t, "check", "--runtime", "12", prog); code == 0 || !strings.Contains(stderr, "--runtime") {
		t.Errorf("check --runtime 12: exit %d, want an error naming --runtime:\n%s", code, stderr)
	}
}

// TestListNVRelFatbin: the fat binary of __nv_relfatbin, where nvcc -rdc
// puts an object's device code for nvlink (no CUDA here: an object holding
// the .nv_fatbin bytes of clang-22's vadd.o in that section), is listed and
// extracted as that of .nv_fatbin is.
func TestListNVRelFatbin(t *testing.T) {
	f, err := elf.Open(filepath.Join("..", "..", "offload", "testdata", "nvidia", "cuda-llvm22", "vadd.o"))
	if err != nil {
		t.Fatal(err)
	}
	fb, err := f.Section(".nv_fatbin").Data()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	in := writeInput(t, t.TempDir(), "rdc.o", objectWith(t, "__nv_relfatbin", elf.SHT_PROGBITS, fb))
	out, stderr, code := cli(t, "list", "--all", in)
	if code != 0 || !strings.Contains(out, "CUDA FATBINARY [__nv_relfatbin at ") || !strings.Contains(out, "ELF file    1: rdc.1.sm_90.cubin\n") {
		t.Errorf("list --all: exit %d %s\n%s", code, stderr, out)
	}
	x := t.TempDir()
	if _, stderr, code := cli(t, "extract", "--raw", "-o", x, in); code != 0 {
		t.Fatalf("extract --raw: %s", stderr)
	}
	if _, err := os.Stat(filepath.Join(x, "rdc.1.sm_90.cubin")); err != nil {
		t.Error(err)
	}
}

// TestFatbinFile: a fat binary file as NVIDIA's fatbinary writes it (the
// fixture's rdc.fatbin, of clang-linker-wrapper-22's -fgpu-rdc link) is an
// input of its own: list --all names its cubin as the fixture's cuobjdump
// listing does, extract --raw writes that cubin, which is nvlink's image
// byte for byte (rdc.nvptx64.sm_90.img), and check has no entries to check.
// llvm-objdump does not read the file; plain list prints nothing of it.
func TestFatbinFile(t *testing.T) {
	dir := filepath.Join("..", "..", "offload", "testdata", "nvidia", "cuda-llvm22", "link-rdc")
	in := filepath.Join(dir, "rdc.fatbin")
	want, err := os.ReadFile(in + ".cuobjdump.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(want), "\n")[0] // the cubin's line; the next is cuobjdump's note on PTX
	all, stderr, code := cli(t, "list", "--all", in)
	if code != 0 || !strings.Contains(all, "\nCUDA FATBINARY [at 0x0] (cuobjdump -lelf -lptx):\n"+lines) {
		t.Errorf("list --all: exit %d %s\n%s\nwant the line\n%s", code, stderr, all, lines)
	}
	x := t.TempDir()
	if _, stderr, code := cli(t, "extract", "--raw", "-o", x, in); code != 0 {
		t.Fatalf("extract --raw: exit %d %s", code, stderr)
	}
	got, err := os.ReadFile(filepath.Join(x, "rdc.1.sm_90.cubin"))
	img, err2 := os.ReadFile(filepath.Join(dir, "rdc.nvptx64.sm_90.img"))
	if err != nil || err2 != nil || !bytes.Equal(got, img) {
		t.Errorf("extract --raw: %v %v; the cubin is not nvlink's image (%d and %d bytes)", err, err2, len(got), len(img))
	}
	if out, stderr, code := cli(t, "check", in); code != 0 || !strings.Contains(out, "a CUDA fat binary: no entries to check") {
		t.Errorf("check: exit %d %s\n%s", code, stderr, out)
	}
}
