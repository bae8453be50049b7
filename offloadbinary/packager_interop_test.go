package offloadbinary

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

// packagerCase is one clang-offload-packager command line and its input files.
type packagerCase struct {
	args  []string
	files map[string][]byte
}

var (
	fuzzExts = []string{"o", "bc", "cubin", "fatbin", "s", "spv", "bin", "ptx", ""}
	fuzzKeys = []string{"arch", "feature", "zeta", "alpha", "a", "", "producer", "x",
		"a-very-long-key-name-that-takes-the-long-path-of-llvm-hash-value-0123456789abcdef",
		"key-of-thirty-three-bytes-length!", "k9to16bytes", "seventeen-bytes-k"}
	fuzzKinds = []string{"openmp", "cuda", "hip", "sycl", "none", "OpenMP", ""}
)

// genPackagerCase makes a random command line for release r: random key sets,
// repeated keys, empty and missing arch, every extension, bitcode contents under
// other extensions, one to three images, several files in one image where the
// release splits them.
func genPackagerCase(rng *rand.Rand, r *release.Release, n int) packagerCase {
	c := packagerCase{files: map[string][]byte{}}
	for i := 0; i < 1+rng.Intn(3); i++ {
		var parts []string
		nfiles := 1
		if r.Packager.SplitsFiles && rng.Intn(5) == 0 {
			nfiles = 2
		}
		for j := 0; j < nfiles; j++ {
			name := fmt.Sprintf("img%d_%d_%d", n, i, j)
			if ext := fuzzExts[rng.Intn(len(fuzzExts))]; ext != "" {
				name += "." + ext
			}
			data := make([]byte, rng.Intn(70))
			rng.Read(data)
			if rng.Intn(6) == 0 {
				data = append([]byte("BC\xc0\xde"), data...)
			}
			c.files[name] = data
			parts = append(parts, "file="+name)
		}
		if r.Packager.NeedsTriple || rng.Intn(4) != 0 {
			parts = append(parts, "triple="+[]string{"nvptx64-nvidia-cuda", "amdgcn-amd-amdhsa", "x86_64-unknown-linux-gnu", "t"}[rng.Intn(4)])
		}
		for k := rng.Intn(7); k > 0; k-- {
			key := fuzzKeys[rng.Intn(len(fuzzKeys))]
			val := []string{"", "sm_70", "gfx90a:xnack+", "+ptx63", "1", "a=b", "generic", "x86_64-unknown-linux-gnu"}[rng.Intn(8)]
			if key == "" && val == "" {
				parts = append(parts, "novalue")
				continue
			}
			parts = append(parts, key+"="+val)
		}
		if rng.Intn(8) == 0 {
			// Enough keys to make the packager's hash tables grow.
			for k := 12 + rng.Intn(50); k > 0; k-- {
				parts = append(parts, fmt.Sprintf("k%x=%d", rng.Intn(1<<20), k))
			}
		}
		if rng.Intn(3) != 0 {
			parts = append(parts, "kind="+fuzzKinds[rng.Intn(len(fuzzKinds))])
		}
		rng.Shuffle(len(parts), func(a, b int) { parts[a], parts[b] = parts[b], parts[a] })
		c.args = append(c.args, strings.Join(parts, ","))
	}
	return c
}

// TestPackageMatchesClangOffloadPackager runs the real packager of each release
// on the same random command lines and compares the bytes. The cases that
// Package takes run in one packager command of all their --image
// arguments, whose binaries (one per image, end to end: version 1) must be
// those of each case in turn; each case that Package refuses runs alone, and
// the packager must refuse it too.
func TestPackageMatchesClangOffloadPackager(t *testing.T) {
	const cases = 60
	for _, major := range []int{15, 16, 19, 22} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			t.Parallel()
			tool := tooltest.Tool(t, "clang-offload-packager", major)
			r := mustRelease(t, major)
			rng := rand.New(rand.NewSource(int64(major)))
			dir := t.TempDir()
			var batch []int
			all := make([]packagerCase, cases)
			for n := range all {
				all[n] = genPackagerCase(rng, r, n)
				if _, err := packageCase(r, all[n]); err == nil && r.BinaryVersion == 1 {
					batch = append(batch, n)
					continue
				}
				checkAgainstPackager(t, tool, r, dir, n, all[n])
			}
			t.Logf("LLVM %d: %d command lines in one packager run, %d refused, each run alone", major, len(batch), cases-len(batch))
			checkPackagerBatch(t, tool, r, dir, all, batch)
		})
	}
}

// packageCase returns what Package writes for c.
func packageCase(r *release.Release, c packagerCase) ([]byte, error) {
	var out bytes.Buffer
	_, err := Package(r, &out, c.args, func(name string) (io.Reader, int64, error) {
		data, ok := c.files[name]
		if !ok {
			return nil, 0, os.ErrNotExist
		}
		return bytes.NewReader(data), int64(len(data)), nil
	})
	return out.Bytes(), err
}

// checkPackagerBatch runs the packager once on the --image arguments of
// the cases batch of all, and compares its output with what Package writes
// for each case, end to end. If the packager fails, or its output differs,
// each case runs alone, to name the one at fault.
func checkPackagerBatch(t *testing.T, tool string, r *release.Release, dir string, all []packagerCase, batch []int) {
	t.Helper()
	if len(batch) == 0 {
		return
	}
	argv := []string{"-o", "batch.bin"}
	var ours []byte
	for _, n := range batch {
		for name, data := range all[n].files {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, a := range all[n].args {
			argv = append(argv, "--image="+a)
		}
		b, err := packageCase(r, all[n])
		if err != nil {
			t.Fatalf("case %d %q: %v", n, all[n].args, err)
		}
		ours = append(ours, b...)
	}
	cmd := exec.Command(tool, argv...)
	cmd.Dir = dir
	release := tooltest.Slot()
	msg, err := cmd.CombinedOutput()
	release()
	var want []byte
	if err == nil {
		want, err = os.ReadFile(filepath.Join(dir, "batch.bin"))
	}
	if err == nil && bytes.Equal(ours, want) {
		return
	}
	t.Logf("the packager on the %d cases at once: %v %s; each runs alone", len(batch), err, msg)
	failed := t.Failed()
	for _, n := range batch {
		checkAgainstPackager(t, tool, r, dir, n, all[n])
	}
	if !t.Failed() && !failed {
		t.Errorf("the packager's output of the %d cases at once (%v) differs from ours, though each alone is the same", len(batch), err)
	}
}

func checkAgainstPackager(t *testing.T, tool string, r *release.Release, dir string, n int, c packagerCase) {
	t.Helper()
	for name, data := range c.files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := fmt.Sprintf("out%d.bin", n)
	argv := []string{"-o", out}
	for _, a := range c.args {
		argv = append(argv, "--image="+a)
	}
	cmd := exec.Command(tool, argv...)
	cmd.Dir = dir
	release := tooltest.Slot()
	msg, toolErr := cmd.CombinedOutput()
	release()
	got, ourErr := packageCase(r, c)
	if (toolErr != nil) != (ourErr != nil) {
		t.Fatalf("case %d %q: packager error %v (%s), ours %v", n, c.args, toolErr, msg, ourErr)
	}
	if toolErr != nil {
		return
	}
	want, err := os.ReadFile(filepath.Join(dir, out))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("case %d %q:\n got %x\nwant %x", n, c.args, got, want)
	}
}
