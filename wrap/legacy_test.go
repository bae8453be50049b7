package wrap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// oldDriverHosts are the host machines whose registration object this
// package writes for each release of the old driver.
var oldDriverHosts = map[int][]string{
	13: {"x86_64-pc-linux-gnu"},
	14: {"x86_64-pc-linux-gnu", "aarch64-unknown-linux-gnu", "powerpc64le-unknown-linux-gnu"},
}

// rawImages returns n made-up device images whose sizes are not multiples
// of 16 (so that the second is aligned after padding; the third, of 12
// bytes, is aligned as small constants are), with NULs inside, as in an ELF
// file.
func rawImages(n int) [][]byte {
	var out [][]byte
	x := uint32(0x2545f491)
	for i := range n {
		img := make([]byte, []int{1001, 333, 12}[i%3])
		for j := range img {
			x = x*1664525 + 1013904223
			img[j] = byte(x >> 24)
		}
		copy(img, "\x7fELF\x02\x01\x01\x00")
		out = append(out, img)
	}
	return out
}

func runTool(t testing.TB, argv []string) {
	t.Helper()
	runCmd(t, exec.Command(argv[0], argv[1:]...))
}

// oldDriver returns the commands of clang-N's OpenMP link for triple
// (tooltest.OldDriverCommands: clang -###), once per test binary.
func oldDriver(t testing.TB, major int, triple string) *tooltest.OldDriverLink {
	t.Helper()
	return shared(t, fmt.Sprintf("old driver of clang-%d for %s", major, triple), func(t testing.TB, _ string) *tooltest.OldDriverLink {
		return tooltest.OldDriverCommands(t, major, triple)
	})
}

