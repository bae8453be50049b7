package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

func cli(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

func testdata(parts ...string) string {
	return filepath.Join(append([]string{"..", "..", "offload", "testdata", "llvm"}, parts...)...)
}

func TestPackageThenList(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sample.bin")
	_, stderr, code := cli(t, "package", "-o", out, "--image",
		"file="+testdata("img1.bin")+",triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp")
	if code != 0 {
		t.Fatalf("package: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := cli(t, "list", out)
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, stderr)
	}
	// list prints what llvm-objdump does; --all adds which releases made
	// the file, and which it read it as.
	want := "\nOFFLOADING IMAGE [0]:\nkind            <none>\narch            sm_70\ntriple          nvptx64-nvidia-cuda\nproducer        openmp\n"
	if stdout != want {
		t.Errorf("list printed\n%q\nwant\n%q", stdout, want)
	}
	if stdout, _, _ := cli(t, "list", "--all", out); stdout != want+"\nMADE BY: LLVM 15-24 (read as LLVM 22)\n" {
		t.Errorf("list --all printed\n%q", stdout)
	}
	if stdout, _, _ := cli(t, "list", "--llvm", "19", out); stdout != want {
		t.Errorf("list --llvm 19 printed\n%q\nwant\n%q", stdout, want)
	}
}

func TestListJSON(t *testing.T) {
	file := testdata("packager", "multi-llvm19.bin")
	stdout, stderr, code := cli(t, "list", "--json", "--llvm", "19", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got jsonFile
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.File != jsonText(file) || len(got.Images) != 2 || got.Entries == nil || got.ReadAs != 19 || got.MadeBy.String() != "LLVM 15-20" {
		t.Fatalf("got %+v", got)
	}
	im := got.Images[1]
	want := jsonImage{Index: 1, Source: "binary", Path: "1", Offset: 0xf0, Size: 160, Version: 1, ImageKind: "elf", OffloadKind: "hip",
		Triple: "amdgcn-amd-amdhsa", Arch: "gfx90a", Strings: jsonStrings{{Key: "arch", Value: "gfx90a"}, {Key: "triple", Value: "amdgcn-amd-amdhsa"}},
		ImageOffset: 0x90, ImageSize: 16, DataOffset: 0xf0 + 0x90}
	if fmt.Sprint(im) != fmt.Sprint(want) {
		t.Errorf("image 1 = %+v\nwant %+v", im, want)
	}
}

func TestBadInputExitsOneWithOneLine(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.bin")
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"list", empty},
		{"list", testdata("reader-validation", "trail.out")},
		{"list", filepath.Join(dir, "missing")},
		{"list"},
		{"package", "--llvm", "19", "-o", out, "--image", "file=" + testdata("img1.bin")},
		{"package", "-o", out, "--image", "file=" + filepath.Join(dir, "missing.o") + ",triple=t"},
		{"package", "--llvm", "14", "-o", out, "--image", "file=x,triple=t"},
		{"package", "--image", "file=x,triple=t"},
		{"frobnicate"},
	} {
		_, stderr, code := cli(t, args...)
		if code != 1 {
			t.Errorf("%q: exit %d, want 1", args, code)
		}
		if args[0] != "frobnicate" && strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: message is not one line: %q", args, stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed package left %s behind", out)
	}
}

// TestListMatchesObjdump compares `goffload list --llvm N` with
// `llvm-objdump-N --offloading` on the same raw binaries.
func TestListMatchesObjdump(t *testing.T) {
	files := []string{
		testdata("reader-validation", "craft.out"),
		testdata("reader-validation", "bad_imgsize.out"),
	}
	for _, n := range []int{15, 16, 19, 22} {
		files = append(files,
			testdata("packager", fmt.Sprintf("single-llvm%d.bin", n)),
			testdata("packager", fmt.Sprintf("multi-llvm%d.bin", n)),
			testdata("packager", fmt.Sprintf("kinds%d.out", n)))
	}
	for _, major := range []int{19, 22} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			objdump := tooltest.Tool(t, "llvm-objdump", major)
			for _, f := range files {
				want, err := exec.Command(objdump, "--offloading", f).Output()
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				got, stderr, code := cli(t, "list", "--llvm", fmt.Sprint(major), f)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", f, code, stderr)
				}
				if got != string(want) {
					t.Errorf("%s:\n got %q\nwant %q", f, got, want)
				}
			}
			// Several files in one call.
			want, err := exec.Command(objdump, append([]string{"--offloading"}, files...)...).Output()
			if err != nil {
				t.Fatal(err)
			}
			got, _, _ := cli(t, append([]string{"list", "--llvm", fmt.Sprint(major)}, files...)...)
			if got != string(want) {
				t.Errorf("all files at once:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestPackageMatchesPackagerCLI runs `goffload package --llvm N` and
// clang-offload-packager-N on the same files.
func TestPackageMatchesPackagerCLI(t *testing.T) {
	img1, err := filepath.Abs(testdata("img1.bin"))
	if err != nil {
		t.Fatal(err)
	}
	images := [][]string{
		{"file=" + img1 + ",triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp"},
		{"file=" + img1 + ",triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip,feature=+xnack,feature=+sramecc",
			"file=" + img1 + ",triple=x86_64-unknown-linux-gnu,arch=,kind=openmp"},
	}
	for _, major := range []int{15, 16, 19, 22} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-packager", major)
			dir := t.TempDir()
			for i, imgs := range images {
				want := filepath.Join(dir, fmt.Sprintf("want%d", i))
				got := filepath.Join(dir, fmt.Sprintf("got%d", i))
				targs := []string{"-o", want}
				gargs := []string{"package", "--llvm", fmt.Sprint(major), "-o", got}
				for _, im := range imgs {
					targs = append(targs, "--image="+im)
					gargs = append(gargs, "--image="+im)
				}
				if msg, err := exec.Command(tool, targs...).CombinedOutput(); err != nil {
					t.Fatalf("%v: %s", err, msg)
				}
				if _, stderr, code := cli(t, gargs...); code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				w, _ := os.ReadFile(want)
				g, _ := os.ReadFile(got)
				if !bytes.Equal(g, w) {
					t.Errorf("case %d differs:\n got %x\nwant %x", i, g, w)
				}
			}
		})
	}
}

