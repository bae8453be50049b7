package bundle

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/ferr"
)

// Magic starts an uncompressed bundle (OFFLOAD_BUNDLER_MAGIC_STR).
const Magic = "__CLANG_OFFLOAD_BUNDLE__"

const (
	countSize      = 8                        // the number of entries, after the magic
	headerSize     = len(Magic) + countSize   // before the first entry header
	entryFixedSize = 24                       // offset, size and ID length of one entry
	minCompressed  = len(CompressedMagic) + 4 // LLVM takes shorter "CCOB" inputs for uncompressed
)

var le = binary.LittleEndian

// Entry is one bundle entry as its header describes it.
type Entry struct {
	// ID names the entry: "<kind>-<triple>[-<target id>]", as the bundler
	// wrote it, e.g. "hip-amdgcn-amd-amdhsa--gfx90a:xnack+" or
	// "host-x86_64-unknown-linux-gnu-" (see [HIPInputs]).
	ID string
	// Offset and Size locate the entry's data from the start of the bundle.
	Offset, Size uint64
}

// Bundle is an uncompressed bundle read in place: [Bundle.Open] reads an
// entry's data from the input, never a copy.
type Bundle struct {
	// Entries in the order of the header, which is the order of the bundler's
	// -targets; the host entry is wherever -targets put it.
	Entries []Entry

	ra io.ReaderAt
}

// Open returns a reader of the data of entry i, a section of the input that
// Read was given. It panics if i is out of range.
func (b *Bundle) Open(i int) *io.SectionReader {
	e := b.Entries[i]
	return io.NewSectionReader(b.ra, int64(e.Offset), int64(e.Size))
}

// End returns where the bundle ends: past its header and the data of every
// entry, whichever is last. Bytes after it are not the bundle's (another
// bundle may follow, as in a linked program's .hip_fatbin).
func (b *Bundle) End() uint64 {
	end := uint64(headerSize)
	for _, e := range b.Entries {
		end += entryFixedSize + uint64(len(e.ID))
	}
	for _, e := range b.Entries {
		end = max(end, e.Offset+e.Size)
	}
	return end
}

// Find returns the index of the entry that clang-offload-bundler extracts for
// id, or -1. The bundler keeps the last of several entries with one ID, and
// so does Find. The match is exact: the bundler also extracts, for a requested
// target, an entry of a compatible kind (hip and hipv4), triple and target ID
// features, which Find does not.
func (b *Bundle) Find(id string) int {
	for i := len(b.Entries) - 1; i >= 0; i-- {
		if b.Entries[i].ID == id {
			return i
		}
	}
	return -1
}

// Read reads the header of the uncompressed bundle held in the size bytes of
// r. It accepts exactly the headers whose every entry clang-offload-bundler
// 19 and 22 extract: each entry header and ID inside the input, each entry's
// offset not 0 and its data inside the input (entries may overlap each other
// and the header; bytes after the last entry are allowed). Where the bundler
// reads such a header only in part and then crashes or takes the input for a
// host file, Read gives a [*goffload.FormatError] matching [goffload.ErrInvalid] or
// [goffload.ErrTruncated]. IDs are not checked: LLVM 19 extracts entries with any ID,
// LLVM 20 and later refuse to unbundle a bundle holding an ID that
// [ValidID] rejects. A compressed bundle gives [ErrCompressed]; an input
// with neither magic gives [ErrNotBundle]. A nil r or a negative size is an
// argument error matching fs.ErrInvalid.
func Read(r io.ReaderAt, size int64) (*Bundle, error) {
	if err := ferr.CheckInput("offload bundle", r, size); err != nil {
		return nil, err
	}
	var head [headerSize]byte
	n := min(int64(len(head)), size)
	if err := readFull(r, head[:n], 0); err != nil {
		return nil, err
	}
	switch {
	case n >= int64(minCompressed) && string(head[:len(CompressedMagic)]) == CompressedMagic:
		return nil, fieldErr(0, "magic", CompressedMagic, ErrCompressed)
	case n < int64(len(Magic)) || string(head[:len(Magic)]) != Magic:
		return nil, fieldErr(0, "magic", string(head[:min(n, int64(len(Magic)))]), ErrNotBundle)
	case n < int64(headerSize):
		return nil, fieldErr(int64(len(Magic)), fmt.Sprintf("entry count cut to %d of %d bytes", n-int64(len(Magic)), countSize), nil, goffload.ErrTruncated)
	}
	count := le.Uint64(head[len(Magic):])
	br := bufio.NewReader(io.NewSectionReader(r, int64(headerSize), size-int64(headerSize)))
	entries, err := readEntries(br, count, uint64(size), nil)
	if err != nil {
		return nil, err
	}
	return &Bundle{Entries: entries, ra: r}, nil
}

