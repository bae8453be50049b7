package offloadbinary

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// mutateBinaries corrupts one field of one binary of data, or the bytes after
// them, with a value chosen to sit on a boundary that LLVM's reader checks.
func mutateBinaries(rng *rand.Rand, data []byte, starts []int) []byte {
	out := append([]byte{}, data...)
	switch rng.Intn(10) {
	case 0:
		return append(out, make([]byte, 1+rng.Intn(80))...)
	case 1:
		return out[:rng.Intn(len(out))]
	}
	base := starts[rng.Intn(len(starts))]
	size := uint64(binary.LittleEndian.Uint64(out[base+8:]))
	buf := uint64(len(out) - base)
	fields := []struct{ off, size int }{{4, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 2}, {34, 2}, {36, 4}, {40, 8}, {48, 8}, {56, 8}, {64, 8}}
	f := fields[rng.Intn(len(fields))]
	vals := []uint64{0, 1, 2, 3, 4, 8, 16, 31, 32, 39, 40, 41, 71, 72, 73, 80, size - 40, size - 33, size - 32, size - 31,
		size, size + 1, size + 8, buf, buf + 1, buf - 1, 1 << 32, 1 << 63, rng.Uint64()}
	v := vals[rng.Intn(len(vals))]
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	copy(out[base+f.off:base+f.off+f.size], b[:f.size])
	return out
}

// objdumpVerdict runs llvm-objdump --offloading on file and returns the
// listing, the class of its error, and whether it crashed.
func objdumpVerdict(t *testing.T, objdump, file string) (listing string, class error, crashed bool) {
	cmd := exec.Command(objdump, "--offloading", file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	release := tooltest.Slot()
	err := cmd.Run()
	release()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), nil, false
	case errors.As(err, &ee) && ee.ExitCode() == 1:
	case errors.As(err, &ee):
		return "", nil, true // killed by a signal or aborted: LLVM read out of bounds
	default:
		t.Fatal(err)
	}
	switch msg := stderr.String(); {
	case strings.Contains(msg, "Invalid data was encountered"):
		return "", goffload.ErrInvalid, false
	case strings.Contains(msg, "end of the file was unexpectedly encountered"):
		return "", goffload.ErrTruncated, false
	default:
		t.Fatalf("%s: unexpected objdump message %q", file, msg)
	}
	return "", nil, false
}

// listing formats bins as llvm-objdump --offloading does.
func listing(bins []*Binary) string {
	var sb strings.Builder
	i := 0
	for _, b := range bins {
		for _, im := range b.Images {
			fmt.Fprintf(&sb, "\nOFFLOADING IMAGE [%d]:\n%-16s%s\n%-16s%s\n%-16s%s\n%-16s%s\n", i,
				"kind", im.Kind, "arch", im.Arch(), "triple", im.Triple(), "producer", im.OffloadKind)
			i++
		}
	}
	return sb.String()
}

