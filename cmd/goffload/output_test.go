package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// writers are the commands that write a file at -o, with the inputs they
// succeed on.
func writers(bin, fat, spec string) [][]string {
	hipfb, _ := filepath.Abs(filepath.Join("..", "..", "bundle", "testdata", "hip-fatbin-clang-linker-wrapper-llvm22.bundle"))
	return [][]string{
		{"package", "-o", "OUT", "--image", "file=" + bin + ",triple=x86_64-unknown-linux-gnu"},
		{"package", "--llvm", "24", "--compress", "-o", "OUT", "--image", "file=" + bin + ",triple=x86_64-unknown-linux-gnu"},
		{"embed", "-o", "OUT", bin},
		{"embed", bin, "--into", fat, "-o", "OUT"},
		{"strip", "--keep", "x86_64-unknown-linux-gnu", "-o", "OUT", fat},
		{"convert", "--from", "19", "--llvm", "22", "-o", "OUT", fat},
		{"wrap", "-o", "OUT", bin},
		{"wrap", "--kind", "hip", "--compress", "-o", "OUT", hipfb},
		{"wrap", "--kind", "sycl", "-o", "OUT", filepath.Join(filepath.Dir(bin), "sycl.bin")},
		{"wrap", "--kind", "sycl", "--llvm", "24", "-o", "OUT", filepath.Join(filepath.Dir(bin), "sycl.bin")},
		{"wrap", "--llvm", "24", "-o", "OUT", bin},
		{"entries", "--spec", spec, "-o", "OUT"},
		{"link", "--dry-run", "-o", "OUT", fat},
		{"linker-wrapper", "--dry-run", "--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld", "-o", "OUT", fat},
	}
}

// outputInputs writes a binary, a fat object holding it and an entries spec
// into dir.
func outputInputs(t *testing.T, dir string) (bin, fat, spec string) {
	bin = filepath.Join(dir, "k.bin")
	os.WriteFile(bin, packaged(t, dir, "file="+filepath.Join("..", "..", "offload", "testdata", "llvm", "img1.bin")+",triple=x86_64-unknown-linux-gnu,kind=openmp"), 0o644)
	os.WriteFile(filepath.Join(dir, "sycl.bin"), packaged(t, dir, "file="+filepath.Join("..", "..", "offload", "testdata", "llvm", "img1.bin")+",triple=spirv64-unknown-unknown,kind=sycl,symbols=k"), 0o644)
	fat = filepath.Join(dir, "fat.o")
	if _, stderr, code := cli(t, "embed", "-o", fat, bin); code != 0 {
		t.Fatal(stderr)
	}
	spec = filepath.Join(dir, "spec.json")
	os.WriteFile(spec, []byte(`[{"kind": "openmp", "name": "x", "symbol": "x"}]`), 0o644)
	return bin, fat, spec
}

func substitute(args []string, out string) []string {
	r := make([]string, len(args))
	for i, a := range args {
		r[i] = strings.ReplaceAll(a, "OUT", out)
	}
	return r
}

// TestOutputReplacesOnlyRegularFiles gives every writing command, as -o, a
// named pipe, symbolic links, a folder, a device and a path in no folder:
// each is refused with a message naming it and left as it was. A regular
// file is replaced and keeps its mode.
func TestOutputReplacesOnlyRegularFiles(t *testing.T) {
	t.Parallel()
	exe := goffloadExe(t)
	in := t.TempDir()
	bin, fat, spec := outputInputs(t, in)
	for _, args := range writers(bin, fat, spec) {
		t.Run(args[0]+"-"+args[1], func(t *testing.T) {
			work := t.TempDir()
			os.Mkdir(filepath.Join(work, "tmp"), 0o755)
			victim := filepath.Join(work, "victim")
			os.WriteFile(victim, []byte("keep me"), 0o644)
			targets := map[string]string{
				"fifo": filepath.Join(work, "fifo"), "symlink": filepath.Join(work, "link"),
				"dangling": filepath.Join(work, "dangling"), "folder": filepath.Join(work, "folder"),
				"folder-slash": filepath.Join(work, "folder") + "/", "no-folder": filepath.Join(work, "nodir", "x.o"),
			}
			syscall.Mkfifo(targets["fifo"], 0o644)
			os.Symlink(victim, targets["symlink"])
			os.Symlink(filepath.Join(work, "nowhere"), targets["dangling"])
			os.Mkdir(targets["folder"], 0o755)
			if os.Getuid() == 0 {
				targets["device"] = filepath.Join(work, "null")
				if err := syscall.Mknod(targets["device"], syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
					t.Fatal(err)
				}
			}
			before := snapshot(t, work)
			for name, out := range targets {
				res := runGoffload(t, exe, work, substitute(args, out)...)
				if res.code != 1 {
					t.Errorf("%s: exit %d", name, res.code)
				}
				checkRun(t, res, out)
			}
			if ch := changes(before, snapshot(t, work)); len(ch) > 0 {
				t.Errorf("changed: %s", strings.Join(ch, ", "))
			}
			if args[0] == "link" || args[0] == "linker-wrapper" {
				return // --dry-run writes nothing
			}
			out := filepath.Join(work, "regular")
			os.WriteFile(out, []byte("old"), 0o600)
			os.Chmod(out, 0o640)
			res := runGoffload(t, exe, work, substitute(args, out)...)
			if res.code != 0 {
				t.Fatalf("a regular file: %s", res.stderr)
			}
			if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o640 || st.Size() <= 3 {
				t.Errorf("a regular file: %v, %v", st.Mode(), err)
			}
		})
	}
}

