package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap"
)

// winePrefix is the wine prefix the tests share, made once under the user's
// cache folder (the first run of wine initialises it, in seconds).
func winePrefix(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skip("no user cache folder for the wine prefix")
	}
	dir := filepath.Join(cache, "goffload", "wine")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wineMu runs one wine program at a time: the tests share one prefix, and
// a program that starts while wineserver ends can exit 1 having printed
// nothing (seen once in the default run with both Windows tests beside the
// package's other tests).
var wineMu sync.Mutex

// runWine runs exe (in dir) under wine and returns what it printed, its
// line ends made Unix's and its pointers PTR. A run that fails having
// printed nothing is wine's start failing, not the program: it is logged
// with what wine said and run once more.
func runWine(t *testing.T, wine, dir, exe string) string {
	t.Helper()
	wineMu.Lock()
	defer wineMu.Unlock()
	for try := 1; ; try++ {
		cmd := exec.Command(wine, exe)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "WINEPREFIX="+winePrefix(t), "WINEDEBUG=-all")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil {
			return winePointer.ReplaceAllString(strings.ReplaceAll(string(out), "\r\n", "\n"), "PTR")
		}
		if len(out) > 0 || try == 2 {
			t.Fatalf("wine %s: %v\n%s%s", exe, err, out, tooltest.Clip(stderr.Bytes()))
		}
		t.Logf("wine %s: %v, nothing printed (run again):\n%s", exe, err, tooltest.Clip(stderr.Bytes()))
	}
}

var winePointer = regexp.MustCompile(`\b[0-9A-Fa-f]{16}\b`)

// TestWindowsHIPProgramRuns builds a HIP program for a MinGW host
// (x86_64-w64-windows-gnu: kernels, a template kernel, device variables, a
// managed variable; -fgpu-rdc) twice, linked through clang-22 with
// clang-linker-wrapper-22 and with goffload as the wrapper (clang -B), runs
// both under wine against a stand-in amdhip64.dll that logs every
// registration call, and compares the logs (pointers aside) and the
// registration objects (llvm-readobj-22's view, as wrap's tests compare
// them).
func TestWindowsHIPProgramRuns(t *testing.T) {
	t.Parallel() // wine's start, beside the package's other tests
	exe := goffloadExe(t)
	clang := tooltest.Tool(t, "clang", 22)
	clw := tooltest.Tool(t, "clang-linker-wrapper", 22)
	readobj := tooltest.Tool(t, "llvm-readobj", 22)
	gcc := tooltest.Program(t, "x86_64-w64-mingw32-gcc")
	wine := tooltest.Program(t, "wine")
	const triple = "x86_64-w64-windows-gnu"
	dir := t.TempDir()
	run := func(name string, args ...string) []byte {
		t.Helper()
		return []byte(runCmdOut(t, dir, name, args...))
	}
	src, _ := filepath.Abs(filepath.Join("testdata", "windows"))
	// The import library libamdhip64.a: ld would take a libamdhip64.dll.a
	// before it, so none is made.
	run(gcc, "-shared", "-o", "amdhip64.dll", filepath.Join(src, "amdhip64.c"), "-Wl,--out-implib,libamdhip64.a")
	hip := []string{"--target=" + triple, "--offload-new-driver", "--offload-arch=gfx90a", "-nogpulib", "-fgpu-rdc"}
	compiled(t, "clang", 22, "", append(hip, "-x", "hip", "-nogpuinc", "-c", filepath.Join("testdata", "windows", "prog.hip"), "-o", filepath.Join(dir, "prog.o")), filepath.Join(dir, "prog.o"))
	wrapperBins(t, dir, clw, exe)
	for _, name := range []string{"theirs", "ours"} {
		run(clang, append(hip, "-B", filepath.Join(dir, name+"-bin"), "--hip-link", "prog.o", "-o", name+".exe", "-L.", "-lamdhip64", "-Wl,--save-temps")...)
	}
	logs := map[string]string{}
	for _, name := range []string{"theirs", "ours"} {
		logs[name] = runWine(t, wine, dir, name+".exe")
	}
	t.Logf("the program linked by clang-linker-wrapper-22 logs:\n%s", logs["theirs"])
	for _, want := range []string{"__hipRegisterFatBinary PTR\n", "__hipRegisterFunction _Z4kernPi\n", "__hipRegisterFunction plain\n",
		"__hipRegisterVar table 256\n", "__hipRegisterManagedVar shared_flag\n", "__hipUnregisterFatBinary\n"} {
		if !bytes.Contains([]byte(logs["theirs"]), []byte(want)) {
			t.Errorf("clang-linker-wrapper-22's program does not log %q", want)
		}
	}
	if logs["ours"] != logs["theirs"] {
		t.Errorf("goffload's program logs\n%s\nclang-linker-wrapper-22's\n%s", logs["ours"], logs["theirs"])
	}
	// The registration objects: clang-linker-wrapper-22 --save-temps keeps
	// its own; goffload's is the wrap step's output, kept with --save-temps.
	theirs, _ := filepath.Glob(filepath.Join(dir, "theirs.exe.hip.image.wrapper.o"))
	ours, _ := filepath.Glob(filepath.Join(dir, "ours*.hip*wrapper*.o"))
	if len(theirs) != 1 || len(ours) != 1 {
		t.Fatalf("registration objects kept: clang-linker-wrapper %q, goffload %q", theirs, ours)
	}
	view := func(path string) string {
		out := run(readobj, "--sections", "--section-data", "--relocations", "--symbols", "--unwind", "--coff-directives", path)
		return string(bytes.SplitN(out, []byte("\n"), 3)[2]) // without the file's name
	}
	if a, b := view(theirs[0]), view(ours[0]); a != b {
		t.Errorf("the registration objects differ:\nLLVM\n%s\nours\n%s", a, b)
	}
}

