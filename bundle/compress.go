package bundle

import (
	"bufio"
	"compress/zlib"
	"crypto/md5"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/internal/iocount"
	"github.com/goffload/goffload/release"
)

// Compression levels as clang-offload-bundler takes them.
const (
	// ZstdDefaultLevel is the level of clang-offload-bundler -compress with
	// zstd when no -compression-level is given (and of level 0, as libzstd
	// takes it).
	ZstdDefaultLevel = 3
	// ZstdMaxLevel is libzstd's highest level; higher levels are taken for
	// it, as libzstd clamps them.
	ZstdMaxLevel = 22
	// ZstdMinLevel is libzstd's lowest (fastest) level; lower levels are
	// taken for it.
	ZstdMinLevel = -131072
	// ZlibDefaultLevel is the level of a bundler built with zlib alone
	// (llvm::compression::zlib::DefaultCompression).
	ZlibDefaultLevel = 6
)

// ErrCompressOptions: [CompressOptions] that no bundler writes with (a
// version, method, level or window out of range).
var ErrCompressOptions = errors.New("invalid compression options")

// SizeLimitError: a bundle too large for the 32-bit size fields of
// compressed bundle versions 1 and 2, refused as clang-offload-bundler 22
// refuses it ("uncompressed size (N) exceeds version 2 unsigned 32-bit
// integer limit", the same for the total file size). It matches
// [goffload.ErrLimit].
type SizeLimitError struct {
	Version uint16
	Field   string // "uncompressed size" or "total file size"
	Size    uint64
}

func (e *SizeLimitError) Error() string {
	return fmt.Sprintf("offload bundle: %s (%d) exceeds compressed bundle version %d's unsigned 32-bit limit (write version 3)", e.Field, e.Size, e.Version)
}

// Is makes the error match goffload.ErrLimit.
func (e *SizeLimitError) Is(target error) bool { return target == goffload.ErrLimit }

// CompressOptions says how [WriteCompressed] compresses a bundle.
// [CompressDefaults] gives what a release's clang-offload-bundler
// -compress writes.
type CompressOptions struct {
	// Version is the compressed bundle version: 1 (what LLVM 18 writes), 2
	// (19 to 21; 22 with COMPRESSED_BUNDLE_FORMAT_VERSION=2) or 3 (22), as
	// Release.CompressedVersion holds it. Versions 1 and 2 keep sizes in 32
	// bits: a larger bundle gives a [*SizeLimitError].
	Version uint16
	// Method is MethodZstd, what the bundlers of Debian's LLVM (built with
	// zstd) write, or MethodZlib, what a bundler built without zstd writes.
	// The zero value is MethodZlib (the number LLVM gives it).
	Method Method
	// Level is the bundler's -compression-level. 0 is the method's default:
	// ZstdDefaultLevel (3) or ZlibDefaultLevel (6). zstd takes any level, as
	// libzstd does: above 22 is 22, below ZstdMinLevel is ZstdMinLevel, and
	// negative levels are the fastest. zlib takes 1 to 9, and -1 for its
	// default (zlib's level 0, stored blocks, is not written).
	Level int
	// Window is the zstd window, a power of two from 1 KiB to
	// DefaultMaxWindow (128 MiB, the most that [Compressed.Open] reads by
	// default); 0 is the level's default (4 MiB for levels below 3, else 8
	// MiB). It bounds how far back the compressor finds matches, and the
	// memory of compressing and of decompressing (the bundler's zstd uses
	// long-distance matching with a 128 MiB window, which goffload's zstd
	// has not). Not for zlib, whose window is 32 KiB.
	Window int
	// TempDir is where WriteCompressed keeps the compressed stream when w
	// cannot be written at an offset (see WriteCompressed); "" is
	// os.TempDir().
	TempDir string
}

// Check reports options out of range, with an error matching
// [ErrCompressOptions].
func (o *CompressOptions) Check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("offload bundle: %s: %w", fmt.Sprintf(format, args...), ErrCompressOptions)
	}
	if HeaderSize(o.Version) == 0 {
		return bad("compressed bundle version %d (want 1, 2 or 3)", o.Version)
	}
	switch o.Method {
	case MethodZstd:
		w := o.Window
		if w != 0 && (w < zstd.MinWindowSize || w > DefaultMaxWindow || w&(w-1) != 0) {
			return bad("zstd window %d (want a power of two from %d to %d)", w, zstd.MinWindowSize, DefaultMaxWindow)
		}
	case MethodZlib:
		if o.Level < -1 || o.Level > 9 {
			return bad("zlib level %d (want 1 to 9, or 0 or -1 for the default, %d)", o.Level, ZlibDefaultLevel)
		}
		if o.Window != 0 {
			return bad("a window of %d for zlib (its window is 32 KiB)", o.Window)
		}
	default:
		return bad("compression method %d (want zlib, 0, or zstd, 1)", uint16(o.Method))
	}
	return nil
}

