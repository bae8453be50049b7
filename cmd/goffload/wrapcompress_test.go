package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

// compressibleCodeObject returns an AMDGPU code object header followed by
// size-64 bytes that compress as code does: words of a small vocabulary.
func compressibleCodeObject(size int) []byte {
	b := amdgpuHeader(size)
	rng := rand.New(rand.NewSource(int64(size)))
	words := make([][4]byte, 64)
	for i := range words {
		rng.Read(words[i][:])
	}
	for i := 64; i+4 <= size; i += 4 {
		copy(b[i:], words[rng.Intn(len(words))][:])
	}
	return b
}

// hipFatbinOf returns the .hip_fatbin section of the object at path.
func hipFatbinOf(t *testing.T, path string) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".hip_fatbin")
	if s == nil {
		t.Fatalf("%s has no .hip_fatbin", path)
	}
	data, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestWrapHIPCompress: wrap --kind hip --compress embeds the fatbin that
// wrap --kind hip embeds, compressed in the release's compressed bundle
// version, with zstd or zlib; clang-offload-bundler of the release unbundles
// the code object from it, and the header is the one the bundler writes
// when clang-linker-wrapper --compress runs it (but for the file size: the
// compressed stream is not libzstd's).
func TestWrapHIPCompress(t *testing.T) {
	dir := t.TempDir()
	code := filepath.Join(dir, "k.out")
	img := compressibleCodeObject(256 << 10)
	os.WriteFile(code, img, 0o644)
	for _, major := range []int{18, 19, 22} {
		br, _ := release.Lookup(major)
		plainObj := filepath.Join(dir, fmt.Sprintf("plain%d.o", major))
		if _, stderr, c := cli(t, "wrap", "--llvm", fmt.Sprint(major), "--kind", "hip", "-o", plainObj, "--image", "gfx90a="+code); c != 0 {
			t.Fatal(stderr)
		}
		plain := hipFatbinOf(t, plainObj)
		for _, flags := range [][]string{
			{"--compress"},
			{"--compress", "--compression-level", "19"},
			{"--compress", "--compression-format=zlib"},
			{"-compress", "-compression-format", "zlib", "-compression-level=1"},
		} {
			t.Run(fmt.Sprintf("llvm%d/%s", major, strings.Join(flags, " ")), func(t *testing.T) {
				obj := filepath.Join(t.TempDir(), "w.o")
				args := append([]string{"wrap", "--llvm", fmt.Sprint(major), "--kind", "hip", "-o", obj, "--image", "gfx90a=" + code}, flags...)
				if _, stderr, c := cli(t, args...); c != 0 {
					t.Fatal(stderr)
				}
				fb := hipFatbinOf(t, obj)
				cb, err := bundle.ReadCompressed(bytes.NewReader(fb), int64(len(fb)))
				if err != nil {
					t.Fatal(err)
				}
				method := bundle.MethodZstd
				if strings.Contains(strings.Join(flags, " "), "zlib") {
					method = bundle.MethodZlib
				}
				hash, _ := bundle.Hash(bytes.NewReader(plain))
				if cb.Version != br.Bundle.HIPFatbin.CompressedVersion || cb.Method != method || cb.UncompressedSize != uint64(len(plain)) || cb.Hash != hash ||
					(cb.Version >= 2 && cb.FileSize != uint64(len(fb))) {
					t.Errorf("header %+v of %d bytes: want version %d, %v, the hash and size of the %d-byte fatbin", cb.CompressedHeader, len(fb), br.Bundle.HIPFatbin.CompressedVersion, method, len(plain))
				}
				var got bytes.Buffer
				if _, err := bundle.Decompress(&got, bytes.NewReader(fb), int64(len(fb))); err != nil || !bytes.Equal(got.Bytes(), plain) {
					t.Fatalf("decompressed: %d bytes (%v), not the uncompressed wrap's %d", got.Len(), err, len(plain))
				}
				if len(fb) > len(plain)/2 {
					t.Errorf("%d bytes compressed to %d", len(plain), len(fb))
				}
				stdout, _, _ := cli(t, "list", "--all", obj)
				if want := fmt.Sprintf("(%v, compressed bundle version %d, %d bytes)", method, br.Bundle.HIPFatbin.CompressedVersion, len(fb)); !strings.Contains(stdout, want) {
					t.Errorf("list: no %q in\n%s", want, stdout)
				}
				if major == 18 {
					return // no bundler of 18 here
				}
				tool := tooltest.Tool(t, "clang-offload-bundler", major)
				work := t.TempDir()
				in := filepath.Join(work, "fb")
				os.WriteFile(in, fb, 0o644)
				out := filepath.Join(work, "dev")
				if msg, err := exec.Command(tool, "-unbundle", "-type=o", "-input="+in, "-targets=hip-amdgcn-amd-amdhsa--gfx90a", "-output="+out).CombinedOutput(); err != nil {
					t.Fatalf("-unbundle: %v: %s", err, msg)
				}
				if dev, _ := os.ReadFile(out); !bytes.Equal(dev, img) {
					t.Errorf("the bundler unbundled %d bytes, not the %d-byte code object", len(dev), len(img))
				}
				if method != bundle.MethodZstd {
					return // the bundlers here write zstd only
				}
				// The bundler as clang-linker-wrapper --compress runs it.
				ref := filepath.Join(work, "ref")
				bargs := []string{"-type=o", "-bundle-align=4096", "-compress", "-targets=" + br.Bundle.HIPFatbin.HostTarget + "," + bundle.DeviceID(br, "gfx90a"),
					"-input=/dev/null", "-input=" + code, "-output=" + ref}
				if len(flags) > 1 {
					bargs = append(bargs, "-compression-level="+flags[2])
				}
				if msg, err := exec.Command(tool, bargs...).CombinedOutput(); err != nil {
					t.Fatalf("%v: %s", err, msg)
				}
				theirs, _ := os.ReadFile(ref)
				tc, err := bundle.ReadCompressed(bytes.NewReader(theirs), int64(len(theirs)))
				if err != nil {
					t.Fatal(err)
				}
				want := tc.CompressedHeader
				want.FileSize = cb.FileSize
				if cb.CompressedHeader != want {
					t.Errorf("header %+v, the bundler's %+v", cb.CompressedHeader, tc.CompressedHeader)
				}
				t.Logf("%d bytes: the bundler's %d, goffload's %d", len(plain), len(theirs), len(fb))
			})
		}
	}
	// An uncompressed fatbin file is compressed; a compressed one is not
	// compressed again.
	hipfb := filepath.Join(dir, "plain.hipfb")
	os.WriteFile(hipfb, hipFatbinOf(t, filepath.Join(dir, "plain22.o")), 0o644)
	obj := filepath.Join(dir, "fromfile.o")
	if _, stderr, c := cli(t, "wrap", "--kind", "hip", "--compress", "-o", obj, hipfb); c != 0 {
		t.Fatal(stderr)
	}
	ccob := filepath.Join(dir, "c.hipfb")
	os.WriteFile(ccob, hipFatbinOf(t, obj), 0o644)
	var got bytes.Buffer
	fb := hipFatbinOf(t, obj)
	if _, err := bundle.Decompress(&got, bytes.NewReader(fb), int64(len(fb))); err != nil || !bytes.Equal(got.Bytes(), hipFatbinOf(t, filepath.Join(dir, "plain22.o"))) {
		t.Errorf("the compressed fatbin file: %v", err)
	}
	if _, stderr, c := cli(t, "wrap", "--kind", "hip", "--compress", "-o", obj, ccob); c != 1 || !strings.Contains(stderr, "compressed bundle already") {
		t.Errorf("a compressed fatbin, --compress: exit %d, %s", c, stderr)
	}
	if _, stderr, c := cli(t, "wrap", "--kind", "hip", "-o", obj, ccob); c != 0 {
		t.Errorf("a compressed fatbin: %s", stderr)
	}
}

