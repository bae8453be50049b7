package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/offload"
)

// TestBundleIDsReadAsTheRelease: the code object of a bundle entry
// hip-amdgcn-amd-amdhsa-gfx908 is read as each release's bundler reads the
// ID: LLVM 19 sees target ID gfx908 of amdgcn-amd-amdhsa, 22 a triple whose
// environment is gfx908 and no target ID. extract selects and names it so.
func TestBundleIDsReadAsTheRelease(t *testing.T) {
	dir := t.TempDir()
	code := []byte("\x7fELF a code object")
	var b bytes.Buffer
	if err := bundle.Write(&b, 4096, []bundle.Input{{ID: "host-x86_64-unknown-linux--"},
		{ID: "hip-amdgcn-amd-amdhsa-gfx908", Data: io.NewSectionReader(bytes.NewReader(code), 0, int64(len(code)))}}); err != nil {
		t.Fatal(err)
	}
	fb := filepath.Join(dir, "b.hipfb")
	if err := os.WriteFile(fb, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	extract := func(args ...string) []string {
		t.Helper()
		out := t.TempDir()
		if _, stderr, code := cli(t, append(append([]string{"extract", "--raw", "-o", out}, args...), fb)...); code != 0 {
			t.Fatalf("extract %v: %s", args, stderr)
		}
		ents, _ := os.ReadDir(out)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--llvm", "19", "--arch", "gfx908"}, []string{"b-amdgcn-amd-amdhsa-gfx908.0.o"}},
		{[]string{"--llvm", "19"}, []string{"b-amdgcn-amd-amdhsa-gfx908.0.o"}},
		{[]string{"--llvm", "22", "--arch", "gfx908"}, nil},
		{[]string{"--llvm", "22"}, []string{"b-amdgcn-amd-amdhsa-gfx908-.0.o"}},
	} {
		if got := extract(c.args...); !slices.Equal(got, c.want) {
			t.Errorf("extract %v wrote %v, want %v", c.args, got, c.want)
		}
	}
}

// TestReadingFindsTheRelease: a HIP binary packaged for LLVM 19 (HIP
// numbered 3) lists as hip, made by 15 to 20, without --llvm; --llvm 22
// reads it as 22 does (no such kind), and a version-2 binary, which no
// release up to 22 reads, is refused by list, extract and wrap alike under
// --llvm 19.
func TestReadingFindsTheRelease(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "k.o")
	if err := os.WriteFile(img, []byte("code"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "hip19.bin")
	if _, stderr, code := cli(t, "package", "--llvm", "19", "-o", bin, "--image", "file="+img+",triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip"); code != 0 {
		t.Fatal(stderr)
	}
	// list prints what llvm-objdump-22 does: HIP was 3 up to 20 and is no
	// kind of 22's; --all says which releases made the binary.
	stdout, stderr, code := cli(t, "list", "--all", bin)
	if code != 0 || !strings.Contains(stdout, "producer        none\n") || !strings.Contains(stdout, "MADE BY: LLVM 15-20 (read as LLVM 22)") {
		t.Errorf("list --all: exit %d %s\n%s", code, stderr, stdout)
	}
	if stdout, _, _ := cli(t, "list", "--llvm", "19", bin); !strings.Contains(stdout, "producer        hip\n") {
		t.Errorf("list --llvm 19:\n%s", stdout)
	}
	if stdout, _, _ := cli(t, "list", "--json", bin); !strings.Contains(stdout, `"offload_kind": "hip"`) || !strings.Contains(stdout, `"read_as": 19`) {
		t.Errorf("list --json reads it as 19:\n%s", stdout)
	}

	v2 := filepath.Join(dir, "v2.bin")
	data := lmBinary(t, 2, lmImage{kind: offload.ImageObject, code: 1, strs: lmStrings("triple", "x86_64-unknown-linux-gnu", "arch", "generic"), data: []byte("image")})
	if err := os.WriteFile(v2, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"list", "--llvm", "19", v2},
		{"extract", "--llvm", "19", "-o", filepath.Join(dir, "x"), v2},
		{"wrap", "--llvm", "19", "-o", filepath.Join(dir, "w.o"), v2},
	} {
		if _, stderr, code := cli(t, args...); code != 1 || !strings.Contains(stderr, "Version 0x2") {
			t.Errorf("%v: exit %d %s", args, code, stderr)
		}
	}
	// LLVM 22 reads no version 2: list reads it as the release that made it.
	if stdout, stderr, code := cli(t, "list", "--all", v2); code != 0 || !strings.Contains(stdout, "MADE BY: LLVM 23-24 (read as LLVM 24)") || !strings.Contains(stdout, "image size      5 bytes\n") {
		t.Errorf("list of version 2: exit %d %s\n%s", code, stderr, stdout)
	}
}
