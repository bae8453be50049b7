package bundle

import (
	"errors"

	"github.com/goffload/goffload"
)

// Sentinel errors, for errors.Is.
var (
	// ErrNotBundle: the input starts with neither magic. clang-offload-bundler
	// takes such an input for the host's own file: unbundling copies it to the
	// host output and leaves the other outputs empty.
	ErrNotBundle = errors.New("not an offload bundle")
	// ErrCompressed: [Read] was given a compressed bundle ("CCOB"); see
	// [ReadCompressed] and [Decompress].
	ErrCompressed = errors.New("compressed offload bundle")
	// ErrDuplicateID: two inputs of [Write] with the same ID.
	ErrDuplicateID = errors.New("duplicate bundle entry ID")
)

func formatErr(off int64, field string, val uint64, err error) error {
	return &goffload.FormatError{Format: "offload bundle", Offset: off, Field: field, Value: val, Err: err}
}

// errCorrupt is in the FormatError of compressed data that does not
// decompress, which matches goffload.ErrInvalid as all malformed input.
var errCorrupt = errors.New("corrupt compressed data")
