package offloadbinary

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// ReadOptions tune the reader. The zero value (or nil) reads a binary as
// the release that made it: every version the release table knows (1 to 3),
// each offload kind number by the release that defines it (HIP is 3 up to
// LLVM 20 and 4 from 21; no number means two kinds), and LLVM main's checks
// for the versions only it reads. [Binary.Releases] then says which releases
// read the binary.
type ReadOptions struct {
	// Release, when set, reads as that release's tools do: only the versions
	// it reads (1 up to LLVM 22; 1 to 3 in 23), offload kinds by its
	// numbering (a number it does not define is OffloadNone), and its checks.
	Release *release.Release
	// MaxInflated bounds the size of one compressed (version 3) binary once
	// inflated; 0 means 16 GiB. A larger one is refused with goffload.ErrLimit.
	// The bytes inflated from all binaries read with the same Budget are
	// bounded by [Budget.MaxInflated].
	MaxInflated uint64
	// Budget bounds what all the reads given it decode, in total (see
	// [Budget]): share one between the reads of one command. nil gives each
	// call of ReadAll or ReadBinary a budget of its own.
	Budget *Budget
	// Nested says that the input is an image of a binary read with the same
	// Budget: its bytes are not credited to the budget again.
	Nested bool
}

// strict returns the release the options read as, or nil.
func (o *ReadOptions) strict() *release.Release {
	if o == nil {
		return nil
	}
	return o.Release
}

// firstWriting returns the first release of the table that writes
// OffloadBinary version v.
func firstWriting(v uint32) *release.Release {
	for _, r := range table {
		if r.BinaryVersion >= v {
			return r
		}
	}
	return table[len(table)-1]
}

func (o *ReadOptions) maxVersion() uint32 {
	if r := o.strict(); r != nil {
		return max(r.BinaryVersion, 1)
	}
	return VersionCompressed
}

// kindOf returns the offload kind of code as the options read it.
func (o *ReadOptions) kindOf(code uint16) offload.OffloadKind {
	if r := o.strict(); r != nil {
		return offload.OffloadKindOf(r, code)
	}
	for _, r := range table {
		if k := offload.OffloadKindOf(r, code); k != offload.OffloadNone {
			return k
		}
	}
	return offload.OffloadNone
}

// checksStrings reports whether a binary of version v is read with the
// check of its string entries against the buffer that LLVM 23 and later
// make (the release's Main.ChecksStrings).
func (o *ReadOptions) checksStrings(v uint32) bool {
	if r := o.strict(); r != nil {
		return r.Main.ChecksStrings
	}
	return v >= 2
}

// alignsAfter reports whether the next binary of a section starts at the
// next multiple of 8 after a binary of version v: in LLVM main after 23
// (the release's Main.AlignsAfter), whatever the version; before it, no
// binary needs it.
func (o *ReadOptions) alignsAfter(v uint32) bool {
	if r := o.strict(); r != nil && r.Main.AlignsAfter {
		return true
	}
	return v >= VersionCompressed
}

func (o *ReadOptions) maxInflated() uint64 {
	if o == nil || o.MaxInflated == 0 {
		return 16 << 30
	}
	return o.MaxInflated
}

// Binary is one OffloadBinary read from an input.
type Binary struct {
	Offset  int64  // of the header, from the start of the input
	Version uint32 // 1, 2 for a multi-image binary (23), 3 (24, main)
	Size    uint64 // the header's Size: bytes of this binary in its input
	// InflatedSize is the header's InflatedSize (version 3): the size of the
	// binary once its body is decompressed, 0 for an uncompressed binary.
	InflatedSize uint64
	// Compression is "zstd" or "zlib" for a compressed binary, else "".
	Compression string
	Images      []BinaryImage

	ra       io.ReaderAt // the input
	data     io.ReaderAt // the binary's bytes: the input, or the inflated binary
	base     int64       // where the binary starts in data
	dataSize uint64      // Size, or InflatedSize
}

