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

// readelfAll runs `llvm-readelf --all` once on all files and returns what
// it prints of each, with the file's name and offsets blanked.
func readelfAll(t *testing.T, readelf string, files ...string) map[string]string {
	t.Helper()
	out := readelfFiles(t, readelf, []string{"--all"}, files...)
	for file, s := range out {
		s = strings.ReplaceAll(s, file, "FILE")
		for _, re := range offsetPatterns {
			s = re.ReplaceAllString(s, "${1}OFF")
		}
		out[file] = s
	}
	return out
}

// compareReadelf checks that llvm-readelf --all, run once on all the files,
// shows each rewritten object as its original, but for offsets.
func compareReadelf(t *testing.T, readelf string, pairs ...[2]string) {
	t.Helper()
	var files []string
	for _, p := range pairs {
		files = append(files, p[0], p[1])
	}
	all := readelfAll(t, readelf, files...)
	for _, p := range pairs {
		orig := p[0]
		want, got := all[p[0]], all[p[1]]
		if !strings.Contains(want, "ELF Header:") {
			t.Errorf("%s: llvm-readelf --all shows no ELF header:\n%s", filepath.Base(orig), want)
		}
		if want == got {
			continue
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
				break
			}
		}
	}
}

// TestRewriteFixtureHostObjects loads and writes back the OpenMP host objects
// that clang 15, 16, 19 and 22 made; the 19 one must still link with clang-19
// and offload under libomptarget 19. llvm-readelf runs once for all of them.
// That last check runs under OFFLOAD_TEST_EXHAUSTIVE=1: by default the same
// object, loaded, edited and written back, links and offloads in
// TestRemoveAndEmbedOffloading, and one that clang-19 compiles and that is
// written back unchanged in TestRewriteCompilerObjects/clang19-openmp.
func TestRewriteFixtureHostObjects(t *testing.T) {
	readelf := tooltest.Tool(t, "llvm-readelf", 19)
	dir := t.TempDir()
	var pairs [][2]string
	for _, major := range []string{"15", "16", "19", "22"} {
		in := filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm"+major+".o")
		out := filepath.Join(dir, "openmp-x86-llvm"+major+".o")
		rewrite(t, in, out)
		pairs = append(pairs, [2]string{in, out})
	}
	compareReadelf(t, readelf, pairs...)
	if testing.Short() || !tooltest.Exhaustive() {
		return
	}
	runOpenMP(t, filepath.Join(dir, "openmp-x86-llvm19.o"), dir)
}

// runOpenMP links an OpenMP host object of clang 19 with omp_main.c (see
// ompMain) and runs it under libomptarget 19, checking that the target
// region ran on device 0.
func runOpenMP(t *testing.T, obj, dir string) {
	t.Helper()
	clang := tooltest.Tool(t, "clang", 19)
	libdir := "/usr/lib/llvm-19/lib"
	if _, err := os.Stat(filepath.Join(libdir, "libomptarget.so")); err != nil {
		tooltest.Missing(t, "libomptarget 19 not installed (Debian libomp-19-dev, libomp5-19)")
	}
	main := ompMain(t)
	exe := obj + ".exe"
	cmd := exec.Command(clang, "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", obj, main, "-o", exe,
		"-Wl,-rpath,"+libdir, tooltest.AllowShlibUndefined)
	release := tooltest.Slot()
	out, err := cmd.CombinedOutput()
	release()
	if err != nil {
		t.Fatalf("link %s: %v\n%s", obj, err, out)
	}
	run := exec.Command(exe)
	run.Env = append(os.Environ(), "LIBOMPTARGET_INFO=1")
	release = tooltest.Slot()
	out, err = run.CombinedOutput()
	release()
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
// The compilers × the two sets of flags run the default sample
// (tooltest.Sampled: gcc -O2 -g and clang -ffunction-sections
// -fdata-sections); main.cpp is compiled once, by g++, for both, the cases
// run in parallel. clang19-openmp, which compiles an OpenMP source with -O1 -g,
// writes the object back, and links and runs it, runs under
// OFFLOAD_TEST_EXHAUSTIVE=1 only (the skip says what covers it by default).
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
	compilers := []struct{ name, cc string }{{"gcc", gxx}, {"clang19", clangxx}}
	flags := []struct {
		name string
		args [2][]string // for gcc, for clang
	}{
		{"O2-g", [2][]string{{"-O2", "-g"}, {"-O2", "-g"}}},
		{"sections", [2][]string{{"-O0", "-g", "-ffunction-sections", "-fdata-sections"}, {"-O0", "-gdwarf-4", "-ffunction-sections", "-fdata-sections"}}},
	}
	for i, cc := range compilers {
		for j, fl := range flags {
			name := cc.name + "-" + fl.name
			t.Run(name, func(t *testing.T) {
				tooltest.Sample(t, i, j, len(compilers), len(flags))
				t.Parallel()
				orig := filepath.Join(dir, name+".o")
				args := append(append([]string{}, fl.args[i]...), "-c", lib, "-o", orig)
				release := tooltest.Slot()
				out, err := exec.Command(cc.cc, args...).CombinedOutput()
				release()
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				copied := filepath.Join(dir, name+"-rewritten.o")
				rewrite(t, orig, copied)
				compareReadelf(t, readelf, [2]string{orig, copied})
				if testing.Short() {
					return
				}
				mainObj := sharedBuild(t, "main.o", gxx, "-c", main, "-o", "OUT")
				want := linkAndRun(t, cc.cc, orig, mainObj)
				got := linkAndRun(t, cc.cc, copied, mainObj)
				if got != want || !strings.Contains(got, "constructor ran") {
					t.Errorf("rewritten program printed %q, the original %q", got, want)
				}
			})
		}
	}
	if testing.Short() {
		return
	}
	t.Run("clang19-openmp", func(t *testing.T) {
		if !tooltest.Exhaustive() {
			t.Skipf("runs under %s=1: by default TestRewriteFixtureHostObjects rewrites the OpenMP objects of clang 15 to 22, the cases above objects with debug info, and TestRemoveAndEmbedOffloading links and runs a clang-19 object that elfobj loaded, edited and wrote", tooltest.ExhaustiveEnv)
		}
		t.Parallel()
		clang := tooltest.Tool(t, "clang", 19)
		orig := filepath.Join(dir, "omp.o")
		src := filepath.Join("testdata", "roundtrip", "omp_t.c")
		cmd := exec.Command(clang, "-O1", "-g", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", src, "-o", orig)
		release := tooltest.Slot()
		out, err := cmd.CombinedOutput()
		release()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		copied := filepath.Join(dir, "omp-rewritten.o")
		rewrite(t, orig, copied)
		compareReadelf(t, readelf, [2]string{orig, copied})
		runOpenMP(t, copied, dir)
	})
}

// linkAndRun links obj with the object of main.cpp and runs the program.
func linkAndRun(t *testing.T, cc, obj, main string) string {
	t.Helper()
	exe := obj + ".exe"
	release := tooltest.Slot()
	out, err := exec.Command(cc, obj, main, "-o", exe).CombinedOutput()
	release()
	if err != nil {
		t.Fatalf("link %s: %v\n%s", obj, err, out)
	}
	release = tooltest.Slot()
	out, err = exec.Command(exe).CombinedOutput()
	release()
	if err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, out)
	}
	return string(out)
}
