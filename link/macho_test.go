package link

import (
	"bytes"
	"context"
	"debug/macho"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// machoRuntime defines what the registration object and the host code
// call, as the HIP runtime and libSystem would.
const machoRuntime = `
void *__hipRegisterFatBinary(void *w) { return w; }
void __hipUnregisterFatBinary(void *h) {}
int __hipRegisterFunction(void *h, void *a, void *b, void *c, int d, void *e, void *f, void *g, void *i, void *j) { return 0; }
void __hipRegisterVar(void *h, void *a, void *b, void *c, int d, long e, int f, int g) {}
void __hipRegisterManagedVar(void *h, void *a, void *b, void *c, long d, int e) {}
void __hipRegisterSurface(void *h, void *a, void *b, void *c, int d, int e) {}
void __hipRegisterTexture(void *h, void *a, void *b, void *c, int d, int e, int f) {}
int atexit(void (*f)(void)) { return 0; }
int printf(const char *f, ...) { return 0; }
int __hipPushCallConfiguration() { return 0; }
int __hipPopCallConfiguration() { return 0; }
int hipLaunchKernel() { return 0; }
void __stack_chk_fail(void) {}
void *__stack_chk_guard;
`

// TestMachOHIPLink links a HIP program (-fgpu-rdc: kernels, a template
// kernel, device and managed variables) for an arm64 macOS host as LLVM
// main's clang-linker-wrapper would, with ld64.lld-22 as the host linker
// given in ld64's syntax (-arch arm64 -platform_version macos 11.0 11.0,
// whose values the wrapper skips as inputs that do not exist). clang-22
// cannot compile HIP for a Mach-O host (its offload entries and their
// names are in ELF-named sections: "mach-o section specifier requires a
// segment and section separated by a comma", as chipStar#1465 reports of
// 23), so the host object is llc-22's of clang-22's module with the
// entries in main's __LLVM,offload_entries and the names in
// __TEXT,__cstring (main's choice for the names is not known here), and
// the device bitcode is embedded with fatobj.EmbedMachO. The program has
// the fatbin (a bundle of gfx90a's code object), the registration code
// and its constructor, and not the entries, which ld64.lld drops with
// every __LLVM section; nothing here can run it.
func TestMachOHIPLink(t *testing.T) {
	clang := tooltest.Tool(t, "clang", 22)
	llc := tooltest.Tool(t, "llc", 22)
	ld := tooltest.Tool(t, "ld64.lld", 22)
	r, err := release.Lookup(24)
	if err != nil {
		t.Fatal(err)
	}
	const triple = "arm64-apple-macos11"
	dir := t.TempDir()
	src, err := filepath.Abs(filepath.Join("testdata", "macho", "prog.hip"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, msg)
		}
	}
	hip := []string{"--target=" + triple, "-x", "hip", "--offload-new-driver", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-fgpu-rdc"}
	run(clang, append(hip, "--offload-device-only", "-c", src, "-o", "dev.bc")...)
	run(clang, append(hip, "--offload-host-only", "-S", "-emit-llvm", src, "-o", "host.ll")...)
	ll, err := os.ReadFile(filepath.Join(dir, "host.ll"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(ll), `section "llvm_offload_entries"`, `section "__LLVM,offload_entries"`)
	text = strings.ReplaceAll(text, `, section ".llvm.rodata.offloading"`, "")
	if err := os.WriteFile(filepath.Join(dir, "host.ll"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	run(llc, "-filetype=obj", "host.ll", "-o", "host.o")
	if err := os.WriteFile(filepath.Join(dir, "rt.c"), []byte(machoRuntime), 0o644); err != nil {
		t.Fatal(err)
	}
	run(clang, "--target="+triple, "-c", "rt.c", "-o", "rt.o")

	// The fat object: the device bitcode packaged as clang packages it.
	var bin bytes.Buffer
	open := func(path string) (io.Reader, int64, error) {
		b, err := os.ReadFile(filepath.Join(dir, path))
		return bytes.NewReader(b), int64(len(b)), err
	}
	if _, err := offloadbinary.Package(r, &bin, []string{"file=dev.bc,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip"}, open); err != nil {
		t.Fatal(err)
	}
	hb, err := os.ReadFile(filepath.Join(dir, "host.o"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := machoobj.Read(bytes.NewReader(hb), int64(len(hb)))
	if err != nil {
		t.Fatal(err)
	}
	o, err := mf.Object()
	if err != nil {
		t.Fatal(err)
	}
	if err := fatobj.EmbedMachO(o, io.NewSectionReader(bytes.NewReader(bin.Bytes()), 0, int64(bin.Len()))); err != nil {
		t.Fatal(err)
	}
	var fat bytes.Buffer
	if _, err := machoobj.Write(&fat, o); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prog.o"), fat.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	opt, err := ParseWrapperArgs([]string{"--host-triple=" + triple, "--linker-path=" + ld, "-arch", "arm64", "-platform_version", "macos", "11.0", "11.0",
		"-o", filepath.Join(dir, "prog"), filepath.Join(dir, "prog.o"), filepath.Join(dir, "rt.o")})
	if err != nil {
		t.Fatal(err)
	}
	opt.DeviceClang, opt.TempDir = clang, filepath.Join(dir, "tmp")
	os.Mkdir(opt.TempDir, 0o755)
	l, err := Plan(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Release.Major != 24 {
		t.Errorf("read as %v, want LLVM 24 (the only release with Mach-O entries)", l.Release)
	}
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	f, err := macho.Open(filepath.Join(dir, "prog"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fb := f.Section("__hip_fatbin")
	if fb == nil {
		t.Fatal("no __HIP,__hip_fatbin in the program")
	}
	data, err := fb.Data()
	if err != nil {
		t.Fatal(err)
	}
	bd, err := bundle.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("the program's fatbin: %v", err)
	}
	found := false
	for _, e := range bd.Entries {
		found = found || strings.HasSuffix(e.ID, "gfx90a") && e.Size > 0
	}
	if !found {
		t.Errorf("the program's fatbin holds no gfx90a code object: %+v", bd.Entries)
	}
	// The entries do not reach the program: lld, as it says of ld64,
	// emits no contents of a section of the __LLVM segment (lld/MachO's
	// InputFiles.cpp), where main puts them. The section$start$ and
	// section$end$ bounds then meet, and the constructor registers the
	// fatbin and no kernel or variable.
	if es := f.Section("offload_entries"); es == nil || es.Seg != "__LLVM" || es.Size != 0 {
		t.Errorf("entries section %+v: want lld's empty __LLVM,offload_entries (if this changed, the registration has its entries: docs/registration.md#macos)", es)
	}
	// ld64 (and lld) put __StaticInit's code in __text, and the
	// constructors in __DATA_CONST.
	if s := f.Section("__mod_init_func"); s == nil || s.Size != 8 {
		t.Errorf("__mod_init_func %+v, want the registration constructor", s)
	}
}