// BinaryImage is one image of a binary as stored.
type BinaryImage struct {
	Image
	// OffloadKindCode is the number stored; Image.OffloadKind is its meaning
	// (see [ReadOptions]).
	OffloadKindCode uint16
	StringOffset    uint64 // relative to the binary
	NumStrings      uint64
	ImageOffset     uint64 // relative to the binary
	ImageSize       uint64
}

// Open returns a reader of the bytes of image i. LLVM does not check that an
// image lies inside its binary (docs/offload-binary.md#reader-validation); this
// method does, and gives ErrImageRange.
func (b *Binary) Open(i int) (*io.SectionReader, error) {
	if i < 0 || i >= len(b.Images) {
		return nil, fmt.Errorf("binary at %#x: no image %d", b.Offset, i)
	}
	im := &b.Images[i]
	if im.ImageOffset > b.dataSize || im.ImageSize > b.dataSize-im.ImageOffset {
		return nil, fmt.Errorf("binary at %#x: image %d at %#x of %d bytes in a binary of %d: %w",
			b.Offset, i, im.ImageOffset, im.ImageSize, b.dataSize, ErrImageRange)
	}
	return io.NewSectionReader(b.data, b.base+int64(im.ImageOffset), int64(im.ImageSize)), nil
}

// ReadBinary reads the binary at the start of the size bytes of r, checking it
// as LLVM's OffloadBinary::create does with the whole input as its buffer: bytes
// after the binary are allowed. A nil r or a negative size is an argument error
// matching fs.ErrInvalid.
func ReadBinary(r io.ReaderAt, size int64, opt *ReadOptions) (*Binary, error) {
	if err := ferr.CheckInput("offload binary", r, size); err != nil {
		return nil, err
	}
	g := opt.budget()
	if !opt.nested() {
		g.addInput(uint64(size))
	}
	return readAt(r, 0, size, opt, g, true)
}

// ReadAll reads every binary in the size bytes of r in turn, as LLVM's
// extractOffloadFiles does for a section or a file: each binary is checked
// against the rest of the input and then against its own Size, and the next one
// starts where it ends (aligned to 8 after a compressed binary, and after any
// binary where the release reads version 3, as LLVM main does). Any bytes
// after the last binary, even zero padding, are an goffload.ErrInvalid error, as in
// LLVM 16–22. A nil r or a negative size is an
// argument error matching fs.ErrInvalid.
func ReadAll(r io.ReaderAt, size int64, opt *ReadOptions) ([]*Binary, error) {
	if err := ferr.CheckInput("offload binary", r, size); err != nil {
		return nil, err
	}
	g := opt.budget()
	if !opt.nested() {
		g.addInput(uint64(size))
	}
	var out []*Binary
	for off := int64(0); off < size; {
		first, err := readAt(r, off, size-off, opt, g, false)
		if err != nil {
			return out, err
		}
		b, err := readAt(r, off, int64(first.Size), opt, g, true)
		if err != nil {
			return out, err
		}
		out = append(out, b)
		off += int64(b.Size) // Size >= 40: the loop advances
		if opt.alignsAfter(b.Version) {
			off = int64(alignUp(uint64(off), Alignment))
		}
	}
	return out, nil
}

// ReadAllBytes is ReadAll over a byte slice.
func ReadAllBytes(data []byte, opt *ReadOptions) ([]*Binary, error) {
	return ReadAll(bytes.NewReader(data), int64(len(data)), opt)
}

func errAt(base int64, off uint64, field string, val uint64, err error) error {
	return &goffload.FormatError{Format: "offload binary", Offset: base + int64(off), Field: field, Value: val, Err: err}
}

