package offloadbinary

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"os"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
	"github.com/klauspost/compress/zstd"
)

// Version 3 of the OffloadBinary (LLVM main after 23: release 24, [release.Release]
// BinaryVersion 3): the header grows to 40 bytes with a uint64 InflatedSize
// at offset 32. When InflatedSize is not 0, everything after the header is
// one zstd or zlib stream (zstd when it starts with zstd's magic) that
// inflates to the binary's body: the binary is then the 40-byte header with
// Size = InflatedSize and InflatedSize = 0, followed by that body. Size is
// the header and the compressed stream, not padded; the next binary of a
// section starts at the next multiple of 8.
const (
	// VersionCompressed is the version whose binaries may be compressed.
	VersionCompressed = 3
	// HeaderSizeV3 is the size of a version-3 header.
	HeaderSizeV3 = 40
)

var zstdMagic = []byte{0x28, 0xB5, 0x2F, 0xFD}

// Compression names a compressed OffloadBinary's stream format and level,
// as llvm::compression::Params does.
type Compression struct {
	// Format is "zstd" (also "", llvm-offload-binary's default) or "zlib".
	Format string
	// Level is the compression level; 0 means the format's default (zstd 5,
	// zlib 6, as LLVM's compression::Params). zstd takes -131072 to 22, as
	// libzstd does (Go's encoder maps them to its four speeds); zlib 1 to 9,
	// and ZlibStored for zlib's level 0, which stores without compressing.
	Level int
}

// ZlibStored is the Level of zlib's level 0: the data stored, not
// compressed (Level 0 means the default level).
const ZlibStored = -1

// zstdMinLevel is libzstd's ZSTD_minCLevel().
const zstdMinLevel = -(1 << 17)

func (c Compression) check() error {
	switch c.Format {
	case "zstd", "":
		if c.Level < zstdMinLevel || c.Level > 22 {
			return fmt.Errorf("invalid zstd compression level %d; expected a value in [%d, 22]: %w", c.Level, zstdMinLevel, goffload.ErrLimit)
		}
	case "zlib":
		if c.Level < ZlibStored || c.Level > 9 {
			return fmt.Errorf("invalid zlib compression level %d; expected a value in [0, 9]: %w", c.Level, goffload.ErrLimit)
		}
	default:
		return fmt.Errorf("compression format %q: want zstd or zlib: %w", c.Format, offload.ErrUnknownKind)
	}
	return nil
}

// writer returns the compressing writer of c over w.
func (c Compression) writer(w io.Writer) (io.WriteCloser, error) {
	if c.Format == "zlib" {
		switch c.Level {
		case 0:
			return zlib.NewWriterLevel(w, 6)
		case ZlibStored:
			return zlib.NewWriterLevel(w, zlib.NoCompression)
		}
		return zlib.NewWriterLevel(w, c.Level)
	}
	level := c.Level
	if level == 0 {
		level = 5
	}
	return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)), zstd.WithEncoderConcurrency(1))
}

// inflate reads the compressed body of b (version 3, InflatedSize not 0) as
// LLVM main's decompressOffloadBinary does, then the binary it inflates to.
// Without full only the header is checked.
func (b *Binary) inflate(hdr [HeaderSizeV3]byte, entOff uint64, opt *ReadOptions, g *Budget, full bool) (*Binary, error) {
	base := b.Offset
	if entOff > b.Size {
		return nil, errAt(base, 16, "EntriesOffset", entOff, goffload.ErrTruncated)
	}
	if b.InflatedSize < entOff {
		return nil, errAt(base, 32, "InflatedSize", b.InflatedSize, goffload.ErrTruncated)
	}
	if entOff != HeaderSizeV3 {
		// LLVM copies EntriesOffset bytes of its 40-byte header struct: any
		// other offset reads past it or leaves part of the header out.
		return nil, errAt(base, 16, "EntriesOffset (of a compressed binary, into its compressed part)", entOff, goffload.ErrTruncated)
	}
	if b.InflatedSize > opt.maxInflated() {
		return nil, errAt(base, 32, "InflatedSize", b.InflatedSize, goffload.ErrLimit)
	}
	stream := io.NewSectionReader(b.ra, base+HeaderSizeV3, int64(b.Size-HeaderSizeV3))
	var head [4]byte
	n, _ := stream.ReadAt(head[:], 0)
	b.Compression = "zlib"
	if bytes.Equal(head[:n], zstdMagic) {
		b.Compression = "zstd"
	}
	if !full {
		return b, nil
	}
	if err := g.inflate(b.InflatedSize - HeaderSizeV3); err != nil {
		return nil, fmt.Errorf("offload binary at %#x: %w", base, err)
	}
	g.addInput(b.InflatedSize)
	// The header LLVM restores: Size = InflatedSize, InflatedSize = 0.
	le.PutUint64(hdr[8:], b.InflatedSize)
	le.PutUint64(hdr[32:], 0)
	data := &inflater{g: g, ra: b.ra, off: base + HeaderSizeV3, n: int64(b.Size - HeaderSizeV3), zstd: b.Compression == "zstd",
		hdr: hdr, body: b.InflatedSize - HeaderSizeV3, binOff: base}
	if b.InflatedSize > HeaderSizeV3 {
		// The start of the stream, whatever the entries read: a binary of
		// no entries reads none of its body, and LLVM main inflates it
		// whole.
		var first [1]byte
		if _, err := data.ReadAt(first[:], HeaderSizeV3); err != nil {
			return nil, fmt.Errorf("offload binary at %#x, inflated: %w", base, err)
		}
	}
	inner, err := readAt(data, 0, int64(b.InflatedSize), opt, g, true)
	if err != nil {
		return nil, fmt.Errorf("offload binary at %#x, inflated: %w", base, err)
	}
	if inner.InflatedSize != 0 {
		return nil, errAt(base, 32, "InflatedSize of the inflated binary", inner.InflatedSize, goffload.ErrInvalid)
	}
	b.Images, b.data, b.base, b.dataSize = inner.Images, data, 0, b.InflatedSize
	return b, nil
}

