package offload

import (
	"fmt"
	"testing"

	"github.com/goffload/goffload/internal/facts"
)

// TestRuntimeFacts pins what each release's libomptarget reads, as measured
// with libomptarget 14, 15, 16, 19 and 22 (docs/releases.md#runtimes).
func TestRuntimeFacts(t *testing.T) {
	for _, c := range []struct {
		major    int
		v1       bool // reads 56-byte entries
		legacy   bool // reads 32-byte entries
		requires []facts.RequiresEncoding
	}{
		{14, false, true, []facts.RequiresEncoding{facts.RequiresCtor}},
		{16, false, true, []facts.RequiresEncoding{facts.RequiresCtor}},
		{18, false, true, []facts.RequiresEncoding{facts.RequiresCtor}},
		{19, false, true, []facts.RequiresEncoding{facts.RequiresEntryReserved}},
		{22, true, true, []facts.RequiresEncoding{facts.RequiresEntryReserved, facts.RequiresEntryData}},
	} {
		r, err := LookupRelease(c.major)
		if err != nil {
			t.Fatal(err)
		}
		if r.RuntimeReadsEntries(EntryV1) != c.v1 || r.RuntimeReadsEntries(EntryLegacy) != c.legacy {
			t.Errorf("%v: reads v1 %v, legacy %v", r, r.RuntimeReadsEntries(EntryV1), r.RuntimeReadsEntries(EntryLegacy))
		}
		for e := facts.RequiresCtor; e <= facts.RequiresEntryData; e++ {
			want := false
			for _, w := range c.requires {
				want = want || w == e
			}
			if r.facts().ReadsRequires(e) != want {
				t.Errorf("%v: reads requires %v: %v", r, e, !want)
			}
		}
	}
}

func TestRuntimeReleases(t *testing.T) {
	for name, want := range map[string]string{
		"libomptarget.so":        "[LLVM 13 LLVM 14]",
		"libomptarget.so.15":     "[LLVM 15]",
		"libomptarget.so.19.1":   "[LLVM 19]",
		"libomptarget.so.22.1":   "[LLVM 22]",
		"libomptarget.so.21.1.3": "[LLVM 21]",
		"libomptarget.so.12":     "[]",
		"libomptarget.so.019":    "[]",
		"libomptarget.so.x":      "[]",
		"libomp.so.5":            "[]",
		"libomptarget.so.18":     "[LLVM 18]",
	} {
		if got := fmt.Sprint(RuntimeReleases(name)); got != want {
			t.Errorf("RuntimeReleases(%q) = %s, want %s", name, got, want)
		}
	}
}
