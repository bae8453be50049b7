package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

// The releases whose clang-offload-bundler the tests run.
var bundlerReleases = []int{19, 22}

// bundler runs clang-offload-bundler with args and the environment env; it
// returns the combined output and whether the tool exited with status 0
// (a crash or a non-zero exit is a refusal).
func bundler(t testing.TB, tool string, env []string, args ...string) (string, bool) {
	t.Helper()
	out, ok, err := runBundler(tool, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out, ok
}

// runBundler is bundler, with an error for a bundler that could not be run.
func runBundler(tool string, env []string, args ...string) (string, bool, error) {
	cmd := exec.Command(tool, args...)
	// The bundler's own variables come from env only.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OFFLOAD_BUNDLER_") && !strings.HasPrefix(kv, "COMPRESSED_BUNDLE_FORMAT_VERSION=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// A crash is an answer here; do not spend seconds symbolizing its trace.
	cmd.Env = append(cmd.Env, "LLVM_DISABLE_SYMBOLIZATION=1")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return "", false, fmt.Errorf("%s: %v", tool, err)
	}
	return string(out), err == nil, nil
}

// bundleWithTool has the bundler bundle data under ids (given as their
// targets) and returns the output file's bytes.
func bundleWithTool(t testing.TB, tool string, env []string, align uint64, ids []string, data [][]byte, extra ...string) []byte {
	t.Helper()
	var msg string
	return bundleWithToolVerbose(t, tool, env, align, ids, data, &msg, extra...)
}

// unbundleWithTool has the bundler extract ids from the bundle in data; it
// returns the outputs, or ok false when the bundler refuses or crashes.
// Each ID is requested as its target spelling without trailing '-' (see
// target), which the bundler rewrites into the ID.
func unbundleWithTool(t testing.TB, tool string, data []byte, ids []string) (outs [][]byte, msg string, ok bool) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	targets := make([]string, len(ids))
	for i, id := range ids {
		targets[i] = target(id)
	}
	args := []string{"-unbundle", "-type=o", "-targets=" + strings.Join(targets, ","), "-input=" + in}
	for i := range ids {
		args = append(args, fmt.Sprintf("-output=%s/out%d", dir, i))
	}
	msg, ok = bundler(t, tool, nil, args...)
	if !ok {
		return nil, msg, false
	}
	for i := range ids {
		b, err := os.ReadFile(fmt.Sprintf("%s/out%d", dir, i))
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	return outs, msg, true
}

// target returns the -targets spelling that the bundlers of 19 and 22 both
// rewrite into id. The bundler of 19 mangles a target that ends in '-' (it
// becomes "<target>-<target>"), so an ID such as
// "host-x86_64-unknown-linux-gnu-", which it writes itself, can be extracted
// only as "host-x86_64-unknown-linux-gnu".
func target(id string) string { return strings.TrimRight(id, "-") }

// bundleCase is a bundle's inputs: its alignment, its entries' IDs and data.
type bundleCase struct {
	name  string
	align uint64
	ids   []string
	data  [][]byte
}

// writeCases are inputs whose IDs every bundler 17–22 writes as given. They
// are made once and shared: no test changes them.
var writeCases = sync.OnceValue(func() []bundleCase {
	rng := rand.New(rand.NewSource(7))
	blob := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	const dev2 = "hip-amdgcn-amd-amdhsa--gfx1030"
	const omp = "openmp-x86_64-unknown-linux-gnu-"
	return []bundleCase{
		{"hip-align-4096", 4096, []string{hostID, devID, dev2}, [][]byte{nil, blob(5000), blob(4096)}},
		{"host-last", 4096, []string{devID, dev2, hostID}, [][]byte{blob(1), blob(4095), blob(10)}},
		{"host-middle-align-1", 1, []string{devID, hostID, omp}, [][]byte{blob(100), blob(7), blob(0x2001)}},
		{"align-16", 16, []string{omp, hostID}, [][]byte{blob(17), blob(33)}},
		{"empty-entries", 64, []string{hostID, devID, "hip-amdgcn-amd-amdhsa--gfx908:xnack+"}, [][]byte{nil, nil, blob(1)}},
		{"hip-only", 4096, []string{devID, dev2}, [][]byte{blob(300), blob(8192)}},
	}
})