// TestListObjectsMatchesObjdump lists objects and an archive of them as
// llvm-objdump --offloading does; with --all, the entries follow.
func TestListObjectsMatchesObjdump(t *testing.T) {
	dir := t.TempDir()
	var objs []string
	for _, n := range []int{15, 16, 19, 22} {
		objs = append(objs, testdata("host-objects", fmt.Sprintf("openmp-x86-llvm%d.o", n)))
	}
	arPath, err := exec.LookPath("ar")
	if err != nil {
		tooltest.Missing(t, "ar not found")
	}
	lib := filepath.Join(dir, "libhost.a")
	if msg, err := exec.Command(arPath, append([]string{"rcs", lib}, objs...)...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	for _, major := range []int{19, 22} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			objdump := tooltest.Tool(t, "llvm-objdump", major)
			for _, f := range append(objs, lib) {
				want, err := exec.Command(objdump, "--offloading", f).Output()
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				got, stderr, code := cli(t, "list", "--llvm", fmt.Sprint(major), f)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", f, code, stderr)
				}
				if got != string(want) {
					t.Errorf("%s:\n got %q\nwant %q", f, got, want)
				}
				all, _, _ := cli(t, "list", "--all", "--llvm", fmt.Sprint(major), f)
				if !strings.Contains(all, "OFFLOADING ENTRIES [") || f != lib && !strings.HasPrefix(all, got) {
					t.Errorf("%s: list --all is not the listing, then the entries:\n%s", f, all)
				}
			}
		})
	}
}

// TestEntriesSpecThenListAndCheck writes entries from a spec, lists them, and
// checks the object, which carries no device image.
func TestEntriesSpecThenListAndCheck(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	const specJSON = `[
  {"kind": "openmp", "name": "__omp_offloading_10_20_kern_l5", "symbol": ".__omp_offloading_10_20_kern_l5.region_id"},
  {"kind": "openmp", "name": "gvar", "symbol": "gvar", "size": 4},
  {"kind": "openmp", "name": "lvar_decl_tgt_ref_ptr", "symbol": "lvar_decl_tgt_ref_ptr", "size": 8, "flags": "link"},
  {"kind": "hip", "name": "mvar", "symbol": "mvar.managed", "size": 4, "flags": "managed", "data": 4, "aux": "mvar"}
]`
	if err := os.WriteFile(spec, []byte(specJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "entries.o")
	if _, stderr, code := cli(t, "entries", "--spec", spec, "--triple", "x86_64-unknown-linux-gnu", "-o", out); code != 0 {
		t.Fatalf("entries: exit %d: %s", code, stderr)
	}
	stdout, stderr, code := cli(t, "list", "--json", out)
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, stderr)
	}
	var got jsonFile
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	want := []jsonEntry{
		{Section: "llvm_offload_entries", Format: "v1", Kind: "openmp", Name: "__omp_offloading_10_20_kern_l5", Symbol: ".__omp_offloading_10_20_kern_l5.region_id", Addend: 0, Size: 0, Flags: 0, Role: "kernel", Data: 0, Aux: ""},
		{Section: "llvm_offload_entries", Format: "v1", Kind: "openmp", Name: "gvar", Symbol: "gvar", Addend: 0, Size: 4, Flags: 0, Role: "global", Data: 0, Aux: ""},
		{Section: "llvm_offload_entries", Format: "v1", Kind: "openmp", Name: "lvar_decl_tgt_ref_ptr", Symbol: "lvar_decl_tgt_ref_ptr", Addend: 0, Size: 8, Flags: 1, Role: "link", Data: 0, Aux: ""},
		{Section: "llvm_offload_entries", Format: "v1", Kind: "hip", Name: "mvar", Symbol: "mvar.managed", Addend: 0, Size: 4, Flags: 1, Role: "managed", Data: 4, Aux: "mvar"},
	}
	if fmt.Sprint(got.Entries) != fmt.Sprint(want) {
		t.Errorf("entries\n got %+v\nwant %+v", got.Entries, want)
	}
	if readelf := tooltest.Find("llvm-readelf", 19); readelf != "" {
		msg, err := exec.Command(readelf, "--all", out).CombinedOutput()
		if err != nil || strings.Contains(strings.ToLower(string(msg)), "warning") {
			t.Errorf("llvm-readelf --all: %v\n%s", err, msg)
		}
	}
	stdout, _, code = cli(t, "check", out)
	if code != 1 || !strings.Contains(stdout, "carries no openmp device image") {
		t.Errorf("check: exit %d\n%s", code, stdout)
	}
	stdout, stderr, code = cli(t, "check", testdata("host-objects", "openmp-x86-llvm19.o"))
	if code != 0 || !strings.Contains(stdout, "every entry has its symbol") {
		t.Errorf("check of clang's object: exit %d\n%s%s", code, stdout, stderr)
	}
}
