package bitcode

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
)

// The allocation budget of the hostile tests and FuzzEmbeddedObjects: per
// input byte, and fixed (the reader's buffers).
const (
	bytesPerByte = 1024
	fixedBytes   = 1 << 20
)

// checkCost reads data and fails the test if that allocates more than the
// budget, or gives objects and an error. Its time is not asserted (a busy
// machine makes any bound flaky): the table of hostile inputs
// (cmd/goffload) bounds each run's CPU time, and go test's timeout a hang.
func checkCost(t testing.TB, data []byte) ([]Embedded, error) {
	t.Helper()
	var objs []Embedded
	var err error
	got := tooltest.Allocated(func() { objs, err = EmbeddedObjects(bytes.NewReader(data), int64(len(data))) })
	if bound := bytesPerByte*uint64(len(data)) + fixedBytes; got > bound {
		t.Errorf("%d bytes of input allocated %d bytes, more than %d", len(data), got, bound)
	}
	if err != nil && objs != nil {
		t.Errorf("objects and an error: %v", err)
	}
	if err != nil && !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("error %v does not match goffload.ErrInvalid", err)
	}
	return objs, err
}

// TestEmbeddedObjectsOfInputsBuiltToMultiply: inputs whose counts ask for
// far more than they hold cost what their size allows.
func TestEmbeddedObjectsOfInputsBuiltToMultiply(t *testing.T) {
	payload := []byte("\x10\xff\x10\xad0123456789abcdef")
	for _, c := range []struct {
		name string
		m    synthModule
		err  error // nil: any outcome
	}{
		{"an array of 2^40 elements", synthModule{constants: func(w *bitWriter) {
			ab := w.define(lit(cstString), arrayOp, fixedOp(8))
			w.emit(5, 4)
			w.vbr(1<<40, 6)
			_ = ab
		}}, goffload.ErrInvalid},
		{"blocks nested 100000 deep", synthModule{after: func(w *bitWriter) {
			for range 100000 {
				w.enter(30, 2)
			}
			for range 100000 {
				w.end()
			}
		}}, nil},
		{"a constant repeated 200000 times", synthModule{constants: func(w *bitWriter) {
			ab := w.define(lit(cstUndef))
			for range 200000 {
				w.abbrev(5, ab, nil, nil)
			}
		}}, nil},
		{"nodes referring to each other 50000 times", synthModule{metadata: func(w *bitWriter) uint64 {
			ab := w.define(lit(mdNodeCode), vbrOp(6), vbrOp(6))
			for i := range uint64(50000) {
				w.abbrev(5, ab, []uint64{i + 2, i + 1}, nil) // !{!next, !previous}
			}
			return 50000
		}}, nil},
		{"the object listed 1000000 times", synthModule{named: func(n uint64) []uint64 {
			ops := make([]uint64, 1000000)
			for i := range ops {
				ops[i] = n
			}
			return ops
		}}, goffload.ErrLimit},
		{"metadata strings of 2^32 lengths", synthModule{metadata: func(w *bitWriter) uint64 {
			strs := w.define(lit(mdStrings), vbrOp(6), vbrOp(6), blobOp)
			w.abbrev(5, strs, []uint64{1<<32 - 1, 4}, []byte("\x3f\x3f\x3f\x3f"))
			return 1<<32 - 1
		}}, goffload.ErrInvalid},
		{"a value 2^31 of metadata", synthModule{metadata: func(w *bitWriter) uint64 {
			w.record(mdValueCode, synthPtr, 1<<31)
			return 1
		}}, goffload.ErrInvalid},
		{"a splat of 2^40 elements", synthModule{numTypes: 1, globalType: 3, init: 3,
			types: func(w *bitWriter) { w.record(typeVector, 1<<40, synthI8) },
			constants: func(w *bitWriter) {
				w.record(cstSetType, 3)
				w.record(cstInteger, 2)
			}}, goffload.ErrLimit},
	} {
		m := c.m
		m.version, m.payload, m.section = 2, payload, OffloadingSection
		data := m.bytes()
		_, err := checkCost(t, data)
		t.Logf("%s: %d bytes: %v", c.name, len(data), err)
		if c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want an error matching %v", c.name, err, c.err)
		}
	}
}

// FuzzEmbeddedObjects: objects or an error, never a panic, from any input,
// and what reading allocates is bounded by the input's size.
func FuzzEmbeddedObjects(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.bc"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	payload := []byte("\x10\xff\x10\xad payload")
	for _, m := range []synthModule{{version: 2}, {version: 1}, {version: 2, oldString: true}} {
		m.payload, m.section = payload, OffloadingSection
		f.Add(m.bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkCost(t, data)
	})
}
