//go:build unix

package respfile

import (
	"io/fs"
	"syscall"
)

// fileKey identifies a file: its device and inode, whatever path names it.
type fileKey struct {
	dev, ino uint64
	path     string // only where the system gives no inode
}

func keyOf(path string, info fs.FileInfo) fileKey {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileKey{path: path}
}
