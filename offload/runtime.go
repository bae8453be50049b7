package offload

import (
	"strconv"
	"strings"
)

// RuntimeReadsEntries reports whether the release's libomptarget reads
// offload entries of layout l: its own layout, and the 32-byte one where
// RuntimeReadsLegacyEntries.
func (r *Release) RuntimeReadsEntries(l EntryLayout) bool {
	return l == r.EntryLayout || (l == EntryLegacy && r.facts().Runtime.ReadsLegacyEntries)
}

// RuntimeReleases returns the releases whose libomptarget a file needing the
// shared object name (a DT_NEEDED entry) runs on: those whose RuntimeLibrary
// is name ("libomptarget.so" gives 13 and 14), else the release whose major
// version follows "libomptarget.so." ("libomptarget.so.21.1.3" gives 21). It
// returns nil for another library or a release the table does not hold.
func RuntimeReleases(name string) []*Release {
	var out []*Release
	for i := range releases {
		if releases[i].RuntimeLibrary == name {
			out = append(out, row(i))
		}
	}
	if out != nil {
		return out
	}
	v, ok := strings.CutPrefix(name, "libomptarget.so.")
	if !ok {
		return nil
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil || strconv.Itoa(n) != major {
		return nil
	}
	if r, err := LookupRelease(n); err == nil {
		return []*Release{r}
	}
	return nil
}
