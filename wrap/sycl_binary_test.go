package wrap

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
)

// syclBinaryModule is the module that wrapSYCLBinaries of LLVM main after
// 22 builds for the buffer bin when clang-linker-wrapper calls it (no
// finalized image, no registration function asked back), written out as
// OffloadWrapper.cpp builds it (llvm-project #193876 as at 52217898396 in
// the search index, with #216419's section choice and #217173's
// registration, whose IR the CodeGenSYCL test offload-include-binary.cpp
// shows):
//
//   - embedBinary: the buffer as an internal unnamed_addr constant
//     `.sycl_offloading.binary` in section ".llvm.offloading" (not the
//     finalized image's ".sycl_fatbin"), no alignment set; Start is the
//     `getelementptr (i64 0, i64 0)` of it, which folds to the global; Size
//     the buffer's length as an i64;
//   - createRegisterFatbinFunction: internal `sycl.descriptor_reg` in
//     .text.startup (getStartupSection of an ELF triple) calling
//     `void __sycl_register_lib(ptr, i64)` with Start and Size, then
//     `i32 atexit(ptr)` with unreg, appended to llvm.global_ctors with
//     priority 101;
//   - createUnregisterFunction: internal `sycl.descriptor_unreg` calling
//     `void __sycl_unregister_lib(ptr, i64)` with Start and Size; defined
//     after reg (the CodeGenSYCL test checks them in that order).
//
// The module is clang-linker-wrapper's "offload.wrapper.module" for the host
// triple; clang-linker-wrapper compiles it as llc -relocation-model=pic does.
func syclBinaryModule(host string, bin []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "; ModuleID = 'offload.wrapper.module'\nsource_filename = \"offload.wrapper.module\"\ntarget triple = %q\n\n", host)
	b.WriteString("@.sycl_offloading.binary = internal unnamed_addr constant [")
	fmt.Fprintf(&b, "%d x i8] c\"", len(bin))
	for _, c := range bin {
		fmt.Fprintf(&b, "\\%02X", c)
	}
	b.WriteString("\", section \".llvm.offloading\"\n")
	b.WriteString("@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @sycl.descriptor_reg, ptr null }]\n\n")
	start := fmt.Sprintf("getelementptr ([%d x i8], ptr @.sycl_offloading.binary, i64 0, i64 0)", len(bin))
	fmt.Fprintf(&b, "define internal void @sycl.descriptor_reg() section \".text.startup\" {\nentry:\n")
	fmt.Fprintf(&b, "  call void @__sycl_register_lib(ptr %s, i64 %d)\n", start, len(bin))
	b.WriteString("  %0 = call i32 @atexit(ptr @sycl.descriptor_unreg)\n  ret void\n}\n\n")
	b.WriteString("declare void @__sycl_register_lib(ptr, i64)\n\ndeclare i32 @atexit(ptr)\n\n")
	fmt.Fprintf(&b, "define internal void @sycl.descriptor_unreg() section \".text.startup\" {\nentry:\n")
	fmt.Fprintf(&b, "  call void @__sycl_unregister_lib(ptr %s, i64 %d)\n  ret void\n}\n\n", start, len(bin))
	b.WriteString("declare void @__sycl_unregister_lib(ptr, i64)\n")
	return b.String()
}

// syclSPIRV is a stand-in SPIR-V module of n bytes: the magic number, then
// a pattern without zero bytes (so that no size of it is a C string).
func syclSPIRV(n int) []byte {
	b := []byte{0x03, 0x02, 0x23, 0x07}
	for i := 0; len(b) < n; i++ {
		b = append(b, byte(1+i%251))
	}
	return b[:n]
}

func syclSPIRVImage(kernels string) offloadbinary.Image {
	return offloadbinary.Image{Kind: offload.ImageSPIRV, OffloadKind: offload.OffloadSYCL,
		Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "spirv64-unknown-unknown"}, {Key: "arch", Value: ""}, {Key: "symbols", Value: kernels}}}
}

