// Package ferr holds the one error type of the module for malformed input,
// [FormatError], in the manner of debug/elf's: what is wrong, the value read,
// where, and the sentinel error of the reading package that it matches. The
// packages that read formats re-export it with a type alias
// (offload.FormatError, elfobj.FormatError, bundle.FormatError,
// ar.FormatError), so errors.As with any of them finds it. [CheckInput]
// gives the readers one answer to arguments that are not input at all.
package ferr

import (
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// FormatError reports malformed input and where it is.
type FormatError struct {
	// Format names the format being read, and starts the message: "offload
	// binary", "offload bundle", "elf", "ar".
	Format string
	// Off is the byte offset of the bad field from the start of the input, or
	// -1 when it is not known.
	Off int64
	// What is the field or what is wrong with it, e.g. "Version",
	// "entry 1 offset", `bad magic "\x00ELF"`.
	What string
	// Val is the value read, or nil when What says it (or there is none).
	// Integers print in hexadecimal.
	Val any
	// Err is the sentinel error of the reading package that the error
	// matches with errors.Is, e.g. offload.ErrInvalid or elfobj.ErrFormat.
	Err error
}

// Error returns "<Format>: <What>[ <Val>][ at byte <Off>][: <Err>]".
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString(e.Format)
	b.WriteString(": ")
	b.WriteString(e.What)
	if e.Val != nil {
		b.WriteByte(' ')
		b.WriteString(value(e.Val))
	}
	if e.Off >= 0 {
		fmt.Fprintf(&b, " at byte %#x", e.Off)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// value formats v as debug/elf does a record's: integers in hexadecimal,
// strings and bytes quoted.
func value(v any) string {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		return fmt.Sprintf("%#x", v)
	case string, []byte:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprint(v)
}

// Unwrap returns Err, so that errors.Is matches the sentinel.
func (e *FormatError) Unwrap() error { return e.Err }

// CheckInput returns an error matching fs.ErrInvalid, prefixed by format,
// when r is nil or size negative: the caller's mistake, which the readers
// report as such rather than as malformed input (or a panic).
func CheckInput(format string, r io.ReaderAt, size int64) error {
	switch {
	case r == nil:
		return fmt.Errorf("%s: nil io.ReaderAt: %w", format, fs.ErrInvalid)
	case size < 0:
		return fmt.Errorf("%s: negative input size %d: %w", format, size, fs.ErrInvalid)
	}
	return nil
}
