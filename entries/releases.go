package entries

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/goffload/goffload/offload"
)

// Releases is a set of LLVM releases of the release table, by major version
// (bit n is release n).
type Releases uint64

// AllReleases is the set of every release of the table.
func AllReleases() Releases {
	return releasesWhere(func(*offload.Release) bool { return true })
}

// releasesWhere returns the releases of the table whose row satisfies pred.
func releasesWhere(pred func(r *offload.Release) bool) Releases {
	var s Releases
	for _, r := range offload.Releases() {
		if r.Major < 64 && pred(r) {
			s |= 1 << r.Major
		}
	}
	return s
}

// releasesOf returns the set of rs.
func releasesOf(rs []*offload.Release) Releases {
	var s Releases
	for _, r := range rs {
		if r.Major < 64 {
			s |= 1 << r.Major
		}
	}
	return s
}

// Has reports whether release major is in s.
func (s Releases) Has(major int) bool { return major >= 0 && major < 64 && s&(1<<major) != 0 }

// Majors returns the releases of s, oldest first.
func (s Releases) Majors() []int {
	var out []int
	for n := range 64 {
		if s.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// String returns the releases as "LLVM 19-20", "LLVM 13-14, 19", or "no LLVM
// release" for the empty set. Releases that follow each other in the table
// make one range.
func (s Releases) String() string {
	ms := s.Majors()
	if len(ms) == 0 {
		return "no LLVM release"
	}
	var parts []string
	for i := 0; i < len(ms); {
		j := i
		for j+1 < len(ms) && ms[j+1] == ms[j]+1 {
			j++
		}
		p := strconv.Itoa(ms[i])
		if j > i {
			p += "-" + strconv.Itoa(ms[j])
		}
		parts = append(parts, p)
		i = j + 1
	}
	return "LLVM " + strings.Join(parts, ", ")
}

// MarshalJSON writes the set as a list of major versions.
func (s Releases) MarshalJSON() ([]byte, error) {
	ms := s.Majors()
	if ms == nil {
		ms = []int{}
	}
	return json.Marshal(ms)
}
