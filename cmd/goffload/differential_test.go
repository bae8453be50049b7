package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// verdict is how a reader judged an input.
type verdict struct {
	listing string // when accepted
	class   error  // goffload.ErrInvalid or goffload.ErrTruncated when rejected
	ub      bool   // llvm-objdump crashed, or we refused what LLVM reads out of bounds
}

// TestDifferentialAgainstObjdump mutates OffloadBinaries, raw and embedded in
// a fat object, at the fields LLVM checks, and judges each input with our
// reader and with llvm-objdump-19 --offloading: the same acceptance, the same
// class of error, the same listing. The only disagreements allowed are where
// LLVM reads out of bounds (it crashes, or prints what lies past the binary),
// which we refuse; they are counted. OFFLOAD_DIFF_CASES sets the number of
// cases (default 64, the first of the exhaustive run's 200; the closing
// notes give a run of 2000).
func TestDifferentialAgainstObjdump(t *testing.T) {
	t.Parallel()
	objdump := tooltest.Tool(t, "llvm-objdump", 19)
	cases := 64
	if tooltest.Exhaustive() {
		cases = 200
	}
	if n, err := strconv.Atoi(os.Getenv("OFFLOAD_DIFF_CASES")); err == nil && n > 0 {
		cases = n
	}
	r, _ := release.Lookup(19)
	single, _ := os.ReadFile(testdata("packager", "single-llvm22.bin"))
	multi, _ := os.ReadFile(testdata("packager", "multi-llvm22.bin"))
	raw := append(append([]byte{}, single...), multi...)
	starts := []int{0, len(single), len(single) + 0xf0}
	fat, secOff := fatObject(t, raw)
	dir := t.TempDir()

	type result struct{ agree, ub, accepted int }
	var mu sync.Mutex
	var res result
	var wg sync.WaitGroup
	jobs := make(chan int)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range jobs {
				rng := rand.New(rand.NewSource(int64(n)))
				isFat := n%2 == 1
				var data []byte
				if isFat {
					data = mutate(rng, fat, secOff, starts, false)
				} else {
					data = mutate(rng, raw, 0, starts, true)
				}
				file := filepath.Join(dir, fmt.Sprintf("case%d", n))
				os.WriteFile(file, data, 0o644)
				theirs := objdumpVerdict(t, objdump, file)
				ours := ourVerdict(data, isFat, r, file)
				os.Remove(file)
				mu.Lock()
				switch {
				case theirs.ub || ours.ub:
					res.ub++
					if theirs.ub && ours.class == nil && !ours.ub {
						t.Errorf("case %d (fat %v): llvm-objdump crashed, we accept", n, isFat)
					}
				case !errors.Is(ours.class, theirs.class) && (ours.class != nil || theirs.class != nil):
					t.Errorf("case %d (fat %v): llvm-objdump %v, we %v", n, isFat, theirs.class, ours.class)
				case ours.listing != theirs.listing:
					t.Errorf("case %d (fat %v): listings differ:\nobjdump %q\nours    %q", n, isFat, theirs.listing, ours.listing)
				default:
					res.agree++
					if ours.class == nil {
						res.accepted++
					}
				}
				mu.Unlock()
			}
		}()
	}
	for n := 0; n < cases; n++ {
		jobs <- n
	}
	close(jobs)
	wg.Wait()
	t.Logf("%d cases: %d judged alike (%d accepted, %d rejected), %d where LLVM reads out of bounds",
		cases, res.agree, res.accepted, res.agree-res.accepted, res.ub)
}

// fatObject embeds raw into the LLVM 19 host fixture and returns the object
// and the file offset of its .llvm.offloading.
func fatObject(t *testing.T, raw []byte) ([]byte, int) {
	t.Helper()
	data, err := os.ReadFile(testdata("host-objects", "openmp-x86-llvm19.o"))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := elfobj.Read(bytes.NewReader(data), int64(len(data)))
	o, _ := f.Object()
	if err := o.RemoveSection(o.Section(fatobj.Section)); err != nil {
		t.Fatal(err)
	}
	if err := fatobj.Embed(o, io.NewSectionReader(bytes.NewReader(raw), 0, int64(len(raw)))); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	g, _ := elfobj.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	return buf.Bytes(), int(g.Section(fatobj.Section).Offset)
}

