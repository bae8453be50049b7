package link

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestLinkExeDryRunAsWrapper: for the link of a HIP program (-fgpu-rdc,
// one object and a static library of COFF objects, dev.lib) that clang-22
// asks of its wrapper for an MSVC host (lld-link's command line: -out:,
// -libpath:, NAME.lib, -nologo, /Brepro), a dry run prints the commands
// of clang-linker-wrapper-22's dry run but for the temporary files' names:
// the device link takes the library's member, and the host link gets the
// registration object after -out:. -opt:ref, which the wrapper's table
// reads as -o pt:ref, gets it once more and names the files, as LLVM's.
func TestLinkExeDryRunAsWrapper(t *testing.T) {
	clang := tooltest.Tool(t, "clang", 22)
	wrapper := tooltest.Tool(t, "clang-linker-wrapper", 22)
	lib := tooltest.Tool(t, "llvm-lib", 22)
	work := t.TempDir()
	run := func(prog string, args ...string) string {
		t.Helper()
		cmd := exec.Command(prog, args...)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", prog, args, err, out)
		}
		return string(out)
	}
	defs := "#define __device__ __attribute__((device))\n#define __global__ __attribute__((global))\n"
	os.WriteFile(filepath.Join(work, "k.hip"), []byte(defs+"__device__ int d(int x);\n__device__ int v;\n__device__ int use(){return d(v);}\n"), 0o644)
	os.WriteFile(filepath.Join(work, "d.hip"), []byte(defs+"__device__ int d(int x){return x+1;}\n"), 0o644)
	hip := []string{"--target=x86_64-pc-windows-msvc", "-x", "hip", "--offload-new-driver", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-fgpu-rdc"}
	run(clang, append(hip, "-c", "k.hip", "d.hip")...) // k.o, d.o
	run(lib, "/out:dev.lib", "d.o")
	os.WriteFile(filepath.Join(work, "amdhip64.lib"), []byte("!<arch>\n"), 0o644)
	for _, extra := range [][]string{nil, {"-Wl,-opt:ref"}} {
		name := "plain"
		if extra != nil {
			name = "opt-ref"
		}
		t.Run(name, func(t *testing.T) {
			link := append([]string{"--target=x86_64-pc-windows-msvc", "--hip-link", "--offload-new-driver", "--offload-arch=gfx90a", "-nogpulib",
				"-fgpu-rdc", "-fuse-ld=lld", "k.o", "dev.lib", "-L.", "-o", "prog.exe", "-Wl,/Brepro"}, extra...)
			argv := wrapperArgv(t, run(clang, append(link, "-###")...))
			theirs := run(wrapper, append([]string{"--dry-run"}, argv...)...)
			lk, ours := dryRunIn(t, work, argv)
			if got, want := stepsOf(ours), []string{"clang", "bundle", "lld-link"}; !cmp.Equal(got, want) {
				t.Errorf("steps %q, want %q\n%s", got, want, ours)
			}
			if a, b := masked(ours), masked(theirs); a != b {
				t.Errorf("commands differ beyond temporary names:\n%s", cmp.Diff(b, a))
			}
			if lk.Output != "prog.exe" {
				t.Errorf("output %q, want prog.exe (lld-link's -out:)", lk.Output)
			}
		})
	}
}

// TestLinkExeArgs: the wrapper's reading of link.exe's options and
// lld-link's of its own command line.
func TestLinkExeArgs(t *testing.T) {
	for _, c := range []struct {
		arg, name, value string
		ok               bool
	}{
		{"-out:a.exe", "out:", "a.exe", true}, {"/out:a.exe", "out:", "a.exe", true}, {"-?libpath:x", "libpath:", "x", true},
		{"/wholearchive:foo.lib", "wholearchive", ":foo.lib", true}, {"-OUT:a.exe", "", "", false}, {"-opt:ref", "", "", false},
		{"--out:a", "", "", false}, {"-lfoo", "", "", false},
	} {
		n, v, ok := wrapperExeOption(c.arg)
		if n != c.name || v != c.value || ok != c.ok {
			t.Errorf("wrapperExeOption(%q) = %q, %q, %v; want %q, %q, %v", c.arg, n, v, ok, c.name, c.value, c.ok)
		}
	}
	args := []string{"-out:p.exe", "-libpath:d", "-opt:ref", "k.o", "-LTCG"}
	if got := wrapperOutput(args, true, true); got != "pt:ref" {
		t.Errorf("wrapperOutput %q, want pt:ref (the last -o to the table)", got)
	}
	if got := wrapperOutput(args[:2], true, true); got != "p.exe" {
		t.Errorf("wrapperOutput %q, want p.exe", got)
	}
	if got := wrapperOutput([]string{"k.o"}, true, true); got != "a.exe" {
		t.Errorf("wrapperOutput %q, want a.exe", got)
	}
	want := []string{"-out:p.exe", "W.o", "-libpath:d", "-o", "pt:ref", "W.o", "k.o", "-L", "TCG"}
	if got := wrapperLinkExeArgs(args, []string{"W.o"}); !cmp.Equal(got, want) {
		t.Errorf("wrapperLinkExeArgs %q, want %q", got, want)
	}

	dir := t.TempDir()
	for _, f := range []string{"k.obj", "sub/libx.lib", "sub/m.o"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
	}
	sub := filepath.Join(dir, "sub")
	cwd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(cwd)
	h := scanLinkExe([]string{"k", "m.o", "-DefaultLib:libx", "-defaultlib:nowhere", "/Brepro", "-libpath:" + sub, "missing.o", "-dll"}, os.Stat)
	var paths []string
	for _, in := range h.inputs {
		paths = append(paths, in.path)
	}
	if want := []string{"k.obj", filepath.Join(sub, "m.o"), filepath.Join(sub, "libx.lib")}; !cmp.Equal(paths, want) {
		t.Errorf("lld-link's inputs %q, want %q", paths, want)
	}
	if h.output != "k.dll" || !cmp.Equal(h.dirs, []string{sub}) {
		t.Errorf("output %q, folders %q; want k.dll, %q", h.output, h.dirs, sub)
	}
	if got := hostOutput(&Options{HostTriple: "x86_64-pc-windows-msvc"}, []string{"-out:a.exe", "k.o", "/OUT:b.exe"}, "T"); !cmp.Equal(got, []string{"-out:a.exe", "k.o", "/OUT:T"}) {
		t.Errorf("hostOutput %q", got)
	}
}
