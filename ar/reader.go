package ar

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/ferr"
)

// Archive is an opened archive. Its methods read the underlying
// [io.ReaderAt] only when asked for data; they are safe for concurrent use
// when the reader is.
type Archive struct {
	r       io.ReaderAt
	size    int64
	kind    Kind
	members []Member
	index   indexMember // the first symbol index, if any
	names   []byte      // the "//" member's data while Open reads the headers
	// longNames holds the long names found, by offset in names, each a
	// part of one copy of names; refs counts the bytes of every long name
	// each time a member's header refers to it (see internal/budget).
	longNames map[int64]string
	namesStr  string
	refs      *budget.Counter
	// ahead holds the bytes read at aheadOff while Open reads the headers:
	// the headers of small members follow each other, and one read serves
	// many of them.
	ahead    []byte
	aheadOff int64
}

// headerReadAhead is how many bytes one read of a member header reads.
const headerReadAhead = 4096

// indexMember locates the symbol index member.
type indexMember struct {
	format IndexFormat
	off    int64 // header
	data   int64
	size   int64
}

// gnuSpecial are the members with GNU/COFF names that are not members, and
// the index each holds. They are stored even in thin archives.
var gnuSpecial = map[string]IndexFormat{
	"/":             IndexSysV,   // also the COFF first and second linker members
	"/SYM64/":       IndexSysV64, // GNU and llvm-ar past 4 GiB (or SYM64_THRESHOLD)
	"//":            NoIndex,     // long names
	"/<ECSYMBOLS>/": NoIndex,     // COFF ARM64EC symbol map, not read
}

// bsdSpecial are the BSD symbol index names. LLVM writes them as "#1/12"
// names padded with NULs, BSD ranlib as space-padded short names.
var bsdSpecial = map[string]IndexFormat{
	"__.SYMDEF":           IndexBSD,
	"__.SYMDEF SORTED":    IndexBSD,
	"__.SYMDEF_64":        IndexBSD64,
	"__.SYMDEF_64 SORTED": IndexBSD64,
}

// Open reads the magic and every member header of the archive of size bytes
// in r, and the long-name table, but no member data. A nil r or a negative
// size is an argument error matching fs.ErrInvalid.
func Open(r io.ReaderAt, size int64) (*Archive, error) {
	if err := ferr.CheckInput("ar", r, size); err != nil {
		return nil, err
	}
	var head [len(Magic)]byte
	n := min(size, int64(len(head)))
	if err := readFull(r, head[:n], 0); err != nil {
		return nil, err
	}
	if n < int64(len(head)) {
		got := string(head[:n])
		if strings.HasPrefix(Magic, got) || strings.HasPrefix(ThinMagic, got) || strings.HasPrefix(bigMagic, got) {
			return nil, formatErr(0, goffload.ErrTruncated, "magic cut to %d of %d bytes", n, len(Magic))
		}
		return nil, formatErr(0, goffload.ErrInvalid, "bad magic %q", got)
	}
	a := &Archive{r: r, size: size, refs: budget.For(size)}
	switch string(head[:]) {
	case Magic:
	case ThinMagic:
		a.kind = Thin
	case bigMagic:
		return nil, formatErr(0, goffload.ErrUnsupported, "AIX big archive")
	default:
		return nil, formatErr(0, goffload.ErrInvalid, "bad magic %q", head[:])
	}
	var naming, indexNaming Kind // the first regular member's, the index's
	for off := int64(len(Magic)); off < size; {
		m, next, err := a.header(off)
		if err != nil {
			return nil, err
		}
		switch {
		case m.special && m.index != NoIndex && a.index.format == NoIndex:
			a.index = indexMember{format: m.index, off: off, data: m.DataOffset, size: m.Size}
			indexNaming = m.naming
		case m.special:
		default:
			if naming == 0 {
				naming = m.naming
			}
			a.members = append(a.members, m.Member)
		}
		off = next
	}
	a.names, a.namesStr, a.longNames, a.ahead = nil, "", nil, nil // only the headers refer to them
	if a.kind == 0 {
		a.kind = GNU
		if naming == BSD || naming == 0 && indexNaming == BSD {
			a.kind = BSD
		}
	}
	return a, nil
}

