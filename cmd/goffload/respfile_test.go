package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/goffload/goffload/internal/respfile"
	"github.com/goffload/goffload/internal/tooltest"
)

// TestResponseFilesEveryCommand: every command reads @file arguments, the
// command's name too, and a bad one is a one-line error naming the file.
func TestResponseFilesEveryCommand(t *testing.T) {
	dir := t.TempDir()
	rsp := filepath.Join(dir, "cmd.rsp")
	os.WriteFile(rsp, []byte("version"), 0o644)
	stdout, stderr, code := cli(t, "@"+rsp)
	if code != 0 || !strings.HasPrefix(stdout, "goffload ") {
		t.Errorf("goffload @%s (version): exit %d, %q %q", rsp, code, stdout, stderr)
	}
	list := filepath.Join(dir, "list.rsp")
	os.WriteFile(list, []byte(`"`+testdata("host-objects", "openmp-x86-llvm19.o")+`"`), 0o644)
	stdout, stderr, code = cli(t, "list", "@"+list)
	if code != 0 || !strings.Contains(stdout, "openmp-x86-llvm19.o") {
		t.Errorf("goffload list @%s: exit %d, %q %q", list, code, stdout, stderr)
	}
	self := filepath.Join(dir, "self.rsp")
	os.WriteFile(self, []byte("x @"+self), 0o644)
	_, stderr, code = cli(t, "list", "@"+self)
	if code != 1 || !strings.Contains(stderr, self) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("goffload list @%s: exit %d, %q; want one line naming it", self, code, stderr)
	}
}

// hostileResponseFiles writes response files built to hurt into dir.
func hostileResponseFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		files[name] = p
		return p
	}
	self := filepath.Join(dir, "self.rsp")
	write("self.rsp", "-o out @"+self)
	write("mutual.rsp", "@"+filepath.Join(dir, "mutual2"))
	write("mutual2", "@"+filepath.Join(dir, "mutual.rsp"))
	delete(files, "mutual2")
	// Nine levels naming the next one ten times: 10^9 arguments.
	for i := 9; i >= 1; i-- {
		write(fmt.Sprintf("laugh%d", i), strings.Repeat(fmt.Sprintf("@%s%d ", filepath.Join(dir, "laugh"), i+1), 10))
		delete(files, fmt.Sprintf("laugh%d", i))
	}
	write("laugh10", strings.Repeat("lol ", 10))
	delete(files, "laugh10")
	write("laughs.rsp", "@"+filepath.Join(dir, "laugh1"))
	// 10^4 names of a file that names an empty file 10^4 times.
	write("empty", "")
	write("names", strings.Repeat("@"+filepath.Join(dir, "empty")+" ", 10000))
	write("names.rsp", strings.Repeat("@"+filepath.Join(dir, "names")+" ", 10000))
	delete(files, "empty")
	delete(files, "names")
	// 100 files, each naming the next.
	for i := 1; i < 100; i++ {
		write(fmt.Sprintf("deep%d", i), fmt.Sprintf("x @%s%d", filepath.Join(dir, "deep"), i+1))
		delete(files, fmt.Sprintf("deep%d", i))
	}
	write("deep100", "end")
	delete(files, "deep100")
	write("deep.rsp", "@"+filepath.Join(dir, "deep1"))
	write("utf16-odd.rsp", "\xFF\xFEa")
	sparse := write("sparse.rsp", "")
	if err := os.Truncate(sparse, 2<<30); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.rsp")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	files["fifo"] = fifo
	files["device"] = os.DevNull
	files["folder"] = dir
	return files
}

// TestHostileResponseFiles: as processes, commands given each hostile
// response file end with exit 1 and one line naming it, in bounded time
// and memory (the bounds of TestHostileInputs), changing nothing.
func TestHostileResponseFiles(t *testing.T) {
	exe := goffloadExe(t)
	in := t.TempDir()
	files := hostileResponseFiles(t, in)
	before := snapshot(t, in)
	names := slices.Sorted(maps.Keys(files))
	cmds := []struct {
		name string
		args []string
	}{
		{"list", []string{"list", "@IN"}},
		{"link", []string{"link", "--dry-run", "-o", "OUT", "@IN"}},
		{"linker-wrapper", []string{"linker-wrapper", "--dry-run", "--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld", "-o", "OUT", "a.o", "@IN"}},
		{"command", []string{"@IN", "list"}},
	}
	for ci, cmd := range cmds {
		for fi, name := range names {
			path := files[name]
			t.Run(cmd.name+"/"+name, func(t *testing.T) {
				tooltest.Sample(t, fi, ci, len(names), len(cmds))
				work := t.TempDir()
				os.Mkdir(filepath.Join(work, "tmp"), 0o755)
				args := make([]string, len(cmd.args))
				for i, a := range cmd.args {
					args[i] = strings.ReplaceAll(strings.ReplaceAll(a, "IN", path), "OUT", filepath.Join(work, "out"))
				}
				res := runGoffload(t, exe, work, args...)
				checkRun(t, res, path)
				if res.code != 1 {
					t.Errorf("%q: exit %d, want 1", args, res.code)
				}
			})
		}
	}
	if ch := changes(before, snapshot(t, in)); len(ch) > 0 {
		t.Errorf("inputs changed: %s", strings.Join(ch, ", "))
	}
}

