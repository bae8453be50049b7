package wrappertest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goffload/goffload/internal/tooltest"
)

// The programs of testdata/wrapper, linked three ways by each release N
// (issue 14): by clang-N itself (the reference), by clang-N -B DIR where DIR
// holds only clang-linker-wrapper, a link to goffload, and by goffload link
// with its arguments in other positions. All three programs must print the
// same, and what testdata/wrapper/NAME/output holds.
//
// Each folder of testdata/wrapper is a program: its sources and a file
// `build`, whose lines are
//
//	# what the program exercises
//	only 19 22: why not the other releases
//	llvm-fails 22: why clang-22's own program fails
//	differs 22: why goffload's files differ from clang-22's own
//	cc [FLAGS] SOURCE...     compile with offloading to x86-64 (C or C++ by the extension) into STEM.o
//	host [FLAGS] SOURCE...   compile with -fopenmp alone: a host object
//	ar LIB.a MEMBER...       make a static library
//	llvm-ar LIB.a MEMBER...  make one with the release's llvm-ar (of LLVM bitcode objects)
//	link OUT ARG...          link; ARG holds -shared or -r for a library or relocatable object
//
// and the last link makes `prog`, which runs with OMP_TARGET_OFFLOAD=MANDATORY
// against libomptarget N. For a release where clang's own program fails
// (llvm-fails), that failure is checked, and goffload's programs must print
// the output all the same. What every link step of clang -B DIR makes (the
// program, and the libraries and relocatable objects on the way) must be
// byte for byte what clang's own link makes, but where clang's program fails
// or the build file says why they differ (differs), which is then checked.
//
// With OFFLOAD_TEST_WRAPPER=llvm, DIR holds LLVM's own clang-linker-wrapper
// instead of goffload, and goffload link is not run: every program must pass
// so, which tells a broken program from a broken goffload.

// wrapperReleases are the releases whose clang runs clang-linker-wrapper for
// an OpenMP link.
var wrapperReleases = []int{15, 16, 19, 22}

const offloadTriple = "x86_64-pc-linux-gnu"

// saveTempsFiles are the files that clang-N -save-temps leaves in the
// working folder when its wrapper links the program prog of the objects
// main.o, vadd.o and vdot.o (the static-lib program), as LLVM's wrappers
// leave them: the device code extracted from each input (named by the
// input's stem, archive members too), the linked device image and the
// registration object (19 and 22: its bitcode too).
var saveTempsFiles = map[int][]string{
	15: {"main-x86_64-pc-linux-gnu-.o", "vadd-x86_64-pc-linux-gnu-.o", "vdot-x86_64-pc-linux-gnu-.o", "prog-x86_64-.out", "prog-wrapper.o"},
	16: {"main-x86_64-pc-linux-gnu-.o", "vadd-x86_64-pc-linux-gnu-.o", "vdot-x86_64-pc-linux-gnu-.o", "prog.x86_64.native.img", "prog.image.wrapper.o"},
	19: {"main-x86_64-pc-linux-gnu-.o", "vadd-x86_64-pc-linux-gnu-.o", "vdot-x86_64-pc-linux-gnu-.o", "prog.x86_64.native.img", "prog.openmp.image.wrapper.bc", "prog.openmp.image.wrapper.o"},
	22: {"main-x86_64-pc-linux-gnu-generic.o", "vadd-x86_64-pc-linux-gnu-generic.o", "vdot-x86_64-pc-linux-gnu-generic.o", "prog.x86_64..img", "prog.openmp.image.wrapper.bc", "prog.openmp.image.wrapper.o"},
}

// wrapperProgram is one folder of testdata/wrapper.
type wrapperProgram struct {
	name, dir  string
	only       []int  // the releases it is for (nil: all)
	why        string // why not the others
	llvmFails  []int  // the releases whose clang links a program that fails
	failsWhy   string
	differs    []int // the releases whose own link goffload's differs from, on purpose
	differsWhy string
	steps      []wrapperStep
	cxx        bool   // a source is C++: clang++ links it
	want       string // its output
}

