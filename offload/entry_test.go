package offload

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

var entryByteOrders = []struct {
	name  string
	order binary.ByteOrder
}{
	{"little", binary.LittleEndian},
	{"big", binary.BigEndian},
}

func hexBytes(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEntryLayoutSizeAndOffsets(t *testing.T) {
	tests := []struct {
		layout           EntryLayout
		size, addr, name int
		aux              int
		hasAux           bool
	}{
		{EntryLegacy, 32, 0, 8, -1, false},
		{EntryV1, 56, 16, 24, 48, true},
		{EntryLayout(9), 0, -1, -1, -1, false},
	}
	for _, tt := range tests {
		aux, hasAux := tt.layout.AuxOffset()
		if got := tt.layout.Size(); got != tt.size {
			t.Errorf("%v.Size() = %d, want %d", tt.layout, got, tt.size)
		}
		if got := tt.layout.AddrOffset(); got != tt.addr {
			t.Errorf("%v.AddrOffset() = %d, want %d", tt.layout, got, tt.addr)
		}
		if got := tt.layout.NameOffset(); got != tt.name {
			t.Errorf("%v.NameOffset() = %d, want %d", tt.layout, got, tt.name)
		}
		if aux != tt.aux || hasAux != tt.hasAux {
			t.Errorf("%v.AuxOffset() = %d, %v, want %d, %v", tt.layout, aux, hasAux, tt.aux, tt.hasAux)
		}
	}
}

// The requires entry of `#pragma omp requires unified_shared_memory`, as LLVM
// 19 and 22 write it (docs/entries.md#requires, measured with clang 19 and 22).
var requiresEntryBytes = []struct {
	name   string
	layout EntryLayout
	order  binary.ByteOrder
	raw    RawEntry
	bytes  string
}{
	{"legacy/little", EntryLegacy, binary.LittleEndian,
		RawEntry{Flags: 0x10, Data: 8},
		"0000000000000000 0000000000000000 0000000000000000 10000000 08000000"},
	{"legacy/big", EntryLegacy, binary.BigEndian,
		RawEntry{Flags: 0x10, Data: 8},
		"0000000000000000 0000000000000000 0000000000000000 00000010 00000008"},
	{"v1/little", EntryV1, binary.LittleEndian,
		RawEntry{Version: 1, Kind: 1, Flags: 0x10, Data: 8},
		"0000000000000000 0100 0100 10000000 0000000000000000 0000000000000000 0000000000000000 0800000000000000 0000000000000000"},
	{"v1/big", EntryV1, binary.BigEndian,
		RawEntry{Version: 1, Kind: 1, Flags: 0x10, Data: 8},
		"0000000000000000 0001 0001 00000010 0000000000000000 0000000000000000 0000000000000000 0000000000000008 0000000000000000"},
}

func TestEntryEncodeRequiresEntryBytes(t *testing.T) {
	for _, tt := range requiresEntryBytes {
		t.Run(tt.name, func(t *testing.T) {
			want := hexBytes(t, tt.bytes)
			got, err := tt.layout.Encode(tt.order, tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Encode = %x, want %x", got, want)
			}
			back, err := tt.layout.Decode(tt.order, want)
			if err != nil {
				t.Fatal(err)
			}
			if back != tt.raw {
				t.Errorf("Decode = %+v, want %+v", back, tt.raw)
			}
		})
	}
}

func TestEntryEncodeFieldOffsets(t *testing.T) {
	// Every field a distinct value, so each must land at its own offset.
	legacy := RawEntry{Addr: 0x1111111111111111, Name: 0x2222222222222222, Size: 0x3333333333333333, Flags: 0x44444444, Data: 0x55555555}
	v1 := RawEntry{Reserved: 0x0102030405060708, Version: 0x1112, Kind: 0x2122, Flags: 0x31323334,
		Addr: 0x4142434445464748, Name: 0x5152535455565758, Size: 0x6162636465666768,
		Data: 0x7172737475767778, Aux: 0x8182838485868788}
	tests := []struct {
		layout EntryLayout
		raw    RawEntry
		want   string
	}{
		{EntryLegacy, legacy, "1111111111111111 2222222222222222 3333333333333333 44444444 55555555"},
		{EntryV1, v1, "0807060504030201 1211 2221 34333231 4847464544434241 5857565554535251 6867666564636261 7877767574737271 8887868584838281"},
	}
	for _, tt := range tests {
		got, err := tt.layout.Encode(binary.LittleEndian, tt.raw)
		if err != nil {
			t.Fatalf("%v: %v", tt.layout, err)
		}
		if want := hexBytes(t, tt.want); !bytes.Equal(got, want) {
			t.Errorf("%v: Encode = %x, want %x", tt.layout, got, want)
		}
	}
}

func TestEntryRoundTrip(t *testing.T) {
	entries := map[EntryLayout][]RawEntry{
		EntryLegacy: {
			{},
			{Addr: 1, Name: 2, Size: 3, Flags: 4, Data: 5},
			{Addr: ^uint64(0), Name: ^uint64(0), Size: ^uint64(0), Flags: ^uint32(0), Data: 0xFFFFFFFF},
		},
		EntryV1: {
			{},
			{Version: 1, Kind: 4, Flags: 1, Addr: 0x1000, Name: 0x2000, Size: 4, Data: 4, Aux: 0x3000},
			{Reserved: ^uint64(0), Version: 0xFFFF, Kind: 0xFFFF, Flags: ^uint32(0), Addr: ^uint64(0),
				Name: ^uint64(0), Size: ^uint64(0), Data: ^uint64(0), Aux: ^uint64(0)},
		},
	}
	for _, bo := range entryByteOrders {
		for layout, list := range entries {
			for _, e := range list {
				b, err := layout.Encode(bo.order, e)
				if err != nil {
					t.Fatalf("%s %v: Encode(%+v): %v", bo.name, layout, e, err)
				}
				if len(b) != layout.Size() {
					t.Errorf("%s %v: %d bytes, want %d", bo.name, layout, len(b), layout.Size())
				}
				got, err := layout.Decode(bo.order, b)
				if err != nil {
					t.Fatalf("%s %v: Decode: %v", bo.name, layout, err)
				}
				if got != e {
					t.Errorf("%s %v: round trip = %+v, want %+v", bo.name, layout, got, e)
				}
			}
		}
	}
}

func TestEntryAppendEncode(t *testing.T) {
	prefix := []byte("head")
	got, err := EntryV1.AppendEncode(prefix, binary.LittleEndian, RawEntry{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4+56 || string(got[:4]) != "head" || got[4+8] != 1 {
		t.Errorf("AppendEncode = %x", got)
	}
	got, err = EntryLegacy.AppendEncode(prefix, binary.LittleEndian, RawEntry{Aux: 1})
	if err == nil || string(got) != "head" {
		t.Errorf("AppendEncode on error = %q, %v; want dst unchanged and an error", got, err)
	}
}

func TestEntryEncodeRejectsWhatTheLayoutCannotHold(t *testing.T) {
	tests := []struct {
		name   string
		layout EntryLayout
		raw    RawEntry
	}{
		{"legacy data above 32 bits", EntryLegacy, RawEntry{Data: 1 << 32}},
		{"legacy aux", EntryLegacy, RawEntry{Aux: 8}},
		{"legacy version", EntryLegacy, RawEntry{Version: 1}},
		{"legacy kind", EntryLegacy, RawEntry{Kind: 1}},
		{"legacy reserved", EntryLegacy, RawEntry{Reserved: 1}},
		{"unknown layout", EntryLayout(7), RawEntry{}},
	}
	for _, tt := range tests {
		if _, err := tt.layout.Encode(binary.LittleEndian, tt.raw); !errors.Is(err, ErrEncoding) {
			t.Errorf("%s: err = %v, want ErrEncoding", tt.name, err)
		}
	}
}

func TestEntryDecodeShortBufferIsTruncated(t *testing.T) {
	for _, layout := range []EntryLayout{EntryLegacy, EntryV1} {
		buf := make([]byte, layout.Size())
		for n := 0; n < layout.Size(); n++ {
			if _, err := layout.Decode(binary.LittleEndian, buf[:n]); !errors.Is(err, goffload.ErrTruncated) {
				t.Fatalf("%v: Decode(%d bytes): err = %v, want goffload.ErrTruncated", layout, n, err)
			}
		}
	}
	if _, err := EntryLayout(7).Decode(binary.LittleEndian, make([]byte, 64)); err == nil {
		t.Error("Decode with an unknown layout: no error")
	}
}

func TestEntryDecodeAll(t *testing.T) {
	var sec []byte
	want := []RawEntry{{Version: 1, Kind: 1, Size: 4}, {Version: 1, Kind: 2, Flags: 0x18}}
	for _, e := range want {
		sec, _ = EntryV1.AppendEncode(sec, binary.LittleEndian, e)
	}
	got, err := EntryV1.DecodeAll(binary.LittleEndian, sec)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("DecodeAll = %+v, want %+v", got, want)
	}
	if got, err := EntryV1.DecodeAll(binary.LittleEndian, nil); err != nil || len(got) != 0 {
		t.Errorf("DecodeAll(empty) = %v, %v", got, err)
	}
	_, err = EntryV1.DecodeAll(binary.LittleEndian, sec[:len(sec)-1])
	if !errors.Is(err, goffload.ErrTruncated) || !strings.Contains(err.Error(), "at byte 0x38") {
		t.Errorf("DecodeAll(partial) = %v, want goffload.ErrTruncated at byte 0x38", err)
	}
}

func TestDetectEntryLayout(t *testing.T) {
	tests := []struct {
		section string
		layout  EntryLayout
		kind    OffloadKind
		ok      bool
	}{
		{"llvm_offload_entries", EntryV1, OffloadNone, true},
		{"omp_offloading_entries", EntryLegacy, OffloadOpenMP, true},
		{"cuda_offloading_entries", EntryLegacy, OffloadCUDA, true},
		{"hip_offloading_entries", EntryLegacy, OffloadHIP, true},
		// Renamed by a relocatable link
		// (docs/registration.md#relocatable-link).
		{"llvm_offload_entries_dda59a650c241c86", EntryV1, OffloadNone, true},
		{"omp_offloading_entries_5", EntryLegacy, OffloadOpenMP, true},
		{"hip_offloading_entries_a0", EntryLegacy, OffloadHIP, true},
		{"llvm_offload_entries_", 0, 0, false},
		{"llvm_offload_entries_DDA5", 0, 0, false},              // upper case
		{"llvm_offload_entries_0a", 0, 0, false},                // zero padded
		{"llvm_offload_entries_1dda59a650c241c86", 0, 0, false}, // 17 digits
		{"llvm_offload_entriesx", 0, 0, false},
		{"llvm_offload_entries_g", 0, 0, false},
		{".llvm.offloading", 0, 0, false},
		{"omp_offloading_entries$OE", 0, 0, false},
		{"", 0, 0, false},
	}
	for _, tt := range tests {
		layout, ok := DetectEntryLayout(tt.section)
		if ok != tt.ok || (ok && layout != tt.layout) {
			t.Errorf("DetectEntryLayout(%q) = %v, %v; want %v, %v", tt.section, layout, ok, tt.layout, tt.ok)
		}
		kind, ok := EntrySectionKind(tt.section)
		if ok != tt.ok || (ok && kind != tt.kind) {
			t.Errorf("EntrySectionKind(%q) = %v, %v; want %v, %v", tt.section, kind, ok, tt.kind, tt.ok)
		}
	}
}

func TestDetectEntryLayoutAgreesWithReleases(t *testing.T) {
	for _, r := range release.All() {
		for _, k := range []OffloadKind{OffloadOpenMP, OffloadCUDA, OffloadHIP} {
			sec := EntriesSection(r, k)
			if sec == "" {
				continue // no entries of kind k in r (CUDA and HIP before 15)
			}
			layout, ok := DetectEntryLayout(sec)
			if !ok || layout != LayoutOf(r) {
				t.Errorf("%v %v: DetectEntryLayout(%q) = %v, %v; want %v", r, k, sec, layout, ok, LayoutOf(r))
			}
			if sk, _ := EntrySectionKind(sec); LayoutOf(r) == EntryLegacy && sk != k {
				t.Errorf("%v: EntrySectionKind(%q) = %v, want %v", r, sec, sk, k)
			}
		}
	}
}

func releaseRow(t *testing.T, major int) *release.Release {
	t.Helper()
	r, err := release.Lookup(major)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEntryRaw(t *testing.T) {
	tests := []struct {
		major int
		entry Entry
		want  RawEntry
	}{
		{19, Entry{Kind: OffloadOpenMP, Flags: 0x10, Data: 8}, RawEntry{Flags: 0x10, Data: 8}},
		{19, Entry{Kind: OffloadHIP, Flags: 1, Size: 4, Address: SymbolRef{Symbol: "v.managed"}}, RawEntry{Flags: 1, Size: 4}},
		{22, Entry{Kind: OffloadOpenMP, Flags: 0x10, Name: ".requires", Data: 8}, RawEntry{Version: 1, Kind: 1, Flags: 0x10, Data: 8}},
		{22, Entry{Kind: OffloadHIP, Flags: 1, Size: 4, Data: 4, Address: SymbolRef{Symbol: "v.managed"}, Aux: SymbolRef{Symbol: "v"}},
			RawEntry{Version: 1, Kind: 4, Flags: 1, Size: 4, Data: 4}},
		{22, Entry{Kind: OffloadSYCL}, RawEntry{Version: 1, Kind: 8}},
		{22, Entry{Kind: OffloadCUDA, Data: 1 << 40}, RawEntry{Version: 1, Kind: 2, Data: 1 << 40}},
	}
	for _, tt := range tests {
		got, err := tt.entry.Raw(releaseRow(t, tt.major))
		if err != nil {
			t.Errorf("LLVM %d: Raw(%+v): %v", tt.major, tt.entry, err)
			continue
		}
		if got != tt.want {
			t.Errorf("LLVM %d: Raw(%+v) = %+v, want %+v", tt.major, tt.entry, got, tt.want)
		}
	}
}

func TestEntryRawRejectsWhatTheReleaseCannotHold(t *testing.T) {
	tests := []struct {
		name  string
		major int
		entry Entry
	}{
		{"SYCL before 21", 19, Entry{Kind: OffloadSYCL}},
		{"no kind in a legacy section", 19, Entry{Kind: OffloadNone}},
		{"aux in a legacy entry", 19, Entry{Kind: OffloadHIP, Aux: SymbolRef{Symbol: "v"}}},
		{"legacy data above 32 bits", 15, Entry{Kind: OffloadCUDA, Data: 1 << 32}},
		{"unknown kind", 22, Entry{Kind: OffloadKind(42)}},
	}
	for _, tt := range tests {
		if _, err := tt.entry.Raw(releaseRow(t, tt.major)); !errors.Is(err, ErrEncoding) {
			t.Errorf("%s: err = %v, want ErrEncoding", tt.name, err)
		}
	}
}

func TestEntryFromRawInvertsRaw(t *testing.T) {
	for _, r := range release.All() {
		for k := OffloadOpenMP; k <= OffloadSYCL; k++ {
			e := Entry{Kind: k, Flags: 0x11, Size: 8, Data: 3}
			raw, err := e.Raw(r)
			if err != nil {
				continue // the release has no such kind
			}
			got := EntryFromRaw(r, LayoutOf(r), k, raw)
			if got != e {
				t.Errorf("%v %v: EntryFromRaw(Raw(e)) = %+v, want %+v", r, k, got, e)
			}
		}
	}
}

func TestEntryFromRawKind(t *testing.T) {
	tests := []struct {
		major       int
		layout      EntryLayout
		sectionKind OffloadKind
		code        uint16
		want        OffloadKind
	}{
		{22, EntryV1, OffloadNone, 4, OffloadHIP},
		{19, EntryV1, OffloadNone, 4, OffloadNone}, // 4 means nothing before 21
		{19, EntryV1, OffloadNone, 3, OffloadHIP},
		{22, EntryV1, OffloadNone, 3, OffloadNone},
		{19, EntryLegacy, OffloadCUDA, 0, OffloadCUDA},
		{19, EntryLegacy, OffloadHIP, 1, OffloadHIP}, // a legacy entry has no kind field
	}
	for _, tt := range tests {
		got := EntryFromRaw(releaseRow(t, tt.major), tt.layout, tt.sectionKind, RawEntry{Kind: tt.code})
		if got.Kind != tt.want {
			t.Errorf("LLVM %d %v code %d in %v section: kind %v, want %v", tt.major, tt.layout, tt.code, tt.sectionKind, got.Kind, tt.want)
		}
	}
}

func TestSymbolRefString(t *testing.T) {
	tests := []struct {
		ref  SymbolRef
		want string
	}{
		{SymbolRef{}, "null"},
		{SymbolRef{Symbol: "gvar"}, "gvar"},
		{SymbolRef{Symbol: ".llvm.rodata.offloading", Addend: 0x1b}, ".llvm.rodata.offloading+0x1b"},
		{SymbolRef{Symbol: "x", Addend: -4}, "x-0x4"},
		{SymbolRef{Addend: 0x10}, "0x10"},
	}
	for _, tt := range tests {
		if got := tt.ref.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

func TestOpenMPFlagsString(t *testing.T) {
	tests := []struct {
		f    OpenMPFlags
		want string
	}{
		{0, "0"},
		{OMPEntryLink, "link"},
		{OMPEntryCtor, "ctor"},
		{OMPEntryDtor, "dtor"},
		{OMPEntryIndirect, "indirect"},
		{OMPEntryRequires, "requires"},
		{OMPEntryIndirectVTable, "indirect_vtable"},
		{OMPEntryLink + OMPEntryIndirect, "link+indirect"},
		{OMPEntryLink + 0x40, "link+0x40"},
		{0x80000000, "0x80000000"},
		{0x3F, "link+ctor+dtor+indirect+requires+indirect_vtable"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("OpenMPFlags(%#x).String() = %q, want %q", uint32(tt.f), got, tt.want)
		}
		if got, err := ParseOpenMPFlags(tt.want); err != nil || got != tt.f {
			t.Errorf("ParseOpenMPFlags(%q) = %#x, %v; want %#x", tt.want, uint32(got), err, uint32(tt.f))
		}
	}
}

func TestGPUFlagsString(t *testing.T) {
	tests := []struct {
		f    GPUFlags
		want string
	}{
		{GPUGlobal, "global"},
		{GPUManaged, "managed"},
		{GPUSurface, "surface"},
		{GPUTexture, "texture"},
		{GPUManaged + GPUExtern, "managed+extern"},
		{GPUConstant, "global+constant"},
		{GPUTexture + GPUExtern + GPUNormalized, "texture+extern+normalized"},
		{GPUGlobal + 0x40, "global+0x40"},
		{5, "0x5"},
		{5 + GPUExtern, "extern+0x5"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("GPUFlags(%#x).String() = %q, want %q", uint32(tt.f), got, tt.want)
		}
		if got, err := ParseGPUFlags(tt.want); err != nil || got != tt.f {
			t.Errorf("ParseGPUFlags(%q) = %#x, %v; want %#x", tt.want, uint32(got), err, uint32(tt.f))
		}
	}
}

func TestGPUFlagsType(t *testing.T) {
	tests := []struct{ f, want GPUFlags }{
		{0x10, GPUGlobal},
		{GPUManaged | GPUExtern, GPUManaged},
		{GPUTexture | GPUNormalized, GPUTexture},
		{0x3F, 7},
	}
	for _, tt := range tests {
		if got := tt.f.Type(); got != tt.want {
			t.Errorf("GPUFlags(%#x).Type() = %v, want %v", uint32(tt.f), got, tt.want)
		}
	}
}

func TestRequiresFlagsString(t *testing.T) {
	tests := []struct {
		f    RequiresFlags
		want string
	}{
		{0, "0"},
		{RequiresNone, "none"},
		{RequiresUnifiedSharedMemory, "unified_shared_memory"},
		{RequiresReverseOffload + RequiresUnifiedAddress + RequiresDynamicAllocators, "reverse_offload+unified_address+dynamic_allocators"},
		{RequiresUnifiedSharedMemory + 0x20, "unified_shared_memory+0x20"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("RequiresFlags(%#x).String() = %q, want %q", uint64(tt.f), got, tt.want)
		}
		if got, err := ParseRequiresFlags(tt.want); err != nil || got != tt.f {
			t.Errorf("ParseRequiresFlags(%q) = %#x, %v; want %#x", tt.want, uint64(got), err, uint64(tt.f))
		}
	}
}

func TestParseFlagsAcceptsNumbersAndOmittedType(t *testing.T) {
	if f, err := ParseOpenMPFlags("8"); err != nil || f != OMPEntryIndirect {
		t.Errorf("ParseOpenMPFlags(8) = %v, %v", f, err)
	}
	if f, err := ParseOpenMPFlags("0x10+link"); err != nil || f != OMPEntryRequires|OMPEntryLink {
		t.Errorf("ParseOpenMPFlags(0x10+link) = %v, %v", f, err)
	}
	if f, err := ParseGPUFlags("extern"); err != nil || f != GPUExtern {
		t.Errorf("ParseGPUFlags(extern) = %v, %v", f, err)
	}
}

func TestParseFlagsRejectsMalformed(t *testing.T) {
	for _, s := range []string{"", "+", "link+", "+link", "linked", "LINK", "link+link", "-1", "0x100000000", "link indirect"} {
		if f, err := ParseOpenMPFlags(s); !errors.Is(err, ErrUnknownFlag) {
			t.Errorf("ParseOpenMPFlags(%q) = %v, %v; want ErrUnknownFlag", s, f, err)
		}
	}
	for _, s := range []string{"managed+texture", "global+global", "global+managed", "volatile"} {
		if f, err := ParseGPUFlags(s); !errors.Is(err, ErrUnknownFlag) {
			t.Errorf("ParseGPUFlags(%q) = %v, %v; want ErrUnknownFlag", s, f, err)
		}
	}
	for _, s := range []string{"usm", "unified_shared_memory+"} {
		if f, err := ParseRequiresFlags(s); !errors.Is(err, ErrUnknownFlag) {
			t.Errorf("ParseRequiresFlags(%q) = %v, %v; want ErrUnknownFlag", s, f, err)
		}
	}
}

func FuzzFlagsRoundTrip(f *testing.F) {
	for _, v := range []uint32{0, 1, 5, 0x18, 0x3F, 0x40, 0x1C2, 0xFFFFFFFF} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v uint32) {
		if got, err := ParseOpenMPFlags(OpenMPFlags(v).String()); err != nil || got != OpenMPFlags(v) {
			t.Errorf("OpenMPFlags %#x: %q parses as %#x, %v", v, OpenMPFlags(v), uint32(got), err)
		}
		if got, err := ParseGPUFlags(GPUFlags(v).String()); err != nil || got != GPUFlags(v) {
			t.Errorf("GPUFlags %#x: %q parses as %#x, %v", v, GPUFlags(v), uint32(got), err)
		}
		if got, err := ParseRequiresFlags(RequiresFlags(v).String()); err != nil || got != RequiresFlags(v) {
			t.Errorf("RequiresFlags %#x: %q parses as %#x, %v", v, RequiresFlags(v), uint64(got), err)
		}
		if got, err := ParseIdentFlags(IdentFlags(v).String()); err != nil || got != IdentFlags(v) {
			t.Errorf("IdentFlags %#x: %q parses as %#x, %v", v, IdentFlags(v), uint32(got), err)
		}
	})
}

// FuzzDecodeEntry checks that decoding any bytes gives a value or an error,
// never a panic, and that every byte of an entry belongs to a field.
func FuzzDecodeEntry(f *testing.F) {
	for _, tt := range requiresEntryBytes {
		b, _ := hex.DecodeString(strings.ReplaceAll(tt.bytes, " ", ""))
		f.Add(b)
	}
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		checkAllocated(t, len(b), decodeFuzzPerByte, decodeFuzzFixed, func() {
			for _, bo := range entryByteOrders {
				for _, layout := range []EntryLayout{EntryLegacy, EntryV1} {
					e, err := layout.Decode(bo.order, b)
					if err != nil {
						if len(b) >= layout.Size() {
							t.Fatalf("%v: Decode(%d bytes): %v", layout, len(b), err)
						}
						continue
					}
					back, err := layout.Encode(bo.order, e)
					if err != nil || !bytes.Equal(back, b[:layout.Size()]) {
						t.Fatalf("%v %s: Encode(Decode(%x)) = %x, %v", layout, bo.name, b[:layout.Size()], back, err)
					}
					if _, err := layout.DecodeAll(bo.order, b); (err == nil) != (len(b)%layout.Size() == 0) {
						t.Fatalf("%v: DecodeAll(%d bytes): %v", layout, len(b), err)
					}
				}
			}
		})
	})
}

// openFixtureELF opens an object that a real LLVM release made, kept under
// testdata/llvm (see its README).
func openFixtureELF(t *testing.T, rel string) *elf.File {
	t.Helper()
	f, err := elf.Open(filepath.Join("testdata", "llvm", rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// elfReloc is a RELA relocation with its symbol named: a section symbol by
// its section's name.
type elfReloc struct {
	off    uint64
	typ    elf.R_X86_64
	sym    string
	addend int64
}

func elfRelocations(t *testing.T, f *elf.File, section string) []elfReloc {
	t.Helper()
	rs := f.Section(".rela" + section)
	if rs == nil {
		t.Fatalf("no .rela%s", section)
	}
	data, err := rs.Data()
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var out []elfReloc
	for len(data) >= 24 {
		var r elf.Rela64
		if err := binary.Read(bytes.NewReader(data[:24]), f.ByteOrder, &r); err != nil {
			t.Fatal(err)
		}
		data = data[24:]
		i := int(elf.R_SYM64(r.Info)) - 1 // Symbols omits the null symbol
		if i < 0 || i >= len(syms) {
			t.Fatalf("relocation at %#x: symbol %d out of range", r.Off, i+1)
		}
		name := syms[i].Name
		if elf.ST_TYPE(syms[i].Info) == elf.STT_SECTION && int(syms[i].Section) < len(f.Sections) {
			name = f.Sections[syms[i].Section].Name
		}
		out = append(out, elfReloc{r.Off, elf.R_X86_64(elf.R_TYPE64(r.Info)), name, r.Addend})
	}
	return out
}

func elfSectionData(t *testing.T, f *elf.File, name string) (*elf.Section, []byte) {
	t.Helper()
	s := f.Section(name)
	if s == nil {
		t.Fatalf("no section %s", name)
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// cString returns the NUL-terminated string at off of a section.
func elfCString(t *testing.T, f *elf.File, section string, off int64) string {
	t.Helper()
	_, b := elfSectionData(t, f, section)
	if off < 0 || off >= int64(len(b)) {
		t.Fatalf("%s+%#x: out of range", section, off)
	}
	s, _, _ := strings.Cut(string(b[off:]), "\x00")
	return s
}

// checkedEntry is what a test expects of one entry of a real object.
type checkedEntry struct {
	name  string
	size  uint64
	flags uint32
	data  uint64
}

// readEntriesSection decodes every entry of the entries section of f as release r
// writes it, checking the layout facts along the way, and resolves each name
// through the relocations.
func readEntriesSection(t *testing.T, f *elf.File, r *release.Release) []checkedEntry {
	t.Helper()
	secName := EntriesSection(r, OffloadOpenMP)
	sec, data := elfSectionData(t, f, secName)
	layout, ok := DetectEntryLayout(secName)
	if !ok || layout != LayoutOf(r) {
		t.Fatalf("DetectEntryLayout(%q) = %v, %v; want %v", secName, layout, ok, LayoutOf(r))
	}
	if sec.Addralign != r.Entries.Align {
		t.Errorf("%s: align %d, want %d", secName, sec.Addralign, r.Entries.Align)
	}
	raws, err := layout.DecodeAll(f.ByteOrder, data)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(raws))
	hasAddr := make([]bool, len(raws))
	size := uint64(layout.Size())
	for _, rel := range elfRelocations(t, f, secName) {
		if rel.typ != elf.R_X86_64_64 {
			t.Errorf("relocation at %#x: type %v, want R_X86_64_64", rel.off, rel.typ)
		}
		i, field := rel.off/size, int(rel.off%size)
		if i >= uint64(len(raws)) {
			t.Fatalf("relocation at %#x: past the %d entries", rel.off, len(raws))
		}
		switch field {
		case layout.AddrOffset():
			hasAddr[i] = true
		case layout.NameOffset():
			names[i] = elfCString(t, f, rel.sym, rel.addend)
		default:
			t.Errorf("relocation at %#x: field offset %d is neither addr (%d) nor name (%d)",
				rel.off, field, layout.AddrOffset(), layout.NameOffset())
		}
	}
	var out []checkedEntry
	for i, raw := range raws {
		if layout == EntryV1 && (raw.Reserved != 0 || raw.Version != EntryVersion || raw.Kind != 1) {
			t.Errorf("entry %d (%s): Reserved %d Version %d Kind %d, want 0, 1, 1 (OpenMP)",
				i, names[i], raw.Reserved, raw.Version, raw.Kind)
		}
		if raw.Addr != 0 || raw.Name != 0 || raw.Aux != 0 {
			t.Errorf("entry %d: pointers %+v, want 0 in a relocatable object", i, raw)
		}
		e := EntryFromRaw(r, layout, OffloadOpenMP, raw)
		if e.Kind != OffloadOpenMP {
			t.Errorf("entry %d: kind %v, want openmp", i, e.Kind)
		}
		// A requires entry has a null address; every other one a relocation.
		if requires := raw.Flags&uint32(OMPEntryRequires) != 0; hasAddr[i] == requires {
			t.Errorf("entry %d (%s): address relocation %v with flags %v", i, names[i], hasAddr[i], OpenMPFlags(raw.Flags))
		}
		out = append(out, checkedEntry{names[i], raw.Size, raw.Flags, raw.Data})
	}
	return out
}

// TestEntriesOfRealObjects decodes the entries sections of the host objects
// that clang 19 and 22 made from testdata/llvm/host-objects/t.c.
func TestEntriesOfRealObjects(t *testing.T) {
	for _, major := range []int{19, 22} {
		t.Run("llvm"+strconv.Itoa(major), func(t *testing.T) {
			f := openFixtureELF(t, filepath.Join("host-objects", "openmp-x86-llvm"+strconv.Itoa(major)+".o"))
			got := readEntriesSection(t, f, releaseRow(t, major))
			want := []checkedEntry{
				{"gvar", 4, 0, 0},
				{"lvar_decl_tgt_ref_ptr", 8, uint32(OMPEntryLink), 0},
				{"__omp_offloading_fe00_986021_foo_l10", 0, 0, 0},
			}
			if len(got) != len(want) {
				t.Fatalf("entries = %+v, want %+v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// requiresSource has one entry of each kind that needs a flag
// (docs/entries.md#what-gets-an-entry).
const requiresSource = `#pragma omp requires unified_shared_memory
int ifn(int x) { return x * 2; }
#pragma omp declare target indirect to(ifn)
int lvar[4];
#pragma omp declare target link(lvar)
int run(int n) {
  int r = 0;
#pragma omp target map(tofrom: r)
  { r = lvar[0] + n; }
  return r;
}
`

// freshObjectReleases are the releases whose clang CI installs (.ci/run).
var freshObjectReleases = []int{15, 16, 19, 22}

// compileStore holds what clang compiled for the package's tests, which
// the default run takes instead of compiling (tooltest.Store).
var compileStore = tooltest.Store{Dir: filepath.Join("testdata", "compiled")}

// TestStoredCompilesAreCurrent: every compile in the store was made of the
// sources as they are.
func TestStoredCompilesAreCurrent(t *testing.T) {
	compileStore.CheckCurrent(t)
}

// TestEntriesOfFreshObjects compiles requiresSource with the clang of each
// release and checks the requires and indirect entries against the release
// table's Requires and IndirectEntries.
func TestEntriesOfFreshObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("runs clang; skipped in -short mode")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "r.cpp")
	if err := os.WriteFile(src, []byte(requiresSource), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, major := range freshObjectReleases {
		t.Run("llvm"+strconv.Itoa(major), func(t *testing.T) {
			t.Parallel()
			r := releaseRow(t, major)
			clang := tooltest.Tool(t, "clang", major)
			obj := filepath.Join(dir, "r"+strconv.Itoa(major)+".o")
			err := compileStore.Compile(t, fmt.Sprintf("clang-%d", major), clang, dir, []string{"-O0", "-fopenmp", "-fopenmp-version=51",
				"-fopenmp-targets=x86_64-unknown-linux-gnu", "-c", filepath.Base(src), "-o", filepath.Base(obj)}, filepath.Base(obj))
			if err != nil {
				t.Fatal(err)
			}
			f, err := elf.Open(obj)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var requires, indirect []checkedEntry
			for _, e := range readEntriesSection(t, f, r) {
				if e.flags&uint32(OMPEntryRequires) != 0 {
					requires = append(requires, e)
				}
				if e.flags&uint32(OMPEntryIndirect) != 0 {
					indirect = append(indirect, e)
				}
			}
			checkRequiresEntry(t, r, requires)
			if r.Entries.Indirect {
				if len(indirect) != 1 || indirect[0].size != 8 || indirect[0].flags != uint32(OMPEntryIndirect) ||
					!strings.HasPrefix(indirect[0].name, "__omp_offloading_") || !strings.HasSuffix(indirect[0].name, "_ifn_l2") {
					t.Errorf("indirect entries = %+v, want one of size 8, flags 8, named __omp_offloading_*_ifn_l2", indirect)
				}
			} else if len(indirect) != 0 {
				t.Errorf("indirect entries = %+v, want none before LLVM 18", indirect)
			}
		})
	}
}

func checkRequiresEntry(t *testing.T, r *release.Release, got []checkedEntry) {
	t.Helper()
	if r.Entries.Requires == release.RequiresCtor {
		if len(got) != 0 {
			t.Errorf("requires entries = %+v, want none (a constructor)", got)
		}
		return
	}
	want := checkedEntry{r.Entries.RequiresName, 0, uint32(OMPEntryRequires), uint64(RequiresUnifiedSharedMemory)}
	if len(got) != 1 || got[0] != want {
		t.Errorf("requires entries = %+v, want [%+v]", got, want)
	}
}