// manyFolders makes n folders under dir with long names, and returns them
// as -LDIR flags: over 64 KiB of flags for n = 1500.
func manyFolders(t *testing.T, dir string, n int) []string {
	t.Helper()
	var flags []string
	for i := 0; i < n; i++ {
		d := filepath.Join(dir, "library folders", fmt.Sprintf("folder-%04d-of-a-long-name", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		flags = append(flags, "-L"+d)
	}
	return flags
}

// TestWrapperResponseFileFromClang: a link through clang-19 -B DIR, whose
// wrapper command line is over 64 KiB (1,500 -L folders), makes clang run
// DIR/clang-linker-wrapper (goffload) with @/tmp/response-XXXX.txt (-v
// says so and prints the file); goffload links, and the program runs its
// kernel on the OpenMP device.
func TestWrapperResponseFileFromClang(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("links and runs a program")
	}
	clang := tooltest.Tool(t, "clang", 19)
	rt := tooltest.OpenMPRuntime(t, 19)
	wrapperDir := t.TempDir()
	wrapper := filepath.Join(wrapperDir, "clang-linker-wrapper")
	exe, err := filepath.Abs(goffloadExe(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, wrapper); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	obj := copyFile(t, filepath.Join("sample", "vadd-llvm19.o"), filepath.Join(dir, "vadd.o"))
	args := append([]string{"-v", "-B", wrapperDir, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", obj, "-o", "prog",
		"-L" + rt, "-Wl,-rpath," + rt, tooltest.AllowShlibUndefined}, manyFolders(t, dir, 1500)...)
	cmd := exec.Command(clang, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("clang-19 -B DIR: %v\n%s", err, tooltest.Clip(stderr.Bytes()))
	}
	// clang -v prints ` "DIR/clang-linker-wrapper" @/tmp/response-XXXX.txt`,
	// then the file.
	out := stderr.String()
	i := strings.Index(out, "\n \""+wrapper+"\" @")
	if i < 0 || !strings.Contains(out[i:], "\n Arguments passed via response file:\n") {
		t.Fatalf("clang-19 did not run %s with a response file:\n%s", wrapper, tooltest.Clip(stderr.Bytes()))
	}
	if !strings.Contains(out[i:], `"-L`+filepath.Join(dir, "library folders", "folder-1499-of-a-long-name")+`"`) {
		t.Errorf("the response file does not hold the -L folders:\n%s", tooltest.Clip([]byte(out[i:])))
	}
	got := runVadd(t, filepath.Join(dir, "prog"), rt)
	t.Logf("the program printed %q", got)
}

// TestLinkResponseFile: goffload link @args.rsp, the file written as clang
// writes one, links the program (whose objects are in a folder with a
// space and quotes in its name), and it runs.
func TestLinkResponseFile(t *testing.T) {
	if testing.Short() {
		t.Skip("links and runs a program")
	}
	rt := tooltest.OpenMPRuntime(t, 19)
	clang := tooltest.Tool(t, "clang", 19)
	dir := t.TempDir()
	objDir := filepath.Join(dir, `objects "of" the 'program'`)
	if err := os.Mkdir(objDir, 0o755); err != nil {
		t.Fatal(err)
	}
	obj := copyFile(t, filepath.Join("sample", "vadd-llvm19.o"), filepath.Join(objDir, "vadd.o"))
	prog := filepath.Join(dir, "prog")
	// The folders relative to dir, where the link runs: cc hands collect2
	// every option in one environment variable (COLLECT_GCC_OPTIONS),
	// which Linux bounds at 128 KiB, so that 1,500 absolute paths under a
	// long temporary folder fail in cc whoever runs it.
	folders := manyFolders(t, dir, 1500)
	for i, f := range folders {
		folders[i] = "-L" + strings.TrimPrefix(strings.TrimPrefix(f, "-L"), dir+string(filepath.Separator))
	}
	args := append([]string{"--clang", clang, "--libdir", rt, obj, "-o", prog, "-Wl,-rpath," + rt, tooltest.AllowShlibUndefined}, folders...)
	if respfile.Fits("goffload", args) {
		t.Fatal("the link's arguments are meant not to fit on a command line")
	}
	var rsp bytes.Buffer
	if err := respfile.Write(&rsp, args); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "args.rsp"), rsp.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goffloadExe(t), "link", "@args.rsp")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("goffload link @args.rsp: %v\n%s", err, tooltest.Clip(out))
	}
	runVadd(t, prog, rt)
}

// runVadd runs the vadd sample linked as exe, with offloading mandatory,
// and checks what it prints.
func runVadd(t *testing.T, exe, rt string) string {
	t.Helper()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+rt, "OMP_TARGET_OFFLOAD=MANDATORY")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	const want = "vadd on the OpenMP device: sum = 1048576 (want 1048576)\n"
	if err != nil || string(out) != want {
		t.Fatalf("%s: %v, printed %q, want %q\n%s", exe, err, out, want, tooltest.Clip(stderr.Bytes()))
	}
	return string(out)
}

func copyFile(t *testing.T, from, to string) string {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return to
}
