package budget

import "testing"

func TestCounter(t *testing.T) {
	c := For(10)
	if !c.Take(Factor*10) || !c.Take(Slack) {
		t.Fatal("the budget of a 10-byte input refused 16*10 + 1 MiB")
	}
	if c.Take(1) {
		t.Fatal("one byte past the budget taken")
	}
	if c := For(-1); !c.Take(Slack) || c.Take(1) {
		t.Fatal("a negative size is not taken as 0")
	}
}
