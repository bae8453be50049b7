package elfobj

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// rewrite loads the object at in and writes it back unchanged to out.
func rewrite(t *testing.T, in, out string) {
	t.Helper()
	src, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(src, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	o, err := f.Object()
	if err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	var buf bytes.Buffer
	if _, err := Write(&buf, o); err != nil {
		t.Fatalf("%s: %v", in, err)
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

var offsetPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(Start of section headers:\s+)\d+`),
	regexp.MustCompile(`(starting at offset )0x[0-9a-f]+`),
	regexp.MustCompile(`( at offset )0x[0-9a-f]+`),
	// The Off column of the section headers, after the 16-digit address.
	regexp.MustCompile(`(?m)^(\s+\[\s*\d+\].* [0-9a-f]{16} )[0-9a-f]{6,}`),
}

// readelfAll runs `llvm-readelf --all` and blanks the file offsets.
func readelfAll(t *testing.T, readelf, file string) string {
	t.Helper()
	out, err := exec.Command(readelf, "--all", file).CombinedOutput()
	if err != nil {
		t.Fatalf("%s --all %s: %v\n%s", readelf, file, err, out)
	}
	s := strings.ReplaceAll(string(out), file, "FILE")
	for _, re := range offsetPatterns {
		s = re.ReplaceAllString(s, "${1}OFF")
	}
	return s
}

func compareReadelf(t *testing.T, readelf, orig, rewritten string) {
	t.Helper()
	want, got := readelfAll(t, readelf, orig), readelfAll(t, readelf, rewritten)
	if want == got {
		return
	}
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			t.Errorf("%s: llvm-readelf --all differs beyond offsets at line %d:\nwant %q\n got %q", filepath.Base(orig), i+1, w, g)
			return
		}
	}
}

// TestRewriteFixtureHostObjects loads and writes back the OpenMP host objects
// that clang 15, 16, 19 and 22 made; the 19 one must still link with clang-19
// and offload under libomptarget 19.
func TestRewriteFixtureHostObjects(t *testing.T) {
	readelf := tooltest.Tool(t, "llvm-readelf", 19)
	dir := t.TempDir()
	for _, major := range []string{"15", "16", "19", "22"} {
		in := filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm"+major+".o")
		out := filepath.Join(dir, "openmp-x86-llvm"+major+".o")
		rewrite(t, in, out)
		compareReadelf(t, readelf, in, out)
	}
	if testing.Short() {
		return
	}
	main := filepath.Join("testdata", "roundtrip", "omp_main.c")
	runOpenMP(t, filepath.Join(dir, "openmp-x86-llvm19.o"), main, dir)
}

// runOpenMP links an OpenMP host object of clang 19 with main and runs it under
// libomptarget 19, checking that the target region ran on device 0.
func runOpenMP(t *testing.T, obj, main, dir string) {
	t.Helper()
	clang := tooltest.Tool(t, "clang", 19)
	libdir := "/usr/lib/llvm-19/lib"
	if _, err := os.Stat(filepath.Join(libdir, "libomptarget.so")); err != nil {
		tooltest.Missing(t, "libomptarget 19 not installed (Debian libomp-19-dev, libomp5-19)")
	}
	exe := obj + ".exe"
	cmd := exec.Command(clang, "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", obj, main, "-o", exe, "-Wl,-rpath,"+libdir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("link %s: %v\n%s", obj, err, out)
	}
	run := exec.Command(exe)
	run.Env = append(os.Environ(), "LIBOMPTARGET_INFO=1")
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, out)
	}
	if !strings.Contains(string(out), "foo(1)=44") || !strings.Contains(string(out), "omptarget device 0 info") {
		t.Errorf("%s printed %q, want foo(1)=44 from a target region on device 0", exe, out)
	}
}

// TestRewriteCompilerObjects compiles sources with groups, .eh_frame and debug
// info with gcc and clang, loads and writes each object back, and checks that
// llvm-readelf sees the same object and that the program still links and runs.
func TestRewriteCompilerObjects(t *testing.T) {
	readelf := tooltest.Tool(t, "llvm-readelf", 19)
	clangxx := tooltest.Tool(t, "clang++", 19)
	gxx, err := exec.LookPath("g++")
	if err != nil {
		tooltest.Missing(t, "g++ not found")
	}
	dir := t.TempDir()
	lib := filepath.Join("testdata", "roundtrip", "lib.cpp")
	main := filepath.Join("testdata", "roundtrip", "main.cpp")
	for _, c := range []struct {
		name string
		cc   string
		args []string
	}{
		{"gcc-O2-g", gxx, []string{"-O2", "-g"}},
		{"gcc-sections", gxx, []string{"-O0", "-g", "-ffunction-sections", "-fdata-sections"}},
		{"clang19-O2-g", clangxx, []string{"-O2", "-g"}},
		{"clang19-sections", clangxx, []string{"-O0", "-gdwarf-4", "-ffunction-sections", "-fdata-sections"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			orig := filepath.Join(dir, c.name+".o")
			args := append(append([]string{}, c.args...), "-c", lib, "-o", orig)
			if out, err := exec.Command(c.cc, args...).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			copied := filepath.Join(dir, c.name+"-rewritten.o")
			rewrite(t, orig, copied)
			compareReadelf(t, readelf, orig, copied)
			if testing.Short() {
				return
			}
			want := linkAndRun(t, c.cc, dir, orig, main)
			got := linkAndRun(t, c.cc, dir, copied, main)
			if got != want || !strings.Contains(got, "constructor ran") {
				t.Errorf("rewritten program printed %q, the original %q", got, want)
			}
		})
	}
	if testing.Short() {
		return
	}
	t.Run("clang19-openmp", func(t *testing.T) {
		clang := tooltest.Tool(t, "clang", 19)
		orig := filepath.Join(dir, "omp.o")
		src := filepath.Join("testdata", "roundtrip", "omp_t.c")
		cmd := exec.Command(clang, "-O1", "-g", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", src, "-o", orig)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		copied := filepath.Join(dir, "omp-rewritten.o")
		rewrite(t, orig, copied)
		compareReadelf(t, readelf, orig, copied)
		runOpenMP(t, copied, filepath.Join("testdata", "roundtrip", "omp_main.c"), dir)
	})
}

func linkAndRun(t *testing.T, cc, dir, obj, main string) string {
	t.Helper()
	exe := obj + ".exe"
	if out, err := exec.Command(cc, obj, main, "-o", exe).CombinedOutput(); err != nil {
		t.Fatalf("link %s: %v\n%s", obj, err, out)
	}
	out, err := exec.Command(exe).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, out)
	}
	return string(out)
}
