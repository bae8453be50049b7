package wrap

import (
	"bytes"
	"debug/elf"
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
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

var syclHosts = []string{"x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"}

// linkerWrapperSYCL runs clang-linker-wrapper of LLVM 22 in dir for host
// with args and --save-temps, and returns the SYCL registration object it
// compiled (<out>.sycl.image.wrapper.o). path is put first in $PATH: the
// wrapper runs clang --sycl-link, which runs clang-sycl-linker from $PATH.
func linkerWrapperSYCL(t *testing.T, dir, host, path string, args ...string) []byte {
	t.Helper()
	clw := tooltest.Tool(t, "clang-linker-wrapper", 22)
	linker, err := exec.LookPath("true")
	if err != nil {
		tooltest.Missing(t, "no `true` program to stand in for the host linker")
	}
	cmd := exec.Command(clw, append([]string{"--host-triple=" + host, "--save-temps", "--linker-path=" + linker, "-o", "a.out"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"))
	runCmd(t, cmd)
	obj, err := os.ReadFile(filepath.Join(dir, "a.out.sycl.image.wrapper.o"))
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// wrapSYCLBuffer wraps the SYCL images of the OffloadBinaries in buf as
// LLVM 22 does for host, and returns the object's bytes, the same on every
// write.
func wrapSYCLBuffer(t *testing.T, host string, buf []byte) []byte {
	t.Helper()
	r := lookupRelease(t, 22)
	images, err := SYCLImages(r, bytes.NewReader(buf), int64(len(buf)))
	if err != nil {
		t.Fatal(err)
	}
	o, err := SYCL(Options{Release: r, Triple: host}, images)
	if err != nil {
		t.Fatal(err)
	}
	return tooltest.SameBytes(t, func(w io.Writer) error { _, err := elfobj.Write(w, o); return err })
}

// TestSYCLMatchesLinkerWrapper links SYCL device code with
// clang-linker-wrapper of LLVM 22 (OpenCL kernels compiled for
// spirv64-unknown-unknown, packaged as a SYCL OffloadBinary, embedded in a
// host object; the wrapper device-links them with clang --sycl-link, that is
// clang-sycl-linker and the SPIR-V back end, and wraps its output with
// wrapSYCLBinaries) and compares its registration object with ours of the
// binary its device link made, section by section, symbol by symbol.
func TestSYCLMatchesLinkerWrapper(t *testing.T) {
	t.Parallel()
	clang := tooltest.Tool(t, "clang", 22)
	sycl := tooltest.Tool(t, "clang-sycl-linker", 22)
	src, err := filepath.Abs(filepath.Join("testdata", "sycl_kernels.cl"))
	if err != nil {
		t.Fatal(err)
	}
	// The kernels' bitcode, the same for every host. The builtins are
	// declared as clang declares them with -fdeclare-opencl-builtins (the
	// bitcode is the same as with opencl-c.h, which takes longer to parse).
	bc := shared(t, "sycl kernels of clang-22", func(t testing.TB, dir string) string {
		bc := filepath.Join(dir, "k.bc")
		runCmd(t, exec.Command(clang, "-cc1", "-triple", "spirv64-unknown-unknown", "-emit-llvm-bc", "-cl-std=CL2.0",
			"-finclude-default-header", "-fdeclare-opencl-builtins", src, "-o", bc))
		return bc
	})
	for _, host := range syclHosts {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			code, err := os.ReadFile(bc)
			if err != nil {
				t.Fatal(err)
			}
			r := lookupRelease(t, 22)
			bin, err := offloadbinary.MarshalBinary(r, &offloadbinary.Image{Kind: offload.ImageBitcode, OffloadKind: offload.OffloadSYCL,
				Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "spirv64-unknown-unknown"}, {Key: "arch", Value: ""}}}, code)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "k.o"), offloadingObject(t, bin))
			// clang --sycl-link runs "clang-sycl-linker" from $PATH, under
			// that name (the tool found may be clang-sycl-linker-22).
			tools := filepath.Join(dir, "bin")
			if err := os.Mkdir(tools, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(sycl, filepath.Join(tools, "clang-sycl-linker")); err != nil {
				t.Fatal(err)
			}
			theirs := linkerWrapperSYCL(t, dir, host, tools, "k.o")
			// The OffloadBinary clang-sycl-linker made, which the wrapper wrapped.
			linked, err := os.ReadFile(filepath.Join(dir, "a.out.spirv64..img"))
			if err != nil {
				t.Fatal(err)
			}
			images, err := SYCLImages(r, bytes.NewReader(linked), int64(len(linked)))
			if err != nil {
				t.Fatal(err)
			}
			if len(images) != 1 || !slices.Equal(images[0].Names(), []string{"vadd", "fill", "scale_by_a_factor_with_a_long_name"}) {
				t.Fatalf("clang-sycl-linker's binary holds %d images, the first with kernels %q", len(images), images[0].Names())
			}
			ours := wrapSYCLBuffer(t, host, linked)
			compareViews(t, view(t, readObject(t, theirs)), view(t, readObject(t, ours)), nil)
		})
	}
}

