package offload

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/facts"
)

func TestReleaseTable(t *testing.T) {
	rs := Releases()
	if len(rs) != 12 || rs[0].Major != 13 || rs[11].Major != 24 {
		t.Fatalf("table holds %d rows", len(rs))
	}
	for i, r := range rs {
		if r.Major != 13+i {
			t.Errorf("row %d is LLVM %d", i, r.Major)
		}
		if r.Inferred != (r.Major == 20 || r.Major == 23 || r.Major == 24) || (r.facts().Tested == "") != r.Inferred {
			t.Errorf("%v: Inferred %v, Tested %q", r, r.Inferred, r.facts().Tested)
		}
		if r.EntrySize() != map[EntryLayout]int{EntryLegacy: 32, EntryV1: 56}[r.EntryLayout] {
			t.Errorf("%v: entry size %d", r, r.EntrySize())
		}
		// The old driver (13, 14): no OffloadBinary, clang-offload-wrapper,
		// entries for OpenMP only (CUDA and HIP register from host code).
		old := r.Major < 15
		if (r.BinaryVersion == 0) != old || (r.facts().Wrapper.Form == facts.WrapperOffloadWrapper) != old || (!old && r.Major <= 22 && r.BinaryVersion != Version) || (r.Major == 23 && r.BinaryVersion != 2) || (r.Major == 24 && r.BinaryVersion != 3) {
			t.Errorf("%v: BinaryVersion %d, Wrapper %v", r, r.BinaryVersion, r.facts().Wrapper.Form)
		}
		if r.facts().Wrapper.Static != (r.Major == 13) {
			t.Errorf("%v: WrapperStatic %v", r, r.facts().Wrapper.Static)
		}
		for _, k := range []OffloadKind{OffloadOpenMP, OffloadCUDA, OffloadHIP} {
			if none := r.EntriesSection(k) == ""; none != (old && k != OffloadOpenMP) {
				t.Errorf("%v: entries section for %v: %q", r, k, r.EntriesSection(k))
			}
		}
	}
	if Default().Major != DefaultRelease || DefaultRelease != 22 {
		t.Errorf("default is %v", Default())
	}
}

// TestReleaseFacts pins facts of the release table
// (docs/releases.md#release-table).
func TestReleaseFacts(t *testing.T) {
	for _, c := range []struct {
		major                  int
		hip                    uint16
		section, prefix, dummy string
		prio                   int
		atexit                 bool
		start, end             facts.ImageBound
		requires               facts.RequiresEncoding
		relocatable            bool
		argsOrder, stringOrder facts.MapOrder
		layout                 EntryLayout
	}{
		{13, 3, "omp_offloading_entries", ".omp_offloading.entry.", "__dummy.omp_offloading.entry", 1, false, facts.BoundBinaryStart, facts.BoundBinaryEnd, facts.RequiresCtor, false, facts.OrderInsertion, facts.OrderInsertion, EntryLegacy},
		{14, 3, "omp_offloading_entries", ".omp_offloading.entry.", "__dummy.omp_offloading.entry", 1, false, facts.BoundBinaryStart, facts.BoundBinaryEnd, facts.RequiresCtor, false, facts.OrderInsertion, facts.OrderInsertion, EntryLegacy},
		{15, 3, "omp_offloading_entries", ".omp_offloading.entry.", "__dummy.omp_offloading.entry", 1, false, facts.BoundBinaryStart, facts.BoundBinaryEnd, facts.RequiresCtor, false, facts.OrderStringMap, facts.OrderStringMap, EntryLegacy},
		{16, 3, "omp_offloading_entries", ".omp_offloading.entry.", "__dummy.omp_offloading.entry", 1, false, facts.BoundBinaryStart, facts.BoundBinaryEnd, facts.RequiresCtor, false, facts.OrderDenseMap, facts.OrderStringMap, EntryLegacy},
		{18, 3, "omp_offloading_entries", ".omp_offloading.entry.", "__dummy.omp_offloading_entries", 1, false, facts.BoundImageStart, facts.BoundBinaryEnd, facts.RequiresCtor, false, facts.OrderDenseMap, facts.OrderInsertion, EntryLegacy},
		{19, 3, "omp_offloading_entries", ".offloading.entry.", "__dummy.omp_offloading_entries", 101, true, facts.BoundImageStart, facts.BoundImageEnd, facts.RequiresEntryReserved, true, facts.OrderDenseMap, facts.OrderInsertion, EntryLegacy},
		{22, 4, "llvm_offload_entries", ".offloading.entry.", "__dummy.llvm_offload_entries", 101, true, facts.BoundImageStart, facts.BoundImageEnd, facts.RequiresEntryData, true, facts.OrderDenseMap, facts.OrderInsertion, EntryV1},
	} {
		r := mustRelease(t, c.major)
		got := []any{r.facts().Kinds.HIP, r.EntriesSection(OffloadOpenMP), r.facts().Entries.SymbolPrefix, r.DummySymbol(OffloadOpenMP), r.facts().Wrapper.CtorPriority,
			r.facts().Wrapper.UnregisterAtexit, r.facts().Wrapper.ImageStart, r.facts().Wrapper.ImageEnd, r.facts().Entries.Requires, r.facts().Wrapper.RelocatableSection != "", r.facts().Packager.Args, r.facts().Packager.Strings, r.EntryLayout}
		want := []any{c.hip, c.section, c.prefix, c.dummy, c.prio, c.atexit, c.start, c.end, c.requires, c.relocatable, c.argsOrder, c.stringOrder, c.layout}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("LLVM %d: fact %d is %v, want %v", c.major, i, got[i], want[i])
			}
		}
	}
	if got := mustRelease(t, 16).DummySymbol(OffloadHIP); got != "__dummy.hip_offloading.entry" {
		t.Errorf("16 HIP dummy %q", got)
	}
}

