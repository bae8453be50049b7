package linkcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func keyOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func put(t *testing.T, c getter, key string, outs ...string) {
	t.Helper()
	var rs []io.Reader
	for _, o := range outs {
		rs = append(rs, strings.NewReader(o))
	}
	if err := c.Put(context.Background(), key, rs); err != nil {
		t.Fatal(err)
	}
}

// getter is a cache: a *Cache, or a Tiered one.
type getter interface {
	Get(ctx context.Context, key string) ([]io.ReadCloser, error)
	Put(ctx context.Context, key string, outputs []io.Reader) error
}

// get reads the entry of key whole, as package link reads it: every reader
// to its end.
func get(c getter, key string) ([]string, error) {
	rs, err := c.Get(context.Background(), key)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rs {
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, nil
}

func TestPutGet(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	k := keyOf("a")
	if _, err := get(c, k); !errors.Is(err, ErrMiss) {
		t.Fatalf("Get of an empty cache: %v, want ErrMiss", err)
	}
	put(t, c, k, "first output", "", strings.Repeat("x", 1<<20))
	got, err := get(c, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "first output" || got[1] != "" || len(got[2]) != 1<<20 {
		t.Fatalf("Get: %d outputs %.20q", len(got), got)
	}
	// A second Put of the key keeps the first entry.
	put(t, c, k, "other")
	if got, _ := get(c, k); len(got) != 3 {
		t.Fatalf("a second Put replaced the entry: %.20q", got)
	}
	for _, bad := range []string{"", "../x", strings.ToUpper(k), k[:63] + "/", k + "0"} {
		if _, err := c.Get(context.Background(), bad); err == nil || errors.Is(err, ErrMiss) {
			t.Errorf("Get(%q): %v, want an error about the key", bad, err)
		}
		if err := c.Put(context.Background(), bad, nil); err == nil {
			t.Errorf("Put(%q) took the key", bad)
		}
	}
	s, err := c.Stats()
	if err != nil || s.Entries != 1 || s.Bytes < 1<<20 {
		t.Fatalf("Stats: %+v, %v", s, err)
	}
	if n, err := c.Clear(); n != 1 || err != nil {
		t.Fatalf("Clear: %d, %v", n, err)
	}
	if _, err := get(c, k); !errors.Is(err, ErrMiss) {
		t.Fatalf("Get after Clear: %v, want ErrMiss", err)
	}
}

// TestDamagedEntries changes an entry in each way a disk, a crash or
// another program could, and expects Get to refuse it, never return its
// bytes, and remove it so that the next Put stores it again.
func TestDamagedEntries(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("the bytes of output"), 0o644); err != nil {
		t.Fatal(err)
	}
	damage := map[string]func(dir string) error{
		"truncated": func(dir string) error { return os.Truncate(filepath.Join(dir, "0"), 5) },
		"altered": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "0"), []byte("the bytes of outpuT"), 0o644)
		},
		"longer": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "0"), []byte("the bytes of output!"), 0o644)
		},
		"missing": func(dir string) error { return os.Remove(filepath.Join(dir, "0")) },
		"symlink": func(dir string) error {
			os.Remove(filepath.Join(dir, "0"))
			return os.Symlink(outside, filepath.Join(dir, "0"))
		},
		"folder": func(dir string) error {
			os.Remove(filepath.Join(dir, "0"))
			return os.Mkdir(filepath.Join(dir, "0"), 0o755)
		},
		"manifest-symlink": func(dir string) error {
			b, _ := os.ReadFile(filepath.Join(dir, "manifest"))
			os.WriteFile(outside+".m", b, 0o644)
			os.Remove(filepath.Join(dir, "manifest"))
			return os.Symlink(outside+".m", filepath.Join(dir, "manifest"))
		},
		"manifest-huge": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "manifest"), bytes.Repeat([]byte("x"), maxManifest+10), 0o644)
		},
		"manifest-garbage": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "manifest"), []byte("goffload link cache 1\nkey zz\n"), 0o644)
		},
		"manifest-size-huge": func(dir string) error {
			b, _ := os.ReadFile(filepath.Join(dir, "manifest"))
			b = bytes.Replace(b, []byte(" 19 "), []byte(" 9223372036854775807 "), 1)
			return os.WriteFile(filepath.Join(dir, "manifest"), b, 0o644)
		},
		"entry-symlink": func(dir string) error {
			other := filepath.Join(filepath.Dir(outside), "entry")
			if err := os.Rename(dir, other); err != nil {
				return err
			}
			return os.Symlink(other, dir)
		},
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			c, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			k := keyOf(name)
			put(t, c, k, "the bytes of output")
			if err := f(c.entry(k)); err != nil {
				t.Fatal(err)
			}
			got, err := get(c, k)
			if err == nil {
				t.Fatalf("Get of a damaged entry returned %q", got)
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Get: %v, want ErrCorrupt", err)
			}
			if _, err := get(c, k); !errors.Is(err, ErrMiss) {
				t.Fatalf("Get after the damage was found: %v, want ErrMiss (the entry removed)", err)
			}
			put(t, c, k, "the bytes of output")
			if got, err := get(c, k); err != nil || got[0] != "the bytes of output" {
				t.Fatalf("Get after storing it again: %q, %v", got, err)
			}
			if b, _ := os.ReadFile(outside); string(b) != "the bytes of output" {
				t.Fatalf("a file outside the cache was changed: %q", b)
			}
		})
	}
}