// EffectiveLevel returns the level that o compresses at: the method's
// default for 0 (and zlib's -1), a zstd level clamped to libzstd's range.
func (o *CompressOptions) EffectiveLevel() int {
	switch {
	case o.Method == MethodZlib && (o.Level == 0 || o.Level == -1):
		return ZlibDefaultLevel
	case o.Method == MethodZlib:
		return o.Level
	case o.Level == 0:
		return ZstdDefaultLevel
	}
	return min(max(o.Level, ZstdMinLevel), ZstdMaxLevel)
}

// zstdEncoderLevel is the github.com/klauspost/compress/zstd level nearest
// to libzstd's level: fastest below 3, default to 5, better to 9, best above.
func zstdEncoderLevel(level int) zstd.EncoderLevel {
	return zstd.EncoderLevelFromZstd(level)
}

// WriteCompressed writes to w the compressed bundle of the size bytes of src
// (an uncompressed bundle, though any bytes are compressed) as
// clang-offload-bundler -compress writes it: the header of opt.Version
// ("CCOB", version, method, the sizes, the hash of src), then one zstd frame
// or zlib stream. It returns the header written.
//
// The header's fields are those the bundler writes for the same input:
// FileSize is the header's size plus the stream's, UncompressedSize is size
// and Hash the first 8 bytes, little-endian, of the MD5 of src. The stream
// is not libzstd's or libz's bytes: zstd comes from
// github.com/klauspost/compress/zstd (one frame holding the content size, no
// checksum, as libzstd writes it, in blocks; no long-distance matching) and
// zlib from compress/zlib, so FileSize differs from the bundler's. Both
// bundlers and [Compressed.Open] read it back to the same bytes. The output
// depends only on src and opt, not on the machine.
//
// It is streamed: src is read once, in order, and memory is bounded by the
// zstd window (opt.Window) and a few MiB whatever size is. Since the header,
// which comes first, holds the stream's size and the hash, WriteCompressed
// writes the header last when w is an io.WriterAt and an io.Seeker (an
// *os.File that is not in append mode): it writes the stream after room for
// the header, from w's current offset, then the header at that offset with
// WriteAt, leaving w's offset at the end of the bundle. Any other w gets the
// bundle in order, the stream having first been compressed into a temporary
// file in opt.TempDir (removed at once: it has no name while it is written).
//
// Versions 1 and 2 refuse a size or a bundle over 2^32-1 bytes with a
// [*SizeLimitError] (a size before reading src; a bundle, when w is written
// in place, after w has received it whole but for the header); options out
// of range give an error matching [ErrCompressOptions]; a src shorter than
// size, an error wrapping io.ErrUnexpectedEOF. On error, w may hold part of
// the bundle.
func WriteCompressed(w io.Writer, src io.ReaderAt, size int64, opt CompressOptions) (*CompressedHeader, error) {
	if w == nil {
		return nil, fmt.Errorf("offload bundle: nil io.Writer: %w", fs.ErrInvalid)
	}
	if err := ferr.CheckInput("offload bundle", src, size); err != nil {
		return nil, err
	}
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if opt.Version < 3 && uint64(size) > math.MaxUint32 {
		return nil, &SizeLimitError{Version: opt.Version, Field: "uncompressed size", Size: uint64(size)}
	}
	h := &CompressedHeader{Version: opt.Version, Method: opt.Method, UncompressedSize: uint64(size)}
	hs := int64(HeaderSize(opt.Version))
	if wa, ok := w.(interface {
		io.WriterAt
		io.Seeker
	}); ok {
		if start, err := wa.Seek(0, io.SeekCurrent); err == nil {
			// Room for the header, written where it goes: this fails at
			// once for a file in append mode, which then gets a spool.
			if _, err := wa.WriteAt(h.bytes(), start); err == nil {
				if _, err := wa.Seek(start+hs, io.SeekStart); err != nil {
					return nil, err
				}
				n, sum, err := compressStream(w, src, size, &opt)
				if err != nil {
					return nil, err
				}
				if err := h.finish(hs+n, sum); err != nil {
					return nil, err
				}
				if _, err := wa.WriteAt(h.bytes(), start); err != nil {
					return nil, err
				}
				return h, nil
			}
		}
	}
	tmp, err := os.CreateTemp(opt.TempDir, "goffload-ccob-*")
	if err != nil {
		return nil, fmt.Errorf("offload bundle: the compressed stream's temporary file: %w", err)
	}
	defer tmp.Close()
	if os.Remove(tmp.Name()) != nil {
		defer os.Remove(tmp.Name()) // where an open file cannot be removed
	}
	n, sum, err := compressStream(tmp, src, size, &opt)
	if err != nil {
		return nil, err
	}
	if err := h.finish(hs+n, sum); err != nil {
		return nil, err
	}
	if _, err := w.Write(h.bytes()); err != nil {
		return nil, err
	}
	if _, err := io.CopyBuffer(onlyWriter{w}, io.NewSectionReader(tmp, 0, n), make([]byte, 1<<20)); err != nil {
		return nil, err
	}
	return h, nil
}

