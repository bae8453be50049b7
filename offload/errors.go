package offload

import (
	"errors"
)

// Sentinel errors, for errors.Is.
var (
	// ErrUnchecked marks a binary that LLVM accepts but then reads out of bounds
	// (a string entry or string outside the binary). This package refuses it.
	ErrUnchecked = errors.New("out-of-bounds data that LLVM does not check")
	// ErrUnknownKind: an image, offload or entry kind name that is not known.
	ErrUnknownKind = errors.New("unknown kind")
	// ErrUnknownFlag: a flags string (entry, requires or ident flags) with a
	// name that is not known, or a name given twice or with another value of
	// its field, or nothing at all.
	ErrUnknownFlag = errors.New("unknown or conflicting flag")
	// ErrPackagerArgs: an --image argument that clang-offload-packager rejects.
	ErrPackagerArgs = errors.New("bad image argument")
	// ErrImageRange: the image bytes of a binary lie outside it.
	ErrImageRange = errors.New("image outside its binary")
	// ErrEncoding: a value that the chosen format cannot hold.
	ErrEncoding = errors.New("cannot encode")
)