// TestWriteMatchesClangOffloadBundler compares Write with the bundler's own
// output for the same inputs, and WriteHIPFatbin with what the bundler writes
// for the -targets clang-linker-wrapper passes. The cases × releases are
// sampled (tooltest.Sample); the HIP fatbins always run.
func TestWriteMatchesClangOffloadBundler(t *testing.T) {
	cases := writeCases()
	for ri, major := range bundlerReleases {
		t.Run(releaseName(major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			for ci, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					tooltest.Sample(t, ci, ri, len(cases), len(bundlerReleases))
					want := bundleWithTool(t, tool, nil, c.align, c.ids, c.data)
					if got := mustWrite(t, c.align, inputsOf(c.ids, c.data)); !bytes.Equal(got, want) {
						t.Fatalf("Write: %d bytes that differ from the bundler's %d", len(got), len(want))
					}
				})
			}
			t.Run("hip-fatbin", func(t *testing.T) {
				r, err := release.Lookup(major)
				if err != nil {
					t.Fatal(err)
				}
				imgs := [][]byte{bytes.Repeat([]byte("gfx90a code "), 500), bytes.Repeat([]byte("gfx1100 "), 1000)}
				if target(r.Bundle.HIPFatbin.HostID) != r.Bundle.HIPFatbin.HostTarget {
					t.Fatalf("host ID %q is not written for the wrapper's target %q", r.Bundle.HIPFatbin.HostID, r.Bundle.HIPFatbin.HostTarget)
				}
				want := bundleWithTool(t, tool, nil, HIPAlign,
					[]string{r.Bundle.HIPFatbin.HostID, DeviceID(r, "gfx90a:xnack+"), DeviceID(r, "gfx1100")}, [][]byte{nil, imgs[0], imgs[1]})
				var got bytes.Buffer
				err = WriteHIPFatbin(&got, r, []CodeObject{
					{"gfx90a:xnack+", io.NewSectionReader(bytes.NewReader(imgs[0]), 0, int64(len(imgs[0])))},
					{"gfx1100", io.NewSectionReader(bytes.NewReader(imgs[1]), 0, int64(len(imgs[1])))},
				})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("WriteHIPFatbin: %d bytes that differ from the bundler's %d", got.Len(), len(want))
				}
			})
		})
	}
}

// TestBundlerUnbundlesWrite has the bundler extract every entry of bundles
// that Write made. The cases × releases are sampled (tooltest.Sample), the
// other way round from TestWriteMatchesClangOffloadBundler's.
func TestBundlerUnbundlesWrite(t *testing.T) {
	cases := writeCases()
	for ri, major := range bundlerReleases {
		t.Run(releaseName(major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			for ci, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					tooltest.Sample(t, ci, len(bundlerReleases)-1-ri, len(cases), len(bundlerReleases))
					outs, msg, ok := unbundleWithTool(t, tool, mustWrite(t, c.align, inputsOf(c.ids, c.data)), c.ids)
					if !ok {
						t.Fatalf("the bundler refused: %s", msg)
					}
					for i := range c.ids {
						if !bytes.Equal(outs[i], c.data[i]) {
							t.Errorf("%s: the bundler extracted %d bytes, not the %d written", c.ids[i], len(outs[i]), len(c.data[i]))
						}
					}
				})
			}
		})
	}
}

