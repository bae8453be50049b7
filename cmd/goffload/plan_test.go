package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/link"
)

// TestPlanStepsRunAlone: every step of a link plan (goffload link
// --plan=json, goffload linker-wrapper --plan=json) is a hermetic action.
// Each step runs in a folder of its own that holds nothing but copies of
// the files the step declares as inputs (those of its inputs given by
// absolute paths, system libraries and the tools' files, are read where
// they are), from the command line the plan gives it (goffload's own steps
// too: `goffload step ...`), the folders of its outputs made for it as a
// build system makes them; it must make its declared outputs there and no
// other file, and the last step's output must be, byte for byte, the
// program `goffload link` itself makes. The plans: OpenMP (LLVM 19 and 22,
// a static library), HIP -fgpu-rdc through the wrapper's arguments (19, with
// its device LTO steps, and 22, two arches), LLVM 14's old driver, and a -r
// link.
func TestPlanStepsRunAlone(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("compiles and links with several releases")
	}
	exe, err := filepath.Abs(goffloadExe(t))
	if err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join("testdata", "wrapper")
	for _, c := range []struct {
		name    string
		major   int
		sources []string // compiled with -fopenmp -fopenmp-targets=x86_64-pc-linux-gnu
		ar      []string // LIB.a MEMBER...
		link    []string // goffload link's arguments, but --llvm and --libdir
		out     string
	}{
		{"openmp", 19, []string{"static-lib/main.c", "static-lib/vadd.c", "static-lib/vdot.c"}, []string{"libvec.a", "vadd.o", "vdot.o"}, []string{"-o", "prog", "main.o", "-L.", "-lvec"}, "prog"},
		{"openmp", 22, []string{"static-lib/main.c", "static-lib/vadd.c", "static-lib/vdot.c"}, []string{"libvec.a", "vadd.o", "vdot.o"}, []string{"-o", "prog", "main.o", "-L.", "-lvec"}, "prog"},
		{"relocatable", 19, []string{"relocatable/left.c", "relocatable/right.c"}, nil, []string{"-r", "-o", "part.o", "left.o", "right.o"}, "part.o"},
		{"old-driver", 14, []string{"../prog.c"}, nil, []string{"-o", "prog", "prog.o"}, "prog"},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.name, c.major), func(t *testing.T) {
			if c.name == "openmp" && c.major == 22 {
				// OpenMP and HIP × 19 and 22: by default each kind
				// with one release (HIP with 22), each release with one.
				tooltest.Sample(t, 0, 1, 2, 2)
			}
			rt := tooltest.OpenMPRuntime(t, c.major)
			dir := t.TempDir()
			for _, src := range c.sources {
				args := []string{"-O1", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", filepath.Join(wrapper, src), "-o", filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))+".o")}
				if c.major >= 18 {
					args = append(args, "-fopenmp-version=52", "-DNEW_OPENMP")
				}
				compiled(t, "clang", c.major, "", args, args[slices.Index(args, "-o")+1])
			}
			if len(c.ar) > 0 {
				runCmd(t, dir, "ar", tooltest.ArArgs(append([]string{"rcs"}, c.ar...)...)...)
			}
			args := append([]string{"--llvm", fmt.Sprint(c.major), "--libdir", rt, tooltest.AllowShlibUndefined, "--temp-dir", "tmp"}, c.link...)
			planSteps(t, exe, dir, "link", args, c.out)
		})
	}
	for r, major := range []int{19, 22} {
		t.Run(fmt.Sprintf("hip-%d", major), func(t *testing.T) {
			tooltest.Sample(t, 1, r, 2, 2)
			e := newWrapperHIP(t, major)
			dir := t.TempDir()
			arch := "gfx90a"
			if major == 22 {
				arch = "gfx1100,gfx90a"
			}
			e.storedCompile(t, arch, "a.hip", filepath.Join(dir, "a.o"))
			e.storedCompile(t, arch, "b.hip", filepath.Join(dir, "b.o"))
			runCmd(t, dir, e.ar, "rcs", "libk.a", "b.o")
			runCmd(t, dir, e.clang, "-c", filepath.Join(e.src, "main_rdc.c"), "-o", "main.o")
			argv := e.wrapperArgs(t, dir, e.hipLink(arch, true, false, "a.o", "main.o", "-L.", "-lk")...)
			if argv == nil {
				t.Fatal("clang runs no clang-linker-wrapper")
			}
			planSteps(t, exe, dir, "linker-wrapper", append([]string{"--temp-dir", "tmp"}, argv...), "prog")
		})
	}
}

