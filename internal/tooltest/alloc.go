package tooltest

import "runtime"

// Allocated returns the bytes f allocates (runtime.MemStats.TotalAlloc
// before and after): what the fuzz targets bound by their input's size.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