// syclBinaryCases are OffloadBinaries as LLVM main's tools write them for
// the SYCL wrapper: one image, several in one binary (clang-sycl-linker's
// output since #193876), compressed with zstd and zlib, a version-1 binary
// of 22 (which main reads), and one large enough that its size takes two
// instructions on AArch64.
func syclBinaryCases(t *testing.T) []struct {
	name string
	bin  []byte
} {
	t.Helper()
	r24, r22 := lookupRelease(t, 24), lookupRelease(t, 22)
	type kase = struct {
		name string
		bin  []byte
	}
	var out []kase
	one, err := offloadbinary.MarshalBinary(r24, ptr(syclSPIRVImage("vadd\nfill")), syclSPIRV(200))
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, kase{"one-image", one})
	ims := []offloadbinary.ImageData{
		{Image: syclSPIRVImage("a\nb"), Data: bytes.NewReader(syclSPIRV(64)), Size: 64},
		{Image: syclSPIRVImage("c"), Data: bytes.NewReader(syclSPIRV(301)), Size: 301},
		{Image: syclSPIRVImage(""), Data: bytes.NewReader(nil), Size: 0},
	}
	var multi bytes.Buffer
	if _, err := offloadbinary.WriteBinaries(&multi, r24, ims); err != nil {
		t.Fatal(err)
	}
	out = append(out, kase{"three-images", multi.Bytes()})
	for _, format := range []string{"zstd", "zlib"} {
		for i := range ims {
			ims[i].Data.(*bytes.Reader).Seek(0, io.SeekStart)
		}
		var packed bytes.Buffer
		if _, err := offloadbinary.WriteCompressedBinaries(&packed, r24, ims, offloadbinary.Compression{Format: format}); err != nil {
			t.Fatal(err)
		}
		out = append(out, kase{format, packed.Bytes()})
	}
	v1, err := offloadbinary.MarshalBinary(r22, ptr(syclSPIRVImage("k")), syclSPIRV(96))
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, kase{"version-1", v1})
	large, err := offloadbinary.MarshalBinary(r24, ptr(syclSPIRVImage("k")), syclSPIRV(70001))
	if err != nil {
		t.Fatal(err)
	}
	if len(large)&0xffff == 0 || len(large)>>16 == 0 {
		t.Fatalf("the large binary's size %#x does not take two AArch64 instructions", len(large))
	}
	out = append(out, kase{"large", large})
	return out
}

func ptr[T any](v T) *T { return &v }

// wrapSYCLBinary wraps bin as --llvm 24 does for host and returns the
// object's bytes, the same on every write.
func wrapSYCLBinary(t *testing.T, host string, bin []byte) []byte {
	t.Helper()
	o, err := SYCLBinary(Options{Release: lookupRelease(t, 24), Triple: host}, bytes.NewReader(bin), int64(len(bin)))
	if err != nil {
		t.Fatal(err)
	}
	return tooltest.SameBytes(t, func(w io.Writer) error { _, err := elfobj.Write(w, o); return err })
}

// TestSYCLBinaryMatchesLLC: no LLVM release has main's SYCL form, so the
// oracle is llc-22 on the module main's wrapSYCLBinaries builds
// (syclBinaryModule), for x86-64 and AArch64 hosts: our object must be
// llc's, section by section (bytes included), symbol by symbol and
// relocation by relocation. The default run compiles a tooltest.Sample of
// the hosts × syclBinaryCases: each case once, on alternate hosts, the
// large one on AArch64.
func TestSYCLBinaryMatchesLLC(t *testing.T) {
	t.Parallel()
	llc := tooltest.Tool(t, "llc", 22)
	cases := syclBinaryCases(t)
	for j, c := range cases {
		for i, host := range syclHosts {
			t.Run(c.name+"/"+host, func(t *testing.T) {
				tooltest.Sample(t, i, j, len(syclHosts), len(cases))
				t.Parallel()
				theirs := runLLC(t, llc, host, syclBinaryModule(host, c.bin))
				ours := wrapSYCLBinary(t, host, c.bin)
				compareViews(t, view(t, readObject(t, theirs)), view(t, readObject(t, ours)), nil)
			})
		}
	}
}

