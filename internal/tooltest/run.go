package tooltest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// CombinedOutput runs cmd in a Slot, so that parallel tests run no more
// tools at once than there are processors, and returns what it printed.
func CombinedOutput(cmd *exec.Cmd) ([]byte, error) {
	defer Slot()()
	return cmd.CombinedOutput()
}

// RunIn runs a command in dir (in a Slot); a failure ends the test with
// what it printed.
func RunIn(t testing.TB, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := CombinedOutput(cmd); err != nil {
		t.Fatalf("in %s: %s %v: %v\n%s", filepath.Base(dir), name, args, err, Clip(out))
	}
}

// Clip shortens a long output to its start and end.
func Clip(out []byte) string {
	const keep = 2000
	if len(out) <= 2*keep {
		return string(out)
	}
	return fmt.Sprintf("%s\n[... %d bytes ...]\n%s", out[:keep], len(out)-2*keep, out[len(out)-keep:])
}

// FirstDiff returns the offset of the first byte where a and b differ.
func FirstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// SameFile fails t unless the file ours is the bytes of ref (what LLVM's
// tool, or the reference run, made); what names the comparison.
func SameFile(t testing.TB, ref, ours, what string) {
	t.Helper()
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got, err := os.ReadFile(ours)
	switch {
	case err != nil:
		t.Errorf("%s: LLVM's wrapper left %s, the wrapper under test no %s: %v", what, filepath.Base(ref), filepath.Base(ours), err)
	case !bytes.Equal(got, want):
		t.Errorf("%s %s: %d bytes, LLVM's wrapper's %d bytes, not the same (first difference at byte %d)", what, filepath.Base(ours), len(got), len(want), FirstDiff(got, want))
	}
}

// OwnTempDir points $TMPDIR at a new folder in the temporary folder, for
// the test binary and every process it starts, and returns the function
// that removes it (TestMain calls it after m.Run): what those processes
// leave behind goes with it. libomptarget's x86-64 plugin writes each
// device image it loads to /tmp/tmpfile_XXXXXX, whatever $TMPDIR says, and
// never removes it (hundreds a run): remove also takes away those of
// /tmp that name the folder (the images of the tests' programs carry
// their runtime folder, inside it, as a run path).
func OwnTempDir() (remove func(), err error) {
	dir, err := os.MkdirTemp("", "goffload-tests-")
	if err != nil {
		return nil, err
	}
	old, had := os.LookupEnv("TMPDIR")
	if err := os.Setenv("TMPDIR", dir); err != nil {
		os.Remove(dir)
		return nil, err
	}
	return func() {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
		os.RemoveAll(dir)
		removeImagesNaming("/tmp", dir)
	}, nil
}

// removeImagesNaming removes the regular files tmpfile_* of folder whose
// first MiB holds the text name.
func removeImagesNaming(folder, name string) {
	paths, _ := filepath.Glob(filepath.Join(folder, "tmpfile_*"))
	buf := make([]byte, 1<<20)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		st, err := f.Stat()
		n := 0
		if err == nil && st.Mode().IsRegular() {
			n, _ = io.ReadFull(f, buf)
		}
		f.Close()
		if bytes.Contains(buf[:n], []byte(name)) {
			os.Remove(p)
		}
	}
}

// CopyFile copies the file src to dst (created, or cut to nothing first),
// as a test's own copy of a shared or stored file.
func CopyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