// WriteCompressedBinary writes one compressed version-3 OffloadBinary of im
// holding the size bytes of data to w, as LLVM main's OffloadBinary::write
// with compression::Params does: the uncompressed binary's body (everything
// after the 40-byte header) is compressed into one stream, the header gets
// Size = 40 + the stream's size and InflatedSize = the uncompressed binary's
// size, and zero bytes pad the whole to a multiple of 8. The release must
// write version 3 (main after 23, --llvm 24). Memory use does not depend on
// size: the stream is written to a temporary file (removed) to learn its
// size first. It returns the bytes written.
func WriteCompressedBinary(w io.Writer, r *release.Release, im *Image, data io.Reader, size int64, c Compression) (int64, error) {
	return writeCompressed(w, r, []ImageData{{Image: *im, Data: data, Size: size}}, c)
}

// WriteCompressedBinaries writes the binary [WriteBinaries] writes of ims,
// compressed as [WriteCompressedBinary] compresses one: the header (its
// EntriesCount len(ims)), then one zstd or zlib stream of everything after
// it, entries, strings and every image, then zeros to a multiple of 8. The
// release must write version 3 (main after 23, --llvm 24). Memory use does
// not depend on the images' sizes. It returns the bytes written.
func WriteCompressedBinaries(w io.Writer, r *release.Release, ims []ImageData, c Compression) (int64, error) {
	if err := CheckCompression(r, c); err != nil {
		return 0, err
	}
	if err := checkMulti(r, len(ims)); err != nil {
		return 0, err
	}
	return writeCompressed(w, r, ims, c)
}

// CheckCompression reports whether release r writes compressed
// OffloadBinaries (version 3: main after 23, release 24) and c is a format and level
// LLVM takes, with an error matching goffload.ErrUnsupported, goffload.ErrLimit or
// ErrUnknownKind, so that a caller can check before it makes its output.
func CheckCompression(r *release.Release, c Compression) error {
	if err := c.check(); err != nil {
		return err
	}
	if r.BinaryVersion < VersionCompressed {
		return fmt.Errorf("%v writes OffloadBinary version %d, which has no compression (version 3, LLVM 24: main after 23): %w", r, r.BinaryVersion, goffload.ErrUnsupported)
	}
	return nil
}

func writeCompressed(w io.Writer, r *release.Release, ims []ImageData, c Compression) (int64, error) {
	if err := CheckCompression(r, c); err != nil {
		return 0, err
	}
	meta, ls, err := encode(r, ims)
	if err != nil {
		return 0, err
	}
	if err := checkReaders(ims); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp("", "goffload-compress")
	if err != nil {
		return 0, err
	}
	defer tmp.Close()
	os.Remove(tmp.Name())
	cw, err := c.writer(tmp)
	if err != nil {
		return 0, err
	}
	if _, err := cw.Write(meta[HeaderSizeV3:]); err != nil {
		return 0, err
	}
	if _, err := writeImages(cw, ims, ls); err != nil {
		return 0, err
	}
	if err := cw.Close(); err != nil {
		return 0, err
	}
	csize, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	hdr := append([]byte(nil), meta[:HeaderSizeV3]...)
	le.PutUint64(hdr[8:], uint64(HeaderSizeV3+csize))
	le.PutUint64(hdr[32:], ls[0].Size)
	n, err := w.Write(hdr)
	written := int64(n)
	if err != nil {
		return written, err
	}
	m, err := io.Copy(w, tmp)
	written += m
	if err != nil {
		return written, err
	}
	n, err = w.Write(make([]byte, alignUp(uint64(written), Alignment)-uint64(written)))
	return written + int64(n), err
}
