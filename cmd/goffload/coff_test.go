package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/tooltest"
)

// coffHIP is a HIP kernel and a device global that compile without the HIP
// headers; coffOpenMP an OpenMP target region.
const (
	coffHIP = `#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
typedef struct { unsigned x, y, z; } dim3;
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long long, void*);
extern "C" int hipConfigureCall(dim3, dim3, unsigned long long, void*);
__global__ void kern(int *p) { *p = 1; }
__device__ int devvar;
`
	coffOpenMP = `int f(int *a) {
#pragma omp target map(tofrom: a[0:4])
	a[0] = 1;
	return a[0];
}
`
)

// coffInputs copies into dir the Windows-host objects clang-22 makes with
// the new offload driver, compiled once per test binary (builtOnce), and
// returns their paths by name.
func coffInputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	clang := tooltest.Tool(t, "clang", 22)
	win := "--target=x86_64-pc-windows-msvc"
	hip := []string{win, "-x", "hip", "--offload-new-driver", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-c", "k.hip"}
	objs := map[string][]string{
		"hip-rdc.obj":        append(hip, "-fgpu-rdc"),
		"hip.obj":            hip,
		"openmp-amdgcn.obj":  {win, "-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-c", "o.c"},
		"openmp-targets.obj": {win, "-fopenmp", "-fopenmp-targets=amdgcn-amd-amdhsa", "-Xopenmp-target=amdgcn-amd-amdhsa", "-march=gfx90a", "-nogpulib", "-nogpuinc", "-c", "o.c"},
		"openmp-host.obj":    {win, "-fopenmp", "-fopenmp-targets=x86_64-pc-windows-msvc", "-c", "o.c"},
		"openmp-aarch64.obj": {"--target=aarch64-pc-windows-msvc", "-fopenmp", "-fopenmp-targets=aarch64-pc-windows-msvc", "-c", "o.c"},
	}
	out := map[string]string{}
	for name, args := range objs {
		objName := name
		obj := builtOnce(t, "coff "+clang+" "+strings.Join(args, " "), func(path string) error {
			src := path + ".src"
			if err := os.Mkdir(src, 0o755); err != nil {
				return err
			}
			for name, text := range map[string]string{"k.hip": coffHIP, "o.c": coffOpenMP} {
				if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
					return err
				}
			}
			compiled(t, "clang", 22, src, append(args, "-o", objName), objName)
			return os.Rename(filepath.Join(src, objName), path)
		})
		out[name] = copyTo(t, obj, filepath.Join(dir, name))
	}
	return out
}

// TestCOFFListMatchesObjdump lists clang-22's Windows-host objects, an
// llvm-lib archive of them and DLLs linked by lld-link: the images are what
// llvm-objdump-22 --offloading prints.
func TestCOFFListMatchesObjdump(t *testing.T) {
	t.Parallel()
	objdump := tooltest.Tool(t, "llvm-objdump", 22)
	lib := tooltest.Tool(t, "llvm-lib", 22)
	lld := tooltest.Tool(t, "lld-link", 22)
	dir := t.TempDir()
	in := coffInputs(t, dir)
	runCmd(t, dir, lib, "/out:offload.lib", "hip-rdc.obj", "openmp-amdgcn.obj", "openmp-host.obj", "openmp-targets.obj")
	// The linker drops .llvm.offloading (IMAGE_SCN_LNK_REMOVE): neither
	// tool finds an image in the DLL.
	runCmd(t, dir, lld, "/dll", "/noentry", "/nodefaultlib", "/force:unresolved", "/out:hip.dll", "hip-rdc.obj")
	dlls := []string{filepath.Join(dir, "hip.dll")}
	// A section .llvm.offloading that the linker keeps, its long name in
	// the string table (GNU ld's --enable-long-section-names): LLVM reads
	// no binaries in a PE image (extractOffloadBinaries takes COFF objects
	// only), and neither does goffload.
	if _, err := exec.LookPath("x86_64-w64-mingw32-ld"); err == nil {
		dlls = append(dlls, keptBinaryDLL(t, dir, in["openmp-host.obj"]))
	} else if tooltest.Required() {
		t.Fatalf("x86_64-w64-mingw32-ld not found; %s=1 makes this a failure", tooltest.RequireEnv)
	} else {
		t.Log("x86_64-w64-mingw32-ld not found: the DLL that keeps .llvm.offloading is not tried")
	}
	files := []string{in["hip-rdc.obj"], in["openmp-amdgcn.obj"], in["openmp-targets.obj"], in["openmp-host.obj"], in["openmp-aarch64.obj"], filepath.Join(dir, "offload.lib")}
	for _, f := range append(files, dlls...) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, err := exec.Command(objdump, "--offloading", f).Output()
			if err != nil {
				t.Fatalf("llvm-objdump: %v", err)
			}
			got, stderr, code := cli(t, "list", f)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got != string(want) {
				t.Errorf("got %q\nwant %q", got, want)
			}
			if !strings.HasSuffix(f, ".dll") && !strings.Contains(got, "OFFLOADING IMAGE [0]") {
				t.Errorf("no image listed:\n%s", got)
			}
		})
	}
}