// syclTestImage is one OffloadBinary of a test: its image, kind and
// strings (symbols absent when noSymbols).
type syclTestImage struct {
	data            string
	kind            offload.ImageKind
	triple, symbols string
	noSymbols       bool
}

// syclCases are the inputs on which TestSYCLMatchesLinkerWrapperImages
// compares: several images, which clang-linker-wrapper 22 wraps only
// through --override-image (its device link makes one image a target).
var syclCases = []struct {
	name   string
	images []syclTestImage
}{
	// Each kind of .llvm.offloading LLVM's code generator tells apart: 4,
	// 8, 16 and 32 bytes, a C string, other data (with NULs, or short).
	{"section-kinds", []syclTestImage{
		{data: "abcd", symbols: "k"}, {data: "x\x00y\x00zzzzz", symbols: "k"}, {data: "abc\x00", symbols: "k"},
		{data: "12345678", symbols: "k"}, {data: "wxyz", symbols: "k"}, {data: strings.Repeat("0123456789abcdef", 2), symbols: "k"},
		{data: "0123456789abcdef", symbols: "k"}, {data: "ab", symbols: "k"},
	}},
	// Symbol lists as line_iterator reads them, names that LLVM renames,
	// an empty image without symbols, triples of 0, 15, 17 and 23 bytes,
	// image kinds of more than one byte.
	{"strings", []syclTestImage{
		{data: "\x03\x02\x23\x07" + strings.Repeat("\x01\x00\x00\x00spirv", 8), kind: 0x1ff, triple: "spirv64-unknown-unknown",
			symbols: "a\r\nb\n\n\r\nc\rd\nwith space\n"},
		{data: "", triple: "", noSymbols: true},
		{data: "\x00", triple: "spirv64-unknown", symbols: "k\nk.1\n"},
		{data: strings.Repeat("\x07\x00", 40), kind: offload.ImageBitcode, triple: "spirv64-unknown-x", symbols: "k\na"},
		{data: "zz", triple: "spirv64", symbols: ""},
	}},
}

// TestSYCLMatchesLinkerWrapperImages has clang-linker-wrapper of LLVM 22
// wrap the SYCL OffloadBinaries of each case (given with --override-image
// as an object holding them: the wrapper hands that object to
// wrapSYCLBinaries, which takes every binary in its .llvm.offloading) for
// x86-64 and AArch64 hosts, and compares the objects with ours. The
// default run takes a tooltest.Sample of the cases × hosts: each case on
// one host, each host with one case.
func TestSYCLMatchesLinkerWrapperImages(t *testing.T) {
	t.Parallel()
	r := lookupRelease(t, 22)
	for i, c := range syclCases {
		var buf []byte
		for _, im := range c.images {
			strs := []offloadbinary.KeyValue{{Key: "triple", Value: im.triple}}
			if !im.noSymbols {
				strs = append(strs, offloadbinary.KeyValue{Key: "symbols", Value: im.symbols})
			}
			b, err := offloadbinary.MarshalBinary(r, &offloadbinary.Image{Kind: im.kind, OffloadKind: offload.OffloadSYCL, Strings: strs}, []byte(im.data))
			if err != nil {
				t.Fatal(err)
			}
			buf = append(buf, b...)
		}
		for j, host := range syclHosts {
			t.Run(c.name+"/"+host, func(t *testing.T) {
				tooltest.Sample(t, i, j, len(syclCases), len(syclHosts))
				t.Parallel()
				dir := t.TempDir()
				writeFile(t, filepath.Join(dir, "images.o"), offloadingObject(t, buf))
				theirs := linkerWrapperSYCL(t, dir, host, "", "--override-image=sycl=images.o")
				compareViews(t, view(t, readObject(t, theirs)), view(t, readObject(t, wrapSYCLBuffer(t, host, buf))), nil)
			})
		}
	}
}

