package strtab

import "testing"

func TestStringTable(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"arch", "sm_70", "triple", "nvptx64-nvidia-cuda"}, "\x00arch\x00triple\x00nvptx64-nvidia-cuda\x00sm_70\x00"},
		{[]string{"arch", "", "triple", "x86_64-unknown-linux-gnu"}, "\x00x86_64-unknown-linux-gnu\x00arch\x00triple\x00"},
		// "ch" and "h" are suffixes of "arch" and share its tail; "a" is not.
		{[]string{"arch", "ch", "h", "a", "a"}, "\x00arch\x00a\x00"},
		{nil, "\x00"},
	} {
		st := Build(c.in)
		if string(st.Data) != c.want {
			t.Errorf("%q: table %q, want %q", c.in, st.Data, c.want)
		}
		for _, s := range c.in {
			off := st.Offset(s)
			end := off + uint64(len(s))
			if end >= uint64(len(st.Data)) || string(st.Data[off:end]) != s || st.Data[end] != 0 {
				t.Errorf("%q: offset %d of %q is wrong in %q", c.in, off, s, st.Data)
			}
		}
	}
}
