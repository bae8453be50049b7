package atomicfile

import "syscall"

// Available returns the bytes that an unprivileged user may still write to
// the file system of dir, and whether it could be found out.
func Available(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * st.Bsize, true
}