// headerLimit bounds a header that does not lie in the input as it is, but
// is decompressed: its size in bytes and the length of each ID.
type headerLimit struct {
	size, id uint64
}

// readEntries reads count entry headers from br, which holds a bundle of end
// bytes from its byte headerSize on, and checks that each entry's data lies
// inside the bundle. With lim, the header is refused with goffload.ErrLimit
// past lim.size bytes or with an ID longer than lim.id.
func readEntries(br io.Reader, count, end uint64, lim *headerLimit) ([]Entry, error) {
	var entries []Entry
	pos := uint64(headerSize)
	if lim != nil && count > (lim.size-pos)/entryFixedSize {
		return nil, formatErr(int64(len(Magic)), fmt.Sprintf("entry count (entry headers past the %d-byte limit of a compressed bundle's header)", lim.size), count, goffload.ErrLimit)
	}
	// Each entry header takes at least entryFixedSize bytes of the input, so
	// the loop ends after at most end/24 turns whatever count says.
	for i := uint64(0); i < count; i++ {
		if end-pos < entryFixedSize {
			return nil, fieldErr(int64(pos), fmt.Sprintf("entry %d header cut to %d of %d bytes (count %d)", i, end-pos, entryFixedSize, count), nil, goffload.ErrTruncated)
		}
		var fixed [entryFixedSize]byte
		if _, err := io.ReadFull(br, fixed[:]); err != nil {
			return nil, readErr(pos, fmt.Sprintf("entry %d header cut short", i), err)
		}
		e := Entry{Offset: le.Uint64(fixed[0:]), Size: le.Uint64(fixed[8:])}
		idLen := le.Uint64(fixed[16:])
		if idLen > end-pos-entryFixedSize {
			return nil, formatErr(int64(pos+16), fmt.Sprintf("entry %d ID length", i), idLen, goffload.ErrTruncated)
		}
		if lim != nil && idLen > lim.id {
			return nil, formatErr(int64(pos+16), fmt.Sprintf("entry %d ID length (limit %d bytes)", i, lim.id), idLen, goffload.ErrLimit)
		}
		if lim != nil && idLen > lim.size-pos-entryFixedSize-(count-i-1)*entryFixedSize {
			return nil, formatErr(int64(pos+16), fmt.Sprintf("entry %d ID length (the header passes the %d-byte limit of a compressed bundle's header)", i, lim.size), idLen, goffload.ErrLimit)
		}
		// The ID grows with what the reader returns, not with idLen.
		var id bytes.Buffer
		if _, err := io.CopyN(&id, br, int64(idLen)); err != nil {
			return nil, readErr(pos+entryFixedSize, fmt.Sprintf("entry %d ID cut short", i), err)
		}
		e.ID = id.String()
		if e.Offset == 0 {
			return nil, formatErr(int64(pos), fmt.Sprintf("entry %d offset", i), 0, goffload.ErrInvalid)
		}
		if e.Offset > end {
			return nil, formatErr(int64(pos), fmt.Sprintf("entry %d offset", i), e.Offset, goffload.ErrTruncated)
		}
		if e.Size > end-e.Offset {
			return nil, formatErr(int64(pos+8), fmt.Sprintf("entry %d size", i), e.Size, goffload.ErrTruncated)
		}
		entries = append(entries, e)
		pos += entryFixedSize + idLen
	}
	return entries, nil
}

// fieldErr is formatErr for any value, or none (nil).
func fieldErr(off int64, field string, val any, err error) error {
	return ferr.New("offload bundle", off, field, val, err)
}

// readErr turns a short read at off into a goffload.FormatError matching
// goffload.ErrTruncated whose Field is field, keeps a FormatError (of the
// decompression under a compressed bundle's reader) as it is, and prefixes
// other read errors.
func readErr(off uint64, field string, err error) error {
	var fe *goffload.FormatError
	switch {
	case errors.As(err, &fe):
		return err
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fieldErr(int64(off), field, nil, goffload.ErrTruncated)
	}
	return fmt.Errorf("offload bundle: reading at byte %#x: %w", off, err)
}

// readFull reads len(p) bytes at off; io.EOF with a full read is no error.
// A reader that ends before size, which the caller said it holds, is an
// goffload.ErrTruncated FormatError at the byte where it ended.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return readErr(uint64(off)+uint64(n), "input shorter than its size", err)
}

// ValidID reports whether clang-offload-bundler 20 and later accept id when
// unbundling: it must have at least five fields separated by '-'
// (<kind>-<arch>-<vendor>-<os>-<env>[-<target id>]), as checkOffloadBundleID
// requires. LLVM 19 does not check.
func ValidID(id string) bool {
	return bytes.Count([]byte(id), []byte("-")) >= 4
}