// keptBinaryDLL links with GNU ld a DLL whose section .llvm.offloading
// holds the binaries of obj, written without IMAGE_SCN_LNK_REMOVE so that
// the linker keeps it, and checks that it is there.
func keptBinaryDLL(t *testing.T, dir, obj string) string {
	t.Helper()
	b, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	f, err := coffobj.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.Section(".llvm.offloading").Data()
	if err != nil {
		t.Fatal(err)
	}
	o := &coffobj.Object{Machine: coffobj.MachineAMD64}
	o.AddSection(&coffobj.Section{Name: ".llvm.offloading", Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ, Align: 8, Data: data}, nil)
	o.Sections = append(o.Sections, coffobj.Directives("/INCLUDE:kept"))
	o.Symbols = append(o.Symbols, &coffobj.Symbol{Name: "kept", Section: o.Sections[0], StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL})
	var w bytes.Buffer
	if _, err := coffobj.Write(&w, o); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kept.obj"), w.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	runCmd(t, dir, "x86_64-w64-mingw32-ld", "--shared", "--enable-long-section-names", "-e", "0", "-o", "kept.dll", "kept.obj")
	dll := filepath.Join(dir, "kept.dll")
	b, err = os.ReadFile(dll)
	if err != nil {
		t.Fatal(err)
	}
	if f, err = coffobj.Read(bytes.NewReader(b), int64(len(b))); err != nil || !f.Image {
		t.Fatalf("kept.dll: %v", err)
	}
	if s := f.Section(".llvm.offloading"); s == nil || s.FileSize() != int64(len(data)) {
		t.Fatalf("kept.dll has no .llvm.offloading of %d bytes", len(data))
	}
	return dll
}

// TestCOFFExtractMatchesOffloadBinary extracts the images of a COFF object
// and of an llvm-lib archive as llvm-offload-binary-22 does: same names,
// same bytes.
func TestCOFFExtractMatchesOffloadBinary(t *testing.T) {
	tool := tooltest.Tool(t, "llvm-offload-binary", 22)
	lib := tooltest.Tool(t, "llvm-lib", 22)
	dir := t.TempDir()
	in := coffInputs(t, dir)
	runCmd(t, dir, lib, "/out:offload.lib", "hip-rdc.obj", "openmp-amdgcn.obj", "openmp-host.obj")
	for _, f := range []string{in["hip-rdc.obj"], in["openmp-host.obj"], in["openmp-aarch64.obj"], filepath.Join(dir, "offload.lib")} {
		for _, sel := range []struct{ tool, ours []string }{
			{[]string{"--image=triple=amdgcn-amd-amdhsa"}, []string{"--triple", "amdgcn-amd-amdhsa"}},
			{[]string{"--image=kind=openmp"}, []string{"--kind", "openmp"}},
			{[]string{"--image=arch=generic"}, []string{"--arch", "generic"}},
		} {
			want, got := filepath.Join(dir, "want"), filepath.Join(dir, "got")
			os.RemoveAll(want)
			os.RemoveAll(got)
			os.MkdirAll(want, 0o755)
			os.MkdirAll(got, 0o755)
			runCmd(t, want, tool, append([]string{f}, sel.tool...)...)
			if _, stderr, code := cli(t, append(append([]string{"extract", "--raw", "-o", got}, sel.ours...), f)...); code != 0 {
				t.Fatalf("extract %q: %s", sel.ours, stderr)
			}
			if w, g := dirContents(t, want), dirContents(t, got); w != g {
				t.Errorf("%s %q:\nllvm-offload-binary %s\ngoffload            %s", filepath.Base(f), sel.ours, w, g)
			}
		}
	}
}

// TestCOFFListsHIPFatbin lists the HIP fatbin of clang-22's object without
// -fgpu-rdc (section .hip_fatbin), which llvm-objdump-22 refuses in COFF
// ("COFF object files not supported"), and checks every COFF input.
func TestCOFFListsHIPFatbin(t *testing.T) {
	dir := t.TempDir()
	in := coffInputs(t, dir)
	got, stderr, code := cli(t, "list", "--all", in["hip.obj"])
	if code != 0 || !strings.Contains(got, "hip-amdgcn-amd-amdhsa--gfx90a") || !strings.Contains(got, "OFFLOAD BUNDLE [.hip_fatbin") {
		t.Errorf("exit %d: %s\n%s", code, stderr, got)
	}
}