// TestSYCLBinaryEmbedsAsGiven: the binary is in .llvm.offloading byte for
// byte as given, a compressed one still compressed, and both calls pass its
// start and size.
func TestSYCLBinaryEmbedsAsGiven(t *testing.T) {
	for _, c := range syclBinaryCases(t) {
		f := readObject(t, wrapSYCLBinary(t, "x86_64-unknown-linux-gnu", c.bin))
		secs := f.SectionsByType(elfobj.SHT_LLVM_OFFLOADING)
		if len(secs) != 1 {
			t.Fatalf("%s: %d offloading sections", c.name, len(secs))
		}
		got, err := secs[0].Data()
		if err != nil || !bytes.Equal(got, c.bin) {
			t.Errorf("%s: .llvm.offloading holds %d bytes (%v), not the %d given", c.name, len(got), err, len(c.bin))
		}
		text, err := f.Section(".text.startup").Data()
		if err != nil {
			t.Fatal(err)
		}
		// x86-64: `mov $size, %esi` in both functions.
		mov := append([]byte{0xbe}, byte(len(c.bin)), byte(len(c.bin)>>8), byte(len(c.bin)>>16), byte(len(c.bin)>>24))
		if n := bytes.Count(text, mov); n != 2 {
			t.Errorf("%s: `mov $%d, %%esi` %d times in .text.startup, want 2", c.name, len(c.bin), n)
		}
	}
}

// TestSYCLBinaryRefuses lists what SYCLBinary refuses, and why.
func TestSYCLBinaryRefuses(t *testing.T) {
	r24 := lookupRelease(t, 24)
	good, err := offloadbinary.MarshalBinary(r24, ptr(syclSPIRVImage("k")), syclSPIRV(40))
	if err != nil {
		t.Fatal(err)
	}
	omp, err := offloadbinary.MarshalBinary(r24, ptr(offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "generic")), []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	host := "x86_64-unknown-linux-gnu"
	for _, c := range []struct {
		name string
		opt  Options
		bin  []byte
		want error
	}{
		{"LLVM 22", Options{Release: lookupRelease(t, 22), Triple: host}, good, goffload.ErrUnsupported},
		{"LLVM 21", Options{Release: lookupRelease(t, 21), Triple: host}, good, goffload.ErrUnsupported},
		// 23 registers the whole binary from a constructor and destructor
		// of priority 1 (before #217173): not written.
		{"LLVM 23", Options{Release: lookupRelease(t, 23), Triple: host}, good, goffload.ErrUnsupported},
		{"suffix", Options{Release: r24, Triple: host, Suffix: "_x"}, good, goffload.ErrUnsupported},
		{"relocatable", Options{Release: r24, Triple: host, Relocatable: true}, good, goffload.ErrUnsupported},
		{"ppc64le host", Options{Release: r24, Triple: "powerpc64le-unknown-linux-gnu"}, good, goffload.ErrUnsupported},
		{"windows host", Options{Release: r24, Triple: "x86_64-pc-windows-msvc"}, good, goffload.ErrUnsupported},
		{"empty", Options{Release: r24, Triple: host}, nil, goffload.ErrInvalid},
		{"two binaries", Options{Release: r24, Triple: host}, append(append([]byte(nil), good...), good...), goffload.ErrInvalid},
		{"an OpenMP image", Options{Release: r24, Triple: host}, omp, goffload.ErrInvalid},
		{"trailing bytes", Options{Release: r24, Triple: host}, append(append([]byte(nil), good...), 1, 2, 3, 4, 5, 6, 7, 8), goffload.ErrInvalid},
		{"truncated", Options{Release: r24, Triple: host}, good[:len(good)-8], goffload.ErrTruncated},
		{"not a binary", Options{Release: r24, Triple: host}, bytes.Repeat([]byte{1}, 64), goffload.ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := SYCLBinary(c.opt, bytes.NewReader(c.bin), int64(len(c.bin)))
			if err == nil || o != nil {
				t.Fatalf("SYCLBinary gave %v, %v; want an error", o, err)
			}
			if !errors.Is(err, c.want) {
				t.Errorf("error %v does not match %v", err, c.want)
			}
			if c.want == goffload.ErrUnsupported && c.opt.Release.Major != 24 && !strings.Contains(err.Error(), c.opt.Release.String()) {
				t.Errorf("error %v does not name %v", err, c.opt.Release)
			}
		})
	}
	if _, err := SYCLBinary(Options{Release: r24, Triple: host}, nil, 8); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("nil reader: %v", err)
	}
}

