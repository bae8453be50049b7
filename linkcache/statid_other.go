//go:build !linux

package linkcache

import "os"

// statIdentity: without an inode and a change time, hashes are not
// remembered.
func statIdentity(os.FileInfo) (dev, ino uint64, ctime int64, ok bool) { return 0, 0, 0, false }