// headerFields are the numbers of a member header, in the order of
// header's assignment. lib.exe leaves some of them blank.
var headerFields = [...]struct {
	at, end int
	base    int64
	blank   bool
	what    string
}{
	{16, 28, 10, true, "date"},
	{28, 34, 10, true, "uid"},
	{34, 40, 10, true, "gid"},
	{40, 48, 8, true, "mode"},
	{48, 58, 10, false, "size"},
}

// header is a parsed member header.
type header struct {
	Member
	special bool        // the symbol index or long-name table, not a member
	index   IndexFormat // the index it holds, if special
	naming  Kind        // GNU or BSD, by the name's decoration
}

// header reads the member header at off and returns it with the offset of
// the next header.
// readHeader reads the member header at off into b, through the
// read-ahead window; the caller has checked that the archive holds it.
func (a *Archive) readHeader(b []byte, off int64) error {
	if off < a.aheadOff || off+int64(len(b)) > a.aheadOff+int64(len(a.ahead)) {
		n := min(a.size-off, headerReadAhead)
		if cap(a.ahead) < headerReadAhead {
			a.ahead = make([]byte, headerReadAhead)
		}
		// The size the caller gave may be more than the reader holds: a
		// short read is an error only where the header itself is cut.
		got, _ := a.r.ReadAt(a.ahead[:n], off)
		if got < len(b) {
			a.ahead = a.ahead[:0]
			return readFull(a.r, b, off)
		}
		a.ahead, a.aheadOff = a.ahead[:got], off
	}
	copy(b, a.ahead[off-a.aheadOff:])
	return nil
}

func (a *Archive) header(off int64) (h header, next int64, err error) {
	if left := a.size - off; left < HeaderSize {
		return h, 0, formatErr(off, goffload.ErrTruncated, "%d bytes left for a %d-byte member header", left, HeaderSize)
	}
	var b [HeaderSize]byte
	if err := a.readHeader(b[:], off); err != nil {
		return h, 0, err
	}
	if string(b[58:60]) != fmag {
		return h, 0, formatErr(off+58, goffload.ErrInvalid, "bad member header terminator %q", b[58:60])
	}
	var v [len(headerFields)]int64
	for i, f := range headerFields {
		var ok bool
		if v[i], ok = parseField(b[f.at:f.end], f.base, f.blank); !ok {
			return h, 0, formatErr(off+int64(f.at), goffload.ErrInvalid, "bad %s field %q in member header", f.what, b[f.at:f.end])
		}
	}
	h.Date, h.UID, h.GID, h.Mode, h.Size = v[0], int(v[1]), int(v[2]), uint32(v[3]), v[4]
	h.Offset, h.DataOffset = off, off+HeaderSize
	if err := a.name(&h, b[:16]); err != nil {
		return h, 0, err
	}
	if a.kind == Thin && !h.special {
		h.Thin, h.DataOffset = true, 0
		return h, off + HeaderSize, nil
	}
	if left := a.size - (off + HeaderSize); h.Size > left {
		return h, 0, formatErr(off+48, goffload.ErrTruncated, "member size %d exceeds the %d bytes left in the archive", h.Size, left)
	}
	if err := a.bsdName(&h, b[:16]); err != nil {
		return h, 0, err
	}
	if h.special && h.index == NoIndex && h.Name == "//" {
		if a.names != nil {
			return h, 0, formatErr(off, goffload.ErrInvalid, "second long-name member \"//\"")
		}
		if a.names, err = readAt(a.r, h.DataOffset, h.Size); err != nil {
			return h, 0, err
		}
		a.namesStr, a.longNames = string(a.names), map[int64]string{}
	}
	end := h.DataOffset + h.Size
	if end < a.size {
		end += end & 1 // the padding byte may be missing at the end
	}
	return h, end, nil
}

