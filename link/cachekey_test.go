package link

import (
	"context"
	"debug/elf"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/google/go-cmp/cmp"
)

// fileWriter returns a function that writes text to the file name under
// dir (its folders made), executable, and returns its path.
func fileWriter(t *testing.T, dir string) func(name, text string) string {
	return func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

// TestStepKey makes the keys of a linker's step (a program that is not
// clang: its own arguments name what it reads) and changes each thing it
// depends on in turn: a new key each time; the temporary folder and the
// outputs' old contents change nothing.
func TestStepKey(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	tool := write("bin/ld.fake", "#!/bin/sh\n")
	write("tmp1/in.o", "object")
	write("lib/libfoo.a", "!<arch>\nfoo")
	script := write("lib/libbar.so", "/* GNU ld script */\nGROUP ( "+filepath.Join(dir, "lib", "libbar.so.1")+" -lfoo AS_NEEDED ( libbaz.so.2 ) )\n")
	write("lib/libbar.so.1", "\x7fELFbar")
	write("lib/libbaz.so.2", "\x7fELFbaz")
	crt := write("crt/crtbegin.o", "crt")
	step := func(tmp string) *Step {
		return &Step{Kind: StepDeviceLink, Target: "x86_64-pc-linux-gnu", Tool: tool,
			Args:    []string{"-shared", "-o", filepath.Join(dir, tmp, "out.img"), crt, filepath.Join(dir, tmp, "in.o"), "-L", filepath.Join(dir, "lib"), "-lbar"},
			Inputs:  []string{filepath.Join(dir, tmp, "in.o")},
			Outputs: []string{filepath.Join(dir, tmp, "out.img")}}
	}
	key := func(tmp string) string {
		t.Helper()
		l := &Link{opt: &Options{}, TempDir: filepath.Join(dir, tmp)}
		k, err := l.StepKey(context.Background(), step(tmp))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	seen := map[string]string{}
	distinct := func(what, k string) {
		t.Helper()
		if prev, ok := seen[k]; ok {
			t.Errorf("%s: the key of %s", what, prev)
		}
		seen[k] = what
	}
	distinct("first", key("tmp1"))
	write("tmp2/in.o", "object")
	write("tmp2/out.img", "an old output")
	if seen[key("tmp2")] != "first" {
		t.Errorf("another temporary folder, an old output: another key")
	}
	change := []struct{ what, file, text string }{
		{"the input", "tmp1/in.o", "object 2"},
		{"a file the arguments name", "crt/crtbegin.o", "crt 2"},
		{"an archive -l finds through a script", "lib/libfoo.a", "!<arch>\nfoo 2"},
		{"a file a script names by path", "lib/libbar.so.1", "\x7fELFbar 2"},
		{"a file a script names for the -L folders", "lib/libbaz.so.2", "\x7fELFbaz 2"},
		{"the program", "bin/ld.fake", "#!/bin/sh\n# 2\n"},
	}
	for _, c := range change {
		write(c.file, c.text)
		distinct(c.what, key("tmp1"))
	}
	t.Setenv("COMPILER_PATH", dir)
	distinct("$COMPILER_PATH", key("tmp1"))
	// A library found in an earlier -L folder: another file, another key.
	write("tmp1/libbar.so", "/* GNU ld script */\nINPUT ( -lfoo )\n")
	s := step("tmp1")
	s.Args = slices.Insert(s.Args, 4, "-L"+filepath.Join(dir, "tmp1"))
	l := &Link{opt: &Options{}, TempDir: filepath.Join(dir, "tmp1")}
	k, err := l.StepKey(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	distinct("an earlier -L folder", k)

	// What the key cannot pin down: no key.
	for what, text := range map[string]string{
		"INCLUDE":      "INCLUDE other.ld\n",
		"SEARCH_DIR":   "SEARCH_DIR(/opt/lib)\nINPUT(-lfoo)\n",
		"a missing -l": "GROUP ( -lnothere )\n",
	} {
		os.WriteFile(script, []byte(text), 0o644)
		if _, err := (&Link{opt: &Options{}}).StepKey(context.Background(), step("tmp1")); !errors.Is(err, errNoKey) {
			t.Errorf("a script with %s: %v, want no key", what, err)
		}
	}
}

func TestParseDashHashes(t *testing.T) {
	out := "clang version 22\nTarget: x\n \"/usr/bin/ld.lld\" \"-o\" \"a b\" \"q\\\"uote\" \"back\\\\slash\" \"\\$x\"\n"
	cmds, err := parseDashHashes([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/ld.lld", "-o", "a b", `q"uote`, `back\slash`, "$x"}
	if len(cmds) != 1 || !slices.Equal(cmds[0], want) {
		t.Fatalf("got %q, want %q", cmds, want)
	}
	if _, err := parseDashHashes([]byte(" \"unterminated\n")); err == nil {
		t.Fatal("an unterminated argument was read")
	}
}

// TestDynStringsAsDebugELF: the DT_NEEDED, DT_RPATH and DT_RUNPATH strings
// that the cache key's library search reads string by string are those
// debug/elf reads from the whole string table, for the programs and
// libraries of this machine's LLVM releases and its C library.
func TestDynStringsAsDebugELF(t *testing.T) {
	var paths []string
	for _, pat := range []string{"/usr/lib/llvm-*/bin/clang", "/usr/lib/llvm-*/lib/libomptarget.so*", "/lib/x86_64-linux-gnu/libLLVM*.so*", "/bin/sh", "/usr/bin/ld"} {
		m, _ := filepath.Glob(pat)
		paths = append(paths, m...)
	}
	checked := 0
	for _, p := range paths {
		f, err := elf.Open(p)
		if err != nil {
			continue
		}
		want := map[elf.DynTag][]string{}
		for _, tag := range []elf.DynTag{elf.DT_NEEDED, elf.DT_RPATH, elf.DT_RUNPATH} {
			if s, _ := f.DynString(tag); len(s) > 0 {
				want[tag] = s
			}
		}
		got := dynStrings(f)
		f.Close()
		if len(want) == 0 {
			continue
		}
		checked++
		if !cmp.Equal(got, want) {
			t.Errorf("%s: dynStrings %q, debug/elf %q", p, got, want)
		}
	}
	if checked == 0 {
		tooltest.Missing(t, "no dynamically linked program or library found")
	}
	t.Logf("%d files", checked)
}

// TestStepKeyOtherProgram: the device link of the same code for another
// program (its output, and clang's -dumpdir OUT., named after the program)
// and a verbose one (-v, which link.Options.Verbose gives the device links
// of 16 to 21) have the key of the first; another -dumpdir, another -o in
// the arguments, and a flag that changes the output have another.
func TestStepKeyOtherProgram(t *testing.T) {
	dir := t.TempDir()
	clang := filepath.Join(dir, "bin", "clang-fake")
	os.MkdirAll(filepath.Dir(clang), 0o755)
	// A clang whose -### prints one command: /bin/true.
	if err := os.WriteFile(clang, []byte("#!/bin/sh\necho ' \"/bin/true\"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	os.MkdirAll(tmp, 0o755)
	in := filepath.Join(tmp, "k-amdgcn-amd-amdhsa-gfx90a.o")
	os.WriteFile(in, []byte("bitcode"), 0o644)
	key := func(prog string, more ...string) string {
		t.Helper()
		out := filepath.Join(tmp, prog+".amdgcn.gfx90a.img")
		s := &Step{Kind: StepDeviceLink, Target: "amdgcn-amd-amdhsa:gfx90a", Tool: clang,
			Args:   append([]string{"-o", out, "-dumpdir", prog + ".amdgcn.gfx90a.img.", "--target=amdgcn-amd-amdhsa", "-mcpu=gfx90a", in}, more...),
			Inputs: []string{in}, Outputs: []string{out}}
		k, err := (&Link{opt: &Options{}, TempDir: tmp}).StepKey(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	first := key("app")
	for what, k := range map[string]string{"another program": key("test7"), "-v": key("app", "-v"), "another program, -v": key("test7", "-v")} {
		if k != first {
			t.Errorf("%s: another key", what)
		}
	}
	for what, k := range map[string]string{"-O3": key("app", "-O3"), "another -dumpdir": key("app", "-dumpdir", "x."), "-o in the arguments": key("app", "-Wl,-Map=app.map")} {
		if k == first {
			t.Errorf("%s: the same key", what)
		}
	}
}

// TestStepKeyLinkerReads: what a linker reads that the key used to miss,
// each changed in turn, gives a new key: a linker script joined to -T
// (-Xoffload-linker -Wl,-Ts.ld), a library under the sysroot (-L=DIR), a
// file a script names relatively, which lld takes from the script's own
// folder first. A linker that writes a file besides its output (a map, a
// dependency file) is not cached.
func TestStepKeyLinkerReads(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	lld := write("bin/ld.lld", "#!/bin/sh\n")
	in := write("tmp/in.o", "object")
	script := write("scripts/s.ld", "SECTIONS { .text : { *(.text) } }\nINPUT(extra.o)\n")
	write("scripts/extra.o", "the script's own")
	write("extra.o", "the current folder's")
	write("root/opt/lib/libdev.a", "!<arch>\nv1")
	key := func(args ...string) (string, error) {
		t.Helper()
		out := filepath.Join(dir, "tmp", "out.img")
		s := &Step{Kind: StepDeviceLink, Target: "x86_64-pc-linux-gnu", Tool: lld,
			Args: append([]string{"-shared", "-o", out, in}, args...), Inputs: []string{in}, Outputs: []string{out}}
		return (&Link{opt: &Options{}, TempDir: filepath.Join(dir, "tmp")}).StepKey(context.Background(), s)
	}
	t.Chdir(dir)
	for _, c := range []struct {
		what       string
		args       []string
		file, text string
	}{
		{"a script joined to -T", []string{"-T" + script}, "scripts/s.ld", "SECTIONS { .text : { *(.text*) } }\nINPUT(extra.o)\n"},
		{"a file a script names, in the script's folder", []string{"-T" + script}, "scripts/extra.o", "the script's own, changed"},
		{"a library under the sysroot", []string{"--sysroot=" + filepath.Join(dir, "root"), "-L=/opt/lib", "-ldev"}, "root/opt/lib/libdev.a", "!<arch>\nv2"},
	} {
		before, err := key(c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		write(c.file, c.text)
		after, err := key(c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if before == after {
			t.Errorf("%s changed: the same key", c.what)
		}
	}
	// -L=DIR without a sysroot is DIR.
	if _, err := key("-L="+filepath.Join(dir, "root/opt/lib"), "-ldev"); err != nil {
		t.Errorf("-L=DIR without a sysroot: %v", err)
	}
	for _, side := range [][]string{{"-Map=" + filepath.Join(dir, "out.map")}, {"-Map", "out.map"}, {"--dependency-file=out.d"}, {"--why-extract=w.txt"}} {
		if _, err := key(side...); !errors.Is(err, errNoKey) {
			t.Errorf("%q: %v, want no key (the step not cached)", side, err)
		}
	}
}
