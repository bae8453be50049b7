package offload

import "testing"

func TestReleaseSetString(t *testing.T) {
	set := func(ms ...int) ReleaseSet {
		var s ReleaseSet
		for _, m := range ms {
			s |= 1 << m
		}
		return s
	}
	for _, c := range []struct {
		s    ReleaseSet
		want string
	}{
		{0, "no LLVM release"},
		{set(19), "LLVM 19"},
		{set(19, 20), "LLVM 19-20"},
		{set(13, 14, 19, 21, 22), "LLVM 13-14, 19, 21-22"},
		{AllReleases(), "LLVM 13-24"},
	} {
		if got := c.s.String(); got != c.want {
			t.Errorf("%v: %q, want %q", c.s.Majors(), got, c.want)
		}
	}
}

func TestReleaseSetOf(t *testing.T) {
	r19, _ := LookupRelease(19)
	r22, _ := LookupRelease(22)
	s := ReleaseSetOf(r19, r22)
	if !s.Has(19) || !s.Has(22) || s.Has(20) || len(s.Rows()) != 2 || s.Rows()[1].Major != 22 {
		t.Errorf("%v: rows %v", s, s.Rows())
	}
	if got := ReleasesWhere(func(r *Release) bool { return r.EntryLayout == EntryV1 }); got.String() != "LLVM 21-24" {
		t.Errorf("56-byte entries: %v", got)
	}
}
