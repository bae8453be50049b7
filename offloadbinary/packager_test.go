package offloadbinary

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// memFiles is an ImageSource over named byte slices.
func memFiles(files map[string][]byte) ImageSource {
	return func(name string) (io.Reader, int64, error) {
		data, ok := files[name]
		if !ok {
			return nil, 0, fmt.Errorf("%s: %w", name, os.ErrNotExist)
		}
		return bytes.NewReader(data), int64(len(data)), nil
	}
}

func readTestdata(t *testing.T, parts ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(append([]string{"..", "offload", "testdata", "llvm"}, parts...)...))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func mustRelease(t testing.TB, major int) *release.Release {
	t.Helper()
	r, err := release.Lookup(major)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func packageBytes(t *testing.T, r *release.Release, files map[string][]byte, args ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := Package(r, &buf, args, memFiles(files))
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("Package returned %d, wrote %d bytes", n, buf.Len())
	}
	return buf.Bytes()
}

// TestPackageMatchesFrozenPackager pins the packager of each measured release to
// what it wrote (testdata/llvm/README.md).
func TestPackageMatchesFrozenPackager(t *testing.T) {
	img1, img2 := readTestdata(t, "img1.bin"), readTestdata(t, "img2.bin")
	files := map[string][]byte{"img1.bin": img1, "img2.o": img2}
	kindArgs := []string{}
	for _, ext := range []string{"o", "bc", "cubin", "fatbin", "s", "spv", "bin"} {
		files["x."+ext] = img1
		kindArgs = append(kindArgs, fmt.Sprintf("file=x.%s,triple=t-%s,arch=a,kind=sycl", ext, ext))
	}
	for _, major := range []int{15, 16, 19, 22} {
		r := mustRelease(t, major)
		cases := []struct {
			file string
			args []string
		}{
			{fmt.Sprintf("single-llvm%d.bin", major), []string{"file=img1.bin,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp"}},
			{fmt.Sprintf("multi-llvm%d.bin", major), []string{
				"file=img1.bin,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp,zeta=1,alpha=2,feature=+ptx63",
				"file=img2.o,triple=amdgcn-amd-amdhsa,arch=gfx90a,kind=hip"}},
			{fmt.Sprintf("kinds%d.out", major), kindArgs},
		}
		for _, c := range cases {
			t.Run(c.file, func(t *testing.T) {
				want := readTestdata(t, "packager", c.file)
				got := packageBytes(t, r, files, c.args...)
				if !bytes.Equal(got, want) {
					t.Errorf("differs from clang-offload-packager-%d:\n got %x\nwant %x", major, got, want)
				}
			})
		}
	}
}

func TestParseImageArgRules(t *testing.T) {
	r15, r19, r22 := mustRelease(t, 15), mustRelease(t, 19), mustRelease(t, 22)
	t.Run("required", func(t *testing.T) {
		for _, c := range []struct {
			r   *release.Release
			arg string
			ok  bool
		}{
			{r19, "file=a.o", false}, {r22, "file=a.o", true}, {r22, "triple=x", false},
			{r15, "triple=x", false}, {r15, "file=a.o,triple=x", true},
		} {
			_, err := ParseImageArg(c.r, c.arg)
			if (err == nil) != c.ok {
				t.Errorf("%v %q: err = %v, want ok=%v", c.r, c.arg, err, c.ok)
			}
			if err != nil && !errors.Is(err, ErrPackagerArgs) {
				t.Errorf("%v %q: %v is not ErrPackagerArgs", c.r, c.arg, err)
			}
		}
	})
	t.Run("repeated keys join", func(t *testing.T) {
		imgs, err := ParseImageArg(r19, "file=a.o,triple=t,feature=+xnack,feature=+sramecc,novalue,a=b=c")
		if err != nil {
			t.Fatal(err)
		}
		im := imgs[0].Image
		for k, want := range map[string]string{"feature": "+xnack,+sramecc", "novalue": "", "a": "b=c", "triple": "t"} {
			if got, ok := im.Lookup(k); !ok || got != want {
				t.Errorf("%s = %q, %v; want %q", k, got, ok, want)
			}
		}
	})
	t.Run("files split from 17", func(t *testing.T) {
		for _, c := range []struct {
			r    *release.Release
			want []string
		}{{r15, []string{"a.o,b.cubin"}}, {r19, []string{"a.o", "b.cubin"}}} {
			imgs, err := ParseImageArg(c.r, "file=a.o,file=b.cubin,triple=t")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, im := range imgs {
				got = append(got, im.File)
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("%v: files %q, want %q", c.r, got, c.want)
			}
		}
	})
	t.Run("kind names", func(t *testing.T) {
		for _, c := range []struct {
			r    *release.Release
			kind string
			want offload.OffloadKind
		}{
			{r19, "sycl", offload.OffloadNone}, {r22, "sycl", offload.OffloadSYCL}, {r19, "hip", offload.OffloadHIP},
			{r19, "cuda,kind=hip", offload.OffloadNone}, {r22, "OpenMP", offload.OffloadNone},
		} {
			imgs, err := ParseImageArg(c.r, "file=a,triple=t,kind="+c.kind)
			if err != nil {
				t.Fatal(err)
			}
			if got := imgs[0].Image.OffloadKind; got != c.want {
				t.Errorf("%v kind=%s: %v, want %v", c.r, c.kind, got, c.want)
			}
		}
	})
}