// readAt checks the binary at base whose buffer holds bufSize bytes, in the
// order of LLVM's OffloadBinary::create
// (docs/offload-binary.md#reader-validation), and with full decodes the string
// maps and inflates a compressed binary.
func readAt(r io.ReaderAt, base, bufSize int64, opt *ReadOptions, g *Budget, full bool) (*Binary, error) {
	buf := uint64(bufSize)
	if bufSize < HeaderSize {
		return nil, errAt(base, 0, "buffer size", buf, goffload.ErrInvalid)
	}
	var hdr [HeaderSizeV3]byte
	if err := readFull(r, hdr[:HeaderSize], base); err != nil {
		return nil, truncated(base, "header", err)
	}
	version := le.Uint32(hdr[4:])
	// Readers without version 3 (up to 23) want a header and an entry
	// before they look at the version.
	if (version < VersionCompressed || opt.maxVersion() < VersionCompressed) && bufSize < HeaderSize+ImageEntrySize {
		return nil, errAt(base, 0, "buffer size", buf, goffload.ErrInvalid)
	}
	if !bytes.Equal(hdr[:4], Magic[:]) {
		return nil, ferr.New("offload binary", base, "magic", append([]byte(nil), hdr[:4]...), goffload.ErrInvalid)
	}
	b := &Binary{Offset: base, Version: version, Size: le.Uint64(hdr[8:]), ra: r, data: r, base: base}
	if b.Version == 0 || b.Version > opt.maxVersion() {
		err := errAt(base, 4, "Version", uint64(b.Version), goffload.ErrInvalid)
		if rel := opt.strict(); rel != nil && b.Version <= VersionCompressed {
			// A version a later release writes: say which reads it.
			reads := "versions 1 to " + strconv.Itoa(int(opt.maxVersion()))
			if opt.maxVersion() == 1 {
				reads = "version 1 only"
			}
			err = fmt.Errorf("%v reads OffloadBinary %s, and version %d is %v's: %w",
				rel, reads, b.Version, firstWriting(b.Version), err)
		}
		return nil, err
	}
	entOff, field3 := le.Uint64(hdr[16:]), le.Uint64(hdr[24:])
	if b.Version >= VersionCompressed {
		if bufSize < HeaderSizeV3 {
			return nil, errAt(base, 0, "buffer size", buf, goffload.ErrInvalid)
		}
		if err := readFull(r, hdr[HeaderSize:], base+HeaderSize); err != nil {
			return nil, truncated(base+HeaderSize, "header", err)
		}
		b.InflatedSize = le.Uint64(hdr[32:])
		if b.Size > buf || b.Size < HeaderSizeV3 {
			return nil, errAt(base, 8, "Size", b.Size, goffload.ErrTruncated)
		}
		if b.InflatedSize != 0 {
			return b.inflate(hdr, entOff, opt, g, full)
		}
	} else if b.Size > buf || b.Size < ImageEntrySize || b.Size < HeaderSize {
		return nil, errAt(base, 8, "Size", b.Size, goffload.ErrTruncated)
	}
	b.dataSize = b.Size
	count := uint64(1)
	if b.Version == 1 {
		if entOff > b.Size-ImageEntrySize {
			return nil, errAt(base, 16, "EntryOffset", entOff, goffload.ErrTruncated)
		}
		if field3 > b.Size-HeaderSize {
			return nil, errAt(base, 24, "EntrySize", field3, goffload.ErrTruncated)
		}
	} else {
		// Versions 2 (23) and 3 (24): field 3 is the number of entries.
		if b.Size < ImageEntrySize {
			return nil, errAt(base, 8, "Size", b.Size, goffload.ErrTruncated)
		}
		count = field3
		if count > (b.Size-HeaderSize)/ImageEntrySize {
			return nil, errAt(base, 24, "EntriesCount", count, goffload.ErrTruncated)
		}
		if entOff > b.Size-count*ImageEntrySize {
			return nil, errAt(base, 16, "EntriesOffset", entOff, goffload.ErrTruncated)
		}
	}
	// The entries are read a chunk at a time, so that what is allocated
	// follows what is read: a compressed binary's Size is its
	// InflatedSize, which a few bytes may declare in gigabytes.
	const entryChunk = 1024
	ents := make([]byte, min(count, entryChunk)*ImageEntrySize)
	checksStrings := opt.checksStrings(b.Version)
	b.Images = make([]BinaryImage, 0, min(count, entryChunk))
	for i := uint64(0); i < count; i++ {
		if i%entryChunk == 0 {
			n := min(count-i, entryChunk) * ImageEntrySize
			if err := readFull(r, ents[:n], base+int64(entOff+i*ImageEntrySize)); err != nil {
				return nil, truncated(base+int64(entOff+i*ImageEntrySize), "entries", err)
			}
		}
		e := ents[(i%entryChunk)*ImageEntrySize:]
		at := entOff + i*ImageEntrySize
		im := BinaryImage{
			OffloadKindCode: le.Uint16(e[2:]),
			StringOffset:    le.Uint64(e[8:]),
			NumStrings:      le.Uint64(e[16:]),
			ImageOffset:     le.Uint64(e[24:]),
			ImageSize:       le.Uint64(e[32:]),
		}
		im.Kind = offload.ImageKind(le.Uint16(e[0:]))
		im.OffloadKind = opt.kindOf(im.OffloadKindCode)
		im.Flags = le.Uint32(e[4:])
		if im.ImageOffset > buf {
			return nil, errAt(base, at+24, "ImageOffset", im.ImageOffset, goffload.ErrTruncated)
		}
		if im.StringOffset > buf {
			return nil, errAt(base, at+8, "StringOffset", im.StringOffset, goffload.ErrTruncated)
		}
		// LLVM 23 and later also check the string entries against the
		// buffer, counting 24 bytes each (its StringEntry) whatever the
		// version; 15 to 22 do not (a bad count is then ErrUnchecked below).
		if checksStrings && im.NumStrings > (buf-im.StringOffset)/StringEntrySizeV2 {
			return nil, errAt(base, at+16, "NumStrings", im.NumStrings, goffload.ErrTruncated)
		}
		b.Images = append(b.Images, im)
	}
	if full {
		if err := g.listImages(count); err != nil {
			return nil, errAt(base, 24, "EntriesCount", count, err)
		}
		s := &stringReader{b: b, g: g, cstrings: map[uint64]string{}, sized: map[[2]uint64]string{}}
		for i := range b.Images {
			im := &b.Images[i]
			// The image's bytes inside the binary, counted each time an
			// entry points to them (an image outside is listed; Open
			// refuses it).
			if n := min(im.ImageSize, b.dataSize-min(im.ImageOffset, b.dataSize)); n > 0 {
				if err := g.listBytes(n); err != nil {
					return nil, errAt(base, entOff+uint64(i)*ImageEntrySize+32, "ImageSize", im.ImageSize, err)
				}
			}
			if err := s.read(im); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// truncated is the error of a read at off of field that found fewer bytes
// than the input's size promised: a FormatError matching ErrTruncated, or
// the reader's own error when it failed otherwise.
func truncated(off int64, field string, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return ferr.New("offload binary", off, field+" (the input ends before its size says)", nil, goffload.ErrTruncated)
	}
	return fmt.Errorf("offload binary at %#x: %s: %w", off, field, err)
}

// readFull reads len(p) bytes at off; io.EOF with a full read is no error.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// stringReader decodes the string maps of a binary, each distinct string
// once: entries pointing to one string share it. Every key and value is
// charged to the budget each time an entry points to it (what list prints),
// and scanning for a terminator is charged as it goes.
type stringReader struct {
	b        *Binary
	g        *Budget
	cstrings map[uint64]string    // NUL-terminated, by offset
	sized    map[[2]uint64]string // version 2 values, by offset and size
}

// read decodes the string map of im. LLVM reads it without any bounds
// check; here every string entry and string must lie inside the binary.
func (s *stringReader) read(im *BinaryImage) error {
	b := s.b
	es := uint64(StringEntrySize)
	if b.Version >= 2 {
		es = StringEntrySizeV2
	}
	if im.StringOffset > b.dataSize || im.NumStrings > (b.dataSize-im.StringOffset)/es {
		return errAt(b.Offset, im.StringOffset, "string entries", im.NumStrings, ErrUnchecked)
	}
	// Read a chunk at a time, so that what is allocated follows what is
	// read: inside a compressed binary, whose size a few bytes declare.
	const chunk = 1024
	raw := make([]byte, min(im.NumStrings, chunk)*es)
	im.Strings = make([]KeyValue, 0, min(im.NumStrings, chunk))
	for i := uint64(0); i < im.NumStrings; i++ {
		at := im.StringOffset + i*es
		if i%chunk == 0 {
			n := min(im.NumStrings-i, chunk) * es
			if err := readFull(b.data, raw[:n], b.base+int64(at)); err != nil {
				return fmt.Errorf("offload binary at %#x: string entries: %w", b.Offset, err)
			}
		}
		e := raw[(i%chunk)*es:]
		key, err := s.cString(le.Uint64(e), at)
		if err != nil {
			return err
		}
		var val string
		if b.Version >= 2 {
			val, err = s.sizedString(le.Uint64(e[8:]), le.Uint64(e[16:]), at+8)
		} else {
			val, err = s.cString(le.Uint64(e[8:]), at+8)
		}
		if err != nil {
			return err
		}
		im.Strings = append(im.Strings, KeyValue{key, val})
	}
	return nil
}

// cString reads the NUL-terminated string at off of the binary; the entry that
// points to it is at the binary's byte at.
func (s *stringReader) cString(off, at uint64) (string, error) {
	b := s.b
	if v, ok := s.cstrings[off]; ok {
		return v, s.charge(uint64(len(v)), at, off)
	}
	if off >= b.dataSize {
		return "", errAt(b.Offset, at, "string offset", off, ErrUnchecked)
	}
	var out []byte
	var chunk [256]byte
	for pos := off; pos < b.dataSize; {
		n := min(uint64(len(chunk)), b.dataSize-pos)
		if err := s.charge(n, at, off); err != nil {
			return "", err
		}
		if err := readFull(b.data, chunk[:n], b.base+int64(pos)); err != nil {
			return "", fmt.Errorf("offload binary at %#x: string: %w", b.Offset, err)
		}
		if i := bytes.IndexByte(chunk[:n], 0); i >= 0 {
			v := string(append(out, chunk[:i]...))
			s.cstrings[off] = v
			return v, nil
		}
		out = append(out, chunk[:n]...)
		pos += n
	}
	return "", errAt(b.Offset, at, "unterminated string at", off, ErrUnchecked)
}

// sizedString reads a version-2 value of n bytes at off.
func (s *stringReader) sizedString(off, n, at uint64) (string, error) {
	b := s.b
	if off > b.dataSize || n > b.dataSize-off {
		return "", errAt(b.Offset, at, "value offset", off, ErrUnchecked)
	}
	if err := s.charge(n, at, off); err != nil {
		return "", err
	}
	k := [2]uint64{off, n}
	if v, ok := s.sized[k]; ok {
		return v, nil
	}
	v := make([]byte, n)
	if err := readFull(b.data, v, b.base+int64(off)); err != nil {
		return "", fmt.Errorf("offload binary at %#x: value: %w", b.Offset, err)
	}
	s.sized[k] = string(v)
	return s.sized[k], nil
}

// charge counts n bytes of the string at off, pointed to by the entry at
// the binary's byte at.
func (s *stringReader) charge(n, at, off uint64) error {
	if err := s.g.listBytes(n); err != nil {
		return errAt(s.b.Offset, at, "string offset", off, err)
	}
	return nil
}

// Reader returns a reader of the whole binary's bytes in its input (of a
// compressed binary, its compressed bytes).
func (b *Binary) Reader() *io.SectionReader {
	return io.NewSectionReader(b.ra, b.Offset, int64(b.Size))
}

// Inflated returns a reader of the binary as LLVM reads it: of a compressed
// binary, the binary its body inflates to (version 3, InflatedSize 0); else
// the same bytes as Reader.
func (b *Binary) Inflated() *io.SectionReader {
	return io.NewSectionReader(b.data, b.base, int64(b.dataSize))
}

// Releases returns the releases whose tools read b as it is (those with
// OffloadBinaries, LLVM 15 and later): its version,
// and a meaning for the offload kind number of each of its images (HIP
// numbered 3 is LLVM 20 or before, 4 LLVM 21 or later).
func (b *Binary) Releases() release.Set {
	return release.Where(func(r *release.Release) bool {
		if r.BinaryVersion == 0 || b.Version > max(r.BinaryVersion, 1) {
			return false
		}
		for i := range b.Images {
			if c := b.Images[i].OffloadKindCode; c != 0 && offload.OffloadKindOf(r, c) == offload.OffloadNone {
				return false
			}
		}
		return true
	})
}
