package ar

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/goffload/goffload"
)

// shortReaderAt holds fewer bytes than the size its caller is given.
type shortReaderAt struct{ b []byte }

func (r shortReaderAt) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(r.b).ReadAt(p, off)
}

// wantArFormatError fails t unless err holds an "ar" *goffload.FormatError
// at off matching goffload.ErrInvalid and is, and no sentinel of another
// kind.
func wantArFormatError(t *testing.T, err error, off int64, is error) {
	t.Helper()
	var fe *goffload.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) holds no *goffload.FormatError", err, err)
	}
	t.Log(err)
	if fe.Format != "ar" || fe.Offset != off {
		t.Errorf("%v: Format %q at %#x, want \"ar\" at %#x", err, fe.Format, fe.Offset, off)
	}
	if !errors.Is(err, goffload.ErrInvalid) || !errors.Is(err, is) {
		t.Errorf("%v does not match goffload.ErrInvalid and %v", err, is)
	}
	for _, other := range []error{goffload.ErrTruncated, goffload.ErrUnsupported, goffload.ErrLimit} {
		if other != is && errors.Is(err, other) {
			t.Errorf("%v matches %v too", err, other)
		}
	}
}

func TestMalformedArchiveGivesFormatErrorOfItsKind(t *testing.T) {
	ok := member("a.o/", "AAAA")
	whole := build(Magic, ok)
	for _, c := range []struct {
		name string
		in   []byte
		r    io.ReaderAt // nil: in
		off  int64
		is   error
	}{
		{"bad magic", []byte("!<arck>\nxxxx"), nil, 0, goffload.ErrInvalid},
		{"few bytes that are no magic", []byte("MZ"), nil, 0, goffload.ErrInvalid},
		{"magic cut short is truncated", []byte("!<ar"), nil, 0, goffload.ErrTruncated},
		{"AIX big archive is unsupported", []byte("<bigaf>\n"), nil, 0, goffload.ErrUnsupported},
		{"member header cut short is truncated", build(Magic, hdr("a.o/", 0)[:30]), nil, 8, goffload.ErrTruncated},
		{"member size past the end is truncated at the size field", build(Magic, hdr("a.o/", 100)+"short"), nil, 8 + 48, goffload.ErrTruncated},
		{"bad member header terminator", build(Magic, strings.Replace(ok, "`\n", "`x", 1)), nil, 8 + 58, goffload.ErrInvalid},
		{"reader shorter than its size is truncated", whole, shortReaderAt{whole[:20]}, 20, goffload.ErrTruncated},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := c.r
			if r == nil {
				r = bytes.NewReader(c.in)
			}
			_, err := Open(r, int64(len(c.in)))
			wantArFormatError(t, err, c.off, c.is)
		})
	}
}

func TestMalformedSymbolIndexGivesFormatError(t *testing.T) {
	a := openBytes(t, build(Magic, member("/", sysvIndex(4, []uint64{8}, "f")), member("a.o/", "AAAA")))
	_, err := a.Symbols()
	wantArFormatError(t, err, 8, goffload.ErrInvalid) // the index's header: offset 8 is no member's
}

// TestThinMemberIntoAThinArchiveIsAFormatError: a thin member that refers to
// a member of an archive that is itself thin is malformed, reported at the
// member's header in the archive the caller opened.
func TestThinMemberIntoAThinArchiveIsAFormatError(t *testing.T) {
	thin := build(ThinMagic, member("//", "inner.a/\n"), hdr("/0:8", 4))
	a := openBytes(t, thin)
	inner := build(ThinMagic, hdr("x.o/", 4))
	m := a.Members()[0]
	_, err := a.OpenThin(m, func(string) (io.ReaderAt, int64, error) {
		return bytes.NewReader(inner), int64(len(inner)), nil
	})
	wantArFormatError(t, err, m.Offset, goffload.ErrInvalid)
}

func TestNotAMemberAndThinMembersAreNoFormatErrors(t *testing.T) {
	a := openBytes(t, build(ThinMagic, hdr("x.o/", 4)))
	var fe *goffload.FormatError
	if _, err := a.Open(a.Members()[0]); !errors.Is(err, ErrThin) || errors.As(err, &fe) {
		t.Errorf("Open of a thin member: %v, want ErrThin and no FormatError", err)
	}
	if _, err := a.Open(Member{Name: "y.o", Offset: 1}); !errors.Is(err, ErrNotMember) || errors.As(err, &fe) {
		t.Errorf("Open of another archive's member: %v, want ErrNotMember and no FormatError", err)
	}
}

func TestArgumentErrorsAreFsErrInvalid(t *testing.T) {
	for _, c := range []struct {
		name string
		r    io.ReaderAt
		size int64
	}{{"nil reader", nil, 8}, {"negative size", bytes.NewReader(nil), -1}} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(c.r, c.size)
			var fe *goffload.FormatError
			if !errors.Is(err, fs.ErrInvalid) || errors.As(err, &fe) || errors.Is(err, goffload.ErrInvalid) {
				t.Errorf("%v: want an fs.ErrInvalid argument error, no FormatError", err)
			}
		})
	}
}
