package tooltest

import (
	"os"
	"runtime"
	"strconv"
	"testing"
)

// ExhaustiveEnv is the environment variable that runs every cell of the
// tests' large matrices (every release × every program, every input ×
// every command); .ci/run sets it. Without it a matrix runs its default
// sample ([Sampled]), so that `go test ./...` takes minutes on a 2-core
// machine.
const ExhaustiveEnv = "OFFLOAD_TEST_EXHAUSTIVE"

// Exhaustive reports whether the whole of every matrix runs.
func Exhaustive() bool {
	b, err := strconv.ParseBool(os.Getenv(ExhaustiveEnv))
	return err == nil && b
}

// Sampled reports whether cell (row, col) of a matrix of rows × cols runs:
// every cell when [Exhaustive], else the cells (i, j) with j = i mod cols or
// i = j mod rows. That sample is deterministic, holds at least one cell of
// every row and of every column, and has about max(rows, cols) cells, each
// row's (or column's) cell moving along the other side so that the rows
// together meet every column.
func Sampled(row, col, rows, cols int) bool {
	return SampledN(row, col, rows, cols, 1)
}

// SampledN is [Sampled] with n cells a row: the cells (i, j) with j one of
// the n columns from i mod cols on (wrapping), or i = j mod rows.
func SampledN(row, col, rows, cols, n int) bool {
	if Exhaustive() || rows <= 0 || cols <= 0 || n >= cols {
		return true
	}
	return ((col-row)%cols+cols)%cols < n || row == col%rows
}

// Sample skips t, with the reason, unless cell (row, col) of a matrix of
// rows × cols is [Sampled]. A skip here is not a missing tool: it does not
// fail under OFFLOAD_REQUIRE_TOOLS.
func Sample(t testing.TB, row, col, rows, cols int) {
	t.Helper()
	if !Sampled(row, col, rows, cols) {
		t.Skipf("not in the default sample of its %d × %d matrix (%s=1 runs every cell)", rows, cols, ExhaustiveEnv)
	}
}

// SampleN is [Sample] with the sample of [SampledN].
func SampleN(t testing.TB, row, col, rows, cols, n int) {
	t.Helper()
	if !SampledN(row, col, rows, cols, n) {
		t.Skipf("not in the default sample of its %d × %d matrix (%s=1 runs every cell)", rows, cols, ExhaustiveEnv)
	}
}

// slots bounds the tool processes that a package's parallel tests run at
// once to the machine's processors.
var slots = make(chan struct{}, runtime.GOMAXPROCS(0))

// Slot waits until fewer tool processes than processors run in this test
// binary, and returns the function that ends the caller's: parallel tests
// that run compilers take one around each, so that t.Parallel overlaps
// their waits without running more compilers than there are processors.
func Slot() (release func()) {
	slots <- struct{}{}
	return func() { <-slots }
}
