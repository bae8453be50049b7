package tooltest

import (
	"bytes"
	"io"
	"sync"
	"testing"
)

// SameBytes calls write once, again, and from several goroutines at once,
// and fails t unless every call writes the same bytes without error: what an
// elfobj.Object whose sections are read from io.ReaderAts promises. It
// returns the bytes. Run the test with -race to catch shared state.
func SameBytes(t testing.TB, write func(io.Writer) error) []byte {
	t.Helper()
	var first, again bytes.Buffer
	if err := write(&first); err != nil {
		t.Fatalf("first write: %v", err)
	}
	if err := write(&again); err != nil {
		t.Fatalf("second write: %v", err)
	}
	if !bytes.Equal(first.Bytes(), again.Bytes()) {
		t.Fatalf("second write: %d bytes that differ from the first's %d", again.Len(), first.Len())
	}
	const writers = 4
	outs := make([]bytes.Buffer, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = write(&outs[i])
		}()
	}
	wg.Wait()
	for i := range outs {
		if errs[i] != nil || !bytes.Equal(outs[i].Bytes(), first.Bytes()) {
			t.Fatalf("concurrent write %d: %d bytes (%v) that differ from the first's %d", i, outs[i].Len(), errs[i], first.Len())
		}
	}
	return first.Bytes()
}
