package tooltest

import (
	"errors"
	"strings"
	"testing"

	"github.com/goffload/goffload"
)

// CheckFormatError fails t unless err holds a *goffload.FormatError of
// format at off that matches goffload.ErrInvalid and every one of is, and
// names its format once.
func CheckFormatError(t testing.TB, err error, format string, off int64, is ...error) {
	t.Helper()
	var fe *goffload.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) holds no *goffload.FormatError", err, err)
	}
	t.Log(err)
	if fe.Format != format || fe.Offset != off {
		t.Errorf("%v: Format %q at %#x, want %q at %#x", err, fe.Format, fe.Offset, format, off)
	}
	for _, s := range append([]error{goffload.ErrInvalid}, is...) {
		if !errors.Is(err, s) {
			t.Errorf("%v does not match %v", err, s)
		}
	}
	if n := strings.Count(err.Error(), format); n != 1 {
		t.Errorf("%q names %q %d times", err, format, n)
	}
}