// TestReadBundlerBundles reads bundles the bundler wrote, uncompressed and
// compressed with each version it writes, at several zstd levels. The cases
// × (release, variant) are sampled (tooltest.Sampled).
func TestReadBundlerBundles(t *testing.T) {
	variants := []struct {
		name string
		env  []string
		args []string
	}{
		{"uncompressed", nil, nil},
		{"compress", nil, []string{"-compress"}},
		{"compress-level-1", nil, []string{"-compress", "-compression-level=1"}},
		{"compress-level-19", nil, []string{"-compress", "-compression-level=19"}},
		{"compress-v2", []string{"COMPRESSED_BUNDLE_FORMAT_VERSION=2"}, []string{"-compress"}},
		{"compress-v3", []string{"COMPRESSED_BUNDLE_FORMAT_VERSION=3"}, []string{"-compress"}},
		{"env-compress", []string{"OFFLOAD_BUNDLER_COMPRESS=1", "OFFLOAD_BUNDLER_COMPRESSION_LEVEL=9"}, nil},
	}
	cases := writeCases()
	for ri, major := range bundlerReleases {
		t.Run(releaseName(major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			r, _ := release.Lookup(major)
			for ci, c := range cases {
				for vi, v := range variants {
					t.Run(c.name+"/"+v.name, func(t *testing.T) {
						tooltest.Sample(t, ci, ri*len(variants)+vi, len(cases), len(bundlerReleases)*len(variants))
						data := bundleWithTool(t, tool, v.env, c.align, c.ids, c.data, v.args...)
						want := mustWrite(t, c.align, inputsOf(c.ids, c.data))
						got := data
						if v.args != nil || v.env != nil {
							cb, err := ReadCompressed(bytes.NewReader(data), int64(len(data)))
							if err != nil {
								t.Fatal(err)
							}
							wantVersion := r.Bundle.HIPFatbin.CompressedVersion
							if strings.HasSuffix(v.name, "-v2") || (major >= 22 && strings.HasSuffix(v.name, "-v3")) {
								wantVersion = uint16(v.name[len(v.name)-1] - '0')
							}
							if cb.Version != wantVersion || cb.Method != MethodZstd || cb.FileSize != uint64(len(data)) ||
								cb.UncompressedSize != uint64(len(want)) {
								t.Fatalf("header %+v: want version %d, zstd, file size %d, uncompressed size %d",
									cb.CompressedHeader, wantVersion, len(data), len(want))
							}
							var buf bytes.Buffer
							if _, err := Decompress(&buf, bytes.NewReader(data), int64(len(data))); err != nil {
								t.Fatal(err)
							}
							got = buf.Bytes()
						}
						if !bytes.Equal(got, want) {
							t.Fatalf("bundle of %d bytes differs from Write's %d", len(got), len(want))
						}
						b := mustRead(t, got)
						for i, id := range c.ids {
							if b.Entries[i].ID != id || !bytes.Equal(entryData(t, b, i), c.data[i]) {
								t.Errorf("entry %d: %q, want %q with the input's data", i, b.Entries[i].ID, id)
							}
						}
					})
				}
			}
		})
	}
}

// TestBundlerReadsZlibBundles: no bundler here writes zlib (they are built
// with zstd, which they prefer), so the zlib bundles are made by the test;
// the bundler must extract them as Decompress does.
func TestBundlerReadsZlibBundles(t *testing.T) {
	c := writeCases()[0]
	bundle := mustWrite(t, c.align, inputsOf(c.ids, c.data))
	hash, _ := Hash(bytes.NewReader(bundle))
	z := zlibCompress(bundle)
	for _, major := range bundlerReleases {
		t.Run(releaseName(major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			for _, v := range []uint16{1, 2, 3} {
				if major < 22 && v == 3 {
					continue // LLVM 19 reads versions 1 and 2 only
				}
				data := ccob(v, MethodZlib, z, uint64(len(bundle)), hash)
				outs, msg, ok := unbundleWithTool(t, tool, data, c.ids)
				if !ok {
					t.Fatalf("version %d: the bundler refused: %s", v, msg)
				}
				var got bytes.Buffer
				if _, err := Decompress(&got, bytes.NewReader(data), int64(len(data))); err != nil || !bytes.Equal(got.Bytes(), bundle) {
					t.Fatalf("version %d: Decompress: %v", v, err)
				}
				for i := range c.ids {
					if !bytes.Equal(outs[i], c.data[i]) {
						t.Errorf("version %d: entry %d differs", v, i)
					}
				}
			}
		})
	}
}

// verdict says whether this package reads data as a bundle and extracts the
// entries with ids as the bundler would, returning their data.
func verdict(data []byte, ids []string) ([][]byte, bool) {
	b, err := Read(bytes.NewReader(data), int64(len(data)))
	if errors.Is(err, ErrCompressed) {
		var buf bytes.Buffer
		if _, err := Decompress(&buf, bytes.NewReader(data), int64(len(data))); err != nil {
			return nil, false
		}
		data = buf.Bytes()
		b, err = Read(bytes.NewReader(data), int64(len(data)))
	}
	if err != nil {
		return nil, false
	}
	var outs [][]byte
	for _, id := range ids {
		i := b.Find(id)
		if i < 0 {
			return nil, false
		}
		outs = append(outs, data[b.Entries[i].Offset:b.Entries[i].Offset+b.Entries[i].Size])
	}
	return outs, true
}

// agreeCase is an input of TestReadAgreesWithBundler and its cell in the
// matrix of its kind: row of rows; col[k] of cols is its column for
// bundlerReleases[k], -1 where it is not run with that release.
type agreeCase struct {
	data       []byte
	row, rows  int
	col        []int
	cols       int
	kind, what string
}