// planSteps plans the link (goffload COMMAND ARGS --plan=json) of dir, runs
// its steps one by one each in a folder of its own, and checks the output
// against the program that the same command makes when it runs.
func planSteps(t *testing.T, exe, dir, command string, args []string, out string) {
	t.Helper()
	ref := filepath.Join(dir, "ref")
	copyTree(t, dir, ref)
	runCmd(t, ref, exe, append([]string{command}, args...)...)
	want, err := os.ReadFile(filepath.Join(ref, out))
	if err != nil {
		t.Fatal(err)
	}

	work := filepath.Join(dir, "work")
	copyTree(t, dir, work)
	plan := runCmdOut(t, work, exe, append([]string{command, "--plan=json"}, args...)...)
	var l struct {
		Steps  []link.Step
		Output string
	}
	if err := json.Unmarshal([]byte(plan), &l); err != nil {
		t.Fatalf("the plan: %v\n%s", err, plan)
	}
	if len(l.Steps) < 3 {
		t.Fatalf("a plan of %d steps:\n%s", len(l.Steps), plan)
	}
	var own int
	for i, s := range l.Steps {
		if s.Goffload {
			own++
			if s.Tool != exe || len(s.Args) < 2 || s.Args[0] != "step" {
				t.Fatalf("step %d (%s) does not run goffload step: %s %q", i, s.Kind, s.Tool, s.Args)
			}
		}
		box := filepath.Join(dir, fmt.Sprintf("step%02d", i))
		if err := os.Mkdir(box, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, in := range s.Inputs {
			if filepath.IsAbs(in) {
				if _, err := os.Stat(in); err != nil {
					t.Fatalf("step %d (%s): input %s: %v", i, s.Kind, in, err)
				}
				continue
			}
			copyInto(t, filepath.Join(work, in), filepath.Join(box, in))
		}
		// The folders of its outputs, as a build system makes them.
		for _, o := range s.Outputs {
			if err := os.MkdirAll(filepath.Join(box, filepath.Dir(o)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		before := treeFiles(t, box)
		cmd := exec.Command(s.Tool, s.Args...)
		cmd.Dir = box
		cmd.Env = append(os.Environ(), s.Env...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("step %d (%s) alone, with only its inputs: %s %q: %v\n%s", i, s.Kind, s.Tool, s.Args, err, tooltest.Clip(msg))
		}
		var made []string
		for _, f := range treeFiles(t, box) {
			if !slices.Contains(before, f) {
				made = append(made, f)
			}
		}
		outs := slices.Clone(s.Outputs)
		slices.Sort(outs)
		if slices.Sort(made); !slices.Equal(made, outs) {
			t.Errorf("step %d (%s) made %q, declares %q", i, s.Kind, made, outs)
		}
		for _, o := range s.Outputs {
			copyInto(t, filepath.Join(box, o), filepath.Join(work, o))
		}
	}
	if own < 2 {
		t.Errorf("%d of goffload's own steps, want extract and wrap at least", own)
	}
	got, err := os.ReadFile(filepath.Join(work, l.Output))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s made step by step: %d bytes, not the %d bytes of goffload %s (first difference at byte %d)", out, len(got), len(want), command, tooltest.FirstDiff(got, want))
	}
}

// copyTree copies the regular files of from (not of its folders) into the
// new folder to.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	es, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Type().IsRegular() {
			copyInto(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
		}
	}
}

// copyInto copies a file, making the folders of the copy.
func copyInto(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, st.Mode().Perm())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// treeFiles lists the files under dir, relative to it.
func treeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files = append(files, rel)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// runCmdOut runs a command in dir ("" for the current folder) and returns its
// standard output; a failure ends the test.
func runCmdOut(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, stderr.String())
	}
	return string(out)
}
