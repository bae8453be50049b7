package ar

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/google/go-cmp/cmp"
)

// Archives built byte by byte, for the layouts no installed tool writes and
// for malformed input.

// hdr is a member header with name field name and size, the other fields as
// ar D writes them.
func hdr(name string, size int) string {
	return fmt.Sprintf("%-16s%-12d%-6d%-6d%-8o%-10d`\n", name, 0, 0, 0, 0o644, size)
}

// member is a header and its data, padded to an even size.
func member(name, data string) string {
	s := hdr(name, len(data)) + data
	if len(data)%2 == 1 {
		s += "\n"
	}
	return s
}

func build(magic string, parts ...string) []byte {
	return []byte(magic + strings.Join(parts, ""))
}

// sysvIndex is the data of a GNU "/" member (w 4) or "/SYM64/" (w 8).
func sysvIndex(w int, offs []uint64, names ...string) string {
	b := make([]byte, w)
	put := func(b []byte, v uint64) {
		if w == 4 {
			binary.BigEndian.PutUint32(b, uint32(v))
		} else {
			binary.BigEndian.PutUint64(b, v)
		}
	}
	put(b, uint64(len(offs)))
	for _, o := range offs {
		e := make([]byte, w)
		put(e, o)
		b = append(b, e...)
	}
	for _, n := range names {
		b = append(append(b, n...), 0)
	}
	return string(b)
}

// bsdIndex is the data of a 32-bit "__.SYMDEF" member in byte order bo.
func bsdIndex(bo binary.AppendByteOrder, offs []uint32, names ...string) string {
	var strs []byte
	var ranlibs []byte
	for i, n := range names {
		ranlibs = bo.AppendUint32(ranlibs, uint32(len(strs)))
		ranlibs = bo.AppendUint32(ranlibs, offs[i])
		strs = append(append(strs, n...), 0)
	}
	b := bo.AppendUint32(nil, uint32(len(ranlibs)))
	b = append(b, ranlibs...)
	b = bo.AppendUint32(b, uint32(len(strs)))
	return string(append(b, strs...))
}

// withIndex builds an archive of an index member made by index(offsets)
// followed by members, giving index the header offsets of the members.
func withIndex(magic string, index func(offs []uint64) string, members ...string) []byte {
	offs := make([]uint64, len(members))
	pos := uint64(len(magic) + len(index(offs)))
	for i, m := range members {
		offs[i] = pos
		pos += uint64(len(m))
	}
	return build(magic, append([]string{index(offs)}, members...)...)
}

func openBytes(t *testing.T, b []byte) *Archive {
	t.Helper()
	a, err := Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return a
}

// contents reads every member of a.
func contents(t *testing.T, a *Archive) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range a.Members() {
		sr, err := a.Open(m)
		if err != nil {
			t.Fatalf("Open(%q): %v", m.Name, err)
		}
		b, err := io.ReadAll(sr)
		if err != nil {
			t.Fatal(err)
		}
		out[m.Name] = string(b)
	}
	return out
}

func symbolNames(t *testing.T, a *Archive) []string {
	t.Helper()
	syms, err := a.Symbols()
	if err != nil {
		t.Fatalf("Symbols: %v", err)
	}
	ms := a.Members()
	var out []string
	for _, s := range syms {
		out = append(out, s.Name+" in "+ms[s.Member].Name)
	}
	return out
}