func TestParseRelease(t *testing.T) {
	for in, want := range map[string]int{"14": 14, "13.0.1": 13, "19": 19, "llvm19": 19, "LLVM 22": 22, "19.1.7": 19, "23.1.0": 23, "24": 24, " 15 ": 15, "llvm-16": 16} {
		r, err := ParseRelease(in)
		if err != nil || r.Major != want {
			t.Errorf("ParseRelease(%q) = %v, %v; want %d", in, r, err, want)
		}
	}
	for _, in := range []string{"12", "25", "", "x", "1e9"} {
		if _, err := ParseRelease(in); !errors.Is(err, goffload.ErrUnknownRelease) {
			t.Errorf("ParseRelease(%q): %v, want goffload.ErrUnknownRelease", in, err)
		}
	}
}

func TestEnumNames(t *testing.T) {
	for _, c := range []struct {
		v    interface{ String() string }
		want string
	}{
		{EntryLegacy, "legacy"}, {EntryV1, "v1"}, {EntryLayout(7), "EntryLayout(7)"},
		{facts.OrderDenseMap, "DenseMap(hash_value)"}, {facts.RequiresEntryData, "entry-data"},
		{facts.BoundImageEnd, "image-end"}, {facts.DummyLocalUsed, "local-used"}, {facts.MapOrder(9), "MapOrder(9)"},
		{facts.WrapperOffloadWrapper, "clang-offload-wrapper"}, {facts.WrapperLinkerWrapper, "clang-linker-wrapper"}, {facts.WrapperForm(2), "WrapperForm(2)"},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.v, got, c.want)
		}
	}
}

