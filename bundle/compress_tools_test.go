package bundle

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

// compressCases are the bundles that the interop tests compress: HIP
// fatbins whose device image has 0, 1 and 1 MiB of bytes, and writeCases.
// They are made once and shared: no test changes them.
var compressCases = sync.OnceValue(func() []bundleCase {
	cases := slices.Clone(writeCases())
	for _, n := range []int{0, 1, 1 << 20} {
		cases = append(cases, bundleCase{fmt.Sprintf("hip-image-%d", n), HIPAlign, []string{hostID, devID}, [][]byte{nil, semiCompressible(n, int64(n))}})
	}
	return cases
})

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
//
// The cells are two matrices, each sampled (tooltest.Sampled) but with
// OFFLOAD_TEST_EXHAUSTIVE: every case × every (release, version, method)
// with the default options, each cell listed and unbundled; and every
// (level or window, method, HIP fatbin) × every (release, version, -list
// or -unbundle).
func TestBundlerUnbundlesWriteCompressed(t *testing.T) {
	opts := []CompressOptions{{}, {Level: 1}, {Level: 19}, {Window: DefaultMaxWindow}, {Level: -5}}
	valid := func(m Method, o CompressOptions) bool {
		return m != MethodZlib || o.Window == 0 && o.Level >= 0 && o.Level <= 9
	}
	cases := compressCases()
	// The matrices' rows and columns.
	type relVersion struct {
		major int
		v     uint16
	}
	type relVersionMethod struct {
		relVersion
		m Method
	}
	colV, colVM := map[relVersion]int{}, map[relVersionMethod]int{}
	for _, major := range bundlerReleases {
		for _, v := range readsVersions(major) {
			colV[relVersion{major, v}] = len(colV)
			for _, m := range compressMethods {
				colVM[relVersionMethod{relVersion{major, v}, m}] = len(colVM)
			}
		}
	}
	type optMethod struct {
		opt int
		m   Method
	}
	pairs := map[optMethod]int{}
	for i, o := range opts[1:] {
		for _, m := range compressMethods {
			if valid(m, o) {
				pairs[optMethod{i + 1, m}] = len(pairs)
			}
		}
	}
	hip := map[string]int{}
	for _, c := range cases {
		if strings.HasPrefix(c.name, "hip-image") {
			hip[c.name] = len(hip)
		}
	}
	// sample skips t unless its cell is sampled, and returns whether the
	// cell unbundles and lists.
	sample := func(t *testing.T, major int, v uint16, m Method, ci, oi int) (unbundle, list bool) {
		t.Helper()
		if oi == 0 {
			tooltest.Sample(t, ci, colVM[relVersionMethod{relVersion{major, v}, m}], len(cases), len(colVM))
			return true, true
		}
		row, rows := pairs[optMethod{oi, m}]*len(hip)+hip[cases[ci].name], len(pairs)*len(hip)
		col, cols := 2*colV[relVersion{major, v}], 2*len(colV)
		unbundle, list = tooltest.Sampled(row, col, rows, cols), tooltest.Sampled(row, col+1, rows, cols)
		if !unbundle && !list {
			t.Skipf("not in the default sample of its %d × %d matrix (%s=1 runs every cell)", rows, cols, tooltest.ExhaustiveEnv)
		}
		return unbundle, list
	}
	for _, major := range bundlerReleases {
		t.Run(releaseName(major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			unbundled, listed := 0, 0
			for ci, c := range cases {
				plain := mustWrite(t, c.align, inputsOf(c.ids, c.data))
				wantIDs := slices.Sorted(slices.Values(c.ids))
				for _, v := range readsVersions(major) {
					for _, m := range compressMethods {
						for i, o := range opts {
							if !valid(m, o) {
								continue
							}
							if i > 0 && !strings.HasPrefix(c.name, "hip-image") {
								continue // the levels on the HIP fatbins only
							}
							o.Version, o.Method = v, m
							t.Run(fmt.Sprintf("%s/v%d/%v/level%d/window%d", c.name, v, m, o.Level, o.Window), func(t *testing.T) {
								unbundle, list := sample(t, major, v, m, ci, i)
								ccob, h := compressTo(t, plain, o)
								checkWritten(t, ccob, h, plain, o)
								if unbundle {
									outs, msg, ok := unbundleWithTool(t, tool, ccob, c.ids)
									if !ok {
										t.Fatalf("-unbundle refused: %s", msg)
									}
									for k, id := range c.ids {
										if !bytes.Equal(outs[k], c.data[k]) {
											t.Errorf("-unbundle: %s: %d bytes, not the %d bundled", id, len(outs[k]), len(c.data[k]))
										}
									}
									unbundled++
								}
								if list {
									ids, msg, ok := listWithTool(t, tool, ccob)
									if !ok || !slices.Equal(ids, wantIDs) {
										t.Errorf("-list: %q (%s), want %q", ids, firstLine(msg), wantIDs)
									}
									listed++
								}
							})
						}
					}
				}
			}
			t.Logf("%d compressed bundles unbundled, %d listed", unbundled, listed)
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
// options that clang-linker-wrapper --compress passes. The cases × (release,
// variant) are sampled (tooltest.Sampled); the HIP fatbins always run.
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
	cases := compressCases()
	for ri, major := range bundlerReleases {
		t.Run(releaseName(major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			r, _ := release.Lookup(major)
			for ci, c := range cases {
				plain := mustWrite(t, c.align, inputsOf(c.ids, c.data))
				for vi, v := range variants {
					t.Run(c.name+"/"+v.name, func(t *testing.T) {
						tooltest.Sample(t, ci, ri*len(variants)+vi, len(cases), len(bundlerReleases)*len(variants))
						var verbose string
						theirs := bundleWithToolVerbose(t, tool, v.env, c.align, c.ids, c.data, &verbose, v.args...)
						tc, err := ReadCompressed(bytes.NewReader(theirs), int64(len(theirs)))
						if err != nil {
							t.Fatal(err)
						}
						opt := CompressDefaults(r)
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
				theirs := bundleWithTool(t, tool, nil, HIPAlign, []string{r.Bundle.HIPFatbin.HostID, DeviceID(r, "gfx90a")}, [][]byte{nil, img},
					"-compress", "-compression-level=9")
				opt := CompressDefaults(r)
				opt.Level = 9
				var ours bytes.Buffer
				h, err := WriteCompressedHIPFatbin(&ours, r, []CodeObject{{"gfx90a", io.NewSectionReader(bytes.NewReader(img), 0, int64(len(img)))}}, opt)
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
			r, _ := release.Lookup(c.release)
			data := readTestdata(t, c.file)
			tc, err := ReadCompressed(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			opt := CompressDefaults(r)
			opt.Version, opt.Level = c.version, c.level
			var ours bytes.Buffer
			h, err := WriteCompressedHIPFatbin(&ours, r, []CodeObject{{"gfx90a", io.NewSectionReader(bytes.NewReader(img), 0, int64(len(img)))}}, opt)
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

// bundlerRun is one run of the bundler that bundles inputs: the file it
// wrote and what it printed, or why it failed.
type bundlerRun struct {
	once     sync.Once
	out      []byte
	msg, err string
}

// bundlerRuns holds bundleWithToolVerbose's runs by their command line,
// environment and inputs: tests that have a bundler bundle the same inputs
// with the same options (TestWriteMatchesClangOffloadBundler,
// TestReadBundlerBundles, TestCompressedHeaderMatchesBundler) share one run.
var bundlerRuns sync.Map // string → *bundlerRun

// bundleWithToolVerbose is bundleWithTool that keeps the bundler's output
// in *out. The bundler runs with OFFLOAD_BUNDLER_VERBOSE=1 (which changes
// what it prints, not what it writes), once for each command and inputs in
// the test binary.
func bundleWithToolVerbose(t testing.TB, tool string, env []string, align uint64, ids []string, data [][]byte, out *string, extra ...string) []byte {
	t.Helper()
	env = append([]string{"OFFLOAD_BUNDLER_VERBOSE=1"}, env...)
	targets := make([]string, len(ids))
	for i, id := range ids {
		targets[i] = target(id)
	}
	args := []string{"-type=o", fmt.Sprintf("-bundle-align=%d", align), "-targets=" + strings.Join(targets, ",")}
	key := fmt.Sprintf("%s %q %q %q", tool, env, args, extra)
	for _, d := range data {
		key += fmt.Sprintf(" %v:%x", d == nil, sha256.Sum256(d))
	}
	v, _ := bundlerRuns.LoadOrStore(key, new(bundlerRun))
	run := v.(*bundlerRun)
	run.once.Do(func() {
		dir, err := os.MkdirTemp("", "bundle-test-")
		if err != nil {
			run.err = err.Error()
			return
		}
		defer os.RemoveAll(dir)
		args := slices.Clone(args)
		for i, d := range data {
			name := "/dev/null"
			if d != nil {
				name = filepath.Join(dir, fmt.Sprintf("in%d", i))
				if err := os.WriteFile(name, d, 0o644); err != nil {
					run.err = err.Error()
					return
				}
			}
			args = append(args, "-input="+name)
		}
		o := filepath.Join(dir, "out")
		args = append(append(args, "-output="+o), extra...)
		msg, ok, err := runBundler(tool, env, args...)
		switch {
		case err != nil:
			run.err = err.Error()
		case !ok:
			run.err = fmt.Sprintf("clang-offload-bundler %v: %s", args, msg)
		default:
			run.msg = msg
			if run.out, err = os.ReadFile(o); err != nil {
				run.err = err.Error()
			}
		}
	})
	if run.err != "" {
		t.Fatal(run.err)
	}
	*out = run.msg
	return run.out
}
