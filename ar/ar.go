package ar

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/goffload/goffload"
)

// Magic numbers: the first 8 bytes of an archive.
const (
	Magic     = "!<arch>\n" // GNU, SysV, BSD and COFF archives
	ThinMagic = "!<thin>\n" // GNU thin archives
)

// bigMagic starts AIX big archives, which are not supported.
const bigMagic = "<bigaf>\n"

// HeaderSize is the size of a member header: name[16] date[12] uid[6] gid[6]
// mode[8] size[10] fmag[2], all ASCII, numbers decimal (mode octal) padded
// with spaces on the right, fmag "`\n". Member data is padded to an even
// offset.
const HeaderSize = 60

// fmag ends every member header.
const fmag = "`\n"

// IsArchive reports whether head, the first bytes of a file, starts with the
// magic of an archive this package reads (regular or thin). Callers use it to
// recurse into a member that is itself an archive.
func IsArchive(head []byte) bool {
	return len(head) >= len(Magic) && (string(head[:len(Magic)]) == Magic || string(head[:len(ThinMagic)]) == ThinMagic)
}

// Kind is the layout of an archive.
type Kind int

const (
	// GNU names end with '/' and long names are in the "//" member (also
	// SysV and COFF archives, and archives with no members).
	GNU Kind = iota + 1
	// BSD names are space-padded or "#1/<length>" with the name at the
	// start of the member data (also Darwin archives).
	BSD
	// Thin is a GNU thin archive: members are files outside it.
	Thin
)

var kindNames = []string{GNU: "GNU", BSD: "BSD", Thin: "thin"}

func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// IndexFormat is the layout of an archive's symbol index.
type IndexFormat int

const (
	NoIndex     IndexFormat = iota // no symbol index
	IndexSysV                      // "/": big-endian uint32 count, offsets, NUL-terminated names
	IndexSysV64                    // "/SYM64/": as IndexSysV with uint64 count and offsets
	IndexBSD                       // "__.SYMDEF" or "__.SYMDEF SORTED": 32-bit ranlib structs
	IndexBSD64                     // "__.SYMDEF_64" or "__.SYMDEF_64 SORTED": 64-bit ranlib structs
)

var indexNames = []string{
	NoIndex:     "none",
	IndexSysV:   "/",
	IndexSysV64: "/SYM64/",
	IndexBSD:    "__.SYMDEF",
	IndexBSD64:  "__.SYMDEF_64",
}

func (f IndexFormat) String() string {
	if f >= 0 && int(f) < len(indexNames) {
		return indexNames[f]
	}
	return "IndexFormat(" + strconv.Itoa(int(f)) + ")"
}

// Member is one member of an archive, as its header describes it. The symbol
// index and the long-name table are not members.
type Member struct {
	// Name is the member's name with the format's decoration removed: no
	// trailing '/', no "#1/" prefix, no NUL padding. In a thin archive it is
	// the path of the member's file, relative to the archive's folder or
	// absolute (see [Member.Path]).
	Name string
	// Offset is the byte offset of the member's header in the archive; the
	// symbol index refers to members by it.
	Offset int64
	// DataOffset is the byte offset of the member's data: Offset+60, plus
	// the length of a BSD "#1/" name. It is 0 for thin members, whose data
	// is not in the archive.
	DataOffset int64
	// Size is the size of the member's data (without a BSD "#1/" name, and
	// without padding). For a thin member it is the size the file had when
	// it was archived.
	Size int64
	// Date (seconds since 1970), UID, GID and Mode (octal in the header)
	// are the header's fields; a field left blank (as lib.exe does) is 0.
	Date     int64
	UID, GID int
	Mode     uint32
	// Thin is set for a member of a thin archive: its data is in the file
	// Name and [Archive.OpenThin] opens it.
	Thin bool
	// NestedOffset is set when a thin member stands for one member of a
	// regular archive: GNU ar writes "/<name offset>:<member offset>" when a
	// regular archive is added to a thin one. Name is then the path of that
	// archive and NestedOffset the offset of the member's header in it.
	NestedOffset int64
}

// Path returns the path of a thin member's file for an archive in folder dir:
// Name joined to dir, or Name itself when it is absolute. It does not touch
// the file system.
func (m Member) Path(dir string) string {
	if filepath.IsAbs(m.Name) {
		return m.Name
	}
	return filepath.Join(dir, m.Name)
}

// Symbol is an entry of an archive's symbol index.
type Symbol struct {
	Name string
	// Offset is the byte offset of the header of the member that defines
	// the symbol, as the index stores it.
	Offset int64
	// Member is the index in [Archive.Members] of that member.
	Member int
}

// Sentinel errors, for errors.Is.
var (
	// ErrThin: the member's data is not stored in the archive (a thin
	// archive); use [Archive.OpenThin].
	ErrThin = errors.New("member of a thin archive is not stored in it")
	// ErrStale: the file of a thin member no longer matches the archive
	// (its size differs from the recorded one).
	ErrStale = errors.New("thin member's file does not match the archive")
	// ErrNotMember: a Member that is not one of this archive's.
	ErrNotMember = errors.New("not a member of this archive")
)

func formatErr(off int64, err error, format string, args ...any) error {
	return &goffload.FormatError{Format: "ar", Offset: off, Field: fmt.Sprintf(format, args...), Err: err}
}
