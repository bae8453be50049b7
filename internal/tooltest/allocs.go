package tooltest

import (
	"runtime"
	"testing"
)

// Readers' fuzz targets hold what reading an input allocates to
// AllocsPerByte bytes a byte of it plus AllocsFixed (CheckAllocs): a linear
// bound, as docs/hostile-input.md states the readers' budget, loose enough
// for decoding every header into Go values, tight enough that a shared
// string copied for each record that names it (N × L) or a quadratic
// lookup's allocations break it.
const (
	AllocsPerByte = 64
	AllocsFixed   = 4 << 20
)

// CheckAllocs runs fn, which reads an input of n bytes, and fails t if it
// allocates more than perByte bytes a byte of input plus fixed, counted by
// runtime.MemStats.TotalAlloc (every allocation, freed or not; a fuzz
// worker runs one input at a time).
func CheckAllocs(t testing.TB, n int, perByte, fixed uint64, fn func()) {
	t.Helper()
	if got, bound := Allocated(fn), perByte*uint64(n)+fixed; got > bound {
		t.Errorf("%d bytes of input allocated %d bytes, more than %d a byte plus %d", n, got, perByte, fixed)
	}
}

// Allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc
// before and after): what the fuzz targets bound by their input's size.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
