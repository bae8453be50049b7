package release

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
)

// Set is a set of LLVM releases of the release table, by major
// version (bit n is release n): the releases that made a file, or that can
// link and run it.
type Set uint64

// Known returns the set of every release of the table.
func Known() Set {
	return Where(func(*Release) bool { return true })
}

// Where returns the set of the releases of the table whose row
// satisfies pred.
func Where(pred func(r *Release) bool) Set {
	var s Set
	for i := range releases {
		r := &releases[i]
		if r.Major < 64 && pred(r) {
			s |= 1 << r.Major
		}
	}
	return s
}

// SetOf returns the set of rs.
func SetOf(rs ...*Release) Set {
	var s Set
	for _, r := range rs {
		if r.Major < 64 {
			s |= 1 << r.Major
		}
	}
	return s
}

// Has reports whether release major is in s.
func (s Set) Has(major int) bool { return major >= 0 && major < 64 && s&(1<<major) != 0 }

// Majors returns the releases of s, oldest first.
func (s Set) Majors() []int {
	var out []int
	for n := range 64 {
		if s.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// Rows returns the rows of the releases of s, oldest first.
func (s Set) Rows() []*Release {
	var out []*Release
	for i := range releases {
		if s.Has(releases[i].Major) {
			out = append(out, row(i))
		}
	}
	return out
}

// String returns the releases as "LLVM 19-20", "LLVM 13-14, 19", or "no LLVM
// release" for the empty set. Releases that follow each other in the table
// make one range.
func (s Set) String() string {
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
func (s Set) MarshalJSON() ([]byte, error) {
	ms := s.Majors()
	if ms == nil {
		ms = []int{}
	}
	return json.Marshal(ms)
}

// UnmarshalJSON reads a list of major versions, as MarshalJSON writes it.
func (s *Set) UnmarshalJSON(b []byte) error {
	var ms []int
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*s = 0
	for _, m := range ms {
		if m < 0 || m >= 64 {
			return fmt.Errorf("release %d: %w", m, goffload.ErrUnknownRelease)
		}
		*s |= 1 << m
	}
	return nil
}
