package bundle

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// compressCases are the bundles that the interop tests compress: HIP
// fatbins whose device image has 0, 1 and 1 MiB of bytes, and writeCases.
func compressCases() []struct {
	name  string
	align uint64
	ids   []string
	data  [][]byte
} {
	cases := writeCases()
	for _, n := range []int{0, 1, 1 << 20} {
		cases = append(cases, struct {
			name  string
			align uint64
			ids   []string
			data  [][]byte
		}{fmt.Sprintf("hip-image-%d", n), HIPAlign, []string{hostID, devID}, [][]byte{nil, semiCompressible(n, int64(n))}})
	}
	return cases
}

// readsVersions returns the compressed bundle versions the bundler of
// release major reads: 1 and 2 for 19 (which takes any other version for
// 1), 1 to 3 for 22.
func readsVersions(major int) []uint16 {
	if major < 22 {
		return []uint16{1, 2}
	}
	return []uint16{1, 2, 3}
}

// listWithTool has the bundler list the IDs of the bundle in data, sorted
// (the bundler lists a bundle file's IDs in the order of its hash table).
func listWithTool(t testing.TB, tool string, data []byte) ([]string, string, bool) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok := bundler(t, tool, nil, "-list", "-type=o", "-input="+in)
	ids := strings.Fields(out)
	slices.Sort(ids)
	return ids, out, ok
}

// TestBundlerUnbundlesWriteCompressed has clang-offload-bundler 19 and 22
// list and unbundle what WriteCompressed writes, in every version each reads
// and with both methods, at several levels and windows: the bundler must
// list the IDs written and extract every entry's data byte for byte.
func TestBundlerUnbundlesWriteCompressed(t *testing.T) {
	opts := []CompressOptions{{}, {Level: 1}, {Level: 19}, {Window: DefaultMaxWindow}, {Level: -5}}
	for _, major := range bundlerReleases {
		t.Run(releaseName(major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			runs := 0
			for _, c := range compressCases() {
				plain := mustWrite(t, c.align, inputsOf(c.ids, c.data))
				wantIDs := slices.Sorted(slices.Values(c.ids))
				for _, v := range readsVersions(major) {
					for _, m := range compressMethods {
						for i, o := range opts {
							if m == MethodZlib && (o.Window != 0 || o.Level < 0 || o.Level > 9) {
								continue
							}
							if i > 0 && !strings.HasPrefix(c.name, "hip-image") {
								continue // the levels on the HIP fatbins only
							}
							o.Version, o.Method = v, m
							t.Run(fmt.Sprintf("%s/v%d/%v/level%d/window%d", c.name, v, m, o.Level, o.Window), func(t *testing.T) {
								ccob, h := compressTo(t, plain, o)
								checkWritten(t, ccob, h, plain, o)
								outs, msg, ok := unbundleWithTool(t, tool, ccob, c.ids)
								if !ok {
									t.Fatalf("-unbundle refused: %s", msg)
								}
								for k, id := range c.ids {
									if !bytes.Equal(outs[k], c.data[k]) {
										t.Errorf("-unbundle: %s: %d bytes, not the %d bundled", id, len(outs[k]), len(c.data[k]))
									}
								}
								ids, msg, ok := listWithTool(t, tool, ccob)
								if !ok || !slices.Equal(ids, wantIDs) {
									t.Errorf("-list: %q (%s), want %q", ids, firstLine(msg), wantIDs)
								}
								runs++
							})
						}
					}
				}
			}
			t.Logf("%d compressed bundles unbundled and listed", runs)
		})
	}
}

// bundlerVerbose is what OFFLOAD_BUNDLER_VERBOSE=1 has the bundler print
// when it compresses.
var bundlerVerbose = regexp.MustCompile(`(?s)Compressed bundle format version: (\d+).*` +
	`Compression method used: (\w+).*Compression level: (-?\d+).*Binary size before compression: ([\d,]+) bytes.*` +
	`Truncated MD5 hash: 0x([0-9a-f]+)`)