// TestSYCLBinaryStreams wraps a 2 GiB binary: memory does not grow with it.
func TestSYCLBinaryStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 GiB")
	}
	const size = 2<<30 + 3
	bin, _, err := offloadbinary.BinaryReader(lookupRelease(t, 22), ptr(syclSPIRVImage("k")), zeros{}, size)
	if err != nil {
		t.Fatal(err)
	}
	o, err := SYCLBinary(Options{Release: lookupRelease(t, 24), Triple: "aarch64-unknown-linux-gnu"}, bin, bin.Size())
	if err != nil {
		t.Fatal(err)
	}
	writesStreamed(t, o, bin.Size())
}

// TestSYCLBinaryRunsUnderQEMU links a program for x86-64 and one for
// AArch64 hosts with their GNU toolchains from the objects of SYCLBinary
// of every case (syclBinaryCases: several registration objects, each of
// its own binary, in one program) and testdata/sycl_runtime.c, a stand-in
// for libsycl that prints what it is given; it runs them (under qemu-user
// but for x86-64) and checks that registration runs before main with each
// binary's bytes and size, at an 8-byte-aligned address, and
// unregistration at exit with the same.
func TestSYCLBinaryRunsUnderQEMU(t *testing.T) {
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "sycl_runtime.c"))
	if err != nil {
		t.Fatal(err)
	}
	cases := syclBinaryCases(t)
	t.Parallel()
	for _, m := range crossMachines[:2] {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			cc, run := crossTools(t, m)
			dir := t.TempDir()
			args := []string{cc, "-O1", "-Wall", "-Werror", src}
			var want []string
			for _, c := range cases {
				wrapper := c.name + "-wrapper.o"
				writeFile(t, filepath.Join(dir, wrapper), wrapSYCLBinary(t, m.triple, c.bin))
				args = append(args, wrapper)
				h := fnv.New64a()
				h.Write(c.bin)
				want = append(want, fmt.Sprintf("register: %d bytes, fnv %016x, aligned 1", len(c.bin), h.Sum64()))
			}
			if o, e := runIn(t, dir, append(args, "-o", "prog")...); o != "" || e != "" {
				t.Errorf("%s printed:\n%s%s", cc, o, e)
			}
			got, stderr := runIn(t, dir, append(run, filepath.Join(dir, "prog"))...)
			if stderr != "" {
				t.Errorf("the program printed on stderr:\n%s", stderr)
			}
			// The constructors run in the order the linker puts them in,
			// the destructors in the opposite one.
			lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
			n := len(cases)
			if len(lines) != 2*n+1 || lines[n] != "main" {
				t.Fatalf("the program printed\n%s\nwant %d registrations, main, %d unregistrations", got, n, n)
			}
			registered := slices.Sorted(slices.Values(lines[:n]))
			slices.Sort(want)
			for i := range want {
				if registered[i] != want[i] {
					t.Errorf("registered\n%s\nwant (in any order)\n%s", strings.Join(registered, "\n"), strings.Join(want, "\n"))
					break
				}
			}
			for _, l := range lines[n+1:] {
				if l != "unregister: same binary" {
					t.Errorf("the program printed %q at exit, want every binary unregistered once:\n%s", l, got)
				}
			}
		})
	}
}
