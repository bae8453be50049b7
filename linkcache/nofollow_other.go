//go:build !unix

package linkcache

// syscallNoFollow: Get checks with Lstat and os.SameFile instead.
const syscallNoFollow = 0
