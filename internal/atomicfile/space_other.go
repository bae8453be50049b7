//go:build !linux

package atomicfile

// Available returns the bytes that an unprivileged user may still write to
// the file system of dir, and whether it could be found out: not on this
// system.
func Available(dir string) (int64, bool) { return 0, false }
