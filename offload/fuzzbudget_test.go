package offload

import "github.com/goffload/goffload/internal/tooltest"

// The allocation bounds the fuzz targets assert: bytes allocated at most
// perByte times the input's size plus fixed.
//
// Decoding fixed-size structures and parsing arguments allocates what it
// returns: a few times the input (a string split into fields, a record per
// bytes), and a little more.
const (
	decodeFuzzPerByte = 16
	decodeFuzzFixed   = 64 << 10
)

// checkAllocated fails t if f allocates more than perByte bytes per byte of
// its n bytes of input plus fixed.
var checkAllocated = tooltest.CheckAllocs