// TestCOFFCheck checks clang-22's Windows-host objects: every entry has its
// symbol in the device images check can read (the host offload's COFF
// image, the HIP code object of the fatbin); an object whose binary is
// another source's is a finding naming the entry.
func TestCOFFCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := coffInputs(t, dir)
	// HIP without -fgpu-rdc registers its kernels in the host object's own
	// constructor: no entries.
	for _, name := range []string{"hip-rdc.obj", "hip.obj", "openmp-amdgcn.obj", "openmp-host.obj", "openmp-aarch64.obj"} {
		got, stderr, code := cli(t, "check", in[name])
		if code != 0 || !strings.Contains(got, "every entry has its symbol") || (name != "hip.obj") == strings.Contains(got, ": 0 entries") {
			t.Errorf("check %s: exit %d: %s\n%s", name, code, stderr, got)
		}
	}
	got, _, _ := cli(t, "check", "--json", in["openmp-host.obj"])
	if !strings.Contains(got, `"coff": true`) || !strings.Contains(got, `"unchecked_images": []`) {
		t.Errorf("check --json of the host offload object:\n%s", got)
	}

	// The host offload object of o.c with the binary of another source,
	// whose image defines another kernel.
	clang := tooltest.Tool(t, "clang", 22)
	other := filepath.Join(dir, "other.c")
	if err := os.WriteFile(other, []byte("int h(int *a) {\n#pragma omp target map(tofrom: a[0:4])\n\ta[1] = 2;\n\treturn a[1];\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runCmd(t, dir, clang, "--target=x86_64-pc-windows-msvc", "-fopenmp", "-fopenmp-targets=x86_64-pc-windows-msvc", "-c", "other.c", "-o", "other.obj")
	load := func(p string) *coffobj.Object {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := coffobj.Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		o, err := f.Object()
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	host, dev := load(in["openmp-host.obj"]), load(filepath.Join(dir, "other.obj"))
	hs, ds := host.Section(".llvm.offloading"), dev.Section(".llvm.offloading")
	hs.Data, hs.Reader, hs.Size = ds.Data, ds.Reader, ds.Size
	var b bytes.Buffer
	if _, err := coffobj.Write(&b, host); err != nil {
		t.Fatal(err)
	}
	swapped := filepath.Join(dir, "swapped.obj")
	if err := os.WriteFile(swapped, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _, code := cli(t, "check", swapped)
	if code == 0 || !strings.Contains(got, `entry "__omp_offloading_`) || !strings.Contains(got, "_f_l2\"") || !strings.Contains(got, "no such symbol") {
		t.Errorf("check of an object with another source's binary: exit %d\n%s", code, got)
	}
}

// TestCOFFEmbedMatchesClang: `goffload embed --into` a Windows host object
// clang-22 compiled gives the bytes clang-22 gives with
// -fembed-offload-object; `embed --triple` makes a COFF object that
// llvm-objdump-22 lists, and a PE image is refused as a host.
func TestCOFFEmbedMatchesClang(t *testing.T) {
	clang := tooltest.Tool(t, "clang", 22)
	objdump := tooltest.Tool(t, "llvm-objdump", 22)
	dir := t.TempDir()
	bin := filepath.Join(dir, "dev.bin")
	if err := os.WriteFile(filepath.Join(dir, "h.c"), []byte("int g = 1;\nint f(int x) { return x + g; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := cli(t, "package", "--llvm", "22", "-o", bin, "--image", "file="+filepath.Join(dir, "h.c")+",triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=openmp"); code != 0 {
		t.Fatalf("package: %s", stderr)
	}
	for _, triple := range []string{"x86_64-pc-windows-msvc", "x86_64-w64-windows-gnu"} {
		base := []string{"--target=" + triple, "-O1", "-mno-incremental-linker-compatible", "-c", "h.c"}
		runCmd(t, dir, clang, append(base, "-o", "plain.obj")...)
		runCmd(t, dir, clang, append(base, "-Xclang", "-fembed-offload-object=dev.bin", "-o", "clang.obj")...)
		fat := filepath.Join(dir, "fat.obj")
		if _, stderr, code := cli(t, "embed", "--into", filepath.Join(dir, "plain.obj"), "-o", fat, bin); code != 0 {
			t.Fatalf("%s: embed: %s", triple, stderr)
		}
		got, _ := os.ReadFile(fat)
		want, _ := os.ReadFile(filepath.Join(dir, "clang.obj"))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: embed --into gave %d bytes, not the %d clang-22 gives", triple, len(got), len(want))
		}
		newObj := filepath.Join(dir, "new.obj")
		if _, stderr, code := cli(t, "embed", "--triple", triple, "-o", newObj, bin); code != 0 {
			t.Fatalf("%s: embed --triple: %s", triple, stderr)
		}
		listing, err := exec.Command(objdump, "--offloading", newObj).CombinedOutput()
		if err != nil || !strings.Contains(string(listing), "file format coff-x86-64") || !strings.Contains(string(listing), "arch            gfx90a") {
			t.Errorf("%s: llvm-objdump --offloading of embed --triple: %v\n%s", triple, err, listing)
		}
	}
	if _, stderr, code := cli(t, "embed", "--into", bin, "-o", filepath.Join(dir, "x.obj"), bin); code == 0 || !strings.Contains(stderr, "not an ELF or Mach-O object") {
		t.Errorf("embed into an OffloadBinary: exit %d, %s", code, stderr)
	}
}