// onlyWriter hides a writer's ReadFrom, so that io.CopyBuffer uses its
// buffer.
type onlyWriter struct{ io.Writer }

// finish sets the file size and the hash, checking the file size against
// version 1 and 2's 32 bits.
func (h *CompressedHeader) finish(fileSize int64, sum uint64) error {
	if h.Version < 3 && uint64(fileSize) > math.MaxUint32 {
		return &SizeLimitError{Version: h.Version, Field: "total file size", Size: uint64(fileSize)}
	}
	if h.Version >= 2 {
		h.FileSize = uint64(fileSize)
	}
	h.Hash = sum
	return nil
}

// bytes returns the header as LLVM writes it.
func (h *CompressedHeader) bytes() []byte {
	b := make([]byte, 0, 32)
	b = append(b, CompressedMagic...)
	b = le.AppendUint16(b, h.Version)
	b = le.AppendUint16(b, uint16(h.Method))
	switch h.Version {
	case 1:
		b = le.AppendUint32(b, uint32(h.UncompressedSize))
	case 2:
		b = le.AppendUint32(b, uint32(h.FileSize))
		b = le.AppendUint32(b, uint32(h.UncompressedSize))
	default:
		b = le.AppendUint64(b, h.FileSize)
		b = le.AppendUint64(b, h.UncompressedSize)
	}
	return le.AppendUint64(b, h.Hash)
}

// compressStream compresses the size bytes of src into w, reading them
// once, and returns the stream's size and the truncated MD5 of the bytes.
func compressStream(w io.Writer, src io.ReaderAt, size int64, opt *CompressOptions) (int64, uint64, error) {
	cw := &iocount.Writer{W: w}
	bw := bufio.NewWriterSize(cw, 256<<10)
	var enc io.WriteCloser
	switch opt.Method {
	case MethodZstd:
		ze, err := zstdEncoder(zstdEncoderLevel(opt.EffectiveLevel()), opt.Window)
		if err != nil {
			return 0, 0, fmt.Errorf("offload bundle: zstd encoder: %w", err)
		}
		defer zstdEncoders.put(ze, zstdEncoderLevel(opt.EffectiveLevel()), opt.Window)
		ze.ResetContentSize(bw, size)
		enc = ze
	default:
		zw, err := zlib.NewWriterLevel(bw, opt.EffectiveLevel())
		if err != nil {
			return 0, 0, fmt.Errorf("offload bundle: zlib: %w", err)
		}
		enc = zw
	}
	md := md5.New()
	in := &hashingReader{r: io.NewSectionReader(src, 0, size), h: md}
	_, err := io.CopyBuffer(onlyWriter{enc}, in, make([]byte, 1<<20))
	if err == nil && in.n != size {
		err = fmt.Errorf("offload bundle: input: %d of %d bytes: %w", in.n, size, io.ErrUnexpectedEOF)
	}
	if err != nil {
		enc.Close() // ends the encoder's goroutines
		return 0, 0, err
	}
	if err := enc.Close(); err != nil {
		return 0, 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, 0, err
	}
	return cw.N, le.Uint64(md.Sum(nil)), nil
}

// zstdEncoders keeps the zstd encoders of past streams, by level and
// window, for the next: a new encoder allocates and clears its history
// buffers (megabytes), which cost more than compressing a small bundle.
var zstdEncoders encoderPool

type encoderKey struct {
	level  zstd.EncoderLevel
	window int
}

type encoderPool struct {
	mu    sync.Mutex
	pools map[encoderKey]*sync.Pool
}

func (p *encoderPool) pool(k encoderKey) *sync.Pool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pools == nil {
		p.pools = map[encoderKey]*sync.Pool{}
	}
	if p.pools[k] == nil {
		p.pools[k] = new(sync.Pool)
	}
	return p.pools[k]
}

func (p *encoderPool) put(e *zstd.Encoder, level zstd.EncoderLevel, window int) {
	e.Reset(nil) // drops the writer it held
	p.pool(encoderKey{level, window}).Put(e)
}

