package linkcache

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nobody is a user other than the one running the tests.
const nobody = 65534

// TestOpenRefusesFoldersOthersControl: a cache folder that every user may
// write to, sticky or not (a shared /tmp/shared of mode 1777), and a cache
// folder, or a folder inside it, owned by another user (who made link-v1/
// there first, to plant entries) are refused.
func TestOpenRefusesFoldersOthersControl(t *testing.T) {
	for _, mode := range []os.FileMode{0o777, 0o777 | os.ModeSticky, 0o773} {
		dir := t.TempDir()
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "writable by every user") {
			t.Errorf("a folder of mode %v: %v, want it refused", mode, err)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: no folder of another user can be made to check the owner")
	}
	for _, sub := range []string{"", "link-v1", "link-v1/tmp", "files-v1"} {
		dir := t.TempDir()
		if _, err := Open(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(dir, sub), nobody, nobody); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "owned by another user") {
			t.Errorf("%s owned by another user: %v, want it refused", filepath.Join("DIR", sub), err)
		}
	}
	// Another user's folder of entries, planted after Open: no hit, no
	// store there.
	dir := t.TempDir()
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := keyOf("device link")
	put(t, c, key, "mine")
	kk := filepath.Join(dir, entriesDir, key[:2])
	if err := os.Chown(kk, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if _, err := get(c, key); err == nil {
		t.Errorf("an entry in another user's folder was a hit")
	}
	if err := c.Put(context.Background(), key[:2]+keyOf("other")[2:], []io.Reader{strings.NewReader("x")}); err == nil {
		t.Errorf("Put stored into another user's folder")
	}
}

// TestNoSymbolicLinkFollowed: symbolic links inside the cache, put there
// after it was opened, are never followed: the writers' folder linked to
// another folder (whose old files Stats and Put used to remove), the
// remembered hashes linked to a repository's objects (which Clear used to
// destroy), a folder of entries linked elsewhere (where Put used to write,
// and which Clear did not count).
func TestNoSymbolicLinkFollowed(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	victim := t.TempDir()
	old := filepath.Join(victim, "put-0123456789abcdef-1")
	if err := os.MkdirAll(filepath.Join(old, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-48 * time.Hour)
	os.Chtimes(old, long, long)
	objects := filepath.Join(victim, "objects")
	os.MkdirAll(filepath.Join(objects, "2c"), 0o755)
	os.WriteFile(filepath.Join(objects, "2c", "0123"), []byte("a git object"), 0o444)
	elsewhere := filepath.Join(victim, "elsewhere")
	os.Mkdir(elsewhere, 0o755)

	replace := func(path, target string) {
		t.Helper()
		if err := os.RemoveAll(path); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
	}
	replace(filepath.Join(dir, entriesDir, tmpDir), victim)
	replace(filepath.Join(dir, hashesDir), objects)
	key := "2c" + keyOf("x")[2:]
	replace(filepath.Join(dir, entriesDir, "2c"), elsewhere)

	if _, err := c.Stats(); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(context.Background(), key, []io.Reader{strings.NewReader("image")}); err == nil {
		t.Errorf("Put through a symbolic link: no error")
	}
	if _, err := get(c, key); err == nil {
		t.Errorf("Get through a symbolic link: a hit")
	}
	if n, err := c.Clear(); err != nil || n != 0 {
		t.Errorf("Clear: %d, %v", n, err)
	}
	if _, err := c.Trim(0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HashFile(old); err == nil {
		t.Errorf("HashFile of a folder: no error")
	}
	for _, f := range []string{old, filepath.Join(old, "sub"), filepath.Join(objects, "2c", "0123")} {
		if _, err := os.Lstat(f); err != nil {
			t.Errorf("%s, outside the cache, is gone: %v", f, err)
		}
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("Put wrote outside the cache: %v", ents)
	}
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Open of a cache with links inside: %v, want it refused", err)
	}
}

// TestWhateverTheUmask: under umask 000 the cache writes nothing that
// other users may write: entries, their folders, and the remembered hashes
// of the tools.
func TestWhateverTheUmask(t *testing.T) {
	dir, tools := t.TempDir(), t.TempDir()
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	put(t, c, keyOf("k"), "image")
	tool := filepath.Join(tools, "clang")
	os.WriteFile(tool, []byte("a tool"), 0o755)
	if _, err := c.HashFile(tool); err != nil {
		t.Fatal(err)
	}
	n := 0
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().Perm()&0o022 != 0 {
			t.Errorf("%s: mode %v, writable by others", p, info.Mode())
		}
		n++
		return nil
	})
	if n < 8 {
		t.Errorf("%d files and folders in the cache, want a hash and an entry", n)
	}
}
