package offload

import (
	"strings"

	"github.com/goffload/goffload/release"
)

// table is the package's own copy of the release table's rows, read and
// never changed, nor handed out.
var table = release.All()

// LayoutOf returns the entry layout release r writes: EntryLegacy (32
// bytes) up to LLVM 20, EntryV1 (56 bytes) from 21 ([release.Entries.Size]).
func LayoutOf(r *release.Release) EntryLayout {
	if r.Entries.Size == EntryV1.Size() {
		return EntryV1
	}
	return EntryLegacy
}

// EntriesSection returns release r's entries section for offload kind k, or
// "" if k has none.
func EntriesSection(r *release.Release, k OffloadKind) string {
	switch k {
	case OffloadOpenMP:
		return r.Entries.OpenMP
	case OffloadCUDA:
		return r.Entries.CUDA
	case OffloadHIP:
		return r.Entries.HIP
	}
	return ""
}

// DummySymbol returns the name of release r's wrapper's dummy object for
// offload kind k.
func DummySymbol(r *release.Release, k OffloadKind) string {
	if r.Wrapper.LegacyDummyName {
		return "__dummy." + strings.TrimSuffix(EntriesSection(r, k), "_entries") + ".entry"
	}
	return "__dummy." + EntriesSection(r, k)
}

// RuntimeReadsEntries reports whether release r's libomptarget reads
// offload entries of layout l: its own layout, and the 32-byte one where
// it reads legacy entries ([release.Runtime.ReadsLegacyEntries]).
func RuntimeReadsEntries(r *release.Release, l EntryLayout) bool {
	return l == LayoutOf(r) || (l == EntryLegacy && r.Runtime.ReadsLegacyEntries)
}
