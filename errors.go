package goffload

import (
	"errors"
	"fmt"
	"strings"
)

// The sentinel errors of the module, for [errors.Is]. Every package returns
// these very values (none declares its own copy), wrapped with what was
// being read.
var (
	// ErrInvalid matches every error about malformed input: a field with a
	// value the format does not allow, or a structure that does not hold
	// together. Every [*FormatError] matches it, whatever its Err.
	ErrInvalid = errors.New("invalid data")
	// ErrTruncated: a size or offset that reaches past the end of the input,
	// or an input that ends in the middle of a structure (LLVM's "unexpected
	// end of file"). Always inside a [*FormatError], so it matches
	// ErrInvalid too.
	ErrTruncated = errors.New("unexpected end of data")
	// ErrUnsupported is [errors.ErrUnsupported]: something well formed that
	// goffload does not read or make, or that the chosen LLVM release does
	// not have (an OffloadBinary in LLVM 13, a wrapper for a Windows host).
	ErrUnsupported = errors.ErrUnsupported
	// ErrUnknownRelease: an LLVM release that the release table has no row
	// for.
	ErrUnknownRelease = errors.New("unknown LLVM release")
	// ErrLimit: input that is well formed but asks for more than a
	// documented limit allows (archives nested too deep, a compressed image
	// inflating past its bound).
	ErrLimit = errors.New("over the limit")
)

// FormatError reports malformed input: which format, which field, where in
// the file and the value read. It is the one type of such errors in the
// module: every reader returns it, wrapped with what was being read (a
// member, a section), so [errors.As] finds it through any package.
type FormatError struct {
	// Format names the format being read: "offload binary", "elf", "ar",
	// "offload bundle", "offload entries", "bitcode". The message starts
	// with it.
	Format string
	// Field is the field that is wrong, or what is wrong, e.g. "Version",
	// "entry 1 offset", `bad magic "\x00ELF"`.
	Field string
	// Offset is the byte offset of the field from the start of the file the
	// caller opened (an archive member's or an ELF section's bytes count from
	// the start of the archive or the ELF file), or -1 when it is not known.
	// A reader given an io.ReaderAt counts from its byte 0.
	Offset int64
	// Value is the value read, or nil when Field says it or there is none.
	// Integers print in hexadecimal, strings quoted.
	Value any
	// Err is the sentinel the error matches besides ErrInvalid:
	// ErrTruncated, ErrUnsupported, ErrLimit, or a package's own (such as
	// bundle.ErrNotBundle), or nil.
	Err error
}

// Error returns "<Format>: <Field>[ <Value>][ at byte <Offset>][: <Err>]".
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString(e.Format)
	b.WriteString(": ")
	b.WriteString(e.Field)
	if e.Value != nil {
		b.WriteByte(' ')
		b.WriteString(formatValue(e.Value))
	}
	if e.Offset >= 0 {
		fmt.Fprintf(&b, " at byte %#x", e.Offset)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Err.
func (e *FormatError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInvalid, which every FormatError matches.
func (e *FormatError) Is(target error) bool { return target == ErrInvalid }

// formatValue formats v as debug/elf does a record's: integers in
// hexadecimal, strings and bytes quoted.
func formatValue(v any) string {
	switch v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		return fmt.Sprintf("%#x", v)
	case string, []byte:
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprint(v)
}
