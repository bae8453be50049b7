package linkcache

import (
	"os"
	"syscall"
)

// statIdentity returns a file's device, inode and status change time.
func statIdentity(st os.FileInfo) (dev, ino uint64, ctime int64, ok bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, false
	}
	return uint64(s.Dev), uint64(s.Ino), s.Ctim.Nano(), true
}

// ownerOf returns the user that owns a file.
func ownerOf(st os.FileInfo) (int, bool) {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(s.Uid), true
}