// name decodes the name field of h, except a BSD "#1/" name, which needs the
// member's size checked first (bsdName).
func (a *Archive) name(h *header, field []byte) error {
	s := strings.TrimRight(string(field), " ")
	if f, ok := gnuSpecial[s]; ok {
		h.Name, h.special, h.index, h.naming = s, true, f, GNU
		return nil
	}
	switch {
	case strings.HasPrefix(s, "#1/"):
		h.naming = BSD
		if a.kind == Thin {
			return formatErr(h.Offset, goffload.ErrInvalid, "BSD name %q in a thin archive", s)
		}
		return nil // bsdName
	case len(s) > 1 && s[0] == '/' && isDigit(s[1]):
		h.naming = GNU
		// The reference ends at the next '/', as in LLVM: binutils writes
		// "/38            /" in thin archives for names of 15 bytes, whose
		// short form's '/' it leaves in the last byte.
		ref, _, _ := strings.Cut(string(field[1:]), "/")
		return a.longName(h, strings.TrimRight(ref, " "))
	case strings.HasSuffix(s, "/"):
		h.Name, h.naming = s[:len(s)-1], GNU
	default:
		h.Name, h.naming = s, BSD
		if f, ok := bsdSpecial[s]; ok && a.kind != Thin {
			h.special, h.index = true, f
		}
	}
	if h.Name == "" {
		return formatErr(h.Offset, goffload.ErrInvalid, "empty member name %q", field)
	}
	return nil
}

// longName resolves a GNU "/<offset>" name (in thin archives also
// "/<offset>:<member offset>") in the "//" member; s is what follows the '/'.
func (a *Archive) longName(h *header, s string) error {
	ref, nested, hasNested := strings.Cut(s, ":")
	n, ok := parseDigits(ref)
	if !ok || hasNested && a.kind != Thin {
		return formatErr(h.Offset, goffload.ErrInvalid, "bad long name reference \"/%s\"", s)
	}
	if hasNested {
		if h.NestedOffset, ok = parseDigits(nested); !ok || h.NestedOffset < int64(len(Magic)) {
			return formatErr(h.Offset, goffload.ErrInvalid, "bad nested member offset in long name reference \"/%s\"", s)
		}
	}
	if a.names == nil {
		return formatErr(h.Offset, goffload.ErrInvalid, "long name reference \"/%s\" but no \"//\" member before it", s)
	}
	if n >= int64(len(a.names)) {
		return formatErr(h.Offset, goffload.ErrInvalid, "long name offset %d past the end of the %d-byte \"//\" member", n, len(a.names))
	}
	name, ok := a.longNames[n]
	if !ok {
		var err error
		if name, err = a.findLongName(h, n); err != nil {
			return err
		}
		a.longNames[n] = name
	}
	// Members may share a name: its bytes count each time, as callers
	// print and write each member's name.
	if !a.refs.Take(uint64(len(name))) {
		return formatErr(h.Offset, goffload.ErrLimit, "the long names of the members up to this one take more than %d times the archive's %d bytes plus %d", budget.Factor, a.size, budget.Slack)
	}
	h.Name = name
	return nil
}

// findLongName returns the long name at offset n of the "//" member.
func (a *Archive) findLongName(h *header, n int64) (string, error) {
	rest := a.namesStr[n:]
	// GNU ends a long name with "/\n", COFF (lib.exe, llvm-ar) with a NUL.
	i := strings.IndexAny(rest, "\n\x00")
	switch {
	case i < 0:
		return "", formatErr(h.Offset, goffload.ErrInvalid, "long name at offset %d of \"//\" is not terminated", n)
	case rest[i] == '\n' && (i == 0 || rest[i-1] != '/'):
		return "", formatErr(h.Offset, goffload.ErrInvalid, "long name at offset %d of \"//\" does not end with \"/\\n\"", n)
	case rest[i] == '\n':
		i--
	}
	if i == 0 {
		return "", formatErr(h.Offset, goffload.ErrInvalid, "empty long name at offset %d of \"//\"", n)
	}
	return rest[:i], nil
}