// mutate corrupts one field of one binary at base+start, or (raw only) cuts
// or extends the input.
func mutate(rng *rand.Rand, data []byte, base int, starts []int, raw bool) []byte {
	out := append([]byte{}, data...)
	if raw {
		switch rng.Intn(10) {
		case 0:
			return append(out, make([]byte, 1+rng.Intn(80))...)
		case 1:
			return out[:rng.Intn(len(out))]
		}
	}
	at := base + starts[rng.Intn(len(starts))]
	size := binary.LittleEndian.Uint64(out[at+8:])
	fields := []struct{ off, size int }{{0, 1}, {4, 4}, {8, 8}, {16, 8}, {24, 8}, {32, 2}, {34, 2}, {36, 4}, {40, 8}, {48, 8}, {56, 8}, {64, 8}, {72, 8}, {80, 8}}
	f := fields[rng.Intn(len(fields))]
	vals := []uint64{0, 1, 2, 8, 16, 32, 39, 40, 71, 72, 73, size - 40, size - 32, size, size + 8, size*2 + 8, 1 << 32, 1 << 63, rng.Uint64()}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], vals[rng.Intn(len(vals))])
	copy(out[at+f.off:at+f.off+f.size], b[:f.size])
	return out
}

func objdumpVerdict(t *testing.T, objdump, file string) verdict {
	cmd := exec.Command(objdump, "--offloading", file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return verdict{listing: strings.ReplaceAll(stdout.String(), file, "FILE")}
	case errors.As(err, &ee) && ee.ExitCode() != 1:
		return verdict{ub: true}
	}
	switch msg := stderr.String(); {
	case strings.Contains(msg, "Invalid data was encountered"), strings.Contains(msg, "not recognized as a valid object file"):
		// A file whose magic is gone is no object, and no OffloadBinary either.
		return verdict{class: goffload.ErrInvalid}
	case strings.Contains(msg, "end of the file was unexpectedly encountered"):
		return verdict{class: goffload.ErrTruncated}
	}
	return verdict{class: fmt.Errorf("unexpected message: %s", stderr.String())}
}

func ourVerdict(data []byte, isFat bool, r *release.Release, file string) verdict {
	if isFat {
		// As llvm-objdump: an ELF file that does not read is its error.
		if _, err := elfobj.Read(bytes.NewReader(data), int64(len(data))); err != nil {
			return verdict{class: err}
		}
	}
	f, err := fatobj.NewFile("FILE", bytes.NewReader(data), int64(len(data)), &offloadbinary.ReadOptions{Release: r})
	if errors.Is(err, offloadbinary.ErrUnchecked) {
		return verdict{ub: true}
	}
	if err != nil {
		for _, c := range []error{goffload.ErrTruncated, goffload.ErrInvalid} {
			if errors.Is(err, c) {
				return verdict{class: c}
			}
		}
		return verdict{class: err}
	}
	var sb strings.Builder
	printText(&sb, f.Objects[0], false)
	return verdict{listing: unquoteFields(sb.String())}
}

// unquoteFields undoes what list does to a string of the file that does not
// print as itself (it is quoted: "\x10\xff"), for the comparison with
// llvm-objdump, which prints the bytes raw.
func unquoteFields(s string) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		k := strings.IndexByte(line, ' ')
		if k < 0 {
			continue
		}
		v := strings.TrimLeft(line[k:], " ")
		if !strings.HasPrefix(v, `"`) {
			continue
		}
		if raw, err := strconv.Unquote(v); err == nil {
			lines[i] = line[:len(line)-len(v)] + raw
		}
	}
	return strings.Join(lines, "\n")
}
