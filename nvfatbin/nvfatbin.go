// Package nvfatbin reads CUDA fat binaries: what NVIDIA's fatbinary writes,
// what clang embeds in a host object's .nv_fatbin section for whole-program
// CUDA, and what the CUDA runtime's __cudaRegisterFatBinary reads. A fat
// binary holds the device code of one program for several GPUs: cubins
// (ELF files of NVIDIA's, one per sm_NN) and PTX (the virtual ISA, compiled
// by the driver at load time).
//
// The layout is NVIDIA's and undocumented; this package reads what CUDA 13's
// fatbinary and clang 22 wrote (the fixtures under offload/testdata/nvidia,
// checked against cuobjdump 13.0), and refuses what it cannot tell:
//
//   - A fat binary starts with a 16-byte header: magic 0xBA55ED50, version
//     (1), header size (16), then the size of the entries that follow, all
//     little-endian. Several fat binaries may follow one another in a
//     section, each at an 8-byte boundary.
//   - Each entry has a header of 64 bytes or more: kind (1 PTX, 2 ELF), a
//     version, the header's size, the payload's size, a compressed size,
//     the PTX ISA version, the sm number (90 for sm_90), the offset and
//     length of an object name, flags, and the payload's size before
//     compression. The payload follows the header.
//
// [File.Entries] lists the entries in order; [Entry.Open] reads a payload
// that is stored as it is (a compressed one is [goffload.ErrUnsupported]);
// [Entry.CuobjdumpName] names an entry as cuobjdump -lelf -lptx does.
// Every cost is bounded by the input's size: an entry's header is at least
// 64 bytes, so there are at most size/64 entries.
package nvfatbin

import (
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/ferr"
)

// Magic starts every fat binary's header (little-endian).
const Magic = 0xBA55ED50

const (
	headerSize      = 16
	entryHeaderSize = 64
)

// Kind is what an entry holds.
type Kind uint16

const (
	KindPTX Kind = 1 // PTX source text
	KindELF Kind = 2 // a cubin: an ELF file of NVIDIA's
)

func (k Kind) String() string {
	switch k {
	case KindPTX:
		return "ptx"
	case KindELF:
		return "elf"
	}
	return fmt.Sprintf("kind(%d)", uint16(k))
}

// Flags of an entry, as far as they are known.
const (
	Flag64Bit    = 0x1    // 64-bit addresses
	FlagDebug    = 0x2    // compiled with -G
	FlagLinux    = 0x10   // for a Linux host
	FlagCompress = 0x2000 // the payload is compressed
)

// File is the fat binaries read from one input, in order.
type File struct {
	Entries []*Entry
}

// Entry is one cubin or PTX file of a fat binary.
type Entry struct {
	Kind Kind
	// Fatbin is the index of the fat binary the entry is in (0 unless
	// several follow one another).
	Fatbin int
	// Version is the entry header's version field; PTXMajor and PTXMinor
	// the ISA version it names.
	Version            uint16
	PTXMajor, PTXMinor uint16
	// SM is the GPU architecture's number: 90 for sm_90.
	SM int
	// Flags are the entry's flags (Flag64Bit, ...).
	Flags uint64
	// Name is the entry's object name, when it has one.
	Name string
	// Offset and Size locate the payload as stored, from the start of the
	// input; CompressedSize and UncompressedSize are the header's fields (0
	// when not compressed).
	Offset, Size                     int64
	CompressedSize, UncompressedSize int64

	r io.ReaderAt
}

// Arch is the entry's architecture as NVIDIA's tools name it: "sm_90".
func (e *Entry) Arch() string { return fmt.Sprintf("sm_%d", e.SM) }

// Compressed reports whether the payload is stored compressed.
func (e *Entry) Compressed() bool { return e.Flags&FlagCompress != 0 || e.CompressedSize != 0 }

// Open returns the payload: a cubin's ELF bytes or PTX text. A compressed
// payload is goffload.ErrUnsupported.
func (e *Entry) Open() (*io.SectionReader, error) {
	if e.Compressed() {
		return nil, fmt.Errorf("fatbin entry %s at %#x: compressed payload: %w", e.Arch(), e.Offset, goffload.ErrUnsupported)
	}
	return io.NewSectionReader(e.r, e.Offset, e.Size), nil
}

// CuobjdumpName is the name cuobjdump gives the entry, the n-th of its kind
// (from 1) in the file input names: the input's base name without its last
// extension, n, the architecture and .cubin or .ptx ("vadd.o" →
// "vadd.1.sm_90.cubin").
func (e *Entry) CuobjdumpName(input string, n int) string {
	base := filepath.Base(input)
	if ext := filepath.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	suffix := ".cubin"
	if e.Kind == KindPTX {
		suffix = ".ptx"
	}
	return fmt.Sprintf("%s.%d.%s%s", base, n, e.Arch(), suffix)
}

// IsFatbin reports whether head (the first bytes of an input) starts with a
// fat binary's magic.
func IsFatbin(head []byte) bool {
	return len(head) >= 4 && binary.LittleEndian.Uint32(head) == Magic
}

