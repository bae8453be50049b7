package offloadbinary

import "github.com/goffload/goffload/internal/tooltest"

// The allocation bounds the fuzz targets assert: bytes allocated at most
// perByte times the input's size plus fixed.
//
// Reading binaries (FuzzReadAll, FuzzReadVersion3): the Budget lets the
// strings and images listed reach 16 times the input plus 1 MiB, each
// string decoded once (built by appending, so up to twice its size); the
// entries, string entries and the structures they decode to take a few
// bytes per input byte (a 40-byte entry becomes a BinaryImage of about
// 150 bytes). Hence 64 a byte. The fixed part is what one compressed
// binary may take: its kept start, grown by doubling from 64 KiB to 4 MiB
// (8 MiB allocated in all), a 1 MiB chunk, and the zstd decoder, which
// allocates the window its frame declares (at most twice the body, or
// 8 MiB: maxZstdWindow's rule; the fuzz reads allow 1 MiB inflated) and
// is then kept for the next stream.
const (
	readFuzzPerByte = 64
	readFuzzFixed   = 16 << 20
)

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
