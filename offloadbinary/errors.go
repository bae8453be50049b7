package offloadbinary

import (
	"errors"

	"github.com/goffload/goffload/release"
)

// Sentinel errors, for errors.Is.
var (
	// ErrUnchecked marks a binary that LLVM accepts but then reads out of bounds
	// (a string entry or string outside the binary). This package refuses it.
	ErrUnchecked = errors.New("out-of-bounds data that LLVM does not check")
	// ErrPackagerArgs: an --image argument that clang-offload-packager rejects.
	ErrPackagerArgs = errors.New("bad image argument")
	// ErrImageRange: the image bytes of a binary lie outside it.
	ErrImageRange = errors.New("image outside its binary")
)

// table is the package's own copy of the release table's rows, read and
// never changed, nor handed out.
var table = release.All()
