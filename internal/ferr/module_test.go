package ferr_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/ar"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/offload"
)

// TestOneFormatErrorForTheModule: every reader's malformed-input error is the
// one FormatError, found by errors.As through each package's alias, with the
// package's format prefix and matching the package's sentinel.
func TestOneFormatErrorForTheModule(t *testing.T) {
	junk := bytes.Repeat([]byte{0xee}, 200)
	for _, c := range []struct {
		format string
		read   func() error
		is     error
	}{
		{"offload binary", func() error { _, err := offload.ReadAllBytes(junk, nil); return err }, offload.ErrInvalid},
		{"elf", func() error { _, err := elfobj.Read(bytes.NewReader(junk), int64(len(junk))); return err }, elfobj.ErrFormat},
		{"offload bundle", func() error { _, err := bundle.Read(bytes.NewReader(junk), int64(len(junk))); return err }, bundle.ErrNotBundle},
		{"ar", func() error { _, err := ar.Open(bytes.NewReader(junk), int64(len(junk))); return err }, ar.ErrFormat},
	} {
		t.Run(c.format, func(t *testing.T) {
			err := c.read()
			var fe *ferr.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("%v is not a *ferr.FormatError", err)
			}
			if fe.Format != c.format || !strings.HasPrefix(err.Error(), c.format+": ") || !errors.Is(err, c.is) {
				t.Errorf("%q: format %q, want %q matching %v", err, fe.Format, c.format, c.is)
			}
			// The aliases are the same type.
			var a *offload.FormatError
			var b *elfobj.FormatError
			var d *bundle.FormatError
			var e *ar.FormatError
			if !errors.As(err, &a) || !errors.As(err, &b) || !errors.As(err, &d) || !errors.As(err, &e) {
				t.Errorf("%v: not found by every package's FormatError", err)
			}
		})
	}
}
