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

func runTool(t *testing.T, argv []string) {
	t.Helper()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, out)
	}
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

func wrapRaw(t *testing.T, r *offload.Release, triple string, images [][]byte) []byte {
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

// TestOpenMPMatchesOffloadWrapper wraps one and two raw device images for
// LLVM 13 and 14 and compares the object with what clang-offload-wrapper-N
// and `clang-N -cc1 -emit-obj`, run with the flags of clang-N's driver,
// make of them: every section's bytes, every symbol and relocation.
func TestOpenMPMatchesOffloadWrapper(t *testing.T) {
	for _, major := range []int{13, 14} {
		for _, triple := range oldDriverHosts[major] {
			link := tooltest.OldDriverCommands(t, major, triple)
			for _, n := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("llvm%d/%s/images=%d", major, triple, n), func(t *testing.T) {
					images := rawImages(n)
					theirs := readObject(t, offloadWrapperObject(t, link, images))
					ours := readObject(t, wrapRaw(t, release(t, major), triple, images))
					compareViews(t, view(t, theirs), view(t, ours), nil)
				})
			}
		}
	}
}

// TestOpenMPMergeableImages pins the one difference from LLVM's object: an
// image that LLVM's code generator puts in a mergeable section (here 16
// bytes: .rodata.cst16) is in .rodata in ours, where it works the same.
func TestOpenMPMergeableImages(t *testing.T) {
	link := tooltest.OldDriverCommands(t, 14, "x86_64-pc-linux-gnu")
	images := [][]byte{[]byte("\x7fELF-sixteen!\x00bc")} // 16 bytes
	theirs := readObject(t, offloadWrapperObject(t, link, images))
	ours := readObject(t, wrapRaw(t, release(t, 14), "x86_64-pc-linux-gnu", images))
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
	r19 := release(t, 19)
	im := offload.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "")
	ob, err := offload.MarshalBinary(r19, &im, rawImages(1)[0])
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
		{"OffloadBinary in 14", Options{Release: release(t, 14), Triple: x86}, []Binary{raw, bin}, fs.ErrInvalid},
		{"raw image holding an OffloadBinary in 14", Options{Release: release(t, 14), Triple: x86},
			[]Binary{RawImage(io.NewSectionReader(bytes.NewReader(ob), 0, int64(len(ob))))}, fs.ErrInvalid},
		{"suffix in 14", Options{Release: release(t, 14), Triple: x86, Suffix: "_x"}, []Binary{raw}, goffload.ErrUnsupported},
		{"relocatable 14", Options{Release: release(t, 14), Triple: x86, Relocatable: true}, []Binary{raw}, goffload.ErrUnsupported},
		{"riscv64 in 14", Options{Release: release(t, 14), Triple: "riscv64-unknown-linux-gnu"}, []Binary{raw}, goffload.ErrUnsupported},
		{"aarch64 in 13", Options{Release: release(t, 13), Triple: "aarch64-unknown-linux-gnu"}, []Binary{raw}, goffload.ErrUnsupported},
	} {
		o, err := OpenMP(c.opt, c.bins)
		if o != nil || !errors.Is(err, c.is) {
			t.Errorf("%s: %v, %v; want %v", c.name, o, err, c.is)
		}
	}
	// FromImage gives the raw image for the releases that embed them.
	got, err := FromImage(release(t, 14), im, io.NewSectionReader(bytes.NewReader([]byte("image")), 0, 5))
	if err != nil || !got.Raw || got.Data.Size() != 5 || got.ImageOffset != 0 || got.ImageSize != 5 {
		t.Errorf("FromImage(14) = %+v, %v; want the raw image", got, err)
	}
}

// TestOldDriverProgramRuns builds an OpenMP program as clang-13 and clang-14
// do, but for the registration object, which this package writes: clang-N
// -c, clang-offload-bundler-N -unbundle, the driver's device link,
// wrap.OpenMP of the device image, and cc for the host link (PIE or not, as
// the driver links) against libomptarget 14 (Debian has no libomptarget 13;
// 14's runs 13's programs). The program prints what the one clang-N links
// prints, and its kernel runs on the device (LIBOMPTARGET_INFO).
func TestOldDriverProgramRuns(t *testing.T) {
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
			clang := tooltest.Tool(t, "clang", major)
			link := tooltest.OldDriverCommands(t, major, triple)
			dir := t.TempDir()
			obj, host, dev, image := filepath.Join(dir, "vadd.o"), filepath.Join(dir, "host.o"), filepath.Join(dir, "dev.o"), filepath.Join(dir, "dev.out")
			runTool(t, []string{clang, "-fopenmp", "-fopenmp-targets=" + triple, "-c", src, "-o", obj})
			runTool(t, link.UnbundleArgs(obj, host, dev))
			runTool(t, link.DeviceLinkArgs(dev, image, "-L"+rt))

			data, err := os.ReadFile(image)
			if err != nil {
				t.Fatal(err)
			}
			r := release(t, major)
			bin, err := FromImage(r, offload.Image{}, io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data))))
			if err != nil {
				t.Fatal(err)
			}
			o, err := OpenMP(Options{Release: r, Triple: triple}, []Binary{bin})
			if err != nil {
				t.Fatal(err)
			}
			ours := writeObject(t, o)
			wrapper := filepath.Join(dir, "wrapper.o")
			if err := os.WriteFile(wrapper, ours, 0o644); err != nil {
				t.Fatal(err)
			}
			// The same object as clang-offload-wrapper and clang make of
			// the real image.
			compareViews(t, view(t, readObject(t, offloadWrapperObject(t, link, [][]byte{data}))), view(t, readObject(t, ours)), nil)

			prog, want := filepath.Join(dir, "vadd"), filepath.Join(dir, "vadd-clang")
			hostLink := []string{cc, host, wrapper, "-o", prog, "-L" + rt, "-lomp", "-lomptarget", "-Wl,-rpath," + rt}
			if !slices.Contains(link.HostLink, "-pie") {
				hostLink = append(hostLink, "-no-pie") // clang-13 links without PIE
			}
			runTool(t, hostLink)
			runTool(t, []string{clang, "-fopenmp", "-fopenmp-targets=" + triple, obj, "-o", want, "-L" + rt, "-Wl,-rpath," + rt})
			run := func(path string) (string, string) {
				t.Helper()
				cmd := exec.Command(path)
				cmd.Env = append(os.Environ(), "LIBOMPTARGET_INFO=1", "LD_LIBRARY_PATH="+rt)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("%s: %v\n%s%s", path, err, stdout.String(), stderr.String())
				}
				return stdout.String(), stderr.String()
			}
			gotOut, gotErr := run(prog)
			wantOut, wantErr := run(want)
			if gotOut != wantOut || !strings.Contains(gotOut, "sum = 1571328") {
				t.Errorf("our program printed %q, clang-%d's %q", gotOut, major, wantOut)
			}
			const ran = "Libomptarget device 0 info: Entering OpenMP kernel"
			if !strings.Contains(gotErr, ran) || !strings.Contains(wantErr, ran) {
				t.Errorf("the kernel did not run on the device:\nours:\n%s\nclang-%d's:\n%s", gotErr, major, wantErr)
			}
		})
	}
}