// TestCompressedHeaderMatchesBundler compresses the same bundles as
// clang-offload-bundler -compress: the header fields must be the bundler's
// (version, method, uncompressed size and hash, also as its verbose output
// prints them) but for the file size, which is the compressed stream's; and
// the HIP fatbin of WriteCompressedHIPFatbin with the release's defaults
// must be, decompressed, the bundler's for the -targets and -compress
// options that clang-linker-wrapper --compress passes.
func TestCompressedHeaderMatchesBundler(t *testing.T) {
	variants := []struct {
		name  string
		env   []string
		args  []string
		level int
	}{
		{"default", nil, []string{"-compress"}, 0},
		{"level-1", nil, []string{"-compress", "-compression-level=1"}, 1},
		{"level-19", nil, []string{"-compress", "-compression-level=19"}, 19},
		{"level-30", nil, []string{"-compress", "-compression-level=30"}, 30},
		{"env", []string{"OFFLOAD_BUNDLER_COMPRESS=1"}, nil, 0},
		{"v2", []string{"COMPRESSED_BUNDLE_FORMAT_VERSION=2"}, []string{"-compress"}, 0},
	}
	for _, major := range bundlerReleases {
		t.Run(releaseName(major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			r, _ := LookupRelease(major)
			for _, c := range compressCases() {
				plain := mustWrite(t, c.align, inputsOf(c.ids, c.data))
				for _, v := range variants {
					t.Run(c.name+"/"+v.name, func(t *testing.T) {
						env := append([]string{"OFFLOAD_BUNDLER_VERBOSE=1"}, v.env...)
						var verbose string
						theirs := bundleWithToolVerbose(t, tool, env, c.align, c.ids, c.data, &verbose, v.args...)
						tc, err := ReadCompressed(bytes.NewReader(theirs), int64(len(theirs)))
						if err != nil {
							t.Fatal(err)
						}
						opt := r.CompressDefaults()
						opt.Level = v.level
						if v.name == "v2" && major >= 22 {
							opt.Version = 2
						}
						ours, h := compressTo(t, plain, opt)
						want := tc.CompressedHeader
						if want.Version >= 2 {
							want.FileSize = uint64(len(ours))
						}
						if *h != want {
							t.Errorf("header %+v, the bundler's %+v (file size %d)", *h, tc.CompressedHeader, len(theirs))
						}
						m := bundlerVerbose.FindStringSubmatch(verbose)
						if m == nil {
							t.Fatalf("no verbose output: %s", verbose)
						}
						hash, _ := strconv.ParseUint(m[5], 16, 64)
						usize, _ := strconv.ParseUint(strings.ReplaceAll(m[4], ",", ""), 10, 64)
						if m[1] != strconv.Itoa(int(h.Version)) || m[2] != h.Method.String() || hash != h.Hash || usize != h.UncompressedSize {
							t.Errorf("the bundler printed version %s, method %s, size %d, hash %#x; the header has %+v", m[1], m[2], usize, hash, *h)
						}
						if lvl, _ := strconv.Atoi(m[3]); lvl != max(v.level, 0) && !(v.level == 0 && lvl == ZstdDefaultLevel) {
							t.Errorf("the bundler printed level %d, want %d", lvl, v.level)
						}
						checkWritten(t, ours, h, plain, opt)
						if testing.Verbose() && v.name == "default" {
							t.Logf("%d bytes: the bundler's %d (%s), goffload's %d; the same bytes: %v", len(plain), len(theirs), tc.Method, len(ours), bytes.Equal(ours, theirs))
						}
					})
				}
			}
			t.Run("hip-fatbin", func(t *testing.T) {
				img := semiCompressible(200<<10, 3)
				theirs := bundleWithTool(t, tool, nil, HIPAlign, []string{r.HostID, r.DeviceID("gfx90a")}, [][]byte{nil, img},
					"-compress", "-compression-level=9")
				opt := r.CompressDefaults()
				opt.Level = 9
				var ours bytes.Buffer
				h, err := r.WriteCompressedHIPFatbin(&ours, []CodeObject{{"gfx90a", io.NewSectionReader(bytes.NewReader(img), 0, int64(len(img)))}}, opt)
				if err != nil {
					t.Fatal(err)
				}
				tc, _ := ReadCompressed(bytes.NewReader(theirs), int64(len(theirs)))
				want := tc.CompressedHeader
				want.FileSize = uint64(ours.Len())
				if *h != want {
					t.Errorf("header %+v, the bundler's %+v", *h, tc.CompressedHeader)
				}
				var a, b bytes.Buffer
				Decompress(&a, bytes.NewReader(theirs), int64(len(theirs)))
				Decompress(&b, bytes.NewReader(ours.Bytes()), int64(ours.Len()))
				if !bytes.Equal(a.Bytes(), b.Bytes()) || a.Len() == 0 {
					t.Errorf("decompressed: %d bytes, the bundler's %d, not the same", b.Len(), a.Len())
				}
			})
		})
	}
}