// TestReaderMatchesObjdump corrupts valid binaries at the boundaries that
// LLVM's reader checks and compares what the reader accepts and rejects, and
// what it lists, with llvm-objdump --offloading of LLVM 19 and 22.
//
// llvm-objdump stops at the first file it cannot read, so the cases the
// reader accepts run in one objdump command, each followed by a binary
// that names it, and must list as the reader does; a case the reader
// rejects runs alone, those of the default sample of the cases × releases
// matrix ([tooltest.Sampled]: every case with one release, every release
// with half the cases; every one when exhaustive). A case the reader
// refuses as one LLVM reads out of bounds (ErrUnchecked) is not compared.
func TestReaderMatchesObjdump(t *testing.T) {
	const cases = 120
	single := readTestdata(t, "packager", "single-llvm22.bin")
	multi := readTestdata(t, "packager", "multi-llvm22.bin")
	base := append(append([]byte{}, single...), multi...)
	starts := []int{0, len(single), len(single) + 0xf0}
	majors := []int{19, 22}
	for col, major := range majors {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			t.Parallel()
			objdump := tooltest.Tool(t, "llvm-objdump", major)
			opt := &ReadOptions{Release: mustRelease(t, major)}
			rng := rand.New(rand.NewSource(int64(major)))
			dir := t.TempDir()
			var accepted, rejected, unchecked, unsampled int
			var batch []objdumpCase
			for n := 0; n < cases; n++ {
				data := mutateBinaries(rng, base, starts)
				file := filepath.Join(dir, fmt.Sprintf("m%d.bin", n))
				bins, err := ReadAllBytes(data, opt)
				switch {
				case errors.Is(err, ErrUnchecked):
					unchecked++ // LLVM reads out of bounds here; we refuse.
					continue
				case err == nil:
					accepted++
				case !tooltest.Sampled(n, col, cases, len(majors)):
					unsampled++
					continue
				}
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
				c := objdumpCase{n: n, file: file, bins: bins, err: err}
				if err == nil {
					batch = append(batch, c)
					continue
				}
				if !compareWithObjdump(t, objdump, c) {
					rejected++
				} else {
					unchecked++
				}
			}
			if !batchMatchesObjdump(t, objdump, opt.Release, dir, batch) {
				failed := t.Failed()
				for _, c := range batch {
					compareWithObjdump(t, objdump, c)
				}
				if !failed && !t.Failed() {
					t.Errorf("llvm-objdump lists the %d accepted cases at once otherwise than the reader, though each alone as it", len(batch))
				}
			}
			t.Logf("LLVM %d: %d accepted (listed by one objdump), %d rejected alike, %d refused as out-of-bounds, %d rejected not in the sample",
				major, accepted, rejected, unchecked, unsampled)
		})
	}
}

// objdumpCase is a mutated binary in file, and what the reader made of it.
type objdumpCase struct {
	n    int
	file string
	bins []*Binary
	err  error
}

// compareWithObjdump runs llvm-objdump --offloading on the file of c alone
// and compares its verdict and listing with the reader's. It reports
// whether objdump crashed where the reader gives an error.
func compareWithObjdump(t *testing.T, objdump string, c objdumpCase) (crashedAlike bool) {
	t.Helper()
	want, wantErr, crashed := objdumpVerdict(t, objdump, c.file)
	switch err := c.err; {
	case crashed:
		// LLVM read out of bounds before its next check; any error will do.
		if err == nil {
			t.Errorf("case %d: objdump crashed, we accept", c.n)
		}
		return true
	case wantErr != nil:
		if !errors.Is(err, wantErr) {
			t.Errorf("case %d: objdump says %v, we say %v", c.n, wantErr, err)
		}
	case err != nil:
		t.Errorf("case %d: objdump accepts, we say %v", c.n, err)
	default:
		if got := listing(c.bins); got != want {
			t.Errorf("case %d: listing\n%q\nobjdump\n%q", c.n, got, want)
		}
	}
	return false
}

// batchMatchesObjdump runs one llvm-objdump --offloading on the files of
// the cases, each followed by a binary of release r whose arch names the
// case, and reports whether it succeeds and lists what the reader lists of
// each, case by case.
func batchMatchesObjdump(t *testing.T, objdump string, r *release.Release, dir string, cases []objdumpCase) bool {
	t.Helper()
	if len(cases) == 0 {
		return true
	}
	var args []string
	var want strings.Builder
	for _, c := range cases {
		im := LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", fmt.Sprintf("end-of-case-%d", c.n))
		end, err := MarshalBinary(r, &im, []byte("the end of a case"))
		if err != nil {
			t.Fatal(err)
		}
		endBins, err := ReadAllBytes(end, &ReadOptions{Release: r})
		if err != nil {
			t.Fatal(err)
		}
		endFile := filepath.Join(dir, fmt.Sprintf("end%d.bin", c.n))
		if err := os.WriteFile(endFile, end, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, c.file, endFile)
		want.WriteString(listing(c.bins) + listing(endBins))
	}
	cmd := exec.Command(objdump, append([]string{"--offloading"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	release := tooltest.Slot()
	out, err := cmd.Output()
	release()
	if err == nil && string(out) == want.String() {
		return true
	}
	t.Logf("llvm-objdump on the %d accepted cases at once: %v %s; each runs alone", len(cases), err, stderr.Bytes())
	return false
}