// offloadingObject returns an x86-64 object whose .llvm.offloading holds
// bins, as clang -fembed-offload-object makes it.
func offloadingObject(t *testing.T, bins []byte) []byte {
	t.Helper()
	o, err := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	o.Sections = append(o.Sections, &elfobj.Section{Name: ".llvm.offloading", Type: elfobj.SHT_LLVM_OFFLOADING,
		Flags: elfobj.SHF_EXCLUDE, Addralign: 8, Data: bins})
	return writeObject(t, o)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSYCLReleases: only LLVM 22 wraps SYCL in the descriptor form; the
// others are refused with an error that names the release.
func TestSYCLReleases(t *testing.T) {
	images := []SYCLImage{{Data: io.NewSectionReader(strings.NewReader("image"), 0, 5), Triple: "spirv64", Symbols: "k"}}
	for _, r := range release.All() {
		_, err := SYCL(Options{Release: r, Triple: "x86_64-unknown-linux-gnu"}, images)
		if r.Major == 22 {
			if err != nil {
				t.Errorf("%v: %v", r, err)
			}
			continue
		}
		if !errors.Is(err, goffload.ErrUnsupported) || !strings.Contains(fmt.Sprint(err), r.String()) {
			t.Errorf("%v: error %v, want one naming the release and matching goffload.ErrUnsupported", r, err)
		}
	}
}

// TestSYCLRefuses lists the arguments SYCL refuses and why.
func TestSYCLRefuses(t *testing.T) {
	r := lookupRelease(t, 22)
	good := SYCLImage{Data: io.NewSectionReader(strings.NewReader("image"), 0, 5), Triple: "spirv64", Symbols: "k"}
	withNUL := good
	withNUL.Symbols = "a\x00b"
	for _, c := range []struct {
		name   string
		opt    Options
		images []SYCLImage
		want   error
	}{
		{"no image", Options{Release: r, Triple: "x86_64-linux-gnu"}, nil, nil},
		{"suffix", Options{Release: r, Triple: "x86_64-linux-gnu", Suffix: "_x"}, []SYCLImage{good}, goffload.ErrUnsupported},
		{"relocatable", Options{Release: r, Triple: "x86_64-linux-gnu", Relocatable: true}, []SYCLImage{good}, goffload.ErrUnsupported},
		{"ppc64le host", Options{Release: r, Triple: "powerpc64le-linux-gnu"}, []SYCLImage{good}, goffload.ErrUnsupported},
		{"windows host", Options{Release: r, Triple: "x86_64-pc-windows-msvc"}, []SYCLImage{good}, goffload.ErrUnsupported},
		{"NUL in symbols", Options{Release: r, Triple: "x86_64-linux-gnu"}, []SYCLImage{withNUL}, fs.ErrInvalid},
		{"65536 images", Options{Release: r, Triple: "x86_64-linux-gnu"}, make([]SYCLImage, 1<<16), goffload.ErrUnsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := SYCL(c.opt, c.images)
			if err == nil || o != nil {
				t.Fatalf("SYCL gave %v, %v; want an error", o, err)
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error %v does not match %v", err, c.want)
			}
		})
	}
}

