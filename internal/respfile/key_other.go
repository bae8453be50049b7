//go:build !unix

package respfile

import "io/fs"

// fileKey identifies a file by the path that names it: without inodes, a
// file named by two paths is read twice (and counted twice in the input).
type fileKey struct{ path string }

func keyOf(path string, _ fs.FileInfo) fileKey { return fileKey{path: path} }
