package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func TestWriteReplacesOnlyOnSuccess(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out")
	if err := Write(path, writeString("one")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := Write(path, func(w io.Writer) error { io.WriteString(w, "partial"); return boom }); !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "one" {
		t.Errorf("after a failed write: %q, %v", data, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left %d files behind", len(ents))
	}
}

func TestWriteKeepsTheModeOfAReplacedFile(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	fresh := filepath.Join(dir, "fresh")
	if err := Write(fresh, writeString("x")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o640 {
		t.Errorf("new file: mode %v, want 0640 (0666 less the umask)", st.Mode())
	}
	kept := filepath.Join(dir, "kept")
	os.WriteFile(kept, nil, 0o600)
	os.Chmod(kept, 0o751)
	if err := Write(kept, writeString("x")); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(kept); st.Mode().Perm() != 0o751 {
		t.Errorf("replaced file: mode %v, want 0751", st.Mode())
	}
}

// TestWriteRefusesWhatIsNotARegularFile gives Write every kind of file that
// is not a regular one: each stays as it was, and the error names the path.
func TestWriteRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep me"), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(victim, link)
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(filepath.Join(dir, "nowhere"), dangling)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	cases := []string{fifo, link, dangling, sub, sub + "/", dir + "/."}
	if os.Getuid() == 0 {
		dev := filepath.Join(dir, "null")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, dev)
	}
	for _, path := range cases {
		before, _ := os.Lstat(strings.TrimSuffix(path, "/"))
		err := Write(path, writeString("data"))
		if err == nil {
			t.Errorf("%s: written", path)
			continue
		}
		if !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), tempMark) {
			t.Errorf("%s: message %q does not name the path alone", path, err)
		}
		if err := Check(path); err == nil {
			t.Errorf("%s: Check passes it", path)
		}
		after, _ := os.Lstat(strings.TrimSuffix(path, "/"))
		if before.Mode() != after.Mode() || !os.SameFile(before, after) {
			t.Errorf("%s: changed from %v to %v", path, before.Mode(), after.Mode())
		}
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me" {
		t.Errorf("the symbolic link's target was written: %q", data)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Errorf("the dangling link's target was made")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != len(cases)-1 {
		t.Errorf("%d files in the folder, want %d", len(ents), len(cases)-1)
	}
}

func TestWriteErrorsNameTheTarget(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "nodir", "x.o"), "/proc/version/x"} {
		err := Write(path, writeString("x"))
		if err == nil || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), tempMark) {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func TestWriteInStaysInItsFolder(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	os.Symlink(dir, filepath.Join(out, "up"))
	root, err := os.OpenRoot(out)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, name := range []string{"../x", "/etc/x", "up/x", "..", ".", "", "a\x00b", strings.Repeat("n", 256), "up"} {
		if err := WriteIn(root, out, name, writeString("x")); err == nil {
			t.Errorf("%q: written", name)
		}
	}
	if err := WriteIn(root, out, strings.Repeat("n", 255), writeString("x")); err != nil {
		t.Errorf("a 255-byte name: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d files beside the output folder", len(ents))
	}
}

func TestPendingCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prog")
	os.WriteFile(path, []byte("old"), 0o700)
	p, err := Reserve(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p.Name, []byte("new"), 0o755)
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "new" {
		t.Errorf("got %q", data)
	}
	// As GNU ld (cc -o prog over a 0700 prog makes it 0711).
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o711 {
		t.Errorf("mode %v, want 0711", st.Mode())
	}
	// After touch prog, a program is executable; a relocatable object (no
	// execute bit written) keeps the file's bits.
	for _, c := range []struct{ old, written, want os.FileMode }{{0o644, 0o755, 0o755}, {0o600, 0o644, 0o600}, {0o640, 0o700, 0o740}} {
		os.Chmod(path, c.old)
		p, err := Reserve(path)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(p.Name, []byte("new"), 0o600)
		os.Chmod(p.Name, c.written)
		if err := p.Commit(); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != c.want {
			t.Errorf("%v written over %v: %v, want %v", c.written, c.old, st.Mode().Perm(), c.want)
		}
	}
	p, _ = Reserve(path)
	os.WriteFile(p.Name, []byte("half"), 0o755)
	p.Discard()
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files left", len(ents))
	}
	if _, err := Reserve(dir + "/"); err == nil {
		t.Errorf("a folder reserved")
	}
}

// TestSignalLeavesNothing runs this test binary as a child that makes a
// temporary file, a temporary folder, a pending file and a program, then
// sends it each signal: it dies by the signal and leaves nothing.
func TestSignalLeavesNothing(t *testing.T) {
	if dir := os.Getenv("ATOMICFILE_SIGNAL_CHILD"); dir != "" {
		signalChild(dir)
		return
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestSignalLeavesNothing$")
			cmd.Env = append(os.Environ(), "ATOMICFILE_SIGNAL_CHILD="+dir, "TMPDIR="+dir)
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pid int
			if _, err := fmt.Fscan(stdout, &pid); err != nil {
				cmd.Process.Kill()
				t.Fatalf("child: %v", err)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("child ended with %v, not by %v", err, sig)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left %s", ents[0].Name())
			}
			deadline := time.Now().Add(5 * time.Second)
			for syscall.Kill(pid, 0) == nil {
				if time.Now().After(deadline) {
					t.Errorf("the child's program %d still runs", pid)
					syscall.Kill(pid, syscall.SIGKILL)
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

func signalChild(dir string) {
	RemoveOnSignal()
	if _, _, err := TempDir("", "folder"); err != nil {
		panic(err)
	}
	p, err := Reserve(filepath.Join(dir, "prog"))
	if err != nil {
		panic(err)
	}
	os.WriteFile(p.Name, []byte("half a program"), 0o755)
	cmd := exec.Command("sleep", "60")
	go Run(cmd)
	Write(filepath.Join(dir, "out"), func(w io.Writer) error {
		w.Write(make([]byte, 2<<20)) // past the buffer: the file exists
		for pid := 0; pid == 0; time.Sleep(time.Millisecond) {
			registry.Lock()
			for p := range registry.procs {
				pid = p.Pid
			}
			registry.Unlock()
			if pid != 0 {
				fmt.Println(pid)
			}
		}
		time.Sleep(time.Minute)
		return nil
	})
	os.Exit(3)
}

// A name from data is one plain path element that prints as one line and
// sends nothing to a terminal.
func TestCheckName(t *testing.T) {
	for _, name := range []string{"k-x86_64-unknown-linux-gnu-gfx90a:xnack+.0.o", "a b", "é\xff.o", "-x"} {
		if err := CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"", ".", "..", "a/b", "a\x00b", "a\nb", "a\rb", "a\x1b[2Jb", "a\x7fb", "a\u009bb", strings.Repeat("a", MaxNameLen+1)} {
		if err := CheckName(name); !errors.Is(err, ErrBadName) {
			t.Errorf("CheckName(%q) = %v, want ErrBadName", name, err)
		}
	}
}
