package offload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/goffload/goffload"
)

func TestIdentFlagsString(t *testing.T) {
	tests := []struct {
		f    IdentFlags
		want string
	}{
		{0, "0"},
		{IdentKMPC, "KMPC"},
		{IdentKMPC + IdentBarrierExpl, "KMPC+BARRIER_EXPL"}, // 34, docs/entries.md#ident-t
		{IdentKMPC + IdentWorkLoop, "KMPC+WORK_LOOP"},       // 514, docs/entries.md#ident-t
		{IdentIMB + IdentAutoPar + IdentAtomicReduce, "IMB+AUTOPAR+ATOMIC_REDUCE"},
		{IdentKMPC + IdentBarrierImpl, "KMPC+BARRIER_IMPL"},
		{IdentBarrierImplSections, "BARRIER_IMPL_SECTIONS"},
		{IdentBarrierImplSingle, "BARRIER_IMPL_SINGLE"},
		{IdentBarrierImplWorkshare + IdentWorkDistribute, "BARRIER_IMPL_WORKSHARE+WORK_DISTRIBUTE"},
		{IdentWorkSections, "WORK_SECTIONS"},
		{0x04, "0x4"},                     // unused
		{0x80, "0x80"},                    // not a defined implicit-barrier value
		{IdentKMPC + 0x100, "KMPC+0x100"}, // not a defined implicit-barrier value
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("IdentFlags(%#x).String() = %q, want %q", uint32(tt.f), got, tt.want)
		}
		if got, err := ParseIdentFlags(tt.want); err != nil || got != tt.f {
			t.Errorf("ParseIdentFlags(%q) = %#x, %v; want %#x", tt.want, uint32(got), err, uint32(tt.f))
		}
	}
}

func TestParseIdentFlags(t *testing.T) {
	tests := []struct {
		s    string
		want IdentFlags
	}{
		{"KMP_IDENT_KMPC", IdentKMPC},
		{"KMP_IDENT_KMPC+WORK_LOOP", IdentKMPC | IdentWorkLoop},
		{"BARRIER_IMPL_FOR", IdentBarrierImplFor},
		{"2", IdentKMPC},
	}
	for _, tt := range tests {
		if got, err := ParseIdentFlags(tt.s); err != nil || got != tt.want {
			t.Errorf("ParseIdentFlags(%q) = %v, %v; want %v", tt.s, got, err, tt.want)
		}
	}
	for _, s := range []string{"", "kmpc", "BARRIER_IMPL+BARRIER_IMPL_SINGLE", "BARRIER_IMPL_FOR+BARRIER_IMPL", "KMPC+"} {
		if got, err := ParseIdentFlags(s); !errors.Is(err, ErrUnknownFlag) {
			t.Errorf("ParseIdentFlags(%q) = %v, %v; want ErrUnknownFlag", s, got, err)
		}
	}
}

func TestDefaultSourceLocation(t *testing.T) {
	if len(DefaultSourceLocation) != 22 {
		t.Errorf("len(DefaultSourceLocation) = %d, want 22", len(DefaultSourceLocation))
	}
	loc, err := ParseSourceLocation(DefaultSourceLocation)
	want := SourceLocation{File: "unknown", Function: "unknown"}
	if err != nil || loc != want {
		t.Errorf("ParseSourceLocation(default) = %+v, %v; want %+v", loc, err, want)
	}
}

func TestIdentEncodeDefault(t *testing.T) {
	id := NewIdent(IdentKMPC, DefaultSourceLocation)
	if id.Reserved3 != 22 {
		t.Errorf("Reserved3 = %d, want 22", id.Reserved3)
	}
	tests := []struct {
		order binary.ByteOrder
		want  string
	}{
		{binary.LittleEndian, "00000000 02000000 00000000 16000000 0000000000000000"},
		{binary.BigEndian, "00000000 00000002 00000000 00000016 0000000000000000"},
	}
	for _, tt := range tests {
		got := id.Encode(tt.order)
		if want := hexBytes(t, tt.want); !bytes.Equal(got, want) {
			t.Errorf("%v: Encode = %x, want %x", tt.order, got, want)
		}
		back, psource, err := DecodeIdent(tt.order, got)
		if err != nil {
			t.Fatal(err)
		}
		id.PSource = ""
		if back != id || psource != 0 {
			t.Errorf("%v: DecodeIdent = %+v, %#x; want %+v, 0", tt.order, back, psource, id)
		}
		id.PSource = DefaultSourceLocation
	}
}

func TestIdentRoundTrip(t *testing.T) {
	id := Ident{Reserved1: 0xFFFFFFFF, Flags: 0x12345678, Reserved2: 2, Reserved3: 0x80000000}
	for _, bo := range entryByteOrders {
		b := id.AppendEncode([]byte{9}, bo.order)
		if len(b) != 1+IdentSize {
			t.Fatalf("%s: %d bytes", bo.name, len(b))
		}
		bo.order.PutUint64(b[1+IdentPSourceOffset:], 0xDEADBEEF)
		got, psource, err := DecodeIdent(bo.order, b[1:])
		if err != nil || got != id || psource != 0xDEADBEEF {
			t.Errorf("%s: DecodeIdent = %+v, %#x, %v; want %+v, 0xdeadbeef", bo.name, got, psource, err, id)
		}
	}
}