// TestReleaseRowsAreTheCallers: a caller that changes every field of a row it
// was given (slice elements too) changes nothing for the next caller.
func TestReleaseRowsAreTheCallers(t *testing.T) {
	for _, c := range []struct {
		name string
		get  func() *Release
	}{
		{"LookupRelease", func() *Release { r, _ := LookupRelease(19); return r }},
		{"ParseRelease", func() *Release { r, _ := ParseRelease("llvm 19"); return r }},
		{"Releases", func() *Release { return Releases()[6] }}, // 19
		{"Default", Default},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := fmt.Sprintf("%#v", *c.get())
			scribble(t, reflect.ValueOf(c.get()).Elem())
			if after := fmt.Sprintf("%#v", *c.get()); after != before {
				t.Errorf("a caller changed the table:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// scribble changes every field of v, recursing into structs and slices.
func scribble(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() { // the facts users do not see are the table's, read-only
				scribble(t, v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(t, v.Index(i))
		}
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 7)
	default:
		t.Fatalf("scribble: a field of kind %v", v.Kind())
	}
}

// TestOldDriverReleasesRefuseOffloadBinaries: LLVM 13 and 14 have no
// OffloadBinary and no clang-offload-packager, so writing one for them, or
// packaging, is refused rather than done as 15 would.
func TestOldDriverReleasesRefuseOffloadBinaries(t *testing.T) {
	for _, major := range []int{13, 14} {
		r := mustRelease(t, major)
		im := Image{Kind: ImageObject, OffloadKind: OffloadOpenMP, Strings: []KeyValue{{"triple", "x86_64-pc-linux-gnu"}}}
		if b, err := MarshalBinary(r, &im, []byte("image")); b != nil || !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("MarshalBinary(%v): %d bytes, %v; want goffload.ErrUnsupported", r, len(b), err)
		}
		if _, _, err := BinaryReader(r, &im, nil, 0); !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("BinaryReader(%v): %v; want goffload.ErrUnsupported", r, err)
		}
		if _, err := r.ParseImageArg("file=a.o,triple=x86_64-pc-linux-gnu"); !errors.Is(err, goffload.ErrUnsupported) || errors.Is(err, ErrPackagerArgs) {
			t.Errorf("%v ParseImageArg: %v; want goffload.ErrUnsupported", r, err)
		}
		for _, args := range [][]string{nil, {"file=a.o,triple=x86_64-pc-linux-gnu"}} {
			n, err := r.Package(io.Discard, args, func(string) (io.Reader, int64, error) { t.Fatal("opened a file"); return nil, 0, nil })
			if n != 0 || !errors.Is(err, goffload.ErrUnsupported) || !strings.Contains(err.Error(), "clang-offload-packager") {
				t.Errorf("%v Package(%q): %d, %v; want goffload.ErrUnsupported naming the packager", r, args, n, err)
			}
		}
	}
}

// TestAMDGPUTriple: the triples of LLVM main after 23 for AMDGPU processors
// (clang's test Driver/amdgpu-mcpu.cl), and amdgcn-amd-amdhsa before (23's
// driver too: llvm-project #206482 came after its branch).
func TestAMDGPUTriple(t *testing.T) {
	r24, r23, r22 := mustRelease(t, 24), mustRelease(t, 23), mustRelease(t, 22)
	for id, want := range map[string]string{
		"gfx90a": "amdgpu9.0a", "gfx90a:xnack+": "amdgpu9.0a", "gfx900": "amdgpu9.00", "gfx942": "amdgpu9.42",
		"gfx705": "amdgpu7.05", "gfx1030": "amdgpu10.30", "gfx1201": "amdgpu12.01", "gfx1310": "amdgpu13.10",
		"gfx9-generic": "amdgpu9", "gfx10-3-generic": "amdgpu10.3", "gfx12-5-generic": "amdgpu12.5",
		"": "amdgpu", "sm_70": "amdgpu", "gfx9": "amdgpu", "gfxzz1": "amdgpu", "gfx1x-generic": "amdgpu",
	} {
		if got := r24.AMDGPUTriple(id); got != want+"-amd-amdhsa" {
			t.Errorf("24: AMDGPUTriple(%q) = %q, want %q", id, got, want+"-amd-amdhsa")
		}
		for _, r := range []*Release{r22, r23} {
			if got := r.AMDGPUTriple(id); got != "amdgcn-amd-amdhsa" {
				t.Errorf("%v: AMDGPUTriple(%q) = %q", r, id, got)
			}
		}
	}
	// SHF_GNU_RETAIN came with llvm-project #212614, after the 23 branch.
	if r22.EntriesFlags() != 0 || r23.EntriesFlags() != 0 || r24.EntriesFlags() != 0x200000 {
		t.Errorf("EntriesFlags: 22 %#x, 23 %#x, 24 %#x", r22.EntriesFlags(), r23.EntriesFlags(), r24.EntriesFlags())
	}
}
