package offload

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
func genPackagerCase(rng *rand.Rand, r *Release, n int) packagerCase {
	c := packagerCase{files: map[string][]byte{}}
	for i := 0; i < 1+rng.Intn(3); i++ {
		var parts []string
		nfiles := 1
		if r.facts().Packager.SplitsFiles && rng.Intn(5) == 0 {
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
		if r.facts().Packager.NeedsTriple || rng.Intn(4) != 0 {
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
// on the same random command lines and compares the bytes.
func TestPackageMatchesClangOffloadPackager(t *testing.T) {
	const cases = 60
	for _, major := range []int{15, 16, 19, 22} {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-packager", major)
			r := mustRelease(t, major)
			rng := rand.New(rand.NewSource(int64(major)))
			dir := t.TempDir()
			for n := 0; n < cases; n++ {
				c := genPackagerCase(rng, r, n)
				checkAgainstPackager(t, tool, r, dir, n, c)
			}
		})
	}
}

func checkAgainstPackager(t *testing.T, tool string, r *Release, dir string, n int, c packagerCase) {
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
	msg, toolErr := cmd.CombinedOutput()
	var got bytes.Buffer
	_, ourErr := r.Package(&got, c.args, func(name string) (io.Reader, int64, error) {
		data, ok := c.files[name]
		if !ok {
			return nil, 0, os.ErrNotExist
		}
		return bytes.NewReader(data), int64(len(data)), nil
	})
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
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("case %d %q:\n got %x\nwant %x", n, c.args, got.Bytes(), want)
	}
}
