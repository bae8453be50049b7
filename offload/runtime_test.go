package offload

import (
	"testing"

	"github.com/goffload/goffload/release"
)

// TestRuntimeFacts pins what each release's libomptarget reads, as measured
// with libomptarget 14, 15, 16, 19 and 22 (docs/releases.md#runtimes).
func TestRuntimeFacts(t *testing.T) {
	for _, c := range []struct {
		major    int
		v1       bool // reads 56-byte entries
		legacy   bool // reads 32-byte entries
		requires []release.RequiresEncoding
	}{
		{14, false, true, []release.RequiresEncoding{release.RequiresCtor}},
		{16, false, true, []release.RequiresEncoding{release.RequiresCtor}},
		{18, false, true, []release.RequiresEncoding{release.RequiresCtor}},
		{19, false, true, []release.RequiresEncoding{release.RequiresEntryReserved}},
		{22, true, true, []release.RequiresEncoding{release.RequiresEntryReserved, release.RequiresEntryData}},
	} {
		r, err := release.Lookup(c.major)
		if err != nil {
			t.Fatal(err)
		}
		if RuntimeReadsEntries(r, EntryV1) != c.v1 || RuntimeReadsEntries(r, EntryLegacy) != c.legacy {
			t.Errorf("%v: reads v1 %v, legacy %v", r, RuntimeReadsEntries(r, EntryV1), RuntimeReadsEntries(r, EntryLegacy))
		}
		for e := release.RequiresCtor; e <= release.RequiresEntryData; e++ {
			want := false
			for _, w := range c.requires {
				want = want || w == e
			}
			if r.ReadsRequires(e) != want {
				t.Errorf("%v: reads requires %v: %v", r, e, !want)
			}
		}
	}
}