// TestReadAgreesWithBundler mutates the fields of a bundle and of a
// compressed bundle and checks that Read and Decompress accept exactly the
// inputs from which the bundler extracts the entries, with the same data.
// The bundler is asked for the original IDs; a mutation that changes IDs
// is left out, since the bundler does not then look for them.
//
// The inputs are four matrices, each sampled (tooltest.Sampled) but with
// OFFLOAD_TEST_EXHAUSTIVE: field × (release, value); length cut to ×
// release; zlib kind of damage × (release, version); zstd kind of damage ×
// (release, version) (LLVM 19 reads no version 3: it takes it for 1).
func TestReadAgreesWithBundler(t *testing.T) {
	c := writeCases()[2] // three entries, align 1
	orig := mustWrite(t, c.align, inputsOf(c.ids, c.data))
	rng := rand.New(rand.NewSource(3))
	nrel := len(bundlerReleases)
	var cases []agreeCase
	// columns returns the column of each release: release k's columns
	// are k*per to (k+1)*per-1.
	columns := func(per, i int) []int {
		col := make([]int, nrel)
		for k := range col {
			col[k] = k*per + i
		}
		return col
	}
	// Entry fields: offset at +0, size at +8 of each entry header.
	fields := []int{24}
	pos := headerSize
	for _, id := range c.ids {
		fields = append(fields, pos, pos+8)
		pos += entryFixedSize + len(id)
	}
	size := uint64(len(orig))
	for fi, f := range fields {
		v := le.Uint64(orig[f:])
		values := []uint64{0, 1, 2, 3, v - 1, v + 1, size - v, size - v + 1, size, size + 1, 1 << 63, 1<<64 - 1, rng.Uint64()}
		for vi, nv := range values {
			m := append([]byte{}, orig...)
			le.PutUint64(m[f:], nv)
			cases = append(cases, agreeCase{data: m, row: fi, rows: len(fields), col: columns(len(values), vi), cols: nrel * len(values),
				kind: "field", what: fmt.Sprintf("the field at %d set to %#x", f, nv)})
		}
	}
	cuts := []int{0, 10, 24, 31, 32, 50, pos - 1, pos, len(orig) - 1}
	for i, n := range cuts {
		cases = append(cases, agreeCase{data: orig[:n], row: i, rows: len(cuts), col: columns(1, 0), cols: nrel,
			kind: "cut", what: fmt.Sprintf("the first %d bytes", n)})
	}
	// Compressed: the header's sizes and the stream. Each kind of damage is
	// a row; its columns are (release, version).
	hash, _ := Hash(bytes.NewReader(orig))
	z := zlibCompress(orig)
	zlibVersions := []uint16{1, 2}
	for vi, v := range zlibVersions {
		good := ccob(v, MethodZlib, z, size, hash)
		kinds := [][]byte{good, good[:len(good)-1], ccob(v, MethodZlib, z, size-1, hash), ccob(v, MethodZlib, z, size+1, hash),
			ccob(v, 2, z, size, hash), append(append([]byte{}, good...), "tail"...)}
		for i, data := range kinds {
			cases = append(cases, agreeCase{data: data, row: i, rows: len(kinds), col: columns(len(zlibVersions), vi), cols: nrel * len(zlibVersions),
				kind: "zlib", what: fmt.Sprintf("version %d, damage %d", v, i)})
		}
	}
	if zt, err := exec.LookPath("zstd"); err == nil {
		zs := zstdCompress(t, zt, orig, "-3")
		checked := zstdCompress(t, zt, orig, "-3", "--check")
		badSum := append([]byte{}, checked...)
		badSum[len(badSum)-1] ^= 0x10
		skip := []byte{0x50, 0x2a, 0x4d, 0x18, 2, 0, 0, 0, 'h', 'i'}
		two := append(zstdCompress(t, zt, orig[:1000], "-1"), zstdCompress(t, zt, orig[1000:], "-19")...)
		// The columns: (release, version) of the versions each release
		// reads.
		zcols := map[[2]int]int{}
		for k, major := range bundlerReleases {
			for _, v := range []uint16{2, 3} {
				if v == 3 && major < 22 {
					continue
				}
				zcols[[2]int{k, int(v)}] = len(zcols)
			}
		}
		for _, v := range []uint16{2, 3} {
			kinds := [][]byte{
				ccob(v, MethodZstd, zs, size, hash), ccob(v, MethodZstd, checked, size, hash),
				ccob(v, MethodZstd, badSum, size, hash), ccob(v, MethodZstd, zs, size-1, hash),
				ccob(v, MethodZstd, zs, size+5, hash), ccob(v, MethodZstd, zs[:len(zs)-1], size, hash),
				ccob(v, MethodZstd, append(append([]byte{}, zs...), 0), size, hash),
				ccob(v, MethodZstd, append(append([]byte{}, skip...), zs...), size, hash),
				ccob(v, MethodZstd, two, size, hash)}
			for i, data := range kinds {
				col := make([]int, nrel)
				for k := range col {
					var ok bool
					if col[k], ok = zcols[[2]int{k, int(v)}]; !ok {
						col[k] = -1
					}
				}
				cases = append(cases, agreeCase{data: data, row: i, rows: len(kinds), col: col, cols: len(zcols),
					kind: "zstd", what: fmt.Sprintf("version %d, damage %d", v, i)})
			}
		}
	}
	for k, major := range bundlerReleases {
		t.Run(releaseName(major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			wraps, v3, sampledOut, run := 0, 0, 0, 0
			for i, ac := range cases {
				data := ac.data
				if ac.col[k] < 0 {
					v3++ // LLVM 19 takes version 3 for version 1
					continue
				}
				if !tooltest.Sampled(ac.row, ac.col[k], ac.rows, ac.cols) {
					sampledOut++
					continue
				}
				if wrapsAround(data) {
					wraps++
					continue
				}
				run++
				want, ok := verdict(data, c.ids)
				got, msg, toolOK := unbundleWithTool(t, tool, data, c.ids)
				if ok != toolOK {
					t.Errorf("case %d (%s: %s; %d bytes): this package accepts: %v, the bundler: %v (%s)", i, ac.kind, ac.what, len(data), ok, toolOK, firstLine(msg))
					continue
				}
				for e := range want {
					if !bytes.Equal(want[e], got[e]) {
						t.Errorf("case %d (%s: %s): entry %d: %d bytes, the bundler extracted %d", i, ac.kind, ac.what, e, len(want[e]), len(got[e]))
					}
				}
			}
			t.Logf("%d cases, %d run; left out: %d whose offset + size wraps, %d of version 3, %d not in the default sample (%s=1 runs them)",
				len(cases), run, wraps, v3, sampledOut, tooltest.ExhaustiveEnv)
		})
	}
}