// wrapperStep is one line of a build file.
type wrapperStep struct {
	op    string   // cc, host, ar or link
	out   string   // ar, link: the file made
	flags []string // cc, host: the compile's own flags
	args  []string // cc, host: sources; ar: members; link: arguments
}

// loadWrapperPrograms reads the programs of testdata/wrapper.
func loadWrapperPrograms(t *testing.T) []*wrapperProgram {
	t.Helper()
	builds, err := filepath.Glob(filepath.Join("..", "testdata", "wrapper", "*", "build"))
	if err != nil || len(builds) == 0 {
		t.Fatalf("no testdata/wrapper/*/build (%v)", err)
	}
	var progs []*wrapperProgram
	for _, b := range builds {
		p, err := parseWrapperBuild(b)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, p)
	}
	return progs
}

func parseWrapperBuild(path string) (*wrapperProgram, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	p := &wrapperProgram{name: filepath.Base(dir), dir: dir}
	want, err := os.ReadFile(filepath.Join(dir, "output"))
	if err != nil {
		return nil, err
	}
	p.want = string(want)
	sc := bufio.NewScanner(bytes.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		bad := func(msg string) error { return fmt.Errorf("%s:%d: %s: %q", path, n, msg, line) }
		f := strings.Fields(line)
		switch op := f[0]; op {
		case "only", "llvm-fails", "differs":
			list, why, ok := strings.Cut(strings.Join(f[1:], " "), ":")
			if !ok {
				return nil, bad("want " + op + " N...: why")
			}
			var releases []int
			for _, s := range strings.Fields(list) {
				n, err := strconv.Atoi(s)
				if err != nil {
					return nil, bad("release " + s)
				}
				releases = append(releases, n)
			}
			switch op {
			case "only":
				p.only, p.why = releases, strings.TrimSpace(why)
			case "llvm-fails":
				p.llvmFails, p.failsWhy = releases, strings.TrimSpace(why)
			default:
				p.differs, p.differsWhy = releases, strings.TrimSpace(why)
			}
		case "cc", "host":
			s := wrapperStep{op: op}
			for _, a := range f[1:] {
				if strings.HasPrefix(a, "-") {
					s.flags = append(s.flags, a)
				} else {
					s.args = append(s.args, a)
					p.cxx = p.cxx || isCXX(a)
				}
			}
			if len(s.args) == 0 {
				return nil, bad("no source")
			}
			p.steps = append(p.steps, s)
		case "ar", "llvm-ar", "link":
			if len(f) < 3 {
				return nil, bad("want " + op + " OUT ARG...")
			}
			p.steps = append(p.steps, wrapperStep{op: op, out: f[1], args: f[2:]})
		default:
			return nil, bad("unknown step")
		}
	}
	if len(p.steps) == 0 || p.steps[len(p.steps)-1].op != "link" || p.steps[len(p.steps)-1].out != "prog" {
		return nil, fmt.Errorf("%s: the last step must be link prog", path)
	}
	return p, sc.Err()
}

func isCXX(src string) bool {
	return slices.Contains([]string{".cpp", ".cc", ".cxx", ".C"}, filepath.Ext(src))
}

// objectName is what a compile step makes of src.
func objectName(src string) string {
	return strings.TrimSuffix(filepath.Base(src), filepath.Ext(src)) + ".o"
}

// wrapperLab holds what the links of one release share.
type wrapperLab struct {
	major         int
	clang, clangX string // clang-N, clang++-N
	wrapperDir    string // the DIR of -B: clang-linker-wrapper alone
	goffload      string // the goffload program ("" with LLVM's wrapper in DIR)
	ninja         string // ninja, which runs goffload link's plans
	rt            string // libomp and libomptarget N
	llvmWrapper   bool   // DIR holds LLVM's wrapper
	root          string
	objdirs       map[string]string // each program's objects, by name
}

// useLLVMWrapper reports whether OFFLOAD_TEST_WRAPPER=llvm asks for LLVM's
// own wrapper in DIR.
func useLLVMWrapper() bool { return os.Getenv("OFFLOAD_TEST_WRAPPER") == "llvm" }