// TestWrapCompressErrors: the flags' mistakes, each a one-line message.
func TestWrapCompressErrors(t *testing.T) {
	dir := t.TempDir()
	code := filepath.Join(dir, "k.out")
	os.WriteFile(code, amdgpuHeader(256), 0o644)
	out := filepath.Join(dir, "w.o")
	hip := []string{"wrap", "--kind", "hip", "-o", out, "--image", "gfx90a=" + code}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(hip, "--compression-level", "3"), "goffload wrap: --compression-format and --compression-level go with --compress\n"},
		{append(hip, "--compression-format", "zlib"), "goffload wrap: --compression-format and --compression-level go with --compress\n"},
		{append(hip, "--compress", "--compression-format", "lz4"), "goffload wrap: --compression-format lz4: offload bundle: compression format \"lz4\" (want zstd or zlib): invalid compression options\n"},
		{append(hip, "--compress", "--compression-format", "zlib", "--compression-level", "10"),
			"goffload wrap: --compression-level 10: offload bundle: zlib level 10 (want 1 to 9, or 0 or -1 for the default, 6): invalid compression options\n"},
		{append(hip, "--compress", "--compression-level", "high"), "goffload wrap: flag --compression-level: bad value \"high\": parse error\n"},
		{append(hip, "--compress", "--llvm", "17"), "goffload wrap: --compress: offload bundle: the clang-offload-bundler of LLVM 17 does not compress (LLVM 18 and later do): unsupported operation\n"},
		{[]string{"wrap", "--kind", "cuda", "--compress", "-o", out, code}, "goffload wrap: --compress is for --kind hip: it compresses the HIP fatbin\n"},
		{[]string{"wrap", "--compress", "-o", out, code}, "goffload wrap: --compress is for --kind hip: it compresses the HIP fatbin\n"},
	} {
		_, stderr, code := cli(t, c.args...)
		if code != 1 || stderr != c.want {
			t.Errorf("%q: exit %d, %q\nwant %q", c.args[5:], code, stderr, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an output was written")
	}
	// zstd takes any level, as libzstd does.
	for _, level := range []string{"0", "-7", "99"} {
		if _, stderr, code := cli(t, append(hip, "--compress", "--compression-level", level)...); code != 0 {
			t.Errorf("--compression-level %s: %s", level, stderr)
		}
	}
}