// TestPackagerStringOrder pins the orders measured with the real packagers
// (docs/offload-binary.md#map-orders and the measurements noted in release.go).
func TestPackagerStringOrder(t *testing.T) {
	for _, c := range []struct {
		major int
		arg   string
		want  string
	}{
		{15, "file=f,triple=t,arch=a,kind=k,zeta=1,alpha=2,feature=f", "triple zeta alpha feature arch"},
		{16, "file=f,triple=t,arch=a,kind=k,zeta=1,alpha=2,feature=f", "triple zeta alpha feature arch"},
		{19, "file=f,triple=t,arch=a,kind=k,zeta=1,alpha=2,feature=f", "feature arch zeta triple alpha"},
		{22, "file=f,triple=t,arch=a,kind=k,zeta=1,alpha=2,feature=f", "feature arch zeta triple alpha"},
		// Collisions in bucket 0 of the StringMap: 15 orders the string map by
		// djbHash over the argument map's order, 16 over the DenseMap's.
		{15, "file=bc.o,triple=x,foo,=v,a=b=c", "triple a  foo"},
		{16, "file=bc.o,triple=x,foo,=v,a=b=c", " triple a foo"},
		{19, "file=bc.o,triple=x,foo,=v,a=b=c", " triple foo a"},
		{22, "file=bc.o,triple=x,foo,=v,a=b=c", " triple foo a"},
	} {
		imgs, err := ParseImageArg(mustRelease(t, c.major), c.arg)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, kv := range imgs[0].Image.Strings {
			keys = append(keys, kv.Key)
		}
		if got := strings.Join(keys, " "); got != c.want {
			t.Errorf("LLVM %d %q: order %q, want %q", c.major, c.arg, got, c.want)
		}
	}
}

func TestDetectImageKind(t *testing.T) {
	for _, c := range []struct {
		name string
		head string
		want offload.ImageKind
	}{
		{"a.o", "\x7fELF", offload.ImageObject}, {"a.o", "BC\xc0\xde", offload.ImageBitcode}, {"a.cubin", "\xde\xc0\x17\x0b", offload.ImageBitcode},
		{"a.cubin", "BC\xc0", offload.ImageCubin}, {"dir.x/a", "", offload.ImageNone}, {"a.fatbin", "", offload.ImageFatbinary},
		{"a.s", "", offload.ImagePTX}, {"a.spv", "", offload.ImageNone}, {"a.bc", "", offload.ImageBitcode}, {"..", "", offload.ImageNone}, {"-", "", offload.ImageNone},
	} {
		if got := offload.DetectImageKind(nil, c.name, []byte(c.head)); got != c.want {
			t.Errorf("DetectImageKind(%q, %q) = %v, want %v", c.name, c.head, got, c.want)
		}
	}
}

