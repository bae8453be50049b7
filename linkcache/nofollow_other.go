//go:build !unix

package linkcache

import "os"

// syscallNoFollow: Get checks with Lstat and os.SameFile instead.
const syscallNoFollow = 0

// lockFile: no lock here; counts may lose an update when links race.
func lockFile(*os.File) (unlock func()) { return func() {} }