// TestSYCLImagesReads reads the images of binaries one after another, and
// refuses an OpenMP image, a binary 22 cannot read (version 3) and trailing
// bytes.
func TestSYCLImagesReads(t *testing.T) {
	r := lookupRelease(t, 22)
	one := func(k offload.OffloadKind, data string, strs ...offloadbinary.KeyValue) []byte {
		b, err := offloadbinary.MarshalBinary(r, &offloadbinary.Image{Kind: offload.ImageSPIRV, OffloadKind: k, Strings: strs}, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	buf := append(one(offload.OffloadSYCL, "first", offloadbinary.KeyValue{Key: "triple", Value: "spirv64"}, offloadbinary.KeyValue{Key: "symbols", Value: "a\nb"}),
		one(offload.OffloadSYCL, "second image", offloadbinary.KeyValue{Key: "symbols", Value: "c"})...)
	images, err := SYCLImages(r, bytes.NewReader(buf), int64(len(buf)))
	if err != nil {
		t.Fatal(err)
	}
	if len(images) != 2 {
		t.Fatalf("%d images", len(images))
	}
	for i, want := range []struct {
		data, triple string
		names        []string
	}{{"first", "spirv64", []string{"a", "b"}}, {"second image", "", []string{"c"}}} {
		got, err := io.ReadAll(images[i].Data)
		if err != nil || string(got) != want.data || images[i].Triple != want.triple || !slices.Equal(images[i].Names(), want.names) ||
			images[i].Kind != offload.ImageSPIRV {
			t.Errorf("image %d: %q (%v), triple %q, names %q, kind %v", i, got, err, images[i].Triple, images[i].Names(), images[i].Kind)
		}
	}
	omp := one(offload.OffloadOpenMP, "x")
	if _, err := SYCLImages(r, bytes.NewReader(omp), int64(len(omp))); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("an OpenMP image: %v, want goffload.ErrInvalid", err)
	}
	v3, err := offloadbinary.MarshalBinary(lookupRelease(t, 24), &offloadbinary.Image{OffloadKind: offload.OffloadSYCL}, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SYCLImages(r, bytes.NewReader(v3), int64(len(v3))); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("a version-3 binary read as LLVM 22: %v, want goffload.ErrInvalid", err)
	}
	trail := append(slices.Clone(buf), 0, 0, 0, 0, 0, 0, 0, 0)
	if _, err := SYCLImages(r, bytes.NewReader(trail), int64(len(trail))); err == nil {
		t.Error("trailing bytes accepted")
	}
}

// TestSYCLNames reads symbol lists as LLVM's line_iterator does.
func TestSYCLNames(t *testing.T) {
	for _, c := range []struct {
		symbols string
		want    []string
	}{
		{"", nil},
		{"\n\n", nil},
		{"a", []string{"a"}},
		{"a\nb\n", []string{"a", "b"}},
		{"\r\na\r\n\r\nb", []string{"a", "b"}},
		{"a\r", []string{"a\r"}},
		{"a\r\r\nb\rc", []string{"a\r", "b\rc"}},
		{"\r", []string{"\r"}},
	} {
		im := SYCLImage{Symbols: c.symbols}
		if got := im.Names(); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.symbols, got, c.want)
		}
	}
}

// TestSYCLClass tells the section kinds apart as LLVM does.
func TestSYCLClass(t *testing.T) {
	for _, c := range []struct {
		data    string
		flags   elf.SectionFlag
		entsize uint64
	}{
		{"", elf.SHF_ALLOC, 0},
		{"\x00", elf.SHF_ALLOC | elf.SHF_MERGE | elf.SHF_STRINGS, 1},
		{"\x00\x00\x00\x00", elf.SHF_ALLOC | elf.SHF_MERGE, 4},
		{"abc\x00", elf.SHF_ALLOC | elf.SHF_MERGE | elf.SHF_STRINGS, 1},
		{"a\x00c\x00", elf.SHF_ALLOC | elf.SHF_MERGE, 4},
		{"abcde", elf.SHF_ALLOC, 0},
		{strings.Repeat("x", 100<<10) + "\x00", elf.SHF_ALLOC | elf.SHF_MERGE | elf.SHF_STRINGS, 1},
		{strings.Repeat("x", 100<<10) + "\x00\x00", elf.SHF_ALLOC, 0},
		{strings.Repeat("y", 32), elf.SHF_ALLOC | elf.SHF_MERGE, 32},
	} {
		flags, entsize, err := syclClass(strings.NewReader(c.data), int64(len(c.data)))
		if err != nil || flags != c.flags || entsize != c.entsize {
			t.Errorf("%d bytes: %v %d %v, want %v %d", len(c.data), flags, entsize, err, c.flags, c.entsize)
		}
	}
}

// TestSYCLStreamsImages wraps a 2 GiB image: memory does not grow with it.
func TestSYCLStreamsImages(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 GiB")
	}
	const size = 2<<30 + 3
	o, err := SYCL(Options{Release: lookupRelease(t, 22), Triple: "x86_64-unknown-linux-gnu"},
		[]SYCLImage{{Data: io.NewSectionReader(zeros{}, 0, size), Triple: "spirv64-unknown-unknown", Symbols: "k"}})
	if err != nil {
		t.Fatal(err)
	}
	writesStreamed(t, o, size)
}
