// Package ferr holds the helpers the readers share to make the module's one
// error type for malformed input, goffload.FormatError: a constructor, the
// check of arguments that are not input at all, and the rebasing of offsets
// to the file the caller opened.
package ferr

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/goffload/goffload"
)

// New returns a *goffload.FormatError.
func New(format string, off int64, field string, val any, err error) *goffload.FormatError {
	return &goffload.FormatError{Format: format, Offset: off, Field: field, Value: val, Err: err}
}

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

// Rebase adds base to the offset of the FormatError in err, when err holds
// one whose offset is known: err came from reading bytes that start at base
// in the caller's file (an ELF section, an archive member). It returns err.
func Rebase(err error, base int64) error {
	var fe *goffload.FormatError
	if base != 0 && errors.As(err, &fe) && fe.Offset >= 0 {
		fe.Offset += base
	}
	return err
}

// InFile is an error of the file (or archive member, "lib.a(m.o)") Name:
// "Name: Err". The readers name a file with it, so that a caller further up
// tells from its type, not its message, that the file is named already.
type InFile struct {
	Name string
	Err  error
}

func (e *InFile) Error() string { return e.Name + ": " + e.Err.Error() }
func (e *InFile) Unwrap() error { return e.Err }

// Named returns err naming path: err itself where it is an InFile of path
// or of one of its archive's members ("path(member)"), or a *fs.PathError
// of path; else an InFile of path wrapping err.
func Named(path string, err error) error {
	if in, ok := err.(*InFile); ok && (in.Name == path || strings.HasPrefix(in.Name, path+"(")) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return err
	}
	return &InFile{Name: path, Err: err}
}

// ReadAt reads len(p) bytes at off of r for a reader of format: an input
// that ends first is a FormatError matching goffload.ErrTruncated at the
// first byte missing; another error of r is returned as it is, with the
// offset.
func ReadAt(format string, r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return New(format, off+int64(n), "input shorter than its size", nil, goffload.ErrTruncated)
	}
	return fmt.Errorf("%s: reading at byte %#x: %w", format, off+int64(n), err)
}
