package bundle

import (
	"bufio"
	"compress/zlib"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/ferr"
)

// CompressedMagic starts a compressed bundle.
const CompressedMagic = "CCOB"

// Method is the compression method of a compressed bundle: the number of
// llvm::compression::Format.
type Method uint16

const (
	MethodZlib Method = 0 // Format::Zlib
	MethodZstd Method = 1 // Format::Zstd, what bundlers built with zstd write
)

var methodNames = [...]string{"zlib", "zstd"}

func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return "Method(" + strconv.Itoa(int(m)) + ")"
}

// CompressedHeader is the header of a compressed bundle, all fields
// little-endian:
//
//	version 1: "CCOB", uint16 Version, uint16 Method, uint32 UncompressedSize, uint64 Hash  (20 bytes)
//	version 2: "CCOB", uint16 Version, uint16 Method, uint32 FileSize, uint32 UncompressedSize, uint64 Hash  (24 bytes)
//	version 3: "CCOB", uint16 Version, uint16 Method, uint64 FileSize, uint64 UncompressedSize, uint64 Hash  (32 bytes)
//
// The compressed stream (one zlib stream, or zstd frames) follows the header.
type CompressedHeader struct {
	Version uint16
	Method  Method
	// FileSize is the size of the whole compressed bundle, header included
	// (versions 2 and 3; 0 in version 1). The bundlers of LLVM 19 and 22 do
	// not use it when unbundling: the stream runs to the end of the input.
	FileSize uint64
	// UncompressedSize is the size of the bundle once decompressed. LLVM
	// refuses more data than this and accepts less.
	UncompressedSize uint64
	// Hash is the first 8 bytes, little-endian, of the MD5 of the
	// uncompressed bundle. LLVM only prints it; see [Hash] to check it.
	Hash uint64
}

// HeaderSize returns the size of the header of version v, or 0 for a
// version LLVM does not know.
func HeaderSize(v uint16) int {
	switch v {
	case 1:
		return 20
	case 2:
		return 24
	case 3:
		return 32
	}
	return 0
}

// DefaultMaxWindow is the largest zstd window [Compressed.Open] accepts when
// Compressed.MaxWindow is 0: 128 MiB, the limit of libzstd's streaming
// decoder, which covers every level clang-offload-bundler compresses at
// (long-distance matching with a 2^27 window). A single-segment frame's
// window is its content size.
const DefaultMaxWindow = 1 << 27

// DefaultMaxHeaderSize is the largest bundle header [Compressed.Entries]
// decompresses when Compressed.MaxHeaderSize is 0: 1 MiB, room for some
// 40000 entries with IDs of a target triple and a target ID (the bundler
// writes one per -targets item, a few dozen bytes each).
const DefaultMaxHeaderSize = 1 << 20

// MaxCompressedIDLength is the longest entry ID [Compressed.Entries]
// accepts: 4 KiB. The IDs clang-offload-bundler writes are a kind, a target
// triple and a target ID ("hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"),
// under 100 bytes; extracted entries are named after them, and file names
// stop at 255 bytes. An uncompressed bundle's IDs are bounded by its size.
const MaxCompressedIDLength = 4 << 10

// Compressed is a compressed bundle whose header has been read.
type Compressed struct {
	CompressedHeader
	// DataOffset is where the compressed stream starts: the header's size.
	DataOffset int64
	// MaxWindow bounds the memory of zstd decompression: a frame whose
	// window is larger gives [goffload.ErrLimit]. 0 means [DefaultMaxWindow]; a
	// value under 1 KiB, zstd's smallest window, means 1 KiB.
	MaxWindow int64
	// MaxHeaderSize bounds the bundle header that [Compressed.Entries]
	// decompresses: the magic, the count and every entry header with its
	// ID. A header declaring more gives [goffload.ErrLimit] before it is
	// read. 0 means [DefaultMaxHeaderSize].
	MaxHeaderSize int64

	r    io.ReaderAt
	size int64
}

// ReadCompressed reads the header of the compressed bundle held in the size
// bytes of r, checking it as clang-offload-bundler 22 does: versions 1, 2 and
// 3, methods zlib and zstd. (LLVM 19 reads versions 1 and 2 and takes any
// other version for 1.) An input that does not start with "CCOB" and 4 more
// bytes gives [ErrNotBundle]; a header cut short, [goffload.ErrTruncated]. A nil r or
// a negative size is an argument error matching fs.ErrInvalid.
func ReadCompressed(r io.ReaderAt, size int64) (*Compressed, error) {
	if err := ferr.CheckInput("offload bundle", r, size); err != nil {
		return nil, err
	}
	var hdr [32]byte
	n := min(int64(len(hdr)), size)
	if err := readFull(r, hdr[:n], 0); err != nil {
		return nil, err
	}
	if n < int64(minCompressed) || string(hdr[:4]) != CompressedMagic {
		return nil, fieldErr(0, "magic", string(hdr[:min(n, int64(minCompressed))]), ErrNotBundle)
	}
	c := &Compressed{r: r, size: size}
	c.Version = le.Uint16(hdr[4:])
	c.Method = Method(le.Uint16(hdr[6:]))
	hs := HeaderSize(c.Version)
	if hs == 0 {
		return nil, formatErr(4, "compressed header version", uint64(c.Version), goffload.ErrUnsupported)
	}
	if n < int64(hs) {
		return nil, fieldErr(n, fmt.Sprintf("version %d compressed header cut to %d of %d bytes", c.Version, n, hs), nil, goffload.ErrTruncated)
	}
	switch c.Version {
	case 1:
		c.UncompressedSize = uint64(le.Uint32(hdr[8:]))
		c.Hash = le.Uint64(hdr[12:])
	case 2:
		c.FileSize = uint64(le.Uint32(hdr[8:]))
		c.UncompressedSize = uint64(le.Uint32(hdr[12:]))
		c.Hash = le.Uint64(hdr[16:])
	case 3:
		c.FileSize = le.Uint64(hdr[8:])
		c.UncompressedSize = le.Uint64(hdr[16:])
		c.Hash = le.Uint64(hdr[24:])
	}
	if c.Method != MethodZlib && c.Method != MethodZstd {
		return nil, formatErr(6, "compression method", uint64(c.Method), goffload.ErrUnsupported)
	}
	c.DataOffset = int64(hs)
	return c, nil
}