// offloadWrapperObject makes the registration object of images as the old
// driver of release major does for triple: clang-offload-wrapper, then
// clang -cc1 -emit-obj with the driver's flags (clang -###).
func offloadWrapperObject(t *testing.T, link *tooltest.OldDriverLink, images [][]byte) []byte {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, img := range images {
		files = append(files, filepath.Join(dir, fmt.Sprintf("dev%d.out", i)))
		if err := os.WriteFile(files[i], img, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bc, obj := filepath.Join(dir, "w.bc"), filepath.Join(dir, "w.o")
	runTool(t, link.WrapArgs(bc, files...))
	runTool(t, link.CompileArgs(bc, obj))
	data, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func wrapRaw(t *testing.T, r *release.Release, triple string, images [][]byte) []byte {
	t.Helper()
	var bins []Binary
	for _, img := range images {
		bins = append(bins, RawImage(io.NewSectionReader(bytes.NewReader(img), 0, int64(len(img)))))
	}
	o, err := OpenMP(Options{Release: r, Triple: triple}, bins)
	if err != nil {
		t.Fatal(err)
	}
	return writeObject(t, o)
}

// TestOpenMPMatchesOffloadWrapper wraps one, two and three raw device
// images for LLVM 13 and 14 and each of their hosts, and compares the
// object with what clang-offload-wrapper-N and `clang-N -cc1 -emit-obj`,
// run with the flags of clang-N's driver, make of them: every section's
// bytes, every symbol and relocation. The default run compares a
// tooltest.Sample of the (release, host) × image count matrix: every
// release and host, every count.
func TestOpenMPMatchesOffloadWrapper(t *testing.T) {
	t.Parallel()
	type row struct {
		major  int
		triple string
	}
	var rows []row
	for _, major := range []int{13, 14} {
		for _, triple := range oldDriverHosts[major] {
			rows = append(rows, row{major, triple})
		}
	}
	counts := []int{1, 2, 3}
	for i, r := range rows {
		major, triple := r.major, r.triple
		for j, n := range counts {
			t.Run(fmt.Sprintf("llvm%d/%s/images=%d", major, triple, n), func(t *testing.T) {
				tooltest.Sample(t, i, j, len(rows), len(counts))
				t.Parallel()
				link := oldDriver(t, major, triple)
				images := rawImages(n)
				theirs := readObject(t, offloadWrapperObject(t, link, images))
				ours := readObject(t, wrapRaw(t, lookupRelease(t, major), triple, images))
				compareViews(t, view(t, theirs), view(t, ours), nil)
			})
		}
	}
}

// TestOpenMPMergeableImages pins the one difference from LLVM's object: an
// image that LLVM's code generator puts in a mergeable section (here 16
// bytes: .rodata.cst16) is in .rodata in ours, where it works the same.
func TestOpenMPMergeableImages(t *testing.T) {
	t.Parallel()
	link := oldDriver(t, 14, "x86_64-pc-linux-gnu")
	images := [][]byte{[]byte("\x7fELF-sixteen!\x00bc")} // 16 bytes
	theirs := readObject(t, offloadWrapperObject(t, link, images))
	ours := readObject(t, wrapRaw(t, lookupRelease(t, 14), "x86_64-pc-linux-gnu", images))
	if theirs.Section(".rodata.cst16") == nil || ours.Section(".rodata") == nil || ours.Section(".rodata.cst16") != nil {
		t.Errorf("LLVM's 16-byte image is not in .rodata.cst16, or ours not in .rodata")
	}
}

// TestOpenMPRefusesTheOtherForm: a raw image for a release that embeds
// OffloadBinaries, an OffloadBinary (or a raw image that is one) for one
// that embeds raw images, and what clang-offload-wrapper has no form for
// are refused.
func TestOpenMPRefusesTheOtherForm(t *testing.T) {
	raw := RawImage(io.NewSectionReader(bytes.NewReader(rawImages(1)[0]), 0, 1001))
	r19 := lookupRelease(t, 19)
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "")
	ob, err := offloadbinary.MarshalBinary(r19, &im, rawImages(1)[0])
	if err != nil {
		t.Fatal(err)
	}
	bin, err := FromBinary(bytes.NewReader(ob), int64(len(ob)))
	if err != nil {
		t.Fatal(err)
	}
	const x86 = "x86_64-pc-linux-gnu"
	for _, c := range []struct {
		name string
		opt  Options
		bins []Binary
		is   error
	}{
		{"raw image in 19", Options{Release: r19, Triple: x86}, []Binary{raw}, fs.ErrInvalid},
		{"OffloadBinary in 14", Options{Release: lookupRelease(t, 14), Triple: x86}, []Binary{raw, bin}, fs.ErrInvalid},
		{"raw image holding an OffloadBinary in 14", Options{Release: lookupRelease(t, 14), Triple: x86},
			[]Binary{RawImage(io.NewSectionReader(bytes.NewReader(ob), 0, int64(len(ob))))}, goffload.ErrInvalid},
		{"suffix in 14", Options{Release: lookupRelease(t, 14), Triple: x86, Suffix: "_x"}, []Binary{raw}, goffload.ErrUnsupported},
		{"relocatable 14", Options{Release: lookupRelease(t, 14), Triple: x86, Relocatable: true}, []Binary{raw}, goffload.ErrUnsupported},
		{"riscv64 in 14", Options{Release: lookupRelease(t, 14), Triple: "riscv64-unknown-linux-gnu"}, []Binary{raw}, goffload.ErrUnsupported},
		{"aarch64 in 13", Options{Release: lookupRelease(t, 13), Triple: "aarch64-unknown-linux-gnu"}, []Binary{raw}, goffload.ErrUnsupported},
	} {
		o, err := OpenMP(c.opt, c.bins)
		if o != nil || !errors.Is(err, c.is) {
			t.Errorf("%s: %v, %v; want %v", c.name, o, err, c.is)
		}
	}
	// FromImage gives the raw image for the releases that embed them.
	got, err := FromImage(lookupRelease(t, 14), im, io.NewSectionReader(bytes.NewReader([]byte("image")), 0, 5))
	if err != nil || !got.Raw || got.Data.Size() != 5 || got.ImageOffset != 0 || got.ImageSize != 5 {
		t.Errorf("FromImage(14) = %+v, %v; want the raw image", got, err)
	}
}

// oldDriverCompile compiles src as `clang-N -fopenmp -fopenmp-targets=T -c`
// does, running in dir the commands its driver prints with -###: the host's
// bitcode, the device object from it, the host object. It returns the host
// and the device object, which -c would then bundle into one file (and the
// driver's link unbundle again) with clang-offload-bundler: this saves the
// two.
func oldDriverCompile(t *testing.T, clang, triple, src, dir string) (host, dev string) {
	t.Helper()
	out := runCmd(t, exec.Command(clang, "-fopenmp", "-fopenmp-targets="+triple, "-c", src, "-o", filepath.Join(dir, "bundle.o"), "-###"))
	var cmds [][]string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, " \"") {
			cmds = append(cmds, splitDriverLine(t, line))
		}
	}
	if len(cmds) != 4 || !strings.HasPrefix(filepath.Base(cmds[3][0]), "clang-offload-bundler") {
		t.Fatalf("%s -### printed no compile of the old driver (3 cc1 and a bundler):\n%s", clang, out)
	}
	// The driver's temporary files, as the bundler takes them, in the order
	// of its targets.
	var targets, inputs []string
	for _, a := range cmds[3] {
		if v, ok := strings.CutPrefix(a, "-targets="); ok {
			targets = strings.Split(v, ",")
		}
		if v, ok := strings.CutPrefix(a, "-inputs="); ok {
			inputs = strings.Split(v, ",")
		}
	}
	if len(targets) != 2 || len(inputs) != 2 {
		t.Fatalf("%s -###: bundler %q", clang, cmds[3])
	}
	// Every temporary file (its name starts as the inputs' do) is in dir.
	prefix := strings.TrimSuffix(inputs[0], filepath.Ext(inputs[0]))
	prefix = prefix[:strings.LastIndex(prefix, "-")+1]
	local := func(a string) string {
		if strings.HasPrefix(a, prefix) {
			return filepath.Join(dir, filepath.Base(a))
		}
		return a
	}
	for _, argv := range cmds[:3] {
		for i, a := range argv {
			argv[i] = local(a)
		}
		runTool(t, argv)
	}
	for i, target := range targets {
		if strings.HasPrefix(target, "host-") {
			host = local(inputs[i])
		} else {
			dev = local(inputs[i])
		}
	}
	if host == "" || dev == "" {
		t.Fatalf("%s -###: bundler targets %q", clang, targets)
	}
	return host, dev
}