// FuzzParseImageArg: any argument gives images or an error, never a panic, and
// every image has the file and the string map the packager would write.
// What each release allocates is bounded by the argument and the binaries
// the images make: each file= is an image carrying every key and value
// (as LLVM's packager does), so N files and M strings make N times M
// strings, the output's size, not the argument's; decodeFuzzPerByte a byte
// of both, plus decodeFuzzFixed a release.
func FuzzParseImageArg(f *testing.F) {
	f.Add("file=a.o,triple=t,arch=sm_70,kind=openmp,feature=+x,feature=+y")
	f.Add("file=a.o,file=b.bc,triple=t,=v,novalue,a=b=c")
	f.Add(",,,=,==")
	f.Fuzz(func(t *testing.T, arg string) {
		for _, r := range release.All() {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			imgs, err := ParseImageArg(r, arg)
			if r.BinaryVersion == 0 {
				if !errors.Is(err, goffload.ErrUnsupported) {
					t.Fatalf("%v, which has no packager: %v, %v", r, imgs, err)
				}
				continue
			}
			if err != nil {
				if !errors.Is(err, ErrPackagerArgs) {
					t.Fatalf("%v: %v", r, err)
				}
				continue
			}
			if len(imgs) == 0 {
				t.Fatalf("%v: no image for %q", r, arg)
			}
			out := 0
			for _, im := range imgs {
				b, err := MarshalBinary(r, &im.Image, nil)
				if err != nil {
					t.Fatalf("%v: %v", r, err)
				}
				out += len(b)
			}
			runtime.ReadMemStats(&after)
			if got, bound := after.TotalAlloc-before.TotalAlloc, decodeFuzzPerByte*uint64(len(arg)+out)+decodeFuzzFixed; got > bound {
				t.Errorf("%v: %d bytes of argument, %d of binaries, allocated %d bytes, more than %d", r, len(arg), out, got, bound)
			}
		}
	})
}

// countingFiles is an ImageSource over named byte slices whose readers
// count their Close calls, and which may say a file is larger than it is.
type countingFiles struct {
	files  map[string][]byte
	extra  map[string]int64 // bytes a file's size claims past its end
	opened int
	closed int
}

type closeCounter struct {
	io.Reader
	fs *countingFiles
}

func (c closeCounter) Close() error { c.fs.closed++; return nil }

func (c *countingFiles) open(name string) (io.Reader, int64, error) {
	data, ok := c.files[name]
	if !ok {
		return nil, 0, fmt.Errorf("%s: %w", name, os.ErrNotExist)
	}
	c.opened++
	return closeCounter{bytes.NewReader(data), c}, int64(len(data)) + c.extra[name], nil
}