func newWrapperLab(t *testing.T, major int) *wrapperLab {
	t.Helper()
	l := &wrapperLab{
		major:       major,
		clang:       tooltest.Tool(t, "clang", major),
		clangX:      tooltest.Tool(t, "clang++", major),
		rt:          tooltest.OpenMPRuntime(t, major),
		llvmWrapper: useLLVMWrapper(),
		root:        t.TempDir(),
		objdirs:     map[string]string{},
	}
	if major == 16 {
		// clang-16 links the device runtime even for the host device.
		if err := os.WriteFile(filepath.Join(l.rt, "libomptarget.devicertl.a"), []byte("!<arch>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wrapper := tooltest.Tool(t, "clang-linker-wrapper", major)
	if !l.llvmWrapper {
		l.goffload, _ = filepath.Abs(goffloadExe(t))
		wrapper = l.goffload
		l.ninja = tooltest.Program(t, "ninja")
	}
	l.wrapperDir = t.TempDir()
	if err := os.Symlink(wrapper, filepath.Join(l.wrapperDir, "clang-linker-wrapper")); err != nil {
		t.Fatal(err)
	}
	return l
}

// compileFlags are the flags of every compile: OpenMP 5.2 from LLVM 18
// (declare target enter), 5.1 before (see offload.h).
func (l *wrapperLab) compileFlags() []string {
	flags := []string{"-O1", "-fopenmp", "-c"}
	if l.major >= 18 {
		return append(flags, "-fopenmp-version=52", "-DNEW_OPENMP")
	}
	return append(flags, "-fopenmp-version=51")
}

// objects returns the folder of p's objects, compiled on first use for
// all the links of the release, or taken from the store of compiles
// (testdata/objects) when it has them and the run is not exhaustive.
func (l *wrapperLab) objects(t *testing.T, p *wrapperProgram) string {
	t.Helper()
	if dir, ok := l.objdirs[p.name]; ok {
		return dir
	}
	type compile struct {
		clang string // its path
		args  []string
	}
	var compiles []compile
	var work []string
	var names []string
	for _, s := range p.steps {
		if s.op != "cc" && s.op != "host" {
			continue
		}
		for _, src := range s.args {
			clang, name := l.clang, "clang"
			if isCXX(src) {
				clang, name = l.clangX, "clang++"
			}
			args := append(l.compileFlags(), s.flags...)
			if s.op == "cc" {
				args = append(args, "-fopenmp-targets="+offloadTriple)
			}
			args = append(args, filepath.Join(p.dir, src), "-o")
			compiles = append(compiles, compile{clang, args})
			names = append(names, objectName(src))
			work = append(work, fmt.Sprintf("%s-%d %s %s", name, l.major, strings.Join(args, " "), objectName(src)))
		}
	}
	inputs, err := tooltest.Inputs([]string{p.dir}, "build", "output")
	if err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, filepath.Join(p.dir, "..", "offload.h"))
	dir := filepath.Join(l.root, p.name, "obj")
	dir, err = objectStore.Files(t, dir, strings.Join(work, "\n"), inputs, names, func(dir string) error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for i, c := range compiles {
			args := append(slices.Clone(c.args), filepath.Join(dir, names[i]))
			if out, err := tooltest.CombinedOutput(exec.Command(c.clang, args...)); err != nil {
				return fmt.Errorf("%s %s: %v\n%s", filepath.Base(c.clang), strings.Join(args, " "), err, tooltest.Clip(out))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	l.objdirs[p.name] = dir
	return dir
}

// stage returns a new folder holding p's objects and the static libraries
// of its ar steps, and p's last link step, which only those need.
func (l *wrapperLab) stage(t *testing.T, p *wrapperProgram) (string, wrapperStep) {
	t.Helper()
	dir := t.TempDir()
	linkObjects(t, l.objects(t, p), dir)
	for _, s := range p.steps {
		if s.op == "ar" || s.op == "llvm-ar" {
			ar, args := l.archiver(t, s.op, append([]string{"rcs", s.out}, s.args...))
			tooltest.RunIn(t, dir, ar, args...)
		}
	}
	return dir, p.steps[len(p.steps)-1]
}

// linkObjects copies the objects of objdir into dir.
func linkObjects(t *testing.T, objdir, dir string) {
	t.Helper()
	objs, err := filepath.Glob(filepath.Join(objdir, "*.o"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := tooltest.CopyFile(filepath.Join(dir, filepath.Base(o)), o); err != nil {
			t.Fatal(err)
		}
	}
}

// linkMode is one of the three ways of linking a program.
type linkMode int

const (
	byClang    linkMode = iota // clang-N with LLVM's wrapper: the reference
	byWrapper                  // clang-N -B DIR: goffload as clang-linker-wrapper
	byGoffload                 // goffload link
	byNinja                    // goffload link --plan=ninja, run by ninja
)

func (m linkMode) String() string {
	return [...]string{"clang", "clang-B-goffload", "goffload-link", "goffload-link-ninja"}[m]
}

// build makes p's libraries and program in dir, linking by mode; a failure
// ends the test with the command and its output.
func (l *wrapperLab) build(t *testing.T, p *wrapperProgram, dir string, mode linkMode, variant int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	linkObjects(t, l.objects(t, p), dir)
	for _, s := range p.steps {
		var name string
		var args []string
		switch {
		case s.op == "ar" || s.op == "llvm-ar":
			name, args = l.archiver(t, s.op, append([]string{"rcs", s.out}, s.args...))
		case s.op != "link":
			continue
		case mode == byGoffload:
			name, args = l.goffload, l.goffloadLinkArgs(s, variant)
		case mode == byNinja:
			// The plan as a ninja file, which ninja runs: the same files.
			plan := l.goffloadLinkArgs(s, variant)
			plan = append(plan[:1:1], append([]string{"--plan=ninja"}, plan[1:]...)...)
			cmd := exec.Command(l.goffload, plan...)
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("in %s: goffload %s: %v", filepath.Base(dir), strings.Join(plan, " "), err)
			}
			if err := os.WriteFile(filepath.Join(dir, s.out+".ninja"), out, 0o644); err != nil {
				t.Fatal(err)
			}
			name, args = l.ninja, []string{"-f", s.out + ".ninja"}
		default:
			name, args = l.clangLinkArgs(p, s, mode)
		}
		tooltest.RunIn(t, dir, name, args...)
	}
}

// clangLinkArgs is the clang command of link step s: clang-N or clang++-N
// with -B DIR for byWrapper.
func (l *wrapperLab) clangLinkArgs(p *wrapperProgram, s wrapperStep, mode linkMode) (string, []string) {
	clang := l.clang
	if p.cxx {
		clang = l.clangX
	}
	var args []string
	if mode == byWrapper {
		args = append(args, "-B", l.wrapperDir)
	}
	args = append(args, "-fopenmp", "-fopenmp-targets="+offloadTriple)
	args = append(args, s.args...)
	args = append(args, "-o", s.out)
	if !slices.Contains(s.args, "-r") {
		args = append(args, "-L"+l.rt, "-Wl,-rpath,"+l.rt, tooltest.AllowShlibUndefined)
	}
	return clang, args
}

// goffloadLinkArgs is the goffload link command of link step s, its
// arguments moved: variant 0 puts every flag first (-lNAME before the
// inputs), then --libdir, the inputs and -o OUT last; variant 1 puts -o OUT
// first, then the first input, --libdir, the flags and the other inputs.
// -LDIR becomes -L DIR. The flags keep their order among themselves, as
// -Wl,--whole-archive -lNAME -Wl,--no-whole-archive needs.
func (l *wrapperLab) goffloadLinkArgs(s wrapperStep, variant int) []string {
	var flags, inputs []string
	for _, a := range s.args {
		switch {
		case strings.HasPrefix(a, "-L") && len(a) > 2:
			flags = append(flags, "-L", a[2:])
		case strings.HasPrefix(a, "-"):
			flags = append(flags, a)
		default:
			inputs = append(inputs, a)
		}
	}
	var libdir []string
	if !slices.Contains(s.args, "-r") {
		libdir = []string{"--libdir", l.rt}
		flags = append(flags, tooltest.AllowShlibUndefined)
	}
	args := []string{"link"}
	if variant%2 == 0 {
		args = append(append(append(args, flags...), libdir...), inputs...)
		return append(args, "-o", s.out)
	}
	args = append(append(args, "-o", s.out), inputs[0])
	args = append(append(args, libdir...), flags...)
	return append(args, inputs[1:]...)
}

// archiver is the command of an ar or llvm-ar step with args: GNU ar
// without the LLVM plugins (tooltest.Ar), or the release's llvm-ar, whose
// index lists the symbols of bitcode members (clang -flto), as the host
// link's LTO plugin needs.
func (l *wrapperLab) archiver(t *testing.T, op string, args []string) (string, []string) {
	if op == "llvm-ar" {
		return tooltest.Tool(t, "llvm-ar", l.major), args
	}
	return "ar", tooltest.ArArgs(args...)
}

// runOffloaded runs dir/prog on runtime l.rt with offloading mandatory and
// returns its standard output; a failure or a non-zero exit ends the test.
func (l *wrapperLab) runOffloaded(t *testing.T, dir string) string {
	t.Helper()
	out, err := l.tryRun(dir)
	if err != nil {
		t.Fatalf("%s/prog: %v", filepath.Base(dir), err)
	}
	return out
}

// tryRun runs dir/prog as runOffloaded does and returns its standard
// output, or an error with all it printed.
func (l *wrapperLab) tryRun(dir string) (string, error) {
	cmd := exec.Command(filepath.Join(dir, "prog"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+l.rt, "OMP_TARGET_OFFLOAD=MANDATORY")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	release := tooltest.Slot()
	out, err := cmd.Output()
	release()
	if err != nil {
		return "", fmt.Errorf("%v\nstdout:\n%s\nstderr:\n%s", err, out, tooltest.Clip([]byte(stderr.String())))
	}
	return string(out), nil
}

// TestWrapperOpenMP links the programs of testdata/wrapper by clang-N, by
// clang-N through goffload as its clang-linker-wrapper, and by goffload link,
// for N = 15, 16, 19, 22, and runs the three on libomptarget N: they print
// the same. It also checks that clang -B DIR runs DIR/clang-linker-wrapper
// (-###), that -v prints the wrapper's device and host links, that
// -save-temps leaves the files that LLVM's wrapper leaves, and that
// `goffload linker-wrapper` works as the wrapper too.
func TestWrapperOpenMP(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("compiles, links and runs OpenMP programs with four LLVM releases")
	}
	progs := loadWrapperPrograms(t)
	for r, major := range wrapperReleases {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			l := newWrapperLab(t, major)
			first := true
			for i, p := range progs {
				// The variant of goffload link's arguments alternates
				// between programs and between releases.
				t.Run(p.name, func(t *testing.T) {
					if !p.sampled(i, major) {
						t.Skipf("not in the default sample (%s=1 links every program with every release)", tooltest.ExhaustiveEnv)
					}
					// By default goffload link, and its plan run by
					// ninja, link the first program of each release,
					// and clang's own link those and every other program.
					allModes := first || tooltest.Exhaustive()
					first = false
					reference := i%2 == 0 || allModes || l.llvmWrapper
					l.testProgram(t, p, r+i, allModes, reference)
				})
			}
			objects, staticLib := wrapperProgramNamed(t, progs, "objects"), wrapperProgramNamed(t, progs, "static-lib")
			t.Run("-###", l.testDriverRunsDIR)
			// The links of the driver's options × the releases: by default
			// each option with one release, each release with one option.
			options := []struct {
				name string
				test func(t *testing.T)
			}{
				{"-v", func(t *testing.T) { l.testVerbose(t, objects) }},
				{"-save-temps", func(t *testing.T) { l.testSaveTemps(t, staticLib) }},
				{"linker-wrapper", func(t *testing.T) { l.testSubcommand(t, objects) }},
			}
			for k, o := range options {
				t.Run(o.name, func(t *testing.T) {
					tooltest.Sample(t, k, r, len(options), len(wrapperReleases))
					o.test(t)
				})
			}
			t.Logf("LLVM %d: %v", major, time.Since(start).Round(time.Millisecond))
		})
	}
}

// releases are the releases p is for.
func (p *wrapperProgram) releases() []int {
	if p.only != nil {
		return p.only
	}
	return wrapperReleases
}

// sampled reports whether p, the i-th program, is linked with LLVM major:
// in the default run every program with one of its releases, the programs
// taking the releases in turn so that each release links its share; with
// OFFLOAD_TEST_EXHAUSTIVE=1 every program with every release. (Each
// program costs a compile and two links of 2 to 4 s of CPU each: linking
// all 31 with all four releases by default would take more than the four
// minutes the default run has on a 2-core machine.)
func (p *wrapperProgram) sampled(i, major int) bool {
	rs := p.releases()
	return tooltest.Exhaustive() || rs[i%len(rs)] == major
}

func wrapperProgramNamed(t *testing.T, progs []*wrapperProgram, name string) *wrapperProgram {
	t.Helper()
	for _, p := range progs {
		if p.name == name {
			return p
		}
	}
	t.Fatalf("no testdata/wrapper/%s", name)
	return nil
}

// testProgram links p the three ways (with allModes; else by clang -B DIR
// alone) and compares what they print with what testdata/wrapper/NAME/output
// says, and, with reference, with what clang's own link of p prints, and
// the files of the clang -B DIR link with those of clang's own link.
func (l *wrapperLab) testProgram(t *testing.T, p *wrapperProgram, variant int, allModes, reference bool) {
	if p.only != nil && !slices.Contains(p.only, l.major) {
		t.Skipf("%s is for LLVM %v: %s", p.name, p.only, p.why)
	}
	root := filepath.Join(l.root, p.name)
	ref := filepath.Join(root, byClang.String())
	want := p.want
	llvmFails := slices.Contains(p.llvmFails, l.major)
	if reference {
		l.build(t, p, ref, byClang, variant)
		if got, err := l.tryRun(ref); llvmFails {
			if err == nil {
				t.Errorf("clang-%d's own program runs: llvm-fails %d (%s) is out of date", l.major, l.major, p.failsWhy)
			}
			t.Logf("clang-%d's own program fails (%s): its output is testdata/wrapper/%s/output", l.major, p.failsWhy, p.name)
		} else if err != nil {
			t.Fatalf("clang-%d's program: %v", l.major, err)
		} else if got != want {
			t.Fatalf("clang-%d's program printed\n%s\nwant (testdata/wrapper/%s/output)\n%s", l.major, got, p.name, want)
		}
	} else {
		t.Logf("clang's own link is not compared by default (%s=1 compares it)", tooltest.ExhaustiveEnv)
	}
	for _, mode := range []linkMode{byWrapper, byGoffload, byNinja} {
		t.Run(mode.String(), func(t *testing.T) {
			if mode != byWrapper && !allModes {
				t.Skipf("goffload link links one program of each release by default (%s=1 links all)", tooltest.ExhaustiveEnv)
			}
			if l.llvmWrapper && (mode != byWrapper || llvmFails) {
				t.Skip("OFFLOAD_TEST_WRAPPER=llvm: goffload is not tested")
			}
			dir := filepath.Join(root, mode.String())
			l.build(t, p, dir, mode, variant)
			if got := l.runOffloaded(t, dir); got != want {
				t.Errorf("printed\n%s\nwant (testdata/wrapper/%s/output)\n%s", got, p.name, want)
			}
			switch {
			case mode == byWrapper && reference:
				l.compareBytes(t, p, ref, dir, llvmFails)
			case mode == byNinja:
				// Every file of a link step, byte for byte as goffload
				// link made it.
				for _, s := range p.steps {
					if s.op == "link" {
						tooltest.SameFile(t, filepath.Join(root, byGoffload.String(), s.out), filepath.Join(dir, s.out), "the link run by ninja")
					}
				}
			}
		})
	}
}

// compareBytes checks that the files the link steps made in dir (clang -B
// DIR with goffload) are those they made in ref (clang's own link), byte
// for byte, as the build file says.
func (l *wrapperLab) compareBytes(t *testing.T, p *wrapperProgram, ref, dir string, llvmFails bool) {
	t.Helper()
	differs := slices.Contains(p.differs, l.major)
	same := true
	for _, s := range p.steps {
		if s.op != "link" {
			continue
		}
		if llvmFails && s.out == "prog" {
			t.Logf("prog not compared with clang-%d's: its program fails (%s)", l.major, p.failsWhy)
			continue
		}
		want, err := os.ReadFile(filepath.Join(ref, s.out))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, s.out))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			same = false
			if !differs {
				t.Errorf("%s: %d bytes, not the %d bytes clang-%d's own link makes (first difference at byte %d)", s.out, len(got), len(want), l.major, tooltest.FirstDiff(got, want))
			}
		}
	}
	switch {
	case differs && same:
		t.Errorf("the files are clang-%d's, byte for byte: differs %d (%s) is out of date", l.major, l.major, p.differsWhy)
	case differs:
		t.Logf("differs from clang-%d's files on purpose: %s", l.major, p.differsWhy)
	}
}

