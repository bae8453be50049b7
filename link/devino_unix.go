//go:build unix

package link

import (
	"os"
	"syscall"
)

// devIno returns the device and inode of a file, which tell two files of
// one path apart.
func devIno(st os.FileInfo) (uint64, uint64) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Dev), uint64(s.Ino)
	}
	return 0, 0
}