// splitDriverLine splits a command that clang -### prints: arguments in
// double quotes, with backslash escapes, separated by spaces.
func splitDriverLine(t *testing.T, line string) []string {
	t.Helper()
	var out []string
	for rest := strings.TrimSpace(line); rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] != '"' {
			t.Fatalf("clang -###: unquoted argument at %q", rest)
		}
		var arg strings.Builder
		i := 1
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			arg.WriteByte(rest[i])
		}
		if i >= len(rest) {
			t.Fatalf("clang -###: unterminated argument in %q", line)
		}
		out = append(out, arg.String())
		rest = rest[i+1:]
	}
	return out
}

// TestOldDriverProgramRuns builds an OpenMP program as clang-13 and clang-14
// do, but for the registration object, which this package writes: the
// compile of clang-N -c (oldDriverCompile), the driver's device link,
// wrap.OpenMP of the device image, and cc for the host link (PIE or not, as
// the driver links) against libomptarget 14 (Debian has no libomptarget 13;
// 14's runs 13's programs). Its kernel runs on the device
// (LIBOMPTARGET_INFO) and it prints the sum.
//
// With OFFLOAD_TEST_EXHAUSTIVE=1 it also compares our object with the one
// that the driver's own steps make of the same image
// (clang-offload-wrapper-N and clang-N -cc1, as clang -### prints them:
// TestOpenMPMatchesOffloadWrapper compares those of made-up images for
// both releases in the default run), and runs LLVM's programs, which must
// print what ours prints: the one linked alike from LLVM's registration
// object and the one that clang-N links (every step of its driver).
func TestOldDriverProgramRuns(t *testing.T) {
	t.Parallel()
	const triple = "x86_64-pc-linux-gnu"
	rt := tooltest.OpenMPRuntime(t, 14)
	cc, err := exec.LookPath("cc")
	if err != nil {
		tooltest.Missing(t, "cc not found: "+err.Error())
	}
	src, err := filepath.Abs(filepath.Join("testdata", "vadd.c"))
	if err != nil {
		t.Fatal(err)
	}
	for _, major := range []int{13, 14} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			t.Parallel()
			clang := tooltest.Tool(t, "clang", major)
			link := oldDriver(t, major, triple)
			dir := t.TempDir()
			host, dev := oldDriverCompile(t, clang, triple, src, dir)
			image := filepath.Join(dir, "dev.out")
			runTool(t, link.DeviceLinkArgs(dev, image, "-L"+rt))

			data, err := os.ReadFile(image)
			if err != nil {
				t.Fatal(err)
			}
			r := lookupRelease(t, major)
			bin, err := FromImage(r, offloadbinary.Image{}, io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data))))
			if err != nil {
				t.Fatal(err)
			}
			o, err := OpenMP(Options{Release: r, Triple: triple}, []Binary{bin})
			if err != nil {
				t.Fatal(err)
			}
			ours := writeObject(t, o)
			wrapper := filepath.Join(dir, "wrapper.o")
			writeFile(t, wrapper, ours)

			hostLink := func(wrapper, prog string) []string {
				argv := []string{cc, host, wrapper, "-o", prog, "-L" + rt, "-lomp", "-lomptarget", "-Wl,-rpath," + rt, tooltest.AllowShlibUndefined}
				if !slices.Contains(link.HostLink, "-pie") {
					argv = append(argv, "-no-pie") // clang-13 links without PIE
				}
				return argv
			}
			prog := filepath.Join(dir, "vadd")
			runTool(t, hostLink(wrapper, prog))
			programs := map[string]string{}
			if tooltest.Exhaustive() {
				// The same object as clang-offload-wrapper and clang make of
				// the real image, and LLVM's programs.
				llvm := offloadWrapperObject(t, link, [][]byte{data})
				compareViews(t, view(t, readObject(t, llvm)), view(t, readObject(t, ours)), nil)
				theirs, want, clangs := filepath.Join(dir, "llvm-wrapper.o"), filepath.Join(dir, "vadd-llvm"), filepath.Join(dir, "vadd-clang")
				writeFile(t, theirs, llvm)
				runTool(t, hostLink(theirs, want))
				runTool(t, []string{clang, "-fopenmp", "-fopenmp-targets=" + triple, src, "-o", clangs, "-L" + rt, "-Wl,-rpath," + rt, tooltest.AllowShlibUndefined})
				programs[want] = "LLVM's registration object"
				programs[clangs] = fmt.Sprintf("clang-%d", major)
			}
			run := func(path string) (string, string) {
				t.Helper()
				cmd := exec.Command(path)
				cmd.Env = append(os.Environ(), "LIBOMPTARGET_INFO=1", "LD_LIBRARY_PATH="+rt)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				done := tooltest.Slot()
				err := cmd.Run()
				done()
				if err != nil {
					t.Fatalf("%s: %v\n%s%s", path, err, stdout.String(), stderr.String())
				}
				return stdout.String(), stderr.String()
			}
			const ran = "Libomptarget device 0 info: Entering OpenMP kernel"
			gotOut, gotErr := run(prog)
			if !strings.Contains(gotOut, "sum = 1571328") || !strings.Contains(gotErr, ran) {
				t.Errorf("our program printed %q; the kernel did not run on the device, or printed a wrong sum:\n%s", gotOut, gotErr)
			}
			for path, what := range programs {
				wantOut, wantErr := run(path)
				if gotOut != wantOut {
					t.Errorf("our program printed %q, the one of %s %q", gotOut, what, wantOut)
				}
				if !strings.Contains(wantErr, ran) {
					t.Errorf("the kernel of the program of %s did not run on the device:\n%s", what, wantErr)
				}
			}
		})
	}
}