// testDriverRunsDIR: clang-N -B DIR -### runs DIR/clang-linker-wrapper.
func (l *wrapperLab) testDriverRunsDIR(t *testing.T) {
	dir := t.TempDir()
	obj := filepath.Join(dir, "main.o")
	if err := os.WriteFile(obj, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(l.clang, "-B", l.wrapperDir, "-fopenmp", "-fopenmp-targets="+offloadTriple, obj, "-o", filepath.Join(dir, "prog"), "-###").CombinedOutput()
	if err != nil {
		t.Fatalf("-###: %v\n%s", err, out)
	}
	want := filepath.Join(l.wrapperDir, "clang-linker-wrapper")
	for _, c := range commandLines(string(out)) {
		if c[0] == want {
			return
		}
	}
	t.Errorf("clang-%d -B %s -### runs no %s:\n%s", l.major, l.wrapperDir, want, out)
}

// commandLines returns the commands that clang -### or -v and the wrapper's
// verbose output print, one a line: ` "/path/tool" arg "arg"...`.
func commandLines(out string) [][]string {
	var cmds [][]string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, ` "`) {
			continue
		}
		var argv []string
		for _, f := range strings.Fields(line) {
			if u, err := strconv.Unquote(f); err == nil {
				f = u
			}
			argv = append(argv, f)
		}
		cmds = append(cmds, argv)
	}
	return cmds
}

