//go:build unix

package linkcache

import "syscall"

// syscallNoFollow makes opening a symbolic link fail.
const syscallNoFollow = syscall.O_NOFOLLOW
