package wrap

import (
	"io"
	"runtime"
	"testing"

	"github.com/goffload/goffload/elfobj"
)

type zeros struct{}

func (zeros) ReadAt(p []byte, _ int64) (int, error) { clear(p); return len(p), nil }

type runtimeStats struct{ alloc uint64 }

func (s *runtimeStats) read() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s.alloc = m.TotalAlloc
}

// writesStreamed writes o, which holds an image of size bytes, and checks
// that the image was streamed: at most 1 MiB allocated.
func writesStreamed(t *testing.T, o *elfobj.Object, size int64) {
	t.Helper()
	var before, after runtimeStats
	before.read()
	n, err := elfobj.Write(io.Discard, o)
	after.read()
	if err != nil {
		t.Fatal(err)
	}
	if n < size {
		t.Errorf("wrote %d bytes", n)
	}
	if grown := after.alloc - before.alloc; grown > 1<<20 {
		t.Errorf("allocated %d bytes to wrap a %d-byte image", grown, size)
	}
}