// uncompressedSizeOffset is where the header keeps UncompressedSize.
func (c *Compressed) uncompressedSizeOffset() int64 {
	switch c.Version {
	case 1:
		return 8
	case 2:
		return 12
	}
	return 16
}

// Open returns a reader of the uncompressed bundle, decompressing as it is
// read, from DataOffset to the end of the input. Its memory is bounded by the
// zstd window (at most MaxWindow, allocated when a frame's first block is
// decoded) plus at most 1 MiB, or by zlib's 32 KiB window; never by
// UncompressedSize. It decompresses in the goroutine that reads and starts
// none, so a reader left half read holds nothing but memory. Reading more
// than UncompressedSize bytes gives [goffload.ErrLimit], data that does not
// decompress [goffload.ErrInvalid] or [goffload.ErrTruncated], a zstd frame that needs a
// dictionary [goffload.ErrUnsupported], each in a [*goffload.FormatError] with the offset in
// the input: of the field for a frame header, else how far the input had
// been read (zstd reads a block whole before decoding it). A zstd frame
// checksum is checked, as libzstd does; the header's MD5 Hash is not (see
// [Hash]). zstd is decoded by github.com/klauspost/compress/zstd.
func (c *Compressed) Open() io.Reader {
	src := io.NewSectionReader(c.r, c.DataOffset, c.size-c.DataOffset)
	d := &decompressor{c: c, left: c.UncompressedSize}
	switch c.Method {
	case MethodZstd:
		maxWin := c.MaxWindow
		if maxWin <= 0 {
			maxWin = DefaultMaxWindow
		}
		d.dec = newZstdReader(src, c.DataOffset, maxWin)
	default:
		d.zsrc = &countingReader{r: bufio.NewReader(src), off: c.DataOffset}
	}
	return d
}

// release gives the zstd decoder, if any, to the next stream: d is not read
// again.
func (d *decompressor) release() {
	if z, ok := d.dec.(*zstdReader); ok {
		z.release()
	}
	d.err = errReleased
}

// errReleased is what a released decompressor reads.
var errReleased = errors.New("offload bundle: the decompressor was released")

type decompressor struct {
	c    *Compressed
	dec  io.Reader
	zsrc *countingReader // zlib input, until the zlib reader is made
	left uint64
	err  error
}

func (d *decompressor) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if d.dec == nil {
		zr, err := zlib.NewReader(d.zsrc)
		if err != nil {
			d.err = d.zlibErr(err)
			return 0, d.err
		}
		d.dec = zr
	}
	n, err := d.dec.Read(p)
	if uint64(n) > d.left {
		d.err = formatErr(d.c.uncompressedSizeOffset(), "data too large for UncompressedSize", d.c.UncompressedSize, goffload.ErrLimit)
		return 0, d.err
	}
	d.left -= uint64(n)
	if err != nil && err != io.EOF && d.zsrc != nil {
		err = d.zlibErr(err)
	}
	if err != nil {
		d.err = err
	}
	return n, err
}

func (d *decompressor) zlibErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fieldErr(d.zsrc.off, "zlib stream cut short", nil, goffload.ErrTruncated)
	}
	return fieldErr(d.zsrc.off, "zlib stream", nil, fmt.Errorf("%w: %w", errCorrupt, err))
}

// countingReader counts the bytes read through it, for error offsets.
type countingReader struct {
	r   *bufio.Reader
	off int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.off += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.off++
	}
	return b, err
}

// Decompress writes the uncompressed bundle of the compressed bundle held in
// the size bytes of r to w and returns its size. To read a compressed bundle
// without holding it in memory, decompress it to a temporary file and [Read]
// that.
func Decompress(w io.Writer, r io.ReaderAt, size int64) (int64, error) {
	c, err := ReadCompressed(r, size)
	if err != nil {
		return 0, err
	}
	return io.Copy(w, c.Open())
}

// Hash returns the hash that a compressed bundle's header keeps for the
// uncompressed bundle read from r: the first 8 bytes, little-endian, of its
// MD5 (llvm::MD5::MD5Result::low).
func Hash(r io.Reader) (uint64, error) {
	h := md5.New()
	if _, err := io.Copy(h, r); err != nil {
		return 0, err
	}
	return le.Uint64(h.Sum(nil)), nil
}