// testVerbose: clang-N -B DIR -v passes --wrapper-verbose (15: --verbose)
// to the wrapper, which prints its device link (a -shared link) and its
// host link (the --linker-path program writing prog, or a temporary file
// beside it that becomes prog) to standard error, one command a line as
// LLVM's wrapper does.
func (l *wrapperLab) testVerbose(t *testing.T, p *wrapperProgram) {
	dir, link := l.stage(t, p)
	clang, args := l.clangLinkArgs(p, link, byWrapper)
	cmd := exec.Command(clang, append(args, "-v")...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s -v: %v\n%s", clang, err, tooltest.Clip(stderr.Bytes()))
	}
	flag := "--wrapper-verbose"
	if l.major == 15 {
		flag = "--verbose"
	}
	wrapper := filepath.Join(l.wrapperDir, "clang-linker-wrapper")
	var linker string
	var device, host bool
	for _, c := range commandLines(stderr.String()) {
		switch {
		case c[0] == wrapper:
			if !slices.Contains(c, flag) {
				t.Errorf("clang-%d -v runs the wrapper without %s: %q", l.major, flag, c)
			}
			for _, a := range c {
				if v, ok := strings.CutPrefix(a, "--linker-path="); ok {
					linker = v
				}
			}
		case linker == "":
		case slices.Contains(c, "-shared"):
			device = true
		case c[0] == linker:
			if i := slices.Index(c, "-o"); i > 0 && i+1 < len(c) {
				out := filepath.Base(c[i+1])
				host = host || out == "prog" || strings.HasPrefix(out, ".prog.")
			}
		}
	}
	if linker == "" || !device || !host {
		t.Errorf("clang-%d -v: the wrapper's command (linker %q), device link printed %v, host link printed %v:\n%s", l.major, linker, device, host, tooltest.Clip(stderr.Bytes()))
	}
	if got := l.runOffloaded(t, dir); got != p.want {
		t.Errorf("the program linked with -v printed\n%s", got)
	}
}