// TestCompressedHeaderMatchesFrozen: the compressed fatbins that the
// bundlers of 19 and 22 wrote (testdata/make.sh), written again by
// WriteCompressedHIPFatbin with the same options: the same header but for
// the file size. (No tool needed.)
func TestCompressedHeaderMatchesFrozen(t *testing.T) {
	img := entryData(t, mustRead(t, readTestdata(t, "hip-fatbin-clang-linker-wrapper-llvm22.bundle")), 1)
	for _, c := range []struct {
		file    string
		release int
		version uint16
		level   int
	}{
		{"hip-fatbin-llvm19-zstd-v2.ccob", 19, 2, 0},
		{"hip-fatbin-llvm22-zstd-v3.ccob", 22, 3, 0},
		{"hip-fatbin-llvm22-zstd19-v2.ccob", 22, 2, 19},
	} {
		t.Run(c.file, func(t *testing.T) {
			r, _ := LookupRelease(c.release)
			data := readTestdata(t, c.file)
			tc, err := ReadCompressed(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			opt := r.CompressDefaults()
			opt.Version, opt.Level = c.version, c.level
			var ours bytes.Buffer
			h, err := r.WriteCompressedHIPFatbin(&ours, []CodeObject{{"gfx90a", io.NewSectionReader(bytes.NewReader(img), 0, int64(len(img)))}}, opt)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.CompressedHeader
			want.FileSize = uint64(ours.Len())
			if *h != want {
				t.Errorf("header %+v, the bundler's %+v", *h, tc.CompressedHeader)
			}
			if !bytes.Equal(ours.Bytes()[:8], data[:8]) || !bytes.Equal(ours.Bytes()[HeaderSize(c.version)-8:HeaderSize(c.version)], data[HeaderSize(c.version)-8:HeaderSize(c.version)]) {
				t.Errorf("header bytes % x, the bundler's % x", ours.Bytes()[:HeaderSize(c.version)], data[:HeaderSize(c.version)])
			}
			t.Logf("%s: %d bytes; goffload's: %d", c.file, len(data), ours.Len())
		})
	}
}

// bundleWithToolVerbose is bundleWithTool that keeps the bundler's output
// in *out.
func bundleWithToolVerbose(t testing.TB, tool string, env []string, align uint64, ids []string, data [][]byte, out *string, extra ...string) []byte {
	t.Helper()
	dir := t.TempDir()
	targets := make([]string, len(ids))
	for i, id := range ids {
		targets[i] = target(id)
	}
	args := []string{"-type=o", fmt.Sprintf("-bundle-align=%d", align), "-targets=" + strings.Join(targets, ",")}
	for i, d := range data {
		name := "/dev/null"
		if d != nil {
			name = filepath.Join(dir, fmt.Sprintf("in%d", i))
			if err := os.WriteFile(name, d, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args = append(args, "-input="+name)
	}
	o := filepath.Join(dir, "out")
	args = append(append(args, "-output="+o), extra...)
	msg, ok := bundler(t, tool, env, args...)
	if !ok {
		t.Fatalf("clang-offload-bundler %v: %s", args, msg)
	}
	*out = msg
	b, err := os.ReadFile(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
