package budget

import (
	"math"
	"testing"
)

func TestCounter(t *testing.T) {
	c := For(10)
	if !c.Take(Factor*10) || !c.Take(Slack) {
		t.Fatal("the budget of a 10-byte input refused 16*10 + 1 MiB")
	}
	if c.Take(1) {
		t.Fatal("one byte past the budget taken")
	}
	if c.Used() != Factor*10+Slack {
		t.Fatalf("used %d, want %d (a refused Take counts nothing)", c.Used(), Factor*10+Slack)
	}
	c.Grow(1)
	if !c.Take(Factor) || c.Take(1) {
		t.Fatal("a grown input does not give Factor bytes more per byte, exactly")
	}
	if c := For(-1); !c.Take(Slack) || c.Take(1) {
		t.Fatal("a negative size is not taken as 0")
	}
	if c := For(math.MaxInt64); !c.Take(math.MaxUint64) {
		t.Fatal("a saturated limit refused the largest count")
	}
}

func TestLinear(t *testing.T) {
	for _, tc := range []struct{ in, want uint64 }{
		{0, Slack},
		{1, Factor + Slack},
		{math.MaxUint64 / Factor, math.MaxUint64},
		{math.MaxUint64, math.MaxUint64},
	} {
		if got := Linear(tc.in); got != tc.want {
			t.Errorf("Linear(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
	if got := LinearInt(-5); got != Slack {
		t.Errorf("LinearInt(-5) = %d, want %d", got, Slack)
	}
	if got := LinearInt(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("LinearInt(max) = %d, want max", got)
	}
}
