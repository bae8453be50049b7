package offload

import (
	"testing"

	"github.com/goffload/goffload/release"
)

func TestReleaseTable(t *testing.T) {
	rs := release.All()
	if len(rs) != 12 || rs[0].Major != 13 || rs[11].Major != 24 {
		t.Fatalf("table holds %d rows", len(rs))
	}
	for i, r := range rs {
		if r.Major != 13+i {
			t.Errorf("row %d is LLVM %d", i, r.Major)
		}
		if r.Inferred != (r.Major == 20 || r.Major == 23 || r.Major == 24) || (r.Tested == "") != r.Inferred {
			t.Errorf("%v: Inferred %v, Tested %q", r, r.Inferred, r.Tested)
		}
		if r.Entries.Size != map[EntryLayout]int{EntryLegacy: 32, EntryV1: 56}[LayoutOf(r)] {
			t.Errorf("%v: entry size %d", r, r.Entries.Size)
		}
		// The old driver (13, 14): no OffloadBinary, clang-offload-wrapper,
		// entries for OpenMP only (CUDA and HIP register from host code).
		old := r.Major < 15
		if (r.BinaryVersion == 0) != old || (r.Wrapper.Form == release.WrapperOffloadWrapper) != old || (!old && r.Major <= 22 && r.BinaryVersion != 1) || (r.Major == 23 && r.BinaryVersion != 2) || (r.Major == 24 && r.BinaryVersion != 3) {
			t.Errorf("%v: BinaryVersion %d, Wrapper %v", r, r.BinaryVersion, r.Wrapper.Form)
		}
		if r.Wrapper.Static != (r.Major == 13) {
			t.Errorf("%v: WrapperStatic %v", r, r.Wrapper.Static)
		}
		for _, k := range []OffloadKind{OffloadOpenMP, OffloadCUDA, OffloadHIP} {
			if none := EntriesSection(r, k) == ""; none != (old && k != OffloadOpenMP) {
				t.Errorf("%v: entries section for %v: %q", r, k, EntriesSection(r, k))
			}
		}
	}
	if release.Default().Major != release.DefaultMajor || release.DefaultMajor != 22 {
		t.Errorf("default is %v", release.Default())
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
		start, end             release.ImageBound
		requires               release.RequiresEncoding
		relocatable            bool
		argsOrder, stringOrder release.MapOrder
		layout                 EntryLayout
	}{
		{13, 3, "omp_offloading_entries", ".omp_offloading.entry.", "__dummy.omp_offloading.entry", 1, false, release.BoundBinaryStart, release.BoundBinaryEnd, release.RequiresCtor, false, release.OrderInsertion, release.OrderInsertion, EntryLegacy},
		{14, 3, "omp_offloading_entries", ".omp_offloading.entry.", "__dummy.omp_offloading.entry", 1, false, release.BoundBinaryStart, release.BoundBinaryEnd, release.RequiresCtor, false, release.OrderInsertion, release.OrderInsertion, EntryLegacy},
		{15, 3, "omp_offloading_entries", ".omp_offloading.entry.", "__dummy.omp_offloading.entry", 1, false, release.BoundBinaryStart, release.BoundBinaryEnd, release.RequiresCtor, false, release.OrderStringMap, release.OrderStringMap, EntryLegacy},
		{16, 3, "omp_offloading_entries", ".omp_offloading.entry.", "__dummy.omp_offloading.entry", 1, false, release.BoundBinaryStart, release.BoundBinaryEnd, release.RequiresCtor, false, release.OrderDenseMap, release.OrderStringMap, EntryLegacy},
		{18, 3, "omp_offloading_entries", ".omp_offloading.entry.", "__dummy.omp_offloading_entries", 1, false, release.BoundImageStart, release.BoundBinaryEnd, release.RequiresCtor, false, release.OrderDenseMap, release.OrderInsertion, EntryLegacy},
		{19, 3, "omp_offloading_entries", ".offloading.entry.", "__dummy.omp_offloading_entries", 101, true, release.BoundImageStart, release.BoundImageEnd, release.RequiresEntryReserved, true, release.OrderDenseMap, release.OrderInsertion, EntryLegacy},
		{22, 4, "llvm_offload_entries", ".offloading.entry.", "__dummy.llvm_offload_entries", 101, true, release.BoundImageStart, release.BoundImageEnd, release.RequiresEntryData, true, release.OrderDenseMap, release.OrderInsertion, EntryV1},
	} {
		r := mustRelease(t, c.major)
		got := []any{r.Kinds.HIP, EntriesSection(r, OffloadOpenMP), r.Entries.SymbolPrefix, DummySymbol(r, OffloadOpenMP), r.Wrapper.CtorPriority,
			r.Wrapper.UnregisterAtexit, r.Wrapper.ImageStart, r.Wrapper.ImageEnd, r.Entries.Requires, r.Wrapper.RelocatableSection != "", r.Packager.Args, r.Packager.Strings, LayoutOf(r)}
		want := []any{c.hip, c.section, c.prefix, c.dummy, c.prio, c.atexit, c.start, c.end, c.requires, c.relocatable, c.argsOrder, c.stringOrder, c.layout}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("LLVM %d: fact %d is %v, want %v", c.major, i, got[i], want[i])
			}
		}
	}
	if got := DummySymbol(mustRelease(t, 16), OffloadHIP); got != "__dummy.hip_offloading.entry" {
		t.Errorf("16 HIP dummy %q", got)
	}
}

func TestEnumNames(t *testing.T) {
	for _, c := range []struct {
		v    interface{ String() string }
		want string
	}{
		{EntryLegacy, "legacy"}, {EntryV1, "v1"}, {EntryLayout(7), "EntryLayout(7)"},
		{release.OrderDenseMap, "DenseMap(hash_value)"}, {release.RequiresEntryData, "entry-data"},
		{release.BoundImageEnd, "image-end"}, {release.DummyLocalUsed, "local-used"}, {release.MapOrder(9), "MapOrder(9)"},
		{release.WrapperOffloadWrapper, "clang-offload-wrapper"}, {release.WrapperLinkerWrapper, "clang-linker-wrapper"}, {release.WrapperForm(2), "WrapperForm(2)"},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.v, got, c.want)
		}
	}
}

func mustRelease(t testing.TB, major int) *release.Release {
	t.Helper()
	r, err := release.Lookup(major)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