// TestWrapWindowsHosts: wrap --triple of both Windows hosts writes what
// wrap.GPUCOFF and wrap.OpenMPCOFF make (compared with LLVM's objects in
// package wrap), and refuses releases other than 22; -r with a COFF host is
// refused as clang-linker-wrapper refuses it.
func TestWrapWindowsHosts(t *testing.T) {
	dir := t.TempDir()
	fb := filepath.Join(dir, "k.hipfb")
	if err := os.WriteFile(fb, tooltest.HIPFatbin(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, triple := range []string{"x86_64-pc-windows-msvc", "x86_64-w64-windows-gnu"} {
		out := filepath.Join(dir, triple+".o")
		if _, stderr, code := cli(t, "wrap", "--kind", "hip", "--triple", triple, "-o", out, fb); code != 0 {
			t.Fatalf("wrap --triple %s: %s", triple, stderr)
		}
		got, _ := os.ReadFile(out)
		o, err := wrap.GPUCOFF(wrap.Options{Triple: triple}, offload.OffloadHIP, io.NewSectionReader(bytes.NewReader(tooltest.HIPFatbin()), 0, int64(len(tooltest.HIPFatbin()))))
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if _, err := coffobj.Write(&want, o); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("wrap --triple %s: not wrap.GPUCOFF's object", triple)
		}
		if _, stderr, code := cli(t, "wrap", "--llvm", "19", "--kind", "hip", "--triple", triple, "-o", out+".19", fb); code == 0 || !strings.Contains(stderr, "LLVM 22") {
			t.Errorf("wrap --llvm 19 --triple %s: exit %d, %s", triple, code, stderr)
		}
		// 23's wrapper is 22's; 24's has the sentinel entries of #215390.
		for _, major := range []int{23, 24} {
			n := strconv.Itoa(major)
			if _, stderr, code := cli(t, "wrap", "--llvm", n, "--kind", "hip", "--triple", triple, "-o", out+"."+n, fb); code != 0 {
				t.Fatalf("wrap --llvm %d --triple %s: %s", major, triple, stderr)
			}
			got, _ := os.ReadFile(out + "." + n)
			r, err := release.Lookup(major)
			if err != nil {
				t.Fatal(err)
			}
			o, err := wrap.GPUCOFF(wrap.Options{Release: r, Triple: triple}, offload.OffloadHIP, io.NewSectionReader(bytes.NewReader(tooltest.HIPFatbin()), 0, int64(len(tooltest.HIPFatbin()))))
			if err != nil {
				t.Fatal(err)
			}
			var w bytes.Buffer
			if _, err := coffobj.Write(&w, o); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, w.Bytes()) || bytes.Equal(got, want.Bytes()) != (major == 23) {
				t.Errorf("wrap --llvm %d --triple %s: not wrap.GPUCOFF's object for %d, or (not) 22's", major, triple, major)
			}
		}
	}
	if _, stderr, code := cli(t, "linker-wrapper", "--host-triple=x86_64-w64-windows-gnu", "--linker-path=ld", "-r", fb, "-o", filepath.Join(dir, "r.o")); code == 0 ||
		!strings.Contains(stderr, "not supported on COFF") {
		t.Errorf("linker-wrapper -r for a COFF host: exit %d, %s", code, stderr)
	}
}

// wrapperBins makes the folders dir/theirs-bin and dir/ours-bin, for clang's
// -B, holding clang-linker-wrapper as clw (LLVM's) and as exe (goffload).
func wrapperBins(t *testing.T, dir, clw, exe string) {
	t.Helper()
	for _, w := range []struct{ name, wrapper string }{{"theirs", clw}, {"ours", exe}} {
		bin := filepath.Join(dir, w.name+"-bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(w.wrapper, filepath.Join(bin, "clang-linker-wrapper")); err != nil {
			t.Fatal(err)
		}
	}
}