// TestReaderNeverReturnsBadBytesAsEOF: a reader of a changed file ends in
// an error, not io.EOF, whatever the size of the reads.
func TestReaderNeverReturnsBadBytesAsEOF(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	k := keyOf("r")
	put(t, c, k, strings.Repeat("abcdefgh", 4096))
	rs, err := c.Get(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	defer rs[0].Close()
	// Changed after Get opened it: same size, other bytes.
	if err := os.WriteFile(filepath.Join(c.entry(k), "0"), []byte(strings.Repeat("abcdefgH", 4096)), 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	for {
		_, err := rs[0].Read(buf)
		if err == io.EOF {
			t.Fatal("a changed file read to io.EOF")
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("read: %v, want ErrCorrupt", err)
			}
			break
		}
	}
}

// TestTrimKeepsTheBound stores more than the bound and expects the entries
// used least recently to go: a Get makes an old entry recent.
func TestTrimKeepsTheBound(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c.MaxBytes = 0
	out := strings.Repeat("y", 3<<10)
	var keys []string
	for i := range 6 {
		k := keyOf(fmt.Sprint(i))
		keys = append(keys, k)
		put(t, c, k, out)
		old := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(filepath.Join(c.entry(k), manifest), old, old)
	}
	if _, err := get(c, keys[0]); err != nil { // the oldest, used now
		t.Fatal(err)
	}
	// Three entries of 3 KiB and a manifest fit in 10 KiB: 0, 4 and 5.
	if n, err := c.Trim(10 << 10); err != nil || n != 3 {
		t.Fatalf("Trim: %d, %v; want 3 removed", n, err)
	}
	present := func(i int) bool { _, err := os.Stat(c.entry(keys[i])); return err == nil }
	for i, want := range []bool{true, false, false, false, true, true} {
		if present(i) != want {
			t.Errorf("entry %d present: %v, want %v", i, present(i), want)
		}
	}
	// Put trims to MaxBytes.
	c.MaxBytes = 10 << 10
	for i := range 5 {
		put(t, c, keyOf(fmt.Sprint("more", i)), out)
		s, err := c.Stats()
		if err != nil {
			t.Fatal(err)
		}
		if s.Bytes > c.MaxBytes || s.Entries != 3 {
			t.Fatalf("after a Put the cache holds %d entries, %d bytes; its bound is %d", s.Entries, s.Bytes, c.MaxBytes)
		}
	}
}

// TestPutRace stores one key from many goroutines at once (as links sharing
// a cache do) and reads it from others meanwhile: every Get returns the
// whole entry or a miss, never a part.
func TestPutRace(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	k := keyOf("race")
	want := strings.Repeat("z", 256<<10)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := c.Put(context.Background(), k, []io.Reader{strings.NewReader(want)}); err != nil {
				errs <- err
			}
		}()
		go func() {
			defer wg.Done()
			got, err := get(c, k)
			if err != nil && !errors.Is(err, ErrMiss) {
				errs <- err
			}
			if err == nil && got[0] != want {
				errs <- fmt.Errorf("a Get during the Puts read %d bytes", len(got[0]))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, err := get(c, k); err != nil || got[0] != want {
		t.Fatalf("after the race: %v", err)
	}
	left, _ := os.ReadDir(filepath.Join(c.dir, entriesDir, tmpDir))
	if len(left) != 0 {
		t.Errorf("the writers left %d folders in tmp", len(left))
	}
}

func TestHashFile(t *testing.T) {
	c, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "tool")
	os.WriteFile(f, []byte("one"), 0o755)
	sum := func() string {
		t.Helper()
		s, err := c.HashFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	want := sha256.Sum256([]byte("one"))
	if got := sum(); got != hex.EncodeToString(want[:]) {
		t.Fatalf("HashFile: %s", got)
	}
	if got := sum(); got != hex.EncodeToString(want[:]) {
		t.Fatalf("HashFile, remembered: %s", got)
	}
	// Same size, same modification time: the change time and the content
	// tell.
	st, _ := os.Stat(f)
	os.WriteFile(f, []byte("two"), 0o755)
	os.Chtimes(f, st.ModTime(), st.ModTime())
	want = sha256.Sum256([]byte("two"))
	if got := sum(); got != hex.EncodeToString(want[:]) {
		t.Fatalf("HashFile after a change of content with the same size and time: %s, want the new content's", got)
	}
}

func TestOpenRefusesAFolderEveryoneWrites(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil {
		t.Fatal("Open took a folder every user may write to")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "123": 123, "10G": 10 << 30, "512M": 512 << 20, "1KiB": 1 << 10, "2t": 2 << 40, "3GB": 3 << 30} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "G", "1X", "99999999999T", "1.5G"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) took it", in)
		}
	}
}
