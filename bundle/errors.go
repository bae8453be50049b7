package bundle

import (
	"errors"

	"github.com/goffload/goffload/internal/ferr"
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
	// ErrFormat: a header that clang-offload-bundler does not unbundle, such
	// as an entry whose offset is 0.
	ErrFormat = errors.New("malformed offload bundle")
	// ErrTruncated: a field, an entry or compressed data past the end of the
	// input.
	ErrTruncated = errors.New("unexpected end of data")
	// ErrUnsupported: a compressed bundle version other than 1, 2 or 3, a
	// compression method other than zlib and zstd, or a zstd frame that needs
	// a dictionary.
	ErrUnsupported = errors.New("unsupported")
	// ErrCorrupt: compressed data that does not decompress.
	ErrCorrupt = errors.New("corrupt compressed data")
	// ErrTooLarge: more uncompressed data than the header declares, or a zstd
	// window larger than the reader's limit.
	ErrTooLarge = errors.New("too large")
	// ErrDuplicateID: two inputs of [Write] with the same ID.
	ErrDuplicateID = errors.New("duplicate bundle entry ID")
	// ErrUnknownRelease: no row in the release table.
	ErrUnknownRelease = errors.New("unknown LLVM release")
)

// FormatError reports malformed input and where it is: the module's one
// type for it, with Format "offload bundle", What the field (e.g. "entry 1
// offset", "zstd block size"), Val the uint64 read and Err one of the
// sentinel errors above.
type FormatError = ferr.FormatError

func formatErr(off int64, field string, val uint64, err error) error {
	return &FormatError{Format: "offload bundle", Off: off, What: field, Val: val, Err: err}
}
