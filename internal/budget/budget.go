// Package budget bounds what a reader references from an input by the
// input's size: strings that many records share are kept once, but each
// reference is counted, at most Factor times the input's size plus Slack
// bytes in all, so that what a caller does per reference (print, hash,
// write) cannot multiply past it. Readers refuse more with an error
// matching goffload.ErrLimit.
package budget

const (
	// Factor is how many times its size an input may reference.
	Factor = 16
	// Slack is what any input may reference beyond Factor times its size.
	Slack = 1 << 20
)

// Counter counts the bytes referenced from one input.
type Counter struct {
	left uint64
}

// For returns the counter of an input of size bytes: Factor times size
// plus Slack.
func For(size int64) *Counter {
	if size < 0 {
		size = 0
	}
	return &Counter{left: Factor*uint64(size) + Slack}
}

// Take counts n bytes and reports whether they fit in what is left.
func (c *Counter) Take(n uint64) bool {
	if n > c.left {
		c.left = 0
		return false
	}
	c.left -= n
	return true
}
