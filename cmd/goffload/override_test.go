package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestOverrideImageAsClangs: clang-N -Wl,--override-image=openmp=IMG, where
// IMG is the device image clang-N's own link of the same object left
// (-Wl,--save-temps), links through goffload as its clang-linker-wrapper to
// the same bytes as through LLVM's wrapper (19 and 22), and the program runs
// as the first one did. Through clang-16 the option is refused, as LLVM 16's
// wrapper has no such option.
func TestOverrideImageAsClangs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("compiles, links and runs OpenMP programs")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "prog.c"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		major int
		img   string // what -Wl,--save-temps names the linked device image
	}{{19, "ref.x86_64.native.img"}, {22, "ref.x86_64..img"}} {
		t.Run(fmt.Sprintf("llvm%d", c.major), func(t *testing.T) {
			t.Parallel()
			l := newOverrideLab(t, c.major)
			dir := t.TempDir()
			obj := compileOpenMP(t, c.major, src, filepath.Join(dir, "prog.o"))
			link := func(out string, withGoffload bool, more ...string) {
				t.Helper()
				var args []string
				if withGoffload {
					args = append(args, "-B", l.wrapperDir)
				}
				args = append(args, "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", obj, "-o", out, "-L"+l.rt, "-Wl,-rpath,"+l.rt, "-Wl,--allow-shlib-undefined")
				tooltest.RunIn(t, dir, l.clang, append(args, more...)...)
			}
			link("ref", false, "-Wl,--save-temps")
			img := filepath.Join(dir, c.img)
			if _, err := os.Stat(img); err != nil {
				t.Fatalf("clang-%d -Wl,--save-temps left no %s: %v", c.major, c.img, err)
			}
			override := "-Wl,--override-image=openmp=" + img
			link("theirs", false, override)
			link("ours", true, override)
			want, err := os.ReadFile(filepath.Join(dir, "theirs"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "ours"))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("the program linked with --override-image: %d bytes, not clang-%d's own %d (first difference at byte %d)", len(got), c.major, len(want), tooltest.FirstDiff(got, want))
			}
			run := func(name string) string {
				t.Helper()
				if err := os.Rename(filepath.Join(dir, name), filepath.Join(dir, "prog")); err != nil {
					t.Fatal(err)
				}
				defer os.Rename(filepath.Join(dir, "prog"), filepath.Join(dir, name))
				return l.run(t, dir)
			}
			if got, want := run("ours"), run("ref"); got != want {
				t.Errorf("the program linked with --override-image printed\n%s\nwant\n%s", got, want)
			}
		})
	}
	// clang-16 passes -Wl, options to the host linker (after --), so the
	// wrapper is asked directly, as it is for 16 what LLVM's does not take.
	t.Run("llvm16", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		obj := compileOpenMP(t, 16, src, filepath.Join(dir, "prog.o"))
		_, stderr, code := cli(t, "linker-wrapper", "--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld", "--dry-run",
			"--override-image=openmp="+obj, "--", obj, "-o", filepath.Join(dir, "prog"))
		if code == 0 || !strings.Contains(stderr, "--override-image: not an option of LLVM 16's clang-linker-wrapper") {
			t.Errorf("linker-wrapper --override-image of a clang-16 object: exit %d, want it refused:\n%s", code, stderr)
		}
	})
}

// overrideLab is what the links of one release share: clang-N, the runtime
// N, and a folder holding goffload as clang-linker-wrapper, for clang -B.
type overrideLab struct{ clang, rt, wrapperDir string }

func newOverrideLab(t *testing.T, major int) *overrideLab {
	t.Helper()
	l := &overrideLab{clang: tooltest.Tool(t, "clang", major), rt: tooltest.OpenMPRuntime(t, major), wrapperDir: t.TempDir()}
	exe, err := filepath.Abs(goffloadExe(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exe, filepath.Join(l.wrapperDir, "clang-linker-wrapper")); err != nil {
		t.Fatal(err)
	}
	return l
}

// run runs dir/prog on the runtime with offloading mandatory and returns
// its standard output.
func (l *overrideLab) run(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(dir, "prog"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+l.rt, "OMP_TARGET_OFFLOAD=MANDATORY")
	out, err := tooltest.CombinedOutput(cmd)
	if err != nil {
		t.Fatalf("%s/prog: %v\n%s", filepath.Base(dir), err, tooltest.Clip(out))
	}
	return string(out)
}
