package ferr

import (
	"errors"
	"fmt"
	"testing"
)

var errSentinel = errors.New("malformed thing")

func TestFormatErrorMessage(t *testing.T) {
	for _, c := range []struct {
		e    FormatError
		want string
	}{
		{FormatError{"offload bundle", 86, "entry 1 offset", uint64(0), errSentinel}, "offload bundle: entry 1 offset 0x0 at byte 0x56: malformed thing"},
		{FormatError{"offload binary", 4, "Version", uint64(2), errSentinel}, "offload binary: Version 0x2 at byte 0x4: malformed thing"},
		{FormatError{"elf", 0, `bad magic "\x00ELF"`, nil, errSentinel}, `elf: bad magic "\x00ELF" at byte 0x0: malformed thing`},
		{FormatError{"elf", -1, "symbol 3 of 2", nil, errSentinel}, "elf: symbol 3 of 2: malformed thing"},
		{FormatError{"ar", 8, "name", "a/b", nil}, `ar: name "a/b" at byte 0x8`},
		{FormatError{"ar", 8, "count", -3, nil}, "ar: count -0x3 at byte 0x8"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}

func TestFormatErrorMatchesItsSentinel(t *testing.T) {
	err := fmt.Errorf("reading: %w", &FormatError{Format: "ar", Off: 1, What: "x", Err: errSentinel})
	var fe *FormatError
	if !errors.Is(err, errSentinel) || !errors.As(err, &fe) || fe.Off != 1 {
		t.Errorf("%v: errors.Is %v, errors.As %v", err, errors.Is(err, errSentinel), fe)
	}
}