// TestPackageOneBinary: under --llvm 24 the packager writes what main's
// llvm-offload-binary writes, one binary holding every image of every
// --image argument in order (several file= of one argument included), each
// image's kind found as before; compressed, that binary compressed. 22
// writes a binary per image.
func TestPackageOneBinary(t *testing.T) {
	r22, r24 := mustRelease(t, 22), mustRelease(t, 24)
	fsys := &countingFiles{files: map[string][]byte{
		"a.o":     []byte("\x7fELF host-less device object"),
		"b.bc":    []byte("not bitcode, by extension"),
		"c.cubin": []byte("BC\xc0\xdebitcode whatever the extension"),
		"d":       []byte("no extension"),
		"e.s":     []byte(""),
	}}
	args := []string{
		"file=a.o,triple=x86_64-unknown-linux-gnu,arch=generic,kind=openmp",
		"file=b.bc,file=c.cubin,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=cuda",
		"file=d,triple=amdgcn-amd-amdhsa,arch=gfx90a:xnack+,kind=hip,feature=+xnack",
		"file=e.s,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=sycl",
	}
	files := []string{"a.o", "b.bc", "c.cubin", "d", "e.s"}
	kinds := []offload.ImageKind{offload.ImageObject, offload.ImageBitcode, offload.ImageBitcode, offload.ImageNone, offload.ImagePTX}
	var plain bytes.Buffer
	n, err := Package(r24, &plain, args, fsys.open)
	if err != nil || n != int64(plain.Len()) {
		t.Fatalf("Package: %d, %v; wrote %d", n, err, plain.Len())
	}
	if fsys.closed != fsys.opened || fsys.opened != len(files) {
		t.Errorf("opened %d files, closed %d; want %d", fsys.opened, fsys.closed, len(files))
	}
	bins, err := ReadAllBytes(plain.Bytes(), &ReadOptions{Release: r24})
	if err != nil || len(bins) != 1 || len(bins[0].Images) != len(files) {
		t.Fatalf("%d binaries, %v; want one of %d images", len(bins), err, len(files))
	}
	var ims []Image
	var data [][]byte
	for _, arg := range args {
		pis, err := ParseImageArg(r24, arg)
		if err != nil {
			t.Fatal(err)
		}
		for _, pi := range pis {
			ims = append(ims, pi.Image)
		}
	}
	for i, f := range files {
		ims[i].Kind = kinds[i]
		data = append(data, fsys.files[f])
		if got := bins[0].Images[i].Image; got.Kind != kinds[i] || got.Arch() != ims[i].Arch() || got.OffloadKind != ims[i].OffloadKind {
			t.Errorf("image %d (%s): %v %v %q", i, f, got.Kind, got.OffloadKind, got.Arch())
		}
		if got := readAll(t, bins[0], i); !bytes.Equal(got, fsys.files[f]) {
			t.Errorf("image %d (%s): %q", i, f, got)
		}
	}
	checkMultiLayout(t, plain.Bytes(), ims, data)

	// Compressed: the same binary, compressed.
	for _, c := range []Compression{{Format: "zstd"}, {Format: "zlib"}} {
		var buf bytes.Buffer
		if _, err := PackageCompressed(r24, &buf, args, fsys.open, c); err != nil {
			t.Fatal(err)
		}
		bins, err := ReadAllBytes(buf.Bytes(), &ReadOptions{Release: r24})
		if err != nil || len(bins) != 1 || bins[0].Compression != c.Format {
			t.Fatalf("%+v: %d binaries, %v", c, len(bins), err)
		}
		inflated, _ := io.ReadAll(bins[0].Inflated())
		if !bytes.Equal(inflated, plain.Bytes()) {
			t.Errorf("%+v: does not inflate to Package's binary", c)
		}
	}

	// 22: a binary per image, the same images.
	bins22, err := ReadAllBytes(packageBytes(t, r22, fsys.files, args[:3]...), &ReadOptions{Release: r22})
	if err != nil || len(bins22) != 4 {
		t.Fatalf("LLVM 22: %d binaries, %v", len(bins22), err)
	}
	for i, b := range bins22 {
		if len(b.Images) != 1 || b.Images[0].Kind != kinds[i] || !bytes.Equal(readAll(t, b, 0), data[i]) {
			t.Errorf("LLVM 22: binary %d: %+v", i, b.Images)
		}
	}

	// No image: nothing, as before. A missing file: nothing written, the
	// error naming it. A file shorter than its size: the error names it.
	var buf bytes.Buffer
	if n, err := Package(r24, &buf, nil, fsys.open); n != 0 || err != nil || buf.Len() != 0 {
		t.Errorf("no image: %d, %v", n, err)
	}
	fsys.opened, fsys.closed = 0, 0
	if _, err := Package(r24, &buf, append(args, "file=gone.o,triple=x"), fsys.open); !errors.Is(err, os.ErrNotExist) || buf.Len() != 0 {
		t.Errorf("a missing file: %v, %d bytes written", err, buf.Len())
	}
	if fsys.closed != fsys.opened {
		t.Errorf("a missing file: opened %d, closed %d", fsys.opened, fsys.closed)
	}
	fsys.extra = map[string]int64{"d": 3}
	for _, c := range []*Compression{nil, {Format: "zstd"}} {
		var err error
		if c == nil {
			_, err = Package(r24, io.Discard, args, fsys.open)
		} else {
			_, err = PackageCompressed(r24, io.Discard, args, fsys.open, *c)
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "d: got 12 of 15 bytes") {
			t.Errorf("%v: a short file: %v", c, err)
		}
	}
}
