package ar

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// FuzzOpen opens any bytes as an archive, lists and reads every member and
// reads the symbol index: each step gives a value or an error, never a panic,
// and allocates within tooltest.CheckAllocs's bound.
// With the true size, the data of every member Open accepted must be
// readable, and every symbol must name a member.
func FuzzOpen(f *testing.F) {
	for _, seed := range [][]byte{
		build(Magic),
		build(Magic, member("//", "a_long_member_name.o/\n"), member("/0", "x"), member("s.o/", "odd")),
		build(Magic, member("//", "a_very_long_member_name.obj\x00"), member("/0", "x")),
		withIndex(Magic, func(offs []uint64) string { return member("/", sysvIndex(4, offs, "f", "g")) },
			member("f.o/", "F"), member("g.o/", "GG")),
		withIndex(Magic, func(offs []uint64) string { return member("/SYM64/", sysvIndex(8, offs, "f")) },
			member("#1/4", "f.o\x00F")),
		withIndex(Magic, func(offs []uint64) string {
			return member("#1/12", "__.SYMDEF\x00\x00\x00"+bsdIndex(binary.LittleEndian, []uint32{uint32(offs[0])}, "f"))
		}, member("#1/20", "a name with spaces\x00\x00data")),
		build(ThinMagic, member("//", "dir/inner.a/\n../x.o/\n"), hdr("/0:8", 3), hdr("/13", 5)),
		build(Magic, member("__.SYMDEF SORTED", bsdIndex(binary.BigEndian, []uint32{8}, "f")), member("f.o", "F")),
	} {
		f.Add(seed, uint8(0))
	}
	f.Fuzz(func(t *testing.T, b []byte, extra uint8) {
		// extra makes the claimed size larger than the data. Open, the
		// members and the symbols allocate within the budget.
		var a *Archive
		var err error
		tooltest.CheckAllocs(t, len(b), tooltest.AllocsPerByte, tooltest.AllocsFixed, func() {
			if a, err = Open(bytes.NewReader(b), int64(len(b))+int64(extra)); err == nil {
				a.Members()
				a.Symbols()
			}
		})
		if err != nil {
			return
		}
		_ = a.Kind().String() + a.Index().String()
		members := a.Members()
		open := func(string) (io.ReaderAt, int64, error) { return bytes.NewReader(b), int64(len(b)), nil }
		for _, m := range members {
			sr, err := a.OpenThin(m, open)
			if err != nil {
				if !m.Thin {
					t.Fatalf("member %+v: %v", m, err)
				}
				continue
			}
			n, err := io.Copy(io.Discard, sr)
			if extra == 0 && (err != nil || n != sr.Size() || !m.Thin && n != m.Size) {
				t.Fatalf("member %+v: read %d bytes: %v", m, n, err)
			}
		}
		syms, err := a.Symbols()
		if err != nil {
			return
		}
		for _, s := range syms {
			if s.Member < 0 || s.Member >= len(members) || members[s.Member].Offset != s.Offset {
				t.Fatalf("symbol %+v does not name a member", s)
			}
		}
	})
}
