package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// cacheLab links programs through clang-22 -B DIR with goffload as
// DIR/clang-linker-wrapper, each with -Wl,--wrapper-verbose, in a cache of
// the lab's own.
type cacheLab struct {
	clang, bin, dir, cache string
	env                    []string // beside the test's environment
}

func newCacheLab(t *testing.T) *cacheLab {
	t.Helper()
	if testing.Short() {
		t.Skip("compiles and links offload programs")
	}
	if runtime.GOOS != "linux" {
		tooltest.Missing(t, "offload programs are linked for Linux")
	}
	l := &cacheLab{clang: tooltest.Tool(t, "clang", 22), dir: t.TempDir()}
	l.bin, l.cache = filepath.Join(l.dir, "bin"), filepath.Join(l.dir, "cache")
	if err := os.Mkdir(l.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(goffloadExe(t), filepath.Join(l.bin, "clang-linker-wrapper")); err != nil {
		t.Fatal(err)
	}
	return l
}

// link runs clang-22 -B with args in the folder dir of the lab (made if
// need be), with the lab's cache and the environment more, and returns what
// the wrapper printed.
func (l *cacheLab) link(t *testing.T, dir string, args []string, more ...string) string {
	t.Helper()
	d := filepath.Join(l.dir, dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(l.clang, append([]string{"-B", l.bin, "-Wl,--wrapper-verbose"}, args...)...)
	cmd.Dir = d
	cmd.Env = append(append(append(os.Environ(), "GOFFLOAD_CACHE="+l.cache), l.env...), more...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("clang-22 -B %q in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

var cacheLine = regexp.MustCompile(`(?m)^# goffload: cache (hit|miss) ([a-z-]+) (\S+) [0-9a-f]{64}$`)

// cacheReport returns, for each device step the output reports, "hit" or
// "miss", by "KIND TARGET".
func cacheReport(out string) map[string]string {
	m := map[string]string{}
	for _, s := range cacheLine.FindAllStringSubmatch(out, -1) {
		m[s[2]+" "+s[3]] = s[1]
	}
	return m
}

// expectReport fails t unless every device link of the output is
// reported as want (hit or miss), and there are n of them.
func expectReport(t *testing.T, out, want string, n int, why string) {
	t.Helper()
	r := cacheReport(out)
	bad := len(r) != n
	for _, v := range r {
		bad = bad || v != want
	}
	if bad {
		t.Fatalf("%s: want %d device links, each a cache %s; got %v\n%s", why, n, want, r, out)
	}
	if want == "hit" && deviceLinkRan.MatchString(out) {
		t.Fatalf("%s: a cache hit, yet a device link ran:\n%s", why, out)
	}
}

// deviceLinkRan matches the command of a device link (clang for a device
// triple) as the wrapper prints it before running it.
var deviceLinkRan = regexp.MustCompile(`(?m)^ "[^"]*clang[^"]*" .*--target=(amdgcn|x86_64-pc-linux-gnu)`)

// hipKernels writes a HIP source of n kernels that call scale (from the
// archive, so that the device link must take it from there); variant
// changes their device code.
func hipKernels(n, variant int) string {
	var b strings.Builder
	b.WriteString("#include \"hip.h\"\nextern __device__ float scale(float);\n")
	for i := range n {
		fmt.Fprintf(&b, "__global__ void k%d(float *p, int m) { for (int i = 0; i < m; i++) p[i] = scale(p[i] * %d.5f + %d) / (p[(i + %d) %% m] + 1.0f); }\n", i, i+variant, variant, i+1)
	}
	b.WriteString("extern \"C\" void launch_all(float *p) {\n")
	for i := range n {
		fmt.Fprintf(&b, "  k%d<<<1, 1>>>(p, 64);\n", i)
	}
	b.WriteString("}\n")
	return b.String()
}

// TestCacheHIPRelink links a HIP program of many kernels for two arches
// (-fgpu-rdc, the new driver, -O3), a device function in a static library,
// then links it again after a change to the host code only: the second link
// takes both device links from the cache and runs none, and its program is
// the one a link without the cache makes, byte for byte. Then each kind of
// device input is changed in turn, and each change must be a miss: a device
// object, an archive member's device code (the archive named by path, and
// found through -l), the offload arch, an optimisation flag, the device
// linker's binary (a copy of ld.lld with a byte more, that clang finds
// through COMPILER_PATH, then changed in place), each followed by a link
// that hits. Last, a damaged entry (cut short, then altered) is found,
// discarded and rebuilt, and the size bound holds.
func TestCacheHIPRelink(t *testing.T) {
	t.Parallel() // its links, 30 s, beside the package's other tests
	l := newCacheLab(t)
	lld := tooltest.Tool(t, "ld.lld", 22)
	src, err := filepath.Abs(filepath.Join("testdata", "wrapperhip", "hip.h"))
	if err != nil {
		t.Fatal(err)
	}
	stub, err := filepath.Abs(filepath.Join("..", "..", "wrap", "testdata", "gpu", "runtime.c"))
	if err != nil {
		t.Fatal(err)
	}
	d := l.dir
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hipc, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	write("hip.h", string(hipc))
	arches := []string{"--offload-arch=gfx90a", "--offload-arch=gfx1100"}
	compile := func(out, srcName string, more ...string) {
		t.Helper()
		args := append([]string{"-x", "hip", "--offload-new-driver", "-nogpulib", "-nogpuinc", "-fgpu-rdc", "-O3"}, arches...)
		args = append(args, more...)
		compiled(t, "clang", 22, d, append(args, "-c", srcName, "-o", out), out)
	}
	// The kernels make each device link cost what a real one does; how
	// many does not change a hit or a miss: 2 by default (each device
	// link, 20 of them, costs its kernels' LTO), 24 in the exhaustive run.
	kernels := 2
	if tooltest.Exhaustive() {
		kernels = 24
	}
	write("k.hip", hipKernels(kernels, 0))
	write("b.hip", "#include \"hip.h\"\n__device__ float scale(float x) { return x * 3.0f; }\n")
	write("main.c", "void launch_all(float *);\nint main(void) { float p[64] = {0}; launch_all(p); return 0; }\n")
	compile("k.o", "k.hip")
	compile("b.o", "b.hip")
	runAr(t, d, "rcs", "libk.a", "b.o")
	runCmd(t, d, l.clang, "-c", "main.c", "-o", "main.o")
	runCmd(t, d, l.clang, "-shared", "-fPIC", "-o", "libamdhip64.so", stub, "-ldl")
	linkArgs := func(lib ...string) []string {
		args := append([]string{"--hip-link", "--offload-new-driver", "-nogpulib", "-fgpu-rdc", "-O3"}, arches...)
		args = append(args, "../k.o", "../main.o")
		if len(lib) == 0 {
			lib = []string{"-L..", "-lk"}
		}
		args = append(args, lib...)
		return append(args, "-L..", "-o", "prog")
	}

	out := l.link(t, "cold", linkArgs())
	expectReport(t, out, "miss", 2, "the first link")

	// A change to the host code only.
	write("main.c", "void launch_all(float *);\nint main(void) { float p[64] = {1}; launch_all(p); launch_all(p); return 0; }\n")
	runCmd(t, d, l.clang, "-c", "main.c", "-o", "main.o")
	out = l.link(t, "relink", linkArgs())
	expectReport(t, out, "hit", 2, "the link after a change to host code")
	l.link(t, "nocache", linkArgs(), "GOFFLOAD_CACHE=off")
	tooltest.SameFile(t, filepath.Join(d, "nocache", "prog"), filepath.Join(d, "relink", "prog"), "the program linked from the cache")

	// Another program of the same objects (-o test7, whose name the device
	// links' outputs and -dumpdir carry): every device link a hit, and the
	// program is the one linked without the cache.
	named := func(name string) []string {
		args := linkArgs()
		args[len(args)-1] = name
		return args
	}
	out = l.link(t, "other", named("test7"))
	expectReport(t, out, "hit", 2, "another program linked from the same objects")
	// A program's bytes do not hold its name: test7 is prog linked without
	// the cache.
	tooltest.SameFile(t, filepath.Join(d, "nocache", "prog"), filepath.Join(d, "other", "test7"), "another program linked from the cache")

	// A team's cache server (nginx, as a Bazel HTTP cache) behind the
	// folder: a machine whose folder is empty uploads its device links; a
	// second machine, another empty folder, takes every one from the
	// server, and links the same program.
	t.Run("server", func(t *testing.T) {
		srv := tooltest.StartNginx(t)
		server := "GOFFLOAD_CACHE=" + srv.URL + "/team"
		out := l.link(t, "machine1", named("app"), server, "GOFFLOAD_CACHE_DIR="+t.TempDir())
		expectReport(t, out, "miss", 2, "the first machine, its folder and the server empty")
		dir2 := t.TempDir()
		out = l.link(t, "machine2", named("app"), server, "GOFFLOAD_CACHE_DIR="+dir2)
		expectReport(t, out, "hit", 2, "a second machine, its folder empty, the server warm")
		if strings.Contains(out, "warning") {
			t.Errorf("warnings:\n%s", out)
		}
		tooltest.SameFile(t, filepath.Join(d, "machine1", "app"), filepath.Join(d, "machine2", "app"), "the program linked from the server")
		tooltest.SameFile(t, filepath.Join(d, "nocache", "prog"), filepath.Join(d, "machine2", "app"), "the program linked from the server, and one linked without a cache")
		stats := exec.Command(goffloadExe(t), "cache", "stats")
		stats.Env = append(os.Environ(), server, "GOFFLOAD_CACHE_DIR="+dir2)
		if out, err := stats.CombinedOutput(); err != nil || !strings.Contains(string(out), "lookups: 0 hits in the folder, 2 hits on a server, 0 misses") ||
			!strings.Contains(string(out), "server:  http://127.0.0.1:") {
			t.Errorf("cache stats of the second machine: %v\n%s", err, out)
		}

		// A server that is down: the link is the same, with a warning.
		l2, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		down := "GOFFLOAD_CACHE=http://" + l2.Addr().String()
		l2.Close()
		out = l.link(t, "machine3", named("app"), down, "GOFFLOAD_CACHE_DIR="+t.TempDir())
		expectReport(t, out, "miss", 2, "a server down")
		if !strings.Contains(out, "goffload: warning: cache server http://127.0.0.1:") || !strings.Contains(out, "connection refused") {
			t.Errorf("a server down: no warning:\n%s", out)
		}
		tooltest.SameFile(t, filepath.Join(d, "machine1", "app"), filepath.Join(d, "machine3", "app"), "the program linked with the server down")
	})

	// Each kind of device input in turn: a miss, then a hit.
	missThenHit := func(t *testing.T, what string, args []string, n int, env ...string) {
		t.Helper()
		out := l.link(t, "inputs", args, env...)
		expectReport(t, out, "miss", n, what)
		out = l.link(t, "inputs", args, env...)
		expectReport(t, out, "hit", n, what+", linked again")
	}
	t.Run("device-object", func(t *testing.T) {
		write("k2.hip", hipKernels(kernels, 1))
		compile("k.o", "k2.hip")
		missThenHit(t, "a device object changed", linkArgs(), 2)
	})
	t.Run("archive-member", func(t *testing.T) {
		write("b2.hip", "#include \"hip.h\"\n__device__ float scale(float x) { return x * 4.0f; }\n")
		compile("b.o", "b2.hip")
		os.Remove(filepath.Join(d, "libk.a"))
		runAr(t, d, "rcs", "libk.a", "b.o")
		missThenHit(t, "a member of the -l archive changed", linkArgs(), 2)
		write("b3.hip", "#include \"hip.h\"\n__device__ float scale(float x) { return x * 5.0f; }\n")
		compile("b.o", "b3.hip")
		os.Remove(filepath.Join(d, "libk.a"))
		runAr(t, d, "rcs", "libk.a", "b.o")
		missThenHit(t, "a member of the archive named by path changed", linkArgs("../libk.a"), 2)
	})
	t.Run("offload-arch", func(t *testing.T) {
		arches = []string{"--offload-arch=gfx90a:xnack+", "--offload-arch=gfx1100"}
		defer func() {
			arches = arches[:0:0]
			arches = append(arches, "--offload-arch=gfx90a", "--offload-arch=gfx1100")
		}()
		compile("k.o", "k2.hip")
		compile("b.o", "b3.hip")
		os.Remove(filepath.Join(d, "libk.a"))
		runAr(t, d, "rcs", "libk.a", "b.o")
		out := l.link(t, "inputs", linkArgs())
		if r := cacheReport(out); r["device-link amdgcn-amd-amdhsa:gfx90a:xnack+"] != "miss" || len(r) != 2 {
			t.Fatalf("the target gfx90a:xnack+: want a miss; got %v\n%s", r, out)
		}
	})
	// Back to the first inputs.
	compile("k.o", "k.hip")
	compile("b.o", "b.hip")
	os.Remove(filepath.Join(d, "libk.a"))
	runAr(t, d, "rcs", "libk.a", "b.o")
	t.Run("optimisation", func(t *testing.T) {
		args := linkArgs()
		for i, a := range args {
			if a == "-O3" {
				args[i] = "-O1"
			}
		}
		missThenHit(t, "-O1 instead of -O3", args, 2)
	})
	t.Run("device-linker", func(t *testing.T) {
		tools := filepath.Join(d, "tools")
		os.Mkdir(tools, 0o755)
		b, err := os.ReadFile(lld)
		if err != nil {
			t.Fatal(err)
		}
		copyLLD := func(extra string) {
			t.Helper()
			if err := os.WriteFile(filepath.Join(tools, "ld.lld"), append(b, extra...), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		copyLLD("x")
		env := "COMPILER_PATH=" + tools
		out := l.link(t, "inputs", linkArgs(), env)
		expectReport(t, out, "miss", 2, "ld.lld from COMPILER_PATH, with a byte more")
		copyLLD("y") // the same path, size and folder; other bytes
		missThenHit(t, "that ld.lld changed in place", linkArgs(), 2, env)
	})
	t.Run("damaged-entry", func(t *testing.T) {
		entries, _ := filepath.Glob(filepath.Join(l.cache, "link-v1", "*", "*", "0"))
		if len(entries) == 0 {
			t.Fatal("no entries in the cache")
		}
		for _, e := range entries {
			os.Truncate(e, 100)
		}
		out := l.link(t, "relink", linkArgs())
		if !strings.Contains(out, "does not match its manifest") {
			t.Fatalf("entries cut short: the link does not report them:\n%s", out)
		}
		expectReport(t, out, "miss", 2, "entries cut short")
		tooltest.SameFile(t, filepath.Join(d, "inputs", "prog"), filepath.Join(d, "relink", "prog"), "the program linked after entries were cut short")
		entries, _ = filepath.Glob(filepath.Join(l.cache, "link-v1", "*", "*", "0"))
		for _, e := range entries {
			b, _ := os.ReadFile(e)
			b[len(b)/2] ^= 1
			os.WriteFile(e, b, 0o644)
		}
		out = l.link(t, "relink", linkArgs())
		expectReport(t, out, "miss", 2, "entries altered")
		out = l.link(t, "relink", linkArgs())
		expectReport(t, out, "hit", 2, "entries stored again")
		tooltest.SameFile(t, filepath.Join(d, "inputs", "prog"), filepath.Join(d, "relink", "prog"), "the program linked from entries stored again")
	})
	t.Run("size-bound", func(t *testing.T) {
		var s struct {
			Entries int   `json:"entries"`
			Bytes   int64 `json:"bytes"`
		}
		goffload := func(env []string, args ...string) {
			t.Helper()
			cmd := exec.Command(goffloadExe(t), args...)
			cmd.Env = append(append(os.Environ(), "GOFFLOAD_CACHE="+l.cache), env...)
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("goffload %q: %v", args, err)
			}
			if args[1] == "stats" {
				if err := json.Unmarshal(b, &s); err != nil {
					t.Fatal(err)
				}
			}
		}
		// The entries of a link at -O2: the most recent.
		args := linkArgs()
		for i, a := range args {
			if a == "-O3" {
				args[i] = "-O2"
			}
		}
		out := l.link(t, "bound", args)
		expectReport(t, out, "miss", 2, "-O2")
		var bound int64
		for _, m := range cacheKey.FindAllStringSubmatch(out, -1) {
			files, _ := filepath.Glob(filepath.Join(l.cache, "link-v1", m[1][:2], m[1], "*"))
			for _, f := range files {
				st, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				bound += st.Size()
			}
		}
		goffload(nil, "cache", "stats", "--json")
		if s.Entries <= 2 {
			t.Fatalf("the cache holds %d entries: too few to trim", s.Entries)
		}
		goffload(nil, "cache", "trim", "--max", fmt.Sprint(bound))
		goffload(nil, "cache", "stats", "--json")
		if s.Entries != 2 || s.Bytes != bound {
			t.Fatalf("trimmed to the bytes of the last link's two entries (%d): %d entries, %d bytes", bound, s.Entries, s.Bytes)
		}
		out = l.link(t, "bound", args)
		expectReport(t, out, "hit", 2, "-O2 after trimming")
		// A link that stores entries trims to $GOFFLOAD_CACHE_MAX.
		out = l.link(t, "bound", linkArgs(), fmt.Sprint("GOFFLOAD_CACHE_MAX=", bound))
		expectReport(t, out, "miss", 2, "-O3 after trimming")
		goffload(nil, "cache", "stats", "--json")
		if s.Bytes > bound || s.Entries == 0 {
			t.Fatalf("GOFFLOAD_CACHE_MAX=%d: the cache holds %d entries, %d bytes", bound, s.Entries, s.Bytes)
		}
		goffload(nil, "cache", "clear")
		goffload(nil, "cache", "stats", "--json")
		if s.Entries != 0 {
			t.Fatalf("after goffload cache clear: %d entries", s.Entries)
		}
	})
}

var cacheKey = regexp.MustCompile(`(?m)^# goffload: cache (?:hit|miss) [a-z-]+ \S+ ([0-9a-f]{64})$`)

// TestCacheOpenMPRelink links an OpenMP program offloading to x86-64 (whose
// device link reads the host link's libraries: here libfoo.so, through -L
// and -l), relinks it after a change to the host code only (a hit, the
// program byte for byte the one a link without the cache makes, and it runs
// on libomptarget 22), then changes libfoo.so: a miss. Two links racing on
// one empty cache both succeed, with the same program.
func TestCacheOpenMPRelink(t *testing.T) {
	t.Parallel()
	l := newCacheLab(t)
	rt := tooltest.OpenMPRuntime(t, 22)
	d := l.dir
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("dev.c", "#pragma omp declare target\nint twice(int x) { return 2 * x; }\n#pragma omp end declare target\n")
	write("main.c", "#include <stdio.h>\nint twice(int);\n#pragma omp declare target to(twice)\nint main(void) { int x = 0;\n#pragma omp target map(tofrom: x)\n  x = twice(21);\n  printf(\"%d\\n\", x); return 0; }\n")
	write("foo.c", "int foo(void) { return 1; }\n")
	omp := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"}
	compiled(t, "clang", 22, d, append(omp, "-c", "dev.c", "-o", "dev.o"), "dev.o")
	compiled(t, "clang", 22, d, append(omp, "-c", "main.c", "-o", "main.o"), "main.o")
	runCmd(t, d, l.clang, "-shared", "-fPIC", "foo.c", "-o", "libfoo.so")
	args := append(append([]string{}, omp...), "../dev.o", "../main.o", "-L..", "-lfoo", "-L"+rt, "-Wl,-rpath,"+rt+":"+d, tooltest.AllowShlibUndefined, "-o", "prog")
	out := l.link(t, "cold", args)
	expectReport(t, out, "miss", 1, "the first link")

	write("main.c", "#include <stdio.h>\nint twice(int);\n#pragma omp declare target to(twice)\nint main(void) { int x = 0;\n#pragma omp target map(tofrom: x)\n  x = twice(21);\n  printf(\"twice 21 is %d\\n\", x); return 0; }\n")
	compiled(t, "clang", 22, d, append(omp, "-c", "main.c", "-o", "main.o"), "main.o")
	out = l.link(t, "relink", args)
	// The target region of main.c is device code too: changing the host
	// code of main.c changes main.o's device image only if the region
	// changed. Here it did not.
	expectReport(t, out, "hit", 1, "the link after a change to host code")
	l.link(t, "nocache", args, "GOFFLOAD_CACHE=off")
	tooltest.SameFile(t, filepath.Join(d, "nocache", "prog"), filepath.Join(d, "relink", "prog"), "the program linked from the cache")
	cmd := exec.Command(filepath.Join(d, "relink", "prog"))
	cmd.Env = append(os.Environ(), "OMP_TARGET_OFFLOAD=MANDATORY")
	if b, err := cmd.CombinedOutput(); err != nil || string(b) != "twice 21 is 42\n" {
		t.Fatalf("the program linked from the cache: %v\n%s", err, b)
	}

	write("foo.c", "int foo(void) { return 2; }\nint bar(void) { return 3; }\n")
	runCmd(t, d, l.clang, "-shared", "-fPIC", "foo.c", "-o", "libfoo.so")
	out = l.link(t, "relink", args)
	expectReport(t, out, "miss", 1, "libfoo.so, which the device link reads, changed")

	// Two links at once on an empty cache.
	l.cache = filepath.Join(d, "cache2")
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = l.link(t, fmt.Sprint("race", i), args)
		}()
	}
	wg.Wait()
	for i := range outs {
		tooltest.SameFile(t, filepath.Join(d, "relink", "prog"), filepath.Join(d, fmt.Sprint("race", i), "prog"), "a program of two links at once")
	}
	out = l.link(t, "race0", args)
	expectReport(t, out, "hit", 1, "after two links at once")
}
