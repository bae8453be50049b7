package offload

import (
	"errors"

	"github.com/goffload/goffload/internal/ferr"
)

// Sentinel errors, for errors.Is.
var (
	// ErrInvalid is LLVM's object_error::parse_failed ("Invalid data was
	// encountered while parsing the file"): too short, bad magic, bad version,
	// or bytes after the last binary of a section.
	ErrInvalid = errors.New("invalid data")
	// ErrTruncated is LLVM's object_error::unexpected_eof ("The end of the file
	// was unexpectedly encountered"): a size or offset past the end.
	ErrTruncated = errors.New("unexpected end of data")
	// ErrUnchecked marks a binary that LLVM accepts but then reads out of bounds
	// (a string entry or string outside the binary). This package refuses it.
	ErrUnchecked = errors.New("out-of-bounds data that LLVM does not check")
	// ErrUnknownRelease: no row in the release table.
	ErrUnknownRelease = errors.New("unknown LLVM release")
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
	// ErrUnsupported: the release has no such thing, such as an
	// OffloadBinary or clang-offload-packager in LLVM 13 and 14. It is
	// errors.ErrUnsupported, as in packages elfobj and wrap.
	ErrUnsupported = errors.ErrUnsupported
)

// FormatError reports malformed input and where it is: the module's one
// type for it, with Format "offload binary", What the field (e.g. "Version",
// "EntryOffset"), Val the uint64 read and Err ErrInvalid, ErrTruncated or
// ErrUnchecked.
type FormatError = ferr.FormatError