// testSaveTemps: with clang-N -B DIR -save-temps, the wrapper leaves in the
// working folder the files that LLVM's wrapper N leaves (saveTempsFiles,
// which is checked against LLVM's wrapper too), but for the bitcode of the
// registration module, which goffload does not make.
func (l *wrapperLab) testSaveTemps(t *testing.T, p *wrapperProgram) {
	want := slices.Sorted(slices.Values(saveTempsFiles[l.major]))
	leftBy := func(wrapperDir string) []string {
		t.Helper()
		dir, link := l.stage(t, p)
		before, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		ll := *l
		ll.wrapperDir = wrapperDir
		clang, args := ll.clangLinkArgs(p, link, byWrapper)
		tooltest.RunIn(t, dir, clang, append(args, "-save-temps")...)
		if got := l.runOffloaded(t, dir); got != p.want {
			t.Errorf("the program linked with -save-temps printed\n%s", got)
		}
		after, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, e := range after {
			if e.Name() != "prog" && !slices.ContainsFunc(before, func(b os.DirEntry) bool { return b.Name() == e.Name() }) {
				left = append(left, e.Name())
			}
		}
		return left
	}
	if !l.llvmWrapper {
		llvm := t.TempDir()
		if err := os.Symlink(tooltest.Tool(t, "clang-linker-wrapper", l.major), filepath.Join(llvm, "clang-linker-wrapper")); err != nil {
			t.Fatal(err)
		}
		if got := leftBy(llvm); !slices.Equal(got, want) {
			t.Errorf("LLVM's wrapper %d left %q, the test lists %q", l.major, got, want)
		}
	}
	if !l.llvmWrapper {
		// goffload writes the registration object itself, with no IR
		// module between: it leaves every file LLVM's wrapper leaves but
		// the module's bitcode (OUT.openmp.image.wrapper.bc, 19 and 22).
		want = slices.DeleteFunc(want, func(name string) bool { return strings.HasSuffix(name, ".bc") })
	}
	if got := leftBy(l.wrapperDir); !slices.Equal(got, want) {
		t.Errorf("-save-temps left %q, want %q (as LLVM's wrapper %d, but for its IR module)", got, want, l.major)
	}
}

// testSubcommand links p with clang-N -B DIR where DIR/clang-linker-wrapper
// is a script running `goffload linker-wrapper "$@"`.
func (l *wrapperLab) testSubcommand(t *testing.T, p *wrapperProgram) {
	if l.llvmWrapper {
		t.Skip("OFFLOAD_TEST_WRAPPER=llvm: goffload is not tested")
	}
	ll := *l
	ll.wrapperDir = t.TempDir()
	script := "#!/bin/sh\nexec " + strconv.Quote(l.goffload) + " linker-wrapper \"$@\"\n"
	if err := os.WriteFile(filepath.Join(ll.wrapperDir, "clang-linker-wrapper"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "prog")
	ll.build(t, p, dir, byWrapper, 0)
	if got := l.runOffloaded(t, dir); got != p.want {
		t.Errorf("printed\n%s\nwant\n%s", got, p.want)
	}
}