// bsdName reads a BSD "#1/<length>" name from the start of the member data,
// which then begins after it. LLVM pads the name with NULs so that the data
// is 8-byte aligned.
func (a *Archive) bsdName(h *header, field []byte) error {
	s := strings.TrimRight(string(field), " ")
	if !strings.HasPrefix(s, "#1/") {
		return nil
	}
	n, ok := parseDigits(s[3:])
	if !ok {
		return formatErr(h.Offset, goffload.ErrInvalid, "bad BSD name length in %q", s)
	}
	if n > h.Size {
		return formatErr(h.Offset, goffload.ErrInvalid, "BSD name length %d exceeds the member size %d", n, h.Size)
	}
	b, err := readAt(a.r, h.DataOffset, n)
	if err != nil {
		return err
	}
	h.Name = string(bytes.TrimRight(b, "\x00"))
	if h.Name == "" {
		return formatErr(h.Offset, goffload.ErrInvalid, "empty BSD member name %q", s)
	}
	h.DataOffset += n
	h.Size -= n
	if f, ok := bsdSpecial[h.Name]; ok {
		h.special, h.index = true, f
	}
	return nil
}

// parseField parses a header number: digits of base, then only spaces. An
// all-space field is 0 if blank is set.
func parseField(f []byte, base int64, blank bool) (int64, bool) {
	s := strings.TrimRight(string(f), " ")
	if s == "" {
		return 0, blank
	}
	var v int64
	for _, c := range []byte(s) {
		d := int64(c) - '0'
		if d < 0 || d >= base || v > (math.MaxInt64-d)/base {
			return 0, false
		}
		v = v*base + d
	}
	return v, true
}

// parseDigits parses a non-empty decimal number with nothing around it.
func parseDigits(s string) (int64, bool) {
	return parseField([]byte(s), 10, false)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// Kind returns the archive's layout: Thin by its magic, otherwise GNU or BSD
// by how its first member's name is written (an archive with no members
// and no index is GNU). llvm-ar --format=bsd writes a GNU "/SYM64/" index
// before BSD names past 4 GiB; such an archive is BSD.
func (a *Archive) Kind() Kind { return a.kind }

// Index returns the layout of the archive's symbol index, NoIndex if it has
// none.
func (a *Archive) Index() IndexFormat { return a.index.format }

// Members returns the archive's members in order, without the symbol index
// and the long-name table. The slice is the caller's.
func (a *Archive) Members() []Member {
	return append([]Member(nil), a.members...)
}

// member returns the index of the member whose header is at off.
func (a *Archive) member(off int64) (int, bool) {
	i := sort.Search(len(a.members), func(i int) bool { return a.members[i].Offset >= off })
	return i, i < len(a.members) && a.members[i].Offset == off
}

// lookup checks that m is one of a's members.
func (a *Archive) lookup(m Member) error {
	if i, ok := a.member(m.Offset); !ok || a.members[i] != m {
		return fmt.Errorf("ar: member %q at byte %#x: %w", m.Name, m.Offset, ErrNotMember)
	}
	return nil
}

// Open returns the data of m, which must be one of the values Members
// returned, as a section of the archive's reader: nothing is read or copied.
// A member of a thin archive gives ErrThin; see OpenThin.
func (a *Archive) Open(m Member) (*io.SectionReader, error) {
	if err := a.lookup(m); err != nil {
		return nil, err
	}
	if m.Thin {
		return nil, fmt.Errorf("ar: member %q at byte %#x: %w", m.Name, m.Offset, ErrThin)
	}
	return io.NewSectionReader(a.r, m.DataOffset, m.Size), nil
}

// Referenced returns the bytes of long member names the archive has
// handed out, each counted once for every member whose header names it:
// what Open bounds by 16 times the archive's size plus 1 MiB. A caller
// reading many archives bounds their sum in turn (fatobj counts it
// against its command's offloadbinary.Budget).
func (a *Archive) Referenced() uint64 { return a.refs.Used() }