// Read reads the fat binaries of the size bytes of r: one, or several one
// after another (each at an 8-byte boundary; zeros after the last are
// padding). Offsets in errors and entries count from r's byte 0.
func Read(r io.ReaderAt, size int64) (*File, error) {
	if err := ferr.CheckInput("fatbin", r, size); err != nil {
		return nil, err
	}
	f := &File{}
	le := binary.LittleEndian
	off := int64(0)
	for n := 0; off < size; n++ {
		// After the first fat binary, zeros to the end are padding: looked
		// at once, where no next header starts.
		var h [headerSize]byte
		if n > 0 && size-off < headerSize && allZero(r, off, size) {
			break
		}
		if err := readFull(r, size, h[:], off, "header"); err != nil {
			return nil, err
		}
		if le.Uint32(h[:]) != Magic {
			if n > 0 && allZero(r, off, size) {
				break
			}
			return nil, fmtErr("bad magic", off, fmt.Sprintf("%q", h[:4]), nil)
		}
		if v := le.Uint16(h[4:]); v != 1 {
			return nil, fmtErr("version", off+4, uint64(v), goffload.ErrUnsupported)
		}
		hs := int64(le.Uint16(h[6:]))
		if hs < headerSize {
			return nil, fmtErr("header size", off+6, uint64(hs), nil)
		}
		fat := le.Uint64(h[8:])
		start := off + hs
		if start > size || fat > uint64(size-start) {
			return nil, fmtErr("fat size", off+8, fat, goffload.ErrTruncated)
		}
		end := start + int64(fat)
		for at := start; at < end; {
			e, next, err := readEntry(r, size, at, end)
			if err != nil {
				return nil, err
			}
			e.Fatbin = n
			f.Entries = append(f.Entries, e)
			at = next
		}
		off = (end + 7) &^ 7
	}
	return f, nil
}

func readEntry(r io.ReaderAt, size, at, end int64) (*Entry, int64, error) {
	le := binary.LittleEndian
	if end-at < entryHeaderSize {
		return nil, 0, fmtErr("entry header", at, uint64(end-at), goffload.ErrTruncated)
	}
	var h [entryHeaderSize]byte
	if err := readFull(r, size, h[:], at, "entry header"); err != nil {
		return nil, 0, err
	}
	e := &Entry{
		Kind:             Kind(le.Uint16(h[0:])),
		Version:          le.Uint16(h[2:]),
		CompressedSize:   int64(le.Uint32(h[16:])),
		PTXMinor:         le.Uint16(h[24:]),
		PTXMajor:         le.Uint16(h[26:]),
		SM:               int(le.Uint32(h[28:])),
		Flags:            le.Uint64(h[40:]),
		UncompressedSize: int64(le.Uint64(h[56:])),
		r:                r,
	}
	if e.Kind != KindPTX && e.Kind != KindELF {
		return nil, 0, fmtErr("entry kind", at, uint64(e.Kind), goffload.ErrUnsupported)
	}
	hs := int64(le.Uint32(h[4:]))
	if hs < entryHeaderSize || hs > end-at {
		return nil, 0, fmtErr("entry header size", at+4, uint64(hs), goffload.ErrTruncated)
	}
	payload := le.Uint64(h[8:])
	if payload > uint64(end-at-hs) {
		return nil, 0, fmtErr("entry size", at+8, payload, goffload.ErrTruncated)
	}
	e.Offset, e.Size = at+hs, int64(payload)
	if nameOff, nameLen := int64(le.Uint32(h[32:])), int64(le.Uint32(h[36:])); nameLen > 0 {
		// The name lies in the entry's header, after its fixed fields.
		if nameOff < entryHeaderSize || nameOff > hs || nameLen > hs-nameOff {
			return nil, 0, fmtErr("entry name", at+32, uint64(nameOff), goffload.ErrTruncated)
		}
		name := make([]byte, nameLen)
		if err := readFull(r, size, name, at+nameOff, "entry name"); err != nil {
			return nil, 0, err
		}
		e.Name = strings.TrimRight(string(name), "\x00")
	}
	return e, at + hs + int64(payload), nil
}

func readFull(r io.ReaderAt, size int64, b []byte, off int64, what string) error {
	if off < 0 || int64(len(b)) > size-off {
		return fmtErr(what, off, uint64(len(b)), goffload.ErrTruncated)
	}
	if n, err := r.ReadAt(b, off); n < len(b) {
		if err == nil || err == io.EOF {
			return fmtErr(what, off, uint64(len(b)), goffload.ErrTruncated)
		}
		return fmt.Errorf("fatbin: reading the %s at %#x: %w", what, off, err)
	}
	return nil
}

// allZero reports whether the bytes of r from off to size are zeros (the
// padding after a section's last fat binary), reading at most 64 KiB.
func allZero(r io.ReaderAt, off, size int64) bool {
	if size-off > 64<<10 {
		return false
	}
	b := make([]byte, size-off)
	if n, _ := r.ReadAt(b, off); n < len(b) {
		return false
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func fmtErr(field string, off int64, value any, err error) error {
	return ferr.New("fatbin", off, field, value, err)
}