// zstdEncoder returns an encoder of the level and window (0: the level's
// default), a kept one if there is one. Its options are the same whether
// kept or new, so are the bytes it writes.
func zstdEncoder(level zstd.EncoderLevel, window int) (*zstd.Encoder, error) {
	if e, ok := zstdEncoders.pool(encoderKey{level, window}).Get().(*zstd.Encoder); ok {
		return e, nil
	}
	zopts := []zstd.EOption{
		zstd.WithEncoderLevel(level),
		zstd.WithEncoderConcurrency(zstdConcurrency()),
		zstd.WithEncoderCRC(false), // libzstd's default, which LLVM keeps
		zstd.WithZeroFrames(true),  // a frame for no bytes too, as libzstd writes
	}
	if window != 0 {
		zopts = append(zopts, zstd.WithWindowSize(window))
	}
	return zstd.NewWriter(nil, zopts...)
}

// zstdConcurrency is the encoder's: with two goroutines it finds the
// matches of a block while the previous one is entropy coded, which gives
// the bytes that one goroutine gives (TestCompressDeterministic).
func zstdConcurrency() int { return min(runtime.GOMAXPROCS(0), 2) }

// hashingReader hashes and counts what is read through it.
type hashingReader struct {
	r io.Reader
	h hash.Hash
	n int64
}

func (r *hashingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	return n, err
}

// CompressDefaults returns what release r's clang-offload-bundler -compress
// writes, as clang-linker-wrapper --compress has it write a HIP fatbin: its
// compressed bundle version, zstd, and the default level (Level 0; set Level
// for -compression-level). Version is 0 for a release whose bundler does not
// compress (17).
func CompressDefaults(r *release.Release) CompressOptions {
	return CompressOptions{Version: r.Bundle.HIPFatbin.CompressedVersion, Method: MethodZstd}
}

// ReleaseCompressOptions returns what release r's clang-linker-wrapper --compress
// [--compression-level=LEVEL] has its clang-offload-bundler write: the
// release's compressed bundle version, with method (MethodZstd, or
// MethodZlib as a bundler built without zstd writes) at level (0: the
// method's default). A release whose bundler does not compress (before
// 18) gives an error matching goffload.ErrUnsupported; a level the method
// does not take, one matching [ErrCompressOptions].
func ReleaseCompressOptions(r *release.Release, method Method, level int) (CompressOptions, error) {
	if r.Bundle.HIPFatbin.CompressedVersion == 0 {
		return CompressOptions{}, fmt.Errorf("offload bundle: the clang-offload-bundler of LLVM %d does not compress (LLVM 18 and later do): %w", r.Major, goffload.ErrUnsupported)
	}
	o := CompressDefaults(r)
	o.Method, o.Level = method, level
	if err := o.Check(); err != nil {
		return CompressOptions{}, err
	}
	return o, nil
}

// ParseMethod returns the method named "zstd" or "zlib".
func ParseMethod(name string) (Method, error) {
	for m, n := range methodNames {
		if n == name {
			return Method(m), nil
		}
	}
	return 0, fmt.Errorf("offload bundle: compression format %q (want zstd or zlib): %w", name, ErrCompressOptions)
}

// Compress returns the bundle b compressed with opt, as clang-offload-bundler
// -compress writes it: the compressed bundle is written to a scratch file
// that has no name (it is freed with the reader), never held in memory.
func Compress(b *io.SectionReader, opt CompressOptions) (*io.SectionReader, error) {
	f, err := atomicfile.Scratch()
	if err != nil {
		return nil, err
	}
	if _, err := WriteCompressed(f, b, b.Size(), opt); err != nil {
		f.Close()
		return nil, err
	}
	n, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		f.Close()
		return nil, err
	}
	return io.NewSectionReader(f, 0, n), nil
}

// WriteCompressedHIPFatbin writes the HIP fatbin of images compressed with
// opt (see [WriteCompressed]): what release r's clang-linker-wrapper
// --compress has clang-offload-bundler write, with
// opt = CompressDefaults(r), but for the compressed stream's bytes (an
// opt.Version of 0 is the release's). It returns the header written.
func WriteCompressedHIPFatbin(w io.Writer, r *release.Release, images []CodeObject, opt CompressOptions) (*CompressedHeader, error) {
	if opt.Version == 0 {
		if r.Bundle.HIPFatbin.CompressedVersion == 0 {
			return nil, fmt.Errorf("offload bundle: the clang-offload-bundler of LLVM %d does not compress: %w", r.Major, ErrCompressOptions)
		}
		opt.Version = r.Bundle.HIPFatbin.CompressedVersion
	}
	fb, err := HIPFatbin(r, images)
	if err != nil {
		return nil, err
	}
	return WriteCompressed(w, fb, fb.Size(), opt)
}
