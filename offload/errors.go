package offload

import (
	"errors"
)

// Sentinel errors, for errors.Is.
var (
	// ErrUnknownKind: an image, offload or entry kind name that is not known.
	ErrUnknownKind = errors.New("unknown kind")
	// ErrUnknownFlag: a flags string (entry, requires or ident flags) with a
	// name that is not known, or a name given twice or with another value of
	// its field, or nothing at all.
	ErrUnknownFlag = errors.New("unknown or conflicting flag")
	// ErrEncoding: a value that the chosen format cannot hold.
	ErrEncoding = errors.New("cannot encode")
)
