package linkcache

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// safeDir checks that path is a folder the cache may trust: a folder, not a
// symbolic link to one, owned by the user running or by root, that no other
// user may write to (sticky or not: the sticky bit stops others removing
// what is in it, not adding). Every folder of the cache is checked before it
// is used, so that no other user can plant an entry, a remembered hash or a
// link that would make the cache read, write or remove elsewhere.
func safeDir(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("linkcache: %w", err)
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("linkcache: %s: a symbolic link inside the cache (not followed)", path)
	case !st.IsDir():
		return fmt.Errorf("linkcache: %s: not a folder", path)
	case st.Mode().Perm()&0o002 != 0:
		return fmt.Errorf("linkcache: %s: writable by every user", path)
	}
	if uid, ok := ownerOf(st); ok && uid != os.Geteuid() && uid != 0 {
		return fmt.Errorf("linkcache: %s: owned by another user (uid %d)", path, uid)
	}
	return nil
}

// subdir returns the folder name inside dir, made if it is not there,
// after safeDir.
func subdir(dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	if err := os.Mkdir(p, 0o755); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("linkcache: %w", err)
	}
	return p, safeDir(p)
}
