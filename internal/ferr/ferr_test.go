package ferr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/goffload/goffload"
)

var errSentinel = errors.New("malformed thing")

func TestFormatErrorMessage(t *testing.T) {
	for _, c := range []struct {
		e    goffload.FormatError
		want string
	}{
		{goffload.FormatError{Format: "offload bundle", Offset: 86, Field: "entry 1 offset", Value: uint64(0), Err: errSentinel}, "offload bundle: entry 1 offset 0x0 at byte 0x56: malformed thing"},
		{goffload.FormatError{Format: "offload binary", Offset: 4, Field: "Version", Value: uint64(2), Err: errSentinel}, "offload binary: Version 0x2 at byte 0x4: malformed thing"},
		{goffload.FormatError{Format: "elf", Offset: 0, Field: `bad magic "\x00ELF"`, Err: errSentinel}, `elf: bad magic "\x00ELF" at byte 0x0: malformed thing`},
		{goffload.FormatError{Format: "elf", Offset: -1, Field: "symbol 3 of 2", Err: errSentinel}, "elf: symbol 3 of 2: malformed thing"},
		{goffload.FormatError{Format: "ar", Offset: 8, Field: "name", Value: "a/b"}, `ar: name "a/b" at byte 0x8`},
		{goffload.FormatError{Format: "ar", Offset: 8, Field: "count", Value: -3}, "ar: count -0x3 at byte 0x8"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestFormatErrorMatchesItsSentinelAndErrInvalid(t *testing.T) {
	err := fmt.Errorf("reading: %w", New("ar", 1, "x", nil, errSentinel))
	var fe *goffload.FormatError
	if !errors.Is(err, errSentinel) || !errors.Is(err, goffload.ErrInvalid) || !errors.As(err, &fe) || fe.Offset != 1 {
		t.Errorf("%v: errors.Is %v, errors.As %v", err, errors.Is(err, errSentinel), fe)
	}
	if errors.Is(err, goffload.ErrTruncated) {
		t.Errorf("%v matches ErrTruncated", err)
	}
}

func TestRebase(t *testing.T) {
	err := fmt.Errorf("section: %w", New("offload binary", 8, "Version", uint64(9), goffload.ErrInvalid))
	Rebase(err, 0x100)
	var fe *goffload.FormatError
	if !errors.As(err, &fe) || fe.Offset != 0x108 {
		t.Fatalf("%v: offset %d, want 0x108", err, fe.Offset)
	}
	unknown := New("elf", -1, "x", nil, nil)
	if Rebase(unknown, 5); unknown.Offset != -1 {
		t.Errorf("an unknown offset was rebased to %d", unknown.Offset)
	}
}