// TestSignalLeavesNoTemporaryFile sends SIGINT or SIGTERM to commands while
// they write a 1 GiB image: each dies by the signal and leaves nothing.
func TestSignalLeavesNoTemporaryFile(t *testing.T) {
	exe := goffloadExe(t)
	in := t.TempDir()
	img := filepath.Join(in, "big.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil { // sparse: takes no room
		t.Fatal(err)
	}
	f.Close()
	// The binary of the image, sparse too: written, it would take 1 GiB of
	// disk and seconds.
	big := filepath.Join(in, "big.bin")
	bf, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "")
	sw := &sparseWriter{f: bf}
	n, err := offloadbinary.WriteBinary(sw, release.Default(), &im, io.NewSectionReader(zeroReader{}, 0, 1<<30), 1<<30)
	if err == nil {
		err = bf.Truncate(n)
	}
	if err != nil {
		t.Fatal(err)
	}
	bf.Close()
	for i, args := range [][]string{
		{"package", "-o", "OUT", "--image", "file=" + img + ",triple=x86_64-unknown-linux-gnu"},
		{"embed", "-o", "OUT", big},
		{"wrap", "-o", "OUT", big},
		{"extract", "--raw", "-o", "OUT", big},
		{"extract", "-o", "OUT", big},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
			t.Run(fmt.Sprintf("%s-%d-%v", args[0], i, sig), func(t *testing.T) {
				work := t.TempDir()
				out := filepath.Join(work, "out")
				if args[0] == "extract" {
					os.Mkdir(out, 0o755)
				}
				cmd := exec.Command(exe, substitute(args, out)...)
				cmd.Dir = work
				cmd.Env = append(os.Environ(), "TMPDIR="+work)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				// Wait for the temporary file to grow, then signal.
				deadline := time.Now().Add(maxRunTime)
				for !writing(work) {
					if time.Now().After(deadline) {
						cmd.Process.Kill()
						cmd.Wait()
						t.Fatalf("no temporary file appeared: %s", stderr.String())
					}
					time.Sleep(time.Millisecond)
				}
				cmd.Process.Signal(sig)
				cmd.Wait()
				ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
				if !ws.Signaled() || ws.Signal() != sig {
					t.Errorf("ended with %v, not by the signal: %s", cmd.ProcessState, stderr.String())
				}
				var left []string
				filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						left = append(left, p)
					}
					return nil
				})
				if len(left) > 0 {
					t.Errorf("left %v", left)
				}
			})
		}
	}
}

// sparseWriter writes to a file, skipping blocks of zeros.
type sparseWriter struct {
	f   *os.File
	off int64
}

// zeros is what sparseWriter compares its writes with.
var zeros = make([]byte, 1<<20)

func (w *sparseWriter) Write(p []byte) (int, error) {
	allZero := true
	for rest := p; len(rest) > 0 && allZero; {
		n := min(len(rest), len(zeros))
		allZero = bytes.Equal(rest[:n], zeros[:n])
		rest = rest[n:]
	}
	if !allZero {
		if _, err := w.f.WriteAt(p, w.off); err != nil {
			return 0, err
		}
	}
	w.off += int64(len(p))
	return len(p), nil
}

type zeroReader struct{}

func (zeroReader) ReadAt(p []byte, _ int64) (int, error) {
	clear(p)
	return len(p), nil
}

// writing reports whether a temporary output file under dir has data.
func writing(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".goffload-tmp-") {
			if info, err := d.Info(); err == nil && info.Size() > 4<<20 {
				found = true
			}
		}
		return nil
	})
	return found
}

// TestManyInputsFewDescriptors runs commands on thousands of inputs and
// archive members with a limit of 256 open files.
func TestManyInputsFewDescriptors(t *testing.T) {
	t.Parallel()
	exe := goffloadExe(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	in := t.TempDir()
	bin, fat, _ := outputInputs(t, in)
	binData, _ := os.ReadFile(bin)
	fatData, _ := os.ReadFile(fat)
	const n = 1000
	var bins, thinNames []string
	var thinSizes []int64
	var members []ar.NewMember
	for i := range n {
		name := fmt.Sprintf("m%04d.o", i)
		os.WriteFile(filepath.Join(in, name), fatData, 0o644)
		thinNames, thinSizes = append(thinNames, name), append(thinSizes, int64(len(fatData)))
		members = append(members, ar.NewMember{Name: name, Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader(fatData), 0, int64(len(fatData)))})
		b := filepath.Join(in, fmt.Sprintf("b%04d.bin", i))
		os.WriteFile(b, binData, 0o644)
		bins = append(bins, b)
	}
	var lib bytes.Buffer
	for len(members) < 5000 {
		members = append(members, members[len(members)%n])
		members[len(members)-1].Data = io.NewSectionReader(bytes.NewReader(fatData), 0, int64(len(fatData)))
	}
	if err := ar.WriteGNU(&lib, members); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(in, "big.a"), lib.Bytes(), 0o644)
	os.WriteFile(filepath.Join(in, "thin.a"), thinArchive(thinNames, thinSizes), 0o644)
	work := t.TempDir()
	out := filepath.Join(work, "out")
	for _, args := range [][]string{
		{"strip", "--keep", "x86_64-unknown-linux-gnu", "-o", out, filepath.Join(in, "big.a")},
		{"list", filepath.Join(in, "thin.a")},
		{"extract", "-o", out + "-x", filepath.Join(in, "thin.a")},
		append([]string{"embed", "-o", out}, bins...),
		append([]string{"wrap", "-o", out}, bins...),
		append([]string{"link", "--dry-run", "-o", out}, bins...),
	} {
		t.Run(args[0], func(t *testing.T) {
			cmd := exec.Command(bash, append([]string{"-c", `ulimit -n 256; exec "$0" "$@"`, exe}, args...)...)
			cmd.Dir = work
			msg, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, lastLines(string(msg), 3))
			}
		})
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
