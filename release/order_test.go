package release

import (
	"strings"
	"testing"
)

// The values come from the Python model of llvm::hash_value checked against
// libLLVM 19 and 22, one per length class.
func TestHashValue(t *testing.T) {
	for _, c := range []struct {
		s    string
		want uint64
	}{
		{"", 0x65b0c5ecc2c5cc82},
		{"ab", 0x7ab1edb96be496b4},
		{"file", 0x7d2d536ed4e6b353},
		{"triple", 0x45f9d3270819b0d8},
		{"feature", 0x9bfd2475907be7c2},
		{"x86_64-unknown-linux-gnu", 0x1353ae279d5cf1e},
		{strings.Repeat("a", 40), 0xfe52b91fdf5d2403},
	} {
		if got := hashValue(c.s); got != c.want {
			t.Errorf("hashValue(%q) = %#x, want %#x", c.s, got, c.want)
		}
	}
}

func TestDjbHash(t *testing.T) {
	// h = h*33 + c, from 0.
	if got, want := djbHash("ab"), uint32(97*33+98); got != want {
		t.Errorf("djbHash(ab) = %d, want %d", got, want)
	}
}
