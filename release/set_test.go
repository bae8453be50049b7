package release

import "testing"

func TestSetString(t *testing.T) {
	set := func(ms ...int) Set {
		var s Set
		for _, m := range ms {
			s |= 1 << m
		}
		return s
	}
	for _, c := range []struct {
		s    Set
		want string
	}{
		{0, "no LLVM release"},
		{set(19), "LLVM 19"},
		{set(19, 20), "LLVM 19-20"},
		{set(13, 14, 19, 21, 22), "LLVM 13-14, 19, 21-22"},
		{Known(), "LLVM 13-24"},
	} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%v: %q, want %q", c.s.Majors(), got, c.want)
		}
	}
}

func TestSetOf(t *testing.T) {
	r19, _ := Lookup(19)
	r22, _ := Lookup(22)
	s := SetOf(r19, r22)
	if !s.Has(19) || !s.Has(22) || s.Has(20) || len(s.Rows()) != 2 || s.Rows()[1].Major != 22 {
		t.Errorf("%v: rows %v", s, s.Rows())
	}
	if got := Where(func(r *Release) bool { return r.Entries.Size == 56 }); got.String() != "LLVM 21-24" {
		t.Errorf("56-byte entries: %v", got)
	}
}