func TestReadsLayoutsNoToolHere(t *testing.T) {
	u32 := func(offs []uint64) []uint32 {
		var o []uint32
		for _, v := range offs {
			o = append(o, uint32(v))
		}
		return o
	}
	for _, c := range []struct {
		name     string
		data     []byte
		kind     Kind
		index    IndexFormat
		contents map[string]string
		symbols  []string
	}{
		{
			name: "empty archive", data: build(Magic), kind: GNU,
			contents: map[string]string{},
		},
		{
			// BSD ranlib: short space-padded names, "__.SYMDEF SORTED",
			// big-endian ranlib structs as on PowerPC.
			name: "BSD short names, sorted big-endian index",
			data: withIndex(Magic, func(offs []uint64) string {
				return member("__.SYMDEF SORTED", bsdIndex(binary.BigEndian, u32(offs), "f", "g"))
			}, member("f.o", "F"), member("g.o", "GG")),
			kind: BSD, index: IndexBSD,
			contents: map[string]string{"f.o": "F", "g.o": "GG"},
			symbols:  []string{"f in f.o", "g in g.o"},
		},
		{
			name: "BSD #1/ names and little-endian index",
			data: withIndex(Magic, func(offs []uint64) string {
				return member("#1/12", "__.SYMDEF\x00\x00\x00"+bsdIndex(binary.LittleEndian, u32(offs), "x", "y"))
			}, member("#1/20", "a name with spaces\x00\x00data"), member("#1/3", "b.oB")),
			kind: BSD, index: IndexBSD,
			contents: map[string]string{"a name with spaces": "data", "b.o": "B"},
			symbols:  []string{"x in a name with spaces", "y in b.o"},
		},
		{
			// lib.exe and llvm-ar --format=coff end long names with a NUL.
			name:     "COFF long names",
			data:     build(Magic, member("//", "a_very_long_member_name.obj\x00"), member("/0", "x"), member("s.obj/", "")),
			kind:     GNU,
			contents: map[string]string{"a_very_long_member_name.obj": "x", "s.obj": ""},
		},
		{
			name: "64-bit SysV index",
			data: withIndex(Magic, func(offs []uint64) string {
				return member("/SYM64/", sysvIndex(8, offs, "f", "g"))
			}, member("f.o/", "F"), member("g.o/", "G")),
			kind: GNU, index: IndexSysV64,
			contents: map[string]string{"f.o": "F", "g.o": "G"},
			symbols:  []string{"f in f.o", "g in g.o"},
		},
		{
			// A GNU member may be called __.SYMDEF.
			name: "GNU __.SYMDEF", data: build(Magic, member("__.SYMDEF/", "x")), kind: GNU,
			contents: map[string]string{"__.SYMDEF": "x"},
		},
		{
			// The last member's padding byte may be missing.
			name: "no padding at the end", data: build(Magic, hdr("odd/", 3)+"odd"), kind: GNU,
			contents: map[string]string{"odd": "odd"},
		},
		{
			// lib.exe leaves uid, gid and mode blank in some headers.
			name:     "blank fields",
			data:     build(Magic, "x.obj/          "+strings.Repeat(" ", 32)+"2         `\nxx"),
			kind:     GNU,
			contents: map[string]string{"x.obj": "xx"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := openBytes(t, c.data)
			if a.Kind() != c.kind || a.Index() != c.index {
				t.Errorf("Kind, Index = %v, %v; want %v, %v", a.Kind(), a.Index(), c.kind, c.index)
			}
			if diff := cmp.Diff(c.contents, contents(t, a)); diff != "" {
				t.Errorf("contents (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.symbols, symbolNames(t, a)); diff != "" {
				t.Errorf("symbols (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRejectsMalformedArchives: each kind of bad input is an error, never a
// panic, that says where and matches the right sentinel.
func TestRejectsMalformedArchives(t *testing.T) {
	idx := func(n uint32, rest string) string {
		return member("/", string(binary.BigEndian.AppendUint32(nil, n))+rest)
	}
	ok := member("a.o/", "AAAA")
	for _, c := range []struct {
		name    string
		data    []byte
		symbols bool // the error comes from Symbols, not Open
		err     error
		off     int64 // of the goffload.FormatError
	}{
		{"empty file", nil, false, goffload.ErrTruncated, 0},
		{"short magic", []byte("!<arch"), false, goffload.ErrTruncated, 0},
		{"bad magic", []byte("!<arck>\n"), false, goffload.ErrInvalid, 0},
		{"AIX big archive", []byte("<bigaf>\n"), false, goffload.ErrUnsupported, 0},
		{"truncated header", build(Magic, hdr("a.o/", 0)[:30]), false, goffload.ErrTruncated, 8},
		{"truncated second header", build(Magic, ok, "a.o/  "), false, goffload.ErrTruncated, 8 + 64},
		{"bad fmag", build(Magic, strings.Replace(ok, "`\n", "`x", 1)), false, goffload.ErrInvalid, 8 + 58},
		{"size past end", build(Magic, hdr("a.o/", 100)+"short"), false, goffload.ErrTruncated, 8 + 48},
		{"size not decimal", build(Magic, strings.Replace(ok, "4         `", "4x        `", 1)), false, goffload.ErrInvalid, 8 + 48},
		{"size with leading space", build(Magic, strings.Replace(ok, "4         `", " 4        `", 1)), false, goffload.ErrInvalid, 8 + 48},
		{"negative size", build(Magic, strings.Replace(ok, "4         `", "-4        `", 1)), false, goffload.ErrInvalid, 8 + 48},
		{"blank size", build(Magic, strings.Replace(ok, "4         `", "          `", 1)), false, goffload.ErrInvalid, 8 + 48},
		{"mode not octal", build(Magic, strings.Replace(ok, "644     ", "648     ", 1)), false, goffload.ErrInvalid, 8 + 40},
		{"empty name", build(Magic, member("", "x")), false, goffload.ErrInvalid, 8},
		{"long name without //", build(Magic, member("/0", "x")), false, goffload.ErrInvalid, 8},
		{"long name offset past //", build(Magic, member("//", "abc/\n"), member("/5", "x")), false, goffload.ErrInvalid, 8 + 66},
		{"long name offset overflows", build(Magic, member("//", "abc/\n"), member("/999999999999999", "x")), false, goffload.ErrInvalid, 8 + 66},
		{"long name not terminated", build(Magic, member("//", "abcd"), member("/0", "x")), false, goffload.ErrInvalid, 8 + 64},
		{"long name without /", build(Magic, member("//", "abc\n"), member("/0", "x")), false, goffload.ErrInvalid, 8 + 64},
		{"long name reference not decimal", build(Magic, member("//", "abc/\n"), member("/0x", "x")), false, goffload.ErrInvalid, 8 + 66},
		{"nested reference in a regular archive", build(Magic, member("//", "abc/\n"), member("/0:8", "x")), false, goffload.ErrInvalid, 8 + 66},
		{"second //", build(Magic, member("//", "abc/\n"), member("//", "abc/\n")), false, goffload.ErrInvalid, 8 + 66},
		{"BSD name past the member", build(Magic, member("#1/5", "abc")), false, goffload.ErrInvalid, 8},
		{"BSD name length not decimal", build(Magic, member("#1/x", "abc")), false, goffload.ErrInvalid, 8},
		{"BSD name all NULs", build(Magic, member("#1/2", "\x00\x00")), false, goffload.ErrInvalid, 8},
		{"BSD name in a thin archive", build(ThinMagic, hdr("#1/4", 10)), false, goffload.ErrInvalid, 8},
		{"thin nested offset inside the magic", build(ThinMagic, member("//", "abc/\n"), hdr("/0:4", 10)), false, goffload.ErrInvalid, 8 + 66},
		{"symbol count too big", build(Magic, idx(1<<31, strings.Repeat("\x00", 96)), ok), true, goffload.ErrInvalid, 8 + 60},
		{"symbol count one too many", build(Magic, idx(3, "\x00\x00\x00\x4a\x00\x00\x00\x4a"+"f\x00"), ok), true, goffload.ErrInvalid, 8 + 60},
		{"symbol names missing", build(Magic, idx(2, "\x00\x00\x00\x4a\x00\x00\x00\x4af\x00gg"), ok), true, goffload.ErrInvalid, 8 + 60 + 12 + 2},
		{"symbol index without count", build(Magic, member("/", "\x00\x00"), ok), true, goffload.ErrTruncated, 8 + 60},
		{"symbol at no member", build(Magic, idx(1, "\x00\x00\x00\x50f\x00"), ok), true, goffload.ErrInvalid, 8},
		{"symbol at the index", build(Magic, idx(1, "\x00\x00\x00\x08f\x00"), ok), true, goffload.ErrInvalid, 8},
		{"SYM64 count too big", build(Magic, member("/SYM64/", "\x00\x00\x00\x01\x00\x00\x00\x00"+strings.Repeat("\x00", 8))), true, goffload.ErrInvalid, 8 + 60},
		{"SYM64 offset overflows", build(Magic, member("/SYM64/", sysvIndex(8, []uint64{1 << 63}, "f"))), true, goffload.ErrInvalid, 8 + 60 + 8},
		{"BSD ranlib size too big", build(Magic, member("__.SYMDEF", "\x00\x01\x00\x00\x00\x00\x00\x00")), true, goffload.ErrInvalid, 8 + 60},
		{"BSD ranlib size not a multiple of 8", build(Magic, member("__.SYMDEF", "\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")), true, goffload.ErrInvalid, 8 + 60},
		{"BSD string table too big", build(Magic, member("__.SYMDEF", bsdIndex(binary.LittleEndian, []uint32{8}, "f")[:12]+"\xff\x00\x00\x00f\x00")), true, goffload.ErrInvalid, 8 + 60},
		{"BSD name offset past strings", build(Magic, member("__.SYMDEF", "\x08\x00\x00\x00\x09\x00\x00\x00\x4a\x00\x00\x00\x02\x00\x00\x00f\x00")), true, goffload.ErrInvalid, 8 + 60 + 4},
		{"BSD name not terminated", build(Magic, member("__.SYMDEF", "\x08\x00\x00\x00\x00\x00\x00\x00\x4a\x00\x00\x00\x02\x00\x00\x00ff")), true, goffload.ErrInvalid, 8 + 60 + 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := Open(bytes.NewReader(c.data), int64(len(c.data)))
			if c.symbols {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				var syms []Symbol
				syms, err = a.Symbols()
				if syms != nil {
					t.Errorf("Symbols gave %v with the error", syms)
				}
			} else if a != nil {
				t.Errorf("Open gave an archive with the error")
			}
			if !errors.Is(err, c.err) {
				t.Fatalf("error %v, want %v", err, c.err)
			}
			var fe *goffload.FormatError
			if !errors.As(err, &fe) || fe.Offset != c.off {
				t.Errorf("error %v: want a *goffload.FormatError at byte %#x", err, c.off)
			}
			t.Log(err)
		})
	}
}

// TestDeclaredSizesDoNotAllocate: sizes read from the archive, and the size
// the caller claims, are not trusted for allocation.
func TestDeclaredSizesDoNotAllocate(t *testing.T) {
	// The caller claims 10 GB; the reader holds 72 bytes. The index member
	// claims 9999999999 bytes and 2^31 symbols.
	data := build(Magic, hdr("/", 9999999999)+"\x80\x00\x00\x00")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a, err := Open(bytes.NewReader(data), 8+60+9999999999+1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Symbols()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, goffload.ErrTruncated) {
		t.Errorf("Symbols: %v, want goffload.ErrTruncated", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4*chunk {
		t.Errorf("allocated %d bytes for a %d-byte archive", n, len(data))
	}
}

func TestOpenChecksTheMember(t *testing.T) {
	a := openBytes(t, build(Magic, member("a.o/", "AAAA"), member("b.o/", "B")))
	m := a.Members()[1]
	for _, bad := range []Member{{Name: "b.o", Offset: m.Offset}, func() Member { m := m; m.Size = 100; return m }(), {}} {
		if _, err := a.Open(bad); !errors.Is(err, ErrNotMember) {
			t.Errorf("Open(%+v): %v, want ErrNotMember", bad, err)
		}
		if _, err := a.OpenThin(bad, nil); !errors.Is(err, ErrNotMember) {
			t.Errorf("OpenThin(%+v): %v, want ErrNotMember", bad, err)
		}
	}
	// A stored member opens without calling the opener.
	if _, err := a.OpenThin(m, nil); err != nil {
		t.Errorf("OpenThin of a stored member: %v", err)
	}
}

func TestThinOpener(t *testing.T) {
	inner := build(Magic, member("x.o/", "XX"), member("y.o/", "YYY"))
	thin := build(ThinMagic, member("//", "dir/inner.a/\n"), hdr("/0", 2), hdr("/0:70", 3), hdr("/0:71", 3), hdr("/0:8", 3))
	a := openBytes(t, thin)
	if a.Kind() != Thin {
		t.Errorf("Kind %v", a.Kind())
	}
	var opened []string
	open := func(name string) (io.ReaderAt, int64, error) {
		opened = append(opened, name)
		return bytes.NewReader(inner), int64(len(inner)), nil
	}
	ms := a.Members()
	for i, c := range []struct {
		want string
		err  error
	}{
		{"", ErrStale}, // the whole file, which has another size
		{"YYY", nil},   // y.o in it
		{"", ErrStale}, // no header at 71
		{"", ErrStale}, // x.o has 2 bytes, not 3
	} {
		sr, err := a.OpenThin(ms[i], open)
		if !errors.Is(err, c.err) {
			t.Errorf("member %d: %v, want %v", i, err, c.err)
			continue
		}
		if err == nil {
			if b, _ := io.ReadAll(sr); string(b) != c.want {
				t.Errorf("member %d: %q, want %q", i, b, c.want)
			}
		}
	}
	if diff := cmp.Diff([]string{"dir/inner.a", "dir/inner.a", "dir/inner.a", "dir/inner.a"}, opened); diff != "" {
		t.Errorf("opened (-want +got):\n%s", diff)
	}
	failing := func(string) (io.ReaderAt, int64, error) { return nil, 0, io.ErrClosedPipe }
	if _, err := a.OpenThin(ms[0], failing); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("opener error: %v", err)
	}
}

func TestNames(t *testing.T) {
	for _, c := range []struct {
		v    fmt.Stringer
		want string
	}{
		{GNU, "GNU"}, {BSD, "BSD"}, {Thin, "thin"}, {Kind(0), "Kind(0)"}, {Kind(9), "Kind(9)"},
		{NoIndex, "none"}, {IndexSysV, "/"}, {IndexSysV64, "/SYM64/"}, {IndexBSD, "__.SYMDEF"},
		{IndexBSD64, "__.SYMDEF_64"}, {IndexFormat(-1), "IndexFormat(-1)"},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("%#v: %q, want %q", c.v, got, c.want)
		}
	}
}

func TestIsArchive(t *testing.T) {
	for _, c := range []struct {
		head string
		want bool
	}{
		{"!<arch>\n", true}, {"!<thin>\nmore", true}, {"!<arch>", false}, {"<bigaf>\n", false}, {"\x7fELF", false}, {"", false},
	} {
		if got := IsArchive([]byte(c.head)); got != c.want {
			t.Errorf("IsArchive(%q) = %v", c.head, got)
		}
	}
}

// TestOpenArgumentErrors: a nil reader or a negative size is an argument
// error (fs.ErrInvalid), not a malformed archive.
func TestOpenArgumentErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		r    io.ReaderAt
		size int64
	}{
		{"nil reader", nil, 100},
		{"negative size", strings.NewReader(Magic), -1},
	} {
		a, err := Open(c.r, c.size)
		if a != nil || !errors.Is(err, fs.ErrInvalid) || errors.Is(err, goffload.ErrInvalid) || errors.Is(err, goffload.ErrTruncated) {
			t.Errorf("%s: %v, %v; want an argument error", c.name, a, err)
		}
	}
}
