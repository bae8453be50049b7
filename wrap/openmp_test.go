package wrap

import (
	"bytes"
	"crypto/md5"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

func lookupRelease(t testing.TB, major int) *release.Release {
	t.Helper()
	r, err := release.Lookup(major)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wrapperReleases are the releases whose clang-linker-wrapper objects
// TestOpenMPMatchesLinkerWrapper compares with ours: two of each form of
// the wrapper module (15 and 16 register the whole binary from a
// constructor and destructor of priority 1, 19 and 22 the image from a
// constructor of priority 101 with atexit), the rows and columns of its
// sample.
var wrapperReleases = [2][2]int{{15, 16}, {19, 22}}

// freshOpenMPWrapper returns the wrapper object that clang-linker-wrapper
// of release major makes (--save-temps) when clang-N compiles and links
// testdata/t.c for an x86-64 offload target, built once per test binary.
// The host linker is linkShared: the registration object is made before the
// host link, which the comparison does not need.
func freshOpenMPWrapper(t testing.TB, major int) string {
	t.Helper()
	clang := tooltest.Tool(t, "clang", major)
	linker := linkShared(t)
	return shared(t, fmt.Sprintf("openmp wrapper of t.c by clang-%d", major), func(t testing.TB, dir string) string {
		src, err := filepath.Abs(filepath.Join("testdata", "t.c"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(clang, "-O0", "-fopenmp", "-fopenmp-version=51", "-fopenmp-targets=x86_64-unknown-linux-gnu", src, "-o", "a.out",
			"-L/usr/lib/llvm-19/lib", "-Wl,--save-temps", "--ld-path="+linker)
		cmd.Dir = dir
		runCmd(t, cmd)
		found, _ := filepath.Glob(filepath.Join(dir, "*wrapper.o"))
		if len(found) != 1 {
			t.Fatalf("clang-%d --save-temps left %q", major, found)
		}
		return found[0]
	})
}

// embeddedBinary returns the OffloadBinary that a wrapper object embeds.
func embeddedBinary(t *testing.T, f *elfobj.File) []byte {
	t.Helper()
	secs := f.SectionsByType(elfobj.SHT_LLVM_OFFLOADING)
	if len(secs) != 1 {
		t.Fatalf("%d offloading sections", len(secs))
	}
	data, err := secs[0].Data()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeObject(t *testing.T, o *elfobj.Object) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOpenMPMatchesLinkerWrapper wraps the image of clang-linker-wrapper's own
// wrapper object with the same release and compares the objects, section by
// section, then byte for byte: the
// fixtures in offload/testdata/llvm/wrapper of every release, and fresh
// ones of each release's clang (freshOpenMPWrapper). The default run makes
// fresh ones of a tooltest.Sample of wrapperReleases, one release of each
// form of the module (15 and 22).
func TestOpenMPMatchesLinkerWrapper(t *testing.T) {
	t.Parallel()
	for i, form := range wrapperReleases {
		for j, major := range form {
			for _, fresh := range []bool{false, true} {
				name := fmt.Sprintf("llvm%d/fixture", major)
				if fresh {
					name = fmt.Sprintf("llvm%d/fresh", major)
				}
				t.Run(name, func(t *testing.T) {
					path := filepath.Join("..", "offload", "testdata", "llvm", "wrapper", fmt.Sprintf("openmp-wrapper-llvm%d.o", major))
					if fresh {
						tooltest.Sample(t, i, j, len(wrapperReleases), len(form))
						t.Parallel()
						path = freshOpenMPWrapper(t, major)
					}
					data, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					theirs := readObject(t, data)
					bin := embeddedBinary(t, theirs)
					b, err := FromBinary(bytes.NewReader(bin), int64(len(bin)))
					if err != nil {
						t.Fatal(err)
					}
					o, err := OpenMP(Options{Release: lookupRelease(t, major), Triple: "x86_64-unknown-linux-gnu"}, []Binary{b})
					if err != nil {
						t.Fatal(err)
					}
					out := writeObject(t, o)
					compareViews(t, view(t, theirs), view(t, readObject(t, out)), nil)
					if !bytes.Equal(out, data) {
						t.Errorf("the same sections, but not the same file: %d bytes, LLVM %d's %d (first difference at byte %#x)", len(out), major, len(data), firstDifference(out, data))
					}
				})
			}
		}
	}
}

// firstDifference returns the offset of the first byte where a and b
// differ.
func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestOpenMPStreamsImages wraps a 2 GiB image: memory does not grow with it.
func TestOpenMPStreamsImages(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 GiB")
	}
	const size = 2<<30 + 5
	r := lookupRelease(t, 19)
	b, err := FromImage(r, offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", ""), io.NewSectionReader(zeros{}, 0, size))
	if err != nil {
		t.Fatal(err)
	}
	o, err := OpenMP(Options{Release: r, Triple: "x86_64-unknown-linux-gnu"}, []Binary{b})
	if err != nil {
		t.Fatal(err)
	}
	writesStreamed(t, o, size)
	_ = elf.EM_X86_64
}

// TestRelocatableSuffix pins the suffix of the example in
// docs/registration.md#relocatable-link: digest 861c240c659aa5dd... gives
// _dda59a650c241c86; leading zeros are dropped.
func TestRelocatableSuffix(t *testing.T) {
	for _, c := range []struct{ digest, want string }{
		{"861c240c659aa5dd0000000000000000", "_dda59a650c241c86"},
		{"0102030405060700ffffffffffffffff", "_7060504030201"},
	} {
		var sum [md5.Size]byte
		b, _ := hex.DecodeString(c.digest)
		copy(sum[:], b)
		if got := digestSuffix(sum); got != c.want {
			t.Errorf("%s: %s, want %s", c.digest, got, c.want)
		}
	}
	// md5("goffload") = 2494da6d95c0aab8220c10b81b16a37a, as Python's hashlib computes it.
	if got, err := RelocatableSuffix(strings.NewReader("goffload")); err != nil || got != goffloadSuffix {
		t.Errorf("RelocatableSuffix(goffload) = %s, want %s", got, goffloadSuffix)
	}
}

const goffloadSuffix = "_b8aac0956dda9424"

// TestOpenMPRefusesBinariesItCannotPointInto: a Binary whose image lies
// outside it, or whose size is negative, is refused with its index.
func TestOpenMPRefusesBinariesItCannotPointInto(t *testing.T) {
	data := bytes.Repeat([]byte{1}, 64)
	good := Binary{Data: io.NewSectionReader(bytes.NewReader(data), 0, 64), ImageOffset: 8, ImageSize: 56}
	for _, c := range []struct {
		name string
		bad  Binary
		is   error
	}{
		{"image offset past the end", Binary{Data: io.NewSectionReader(bytes.NewReader(data), 0, 64), ImageOffset: 72, ImageSize: 0}, offloadbinary.ErrImageRange},
		{"image end past the end", Binary{Data: io.NewSectionReader(bytes.NewReader(data), 0, 64), ImageOffset: 8, ImageSize: 57}, offloadbinary.ErrImageRange},
		{"image size wraps", Binary{Data: io.NewSectionReader(bytes.NewReader(data), 0, 64), ImageOffset: 8, ImageSize: 1<<64 - 4}, offloadbinary.ErrImageRange},
		{"no bytes", Binary{ImageOffset: 8, ImageSize: 8}, offloadbinary.ErrImageRange},
	} {
		t.Run(c.name, func(t *testing.T) {
			o, err := OpenMP(Options{Release: lookupRelease(t, 19), Triple: "x86_64-unknown-linux-gnu"}, []Binary{good, c.bad})
			if o != nil || err == nil || !strings.Contains(err.Error(), "binary 1:") || (c.is != nil && !errors.Is(err, c.is)) {
				t.Errorf("got %v, %v; want an error naming binary 1 (matching %v)", o, err, c.is)
			}
		})
	}
	if _, err := OpenMP(Options{Release: lookupRelease(t, 19), Triple: "x86_64-unknown-linux-gnu"}, []Binary{good}); err != nil {
		t.Errorf("a good binary: %v", err)
	}
}

// TestWrapRefusesHostsWithoutELF: a Windows or Apple host gets
// goffload.ErrUnsupported, not an ELF object it cannot link.
func TestWrapRefusesHostsWithoutELF(t *testing.T) {
	bin := Binary{Data: io.NewSectionReader(bytes.NewReader(make([]byte, 64)), 0, 64), ImageOffset: 8, ImageSize: 56}
	fb := tooltest.CUDAFatbinary()
	for _, triple := range []string{"x86_64-pc-windows-msvc", "x86_64-apple-macosx", "arm64-apple-darwin23.1.0", "aarch64-pc-windows-msvc"} {
		if o, err := OpenMP(Options{Release: lookupRelease(t, 19), Triple: triple}, []Binary{bin}); o != nil || !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("OpenMP for %s: %v, %v; want goffload.ErrUnsupported", triple, o, err)
		}
		if o, err := GPU(Options{Release: lookupRelease(t, 22), Triple: triple}, offload.OffloadCUDA, io.NewSectionReader(bytes.NewReader(fb), 0, int64(len(fb)))); o != nil || !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("GPU for %s: %v, %v; want goffload.ErrUnsupported", triple, o, err)
		}
	}
}

// TestFromBinaryRefusesImageOutside patches a binary's ImageSize past its
// end: FromBinary refuses it, as OpenMP would.
func TestFromBinaryRefusesImageOutside(t *testing.T) {
	r, _ := release.Lookup(19)
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "")
	var buf bytes.Buffer
	if _, err := offloadbinary.WriteBinary(&buf, r, &im, bytes.NewReader(make([]byte, 16)), 16); err != nil {
		t.Fatal(err)
	}
	bin := buf.Bytes()
	if _, err := FromBinary(bytes.NewReader(bin), int64(len(bin))); err != nil {
		t.Fatal(err)
	}
	eoff := binary.LittleEndian.Uint64(bin[16:])
	binary.LittleEndian.PutUint64(bin[eoff+32:], 1<<20) // Entry.ImageSize
	if _, err := FromBinary(bytes.NewReader(bin), int64(len(bin))); !errors.Is(err, offloadbinary.ErrImageRange) {
		t.Errorf("got %v, want ErrImageRange", err)
	}
}

// TestFromBinaryInflates: a compressed binary (version 3) is embedded
// inflated, its image where ImageOffset and ImageSize say.
func TestFromBinaryInflates(t *testing.T) {
	r, _ := release.Lookup(24)
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "generic")
	image := bytes.Repeat([]byte("device code "), 100)
	var buf bytes.Buffer
	if _, err := offloadbinary.WriteCompressedBinary(&buf, r, &im, bytes.NewReader(image), int64(len(image)), offloadbinary.Compression{Format: "zlib"}); err != nil {
		t.Fatal(err)
	}
	plain, err := offloadbinary.MarshalBinary(r, &im, image)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FromBinary(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, b.Data.Size())
	if _, err := b.Data.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain) || !bytes.Equal(got[b.ImageOffset:b.ImageOffset+b.ImageSize], image) {
		t.Errorf("embedded %d bytes (%d compressed), image at %d+%d; want the %d-byte uncompressed binary", b.Data.Size(), buf.Len(), b.ImageOffset, b.ImageSize, len(plain))
	}
}

// TestWrapRefusesBinaryWithoutEntries: a version-3 binary whose
// EntriesCount is 0 (40 bytes, its header alone) is refused, not indexed
// (it made wrap --llvm 24 panic), whether read alone or from a section.
func TestWrapRefusesBinaryWithoutEntries(t *testing.T) {
	bin := make([]byte, offloadbinary.HeaderSizeV3)
	copy(bin, offloadbinary.Magic[:])
	binary.LittleEndian.PutUint32(bin[4:], 3)
	binary.LittleEndian.PutUint64(bin[8:], offloadbinary.HeaderSizeV3)
	binary.LittleEndian.PutUint64(bin[16:], offloadbinary.HeaderSizeV3)
	if _, err := FromBinary(bytes.NewReader(bin), int64(len(bin))); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("FromBinary: got %v, want ErrInvalid", err)
	}
	r, _ := release.Lookup(24)
	if _, err := ReadBinaries(io.NewSectionReader(bytes.NewReader(bin), 0, int64(len(bin))), r); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("ReadBinaries: got %v, want ErrInvalid", err)
	}
}