// wrapsAround reports whether an entry of the uncompressed bundle data has an
// offset and size whose sum wraps past 2^64 to within the input: the bundler
// takes such an entry (its check Offset + Size > size wraps too) and copies
// it from before its buffer, which this package refuses.
func wrapsAround(data []byte) bool {
	if len(data) < headerSize || string(data[:len(Magic)]) != Magic {
		return false
	}
	pos := uint64(headerSize)
	for n := le.Uint64(data[24:]); n > 0 && pos+entryFixedSize <= uint64(len(data)); n-- {
		off, size, idLen := le.Uint64(data[pos:]), le.Uint64(data[pos+8:]), le.Uint64(data[pos+16:])
		if off+size < off && off+size <= uint64(len(data)) {
			return true
		}
		if idLen > uint64(len(data))-pos-entryFixedSize {
			break
		}
		pos += entryFixedSize + idLen
	}
	return false
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// TestDecompressLargeBundlerBundle has the bundler compress a bundle of many
// blocks whose matches reach back megabytes (its zstd uses long-distance
// matching), and decompresses it.
func TestDecompressLargeBundlerBundle(t *testing.T) {
	if testing.Short() {
		t.Skip("a 12 MiB bundle")
	}
	rng := rand.New(rand.NewSource(11))
	chunk := make([]byte, 4<<20)
	rng.Read(chunk)
	img := bytes.Repeat(chunk, 3)
	copy(img[5<<20:], "a change in the second copy")
	for _, major := range bundlerReleases {
		t.Run(releaseName(major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			ids := []string{hostID, devID}
			data := bundleWithTool(t, tool, nil, HIPAlign, ids, [][]byte{nil, img}, "-compress")
			if len(data) > 6<<20 {
				t.Errorf("compressed to %d bytes: no long-distance matches?", len(data))
			}
			t.Logf("%d bytes compressed to %d", len(img)+HIPAlign, len(data))
			var got bytes.Buffer
			if _, err := Decompress(&got, bytes.NewReader(data), int64(len(data))); err != nil {
				t.Fatal(err)
			}
			if want := mustWrite(t, HIPAlign, inputsOf(ids, [][]byte{nil, img})); !bytes.Equal(got.Bytes(), want) {
				t.Fatal("decompressed bundle differs")
			}
		})
	}
}
