package ar

import (
	"fmt"
	"io"

	"github.com/goffload/goffload"
)

// Opener opens the file of a thin archive's member. name is the member's
// Name as the archive stores it: a path relative to the archive's folder, or
// absolute ([Member.Path] joins it). It returns the file's contents and size.
// The opener owns what it opens: OpenThin never closes it, so an opener of
// files keeps them to close when the caller is done with the sections.
type Opener func(name string) (r io.ReaderAt, size int64, err error)

// OpenThin returns the data of m, which must be one of the values Members
// returned. A stored member is read in place as by Open, without calling
// open, so callers may use OpenThin for every member. A thin member's data
// is read through open: the whole file, or for a member with a NestedOffset
// that member of the regular archive in the file. A file whose size is not
// the one the archive records gives ErrStale.
func (a *Archive) OpenThin(m Member, open Opener) (*io.SectionReader, error) {
	if err := a.lookup(m); err != nil {
		return nil, err
	}
	if !m.Thin {
		return a.Open(m)
	}
	r, size, err := open(m.Name)
	if err != nil {
		return nil, fmt.Errorf("ar: thin member %q: %w", m.Name, err)
	}
	if m.NestedOffset != 0 {
		return openNested(m, r, size)
	}
	if size != m.Size {
		return nil, fmt.Errorf("ar: thin member %q is %d bytes, the archive records %d: %w", m.Name, size, m.Size, ErrStale)
	}
	return io.NewSectionReader(r, 0, size), nil
}

// openNested opens the member at m.NestedOffset of the regular archive r,
// which GNU ar refers to as "/<name>:<offset>".
func openNested(m Member, r io.ReaderAt, size int64) (*io.SectionReader, error) {
	inner, err := Open(r, size)
	if err != nil {
		return nil, fmt.Errorf("ar: thin member %q: %w", m.Name, err)
	}
	if inner.kind == Thin {
		return nil, formatErr(m.Offset, goffload.ErrInvalid, "member %q refers into a thin archive", m.Name)
	}
	i, ok := inner.member(m.NestedOffset)
	if !ok {
		return nil, fmt.Errorf("ar: thin member %q: no member header at byte %#x: %w", m.Name, m.NestedOffset, ErrStale)
	}
	im := inner.members[i]
	if im.Size != m.Size {
		return nil, fmt.Errorf("ar: thin member %q: member %q at byte %#x is %d bytes, the archive records %d: %w", m.Name, im.Name, im.Offset, im.Size, m.Size, ErrStale)
	}
	return inner.Open(im)
}
