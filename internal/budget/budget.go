// Package budget is the one rule by which goffload's readers bound what
// they decode from an input: at most Factor times the input's size plus
// Slack bytes (Linear), whatever the input asks for (docs/hostile-input.md).
// Readers count against it what they reference: strings that many records
// share are kept once, but each reference is counted, so that what a caller
// does per reference (print, hash, write) cannot multiply past the input's
// size. offloadbinary.Budget (one per command, growing with every file read) and
// the per-file counters of the ar, elfobj and entries readers, the bound of
// fatobj's extraction, the response-file expansion and the bitcode reader's
// embedded objects all take their bound from here. Readers refuse more with
// an error matching goffload.ErrLimit.
package budget

import "math"

const (
	// Factor is how many times its size an input may reference.
	Factor = 16
	// Slack is what any input may reference beyond Factor times its size.
	Slack = 1 << 20
)

// Linear returns Factor times input plus Slack, the bound of an input of
// input bytes, saturating at the largest uint64.
func Linear(input uint64) uint64 { return Add(Mul(Factor, input), Slack) }

// LinearInt is Linear for sizes held as int64 (a negative size counts as 0),
// saturating at the largest int64.
func LinearInt(input int64) int64 {
	if input < 0 {
		input = 0
	}
	if n := Linear(uint64(input)); n <= math.MaxInt64 {
		return int64(n)
	}
	return math.MaxInt64
}

// Add returns a+b, or the largest uint64 if that overflows.
func Add(a, b uint64) uint64 {
	if a+b < a {
		return math.MaxUint64
	}
	return a + b
}

// Mul returns a*b, or the largest uint64 if that overflows.
func Mul(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

// Counter counts the bytes referenced from an input against Linear of its
// size. The input may grow (a command reading one file after another).
// A Counter is not safe for concurrent use; offloadbinary.Budget guards its own.
type Counter struct {
	input, used uint64
}

// For returns the counter of an input of size bytes (a negative size
// counts as 0).
func For(size int64) *Counter {
	c := &Counter{}
	if size > 0 {
		c.input = uint64(size)
	}
	return c
}

// Grow adds n bytes to the input.
func (c *Counter) Grow(n uint64) { c.input = Add(c.input, n) }

// Take counts n bytes and reports whether they fit in Linear of the input.
// Bytes that do not fit are not counted.
func (c *Counter) Take(n uint64) bool {
	limit := c.Limit()
	if n > limit || c.used > limit-n {
		return false
	}
	c.used += n
	return true
}

// Input returns the bytes of input counted so far.
func (c *Counter) Input() uint64 { return c.input }

// Used returns the bytes taken so far.
func (c *Counter) Used() uint64 { return c.used }

// Limit returns Linear of the input: what may be taken in all.
func (c *Counter) Limit() uint64 { return Linear(c.input) }
