//go:build unix

package linkcache

import (
	"os"
	"syscall"
)

// syscallNoFollow makes opening a symbolic link fail.
const syscallNoFollow = syscall.O_NOFOLLOW

// lockFile holds an exclusive lock of f until unlock.
func lockFile(f *os.File) (unlock func()) {
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX) != nil {
		return func() {}
	}
	return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
}