func TestDecodeIdentShortBufferIsTruncated(t *testing.T) {
	b := make([]byte, IdentSize)
	for n := 0; n < IdentSize; n++ {
		if _, _, err := DecodeIdent(binary.LittleEndian, b[:n]); !errors.Is(err, goffload.ErrTruncated) {
			t.Fatalf("DecodeIdent(%d bytes): err = %v, want goffload.ErrTruncated", n, err)
		}
	}
}

// TestIdentMatchesRealObjects compares the encoding with the ident_t of the
// target launch in the clang 19 and 22 host objects: `.data.rel.ro` holds only
// it, with its psource relocated to `.rodata.str1.1`
// (docs/entries.md#ident-t).
func TestIdentMatchesRealObjects(t *testing.T) {
	for _, major := range []int{19, 22} {
		t.Run("llvm"+strconv.Itoa(major), func(t *testing.T) {
			f := openFixtureELF(t, filepath.Join("host-objects", "openmp-x86-llvm"+strconv.Itoa(major)+".o"))
			_, data := elfSectionData(t, f, ".data.rel.ro")
			if want := NewIdent(IdentKMPC, DefaultSourceLocation).Encode(f.ByteOrder); !bytes.Equal(data, want) {
				t.Errorf(".data.rel.ro = %x, want %x", data, want)
			}
			rels := elfRelocations(t, f, ".data.rel.ro")
			if len(rels) != 1 || rels[0].off != IdentPSourceOffset {
				t.Fatalf("relocations = %+v, want one at %d", rels, IdentPSourceOffset)
			}
			id, _, err := DecodeIdent(f.ByteOrder, data)
			if err != nil {
				t.Fatal(err)
			}
			id.PSource = elfCString(t, f, rels[0].sym, rels[0].addend)
			if id.PSource != DefaultSourceLocation || int(id.Reserved3) != len(id.PSource) {
				t.Errorf("psource %q, Reserved3 %d; want %q, 22", id.PSource, id.Reserved3, DefaultSourceLocation)
			}
			if loc, err := id.Location(); err != nil || loc.Format() != DefaultSourceLocation {
				t.Errorf("Location() = %+v, %v", loc, err)
			}
		})
	}
}

func TestSourceLocationFormatParse(t *testing.T) {
	tests := []struct {
		loc  SourceLocation
		want string
	}{
		{SourceLocation{"unknown", "unknown", 0, 0}, DefaultSourceLocation},
		{SourceLocation{"id.c", "foo", 2, 1}, ";id.c;foo;2;1;;"},
		{SourceLocation{"/src/a b.cpp", "ns::S::f", 123456, 78}, ";/src/a b.cpp;ns::S::f;123456;78;;"},
		{SourceLocation{"", "", 0, 0}, ";;;0;0;;"},
	}
	for _, tt := range tests {
		if got := tt.loc.Format(); got != tt.want {
			t.Errorf("%+v.Format() = %q, want %q", tt.loc, got, tt.want)
		}
		if got, err := ParseSourceLocation(tt.want); err != nil || got != tt.loc {
			t.Errorf("ParseSourceLocation(%q) = %+v, %v; want %+v", tt.want, got, err, tt.loc)
		}
	}
}

func TestParseSourceLocationRejectsMalformed(t *testing.T) {
	for _, s := range []string{
		"", ";", ";;", ";;;", ";;;;", "unknown;unknown;0;0;;",
		";unknown;unknown;0;0;", ";unknown;unknown;0;0",
		";unknown;unknown;0;;;", ";unknown;unknown;;0;;",
		";unknown;unknown;-1;0;;", ";unknown;unknown;+1;0;;", ";unknown;unknown;0x1;0;;",
		";unknown;unknown;1;2;3;;", ";a;b;c;1;2;;", ";unknown;unknown;0;0;;;",
		";unknown;unknown;99999999999999999999999;0;;",
		";unknown;unknown; 1;0;;",
	} {
		if loc, err := ParseSourceLocation(s); !errors.Is(err, goffload.ErrInvalid) {
			t.Errorf("ParseSourceLocation(%q) = %+v, %v; want goffload.ErrInvalid", s, loc, err)
		}
	}
}

func TestSourceLocationFormatWithSeparatorDoesNotParse(t *testing.T) {
	for _, loc := range []SourceLocation{{"a;b.c", "f", 1, 1}, {"a.c", "f", -1, 0}} {
		if got, err := ParseSourceLocation(loc.Format()); err == nil {
			t.Errorf("ParseSourceLocation(%q) = %+v, want an error", loc.Format(), got)
		}
	}
}

func FuzzParseSourceLocation(f *testing.F) {
	f.Add(DefaultSourceLocation)
	f.Add(";id.c;foo;2;1;;")
	f.Add(";;;;;;")
	f.Fuzz(func(t *testing.T, s string) {
		checkAllocated(t, len(s), decodeFuzzPerByte, decodeFuzzFixed, func() {
			loc, err := ParseSourceLocation(s)
			if err != nil {
				return
			}
			again, err := ParseSourceLocation(loc.Format())
			if err != nil || again != loc {
				t.Fatalf("%q: parsed %+v, formatted %q, parsed again %+v, %v", s, loc, loc.Format(), again, err)
			}
		})
	})
}
