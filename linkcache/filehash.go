package linkcache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/goffload/goffload/internal/digest"
)

// hashesDir holds the remembered hashes of the tools' files.
const hashesDir = "files-v1"

// unusedHash is how long a remembered hash is kept unused.
const unusedHash = 30 * 24 * time.Hour

// HashFile returns the SHA-256, in hexadecimal, of the file at path (after
// symbolic links). It remembers it in the cache under the file's identity
// on disk (its absolute path, device, inode, size, mode, and times of
// modification and of status change, which a write always sets), so that
// the next program that asks for a file not changed since reads nothing
// but the remembered hash: package link asks it for the tools' own files
// (clang, lld and their shared libraries, hundreds of MiB), never for a
// step's inputs.
func (c *Cache) HashFile(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", err
	}
	id, ok := fileIdentity(abs, st)
	if !ok {
		return digest.File(abs)
	}
	memo := filepath.Join(c.dir, hashesDir, id[:2], id)
	// A hash is read only from folders to trust (none remembered yet is
	// no folder at all): else the file is hashed here.
	if safeDir(filepath.Join(c.dir, hashesDir)) == nil && safeDir(filepath.Dir(memo)) == nil {
		if h, ok := readMemo(memo, id); ok {
			return h, nil
		}
	}
	sum, err := digest.File(abs)
	if err != nil {
		return "", err
	}
	// Remembered only if the file did not change while it was read.
	if st2, err := os.Stat(abs); err == nil {
		if id2, ok := fileIdentity(abs, st2); ok && id2 == id {
			c.remember(memo, sum)
		}
	}
	return sum, nil
}

// remember writes a hash at memo, whole (atomicfile: a temporary file
// renamed); a hash that cannot be written is not remembered.
func (c *Cache) remember(memo, sum string) {
	base := filepath.Join(c.dir, hashesDir)
	if safeDir(base) != nil {
		return
	}
	dir, err := subdir(base, filepath.Base(filepath.Dir(memo)))
	if err != nil {
		return
	}
	// Written whole, readable by others and writable by the owner only,
	// whatever the umask.
	f, err := os.CreateTemp(dir, ".memo-*")
	if err != nil {
		return
	}
	_, err = fmt.Fprintf(f, "%s\n", sum)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), memo)
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

// fileIdentity is the name of a file's remembered hash: the SHA-256 of its
// path and what its status says of its contents. ok is false where the
// status lacks the inode or the change time.
func fileIdentity(abs string, st os.FileInfo) (string, bool) {
	dev, ino, ctime, ok := statIdentity(st)
	if !ok {
		return "", false
	}
	h := sha256.New()
	fmt.Fprintf(h, "%q %d %d %d %o %d %d", abs, dev, ino, st.Size(), st.Mode(), st.ModTime().UnixNano(), ctime)
	return hex.EncodeToString(h.Sum(nil)), true
}

// trimHashes removes the remembered hashes unused for 30 days, and the
// temporary files of writers that died.
func (c *Cache) trimHashes() {
	base := filepath.Join(c.dir, hashesDir)
	if safeDir(base) != nil {
		return
	}
	tops, _ := os.ReadDir(base)
	for _, t := range tops {
		if len(t.Name()) != 2 || !lowerHex(t.Name()) || safeDir(filepath.Join(base, t.Name())) != nil {
			continue
		}
		ds, _ := os.ReadDir(filepath.Join(base, t.Name()))
		for _, d := range ds {
			if info, err := d.Info(); err == nil && time.Since(info.ModTime()) > unusedHash {
				os.Remove(filepath.Join(base, t.Name(), d.Name()))
			}
		}
	}
}

// clearHashes removes every remembered hash.
func (c *Cache) clearHashes() {
	base := filepath.Join(c.dir, hashesDir)
	if safeDir(base) != nil {
		return
	}
	tops, _ := os.ReadDir(base)
	for _, t := range tops {
		if len(t.Name()) == 2 && lowerHex(t.Name()) && safeDir(filepath.Join(base, t.Name())) == nil {
			os.RemoveAll(filepath.Join(base, t.Name()))
		}
	}
}

// readMemo reads the remembered hash named id at memo.
func readMemo(memo, id string) (string, bool) {
	root, err := os.OpenRoot(filepath.Dir(memo))
	if err != nil {
		return "", false
	}
	f, _, err := openRegular(root, id, 65)
	root.Close()
	if err != nil {
		return "", false
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if len(b) != 65 || b[64] != '\n' || !lowerHex(string(b[:64])) {
		return "", false
	}
	now := time.Now()
	os.Chtimes(memo, now, now)
	return string(b[:64]), true
}
