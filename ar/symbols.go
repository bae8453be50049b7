package ar

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/goffload/goffload"
)

// Symbols reads the archive's symbol index and returns its entries in the
// order it stores them, each resolved to the member it names. An archive
// without an index gives nil and no error. The index is read anew on every
// call.
//
// An entry whose offset is not the header of a member is an error: linkers
// would fail on it too, later.
func (a *Archive) Symbols() ([]Symbol, error) {
	ix := a.index
	if ix.format == NoIndex {
		return nil, nil
	}
	data, err := readAt(a.r, ix.data, ix.size)
	if err != nil {
		return nil, err
	}
	var syms []Symbol
	switch ix.format {
	case IndexSysV:
		syms, err = sysvSymbols(data, 4, ix.data)
	case IndexSysV64:
		syms, err = sysvSymbols(data, 8, ix.data)
	case IndexBSD:
		syms, err = bsdSymbols(data, 4, ix.data)
	case IndexBSD64:
		syms, err = bsdSymbols(data, 8, ix.data)
	}
	if err != nil {
		return nil, err
	}
	for i := range syms {
		j, ok := a.member(syms[i].Offset)
		if !ok {
			return nil, formatErr(ix.off, goffload.ErrInvalid, "symbol index %q entry %d (%q) refers to byte %#x, which is not a member header", ix.format.String(), i, syms[i].Name, syms[i].Offset)
		}
		syms[i].Member = j
	}
	return syms, nil
}

// uintN reads a w-byte (4 or 8) unsigned number.
func uintN(bo binary.ByteOrder, b []byte, w int) uint64 {
	if w == 4 {
		return uint64(bo.Uint32(b))
	}
	return bo.Uint64(b)
}

// sysvSymbols decodes a GNU/SysV index of w-byte big-endian numbers: the
// count n, n member offsets, then n NUL-terminated names. base is the
// index's offset in the archive, for errors.
func sysvSymbols(data []byte, w int, base int64) ([]Symbol, error) {
	if len(data) < w {
		return nil, formatErr(base, goffload.ErrTruncated, "%d-byte symbol index has no room for its %d-byte count", len(data), w)
	}
	n := uintN(binary.BigEndian, data, w)
	// Every entry takes w bytes of offset and at least the NUL of its name,
	// so n is checked before anything is allocated for it.
	if n > uint64(len(data)-w)/uint64(w+1) {
		return nil, formatErr(base, goffload.ErrInvalid, "symbol count %d does not fit in the %d-byte symbol index", n, len(data))
	}
	offs, strs := data[w:w+int(n)*w], data[w+int(n)*w:]
	strOff := base + int64(w+int(n)*w)
	syms := make([]Symbol, n)
	for i := range syms {
		off := uintN(binary.BigEndian, offs[i*w:], w)
		if off > math.MaxInt64 {
			return nil, formatErr(base+int64(w+i*w), goffload.ErrInvalid, "symbol %d: member offset %#x overflows", i, off)
		}
		j := bytes.IndexByte(strs, 0)
		if j < 0 {
			return nil, formatErr(strOff, goffload.ErrInvalid, "symbol index has %d names, its count says %d", i, n)
		}
		syms[i] = Symbol{Name: string(strs[:j]), Offset: int64(off)}
		strs, strOff = strs[j+1:], strOff+int64(j+1)
	}
	return syms, nil
}

// bsdSymbols decodes a BSD index of w-byte numbers: the size in bytes of an
// array of ranlib structs {name offset, member offset}, the array, the size
// of the string table, the strings. The numbers are in the byte order of the
// target: LLVM always writes little-endian, old PowerPC tools big-endian, so
// little-endian is taken unless only big-endian gives sizes that fit.
func bsdSymbols(data []byte, w int, base int64) ([]Symbol, error) {
	bo := binary.ByteOrder(binary.LittleEndian)
	ranlibs, strs, ok := bsdLayout(data, w, bo)
	if !ok {
		bo = binary.BigEndian
		if ranlibs, strs, ok = bsdLayout(data, w, bo); !ok {
			return nil, formatErr(base, goffload.ErrInvalid, "BSD symbol index sizes do not fit in its %d bytes in either byte order", len(data))
		}
	}
	syms := make([]Symbol, len(ranlibs)/(2*w))
	for i := range syms {
		e := ranlibs[i*2*w:]
		strx, off := uintN(bo, e, w), uintN(bo, e[w:], w)
		at := base + int64(w+i*2*w)
		if strx >= uint64(len(strs)) {
			return nil, formatErr(at, goffload.ErrInvalid, "symbol %d: name offset %d past the %d-byte string table", i, strx, len(strs))
		}
		name := strs[strx:]
		j := bytes.IndexByte(name, 0)
		if j < 0 {
			return nil, formatErr(at, goffload.ErrInvalid, "symbol %d: name at offset %d is not NUL-terminated", i, strx)
		}
		if off > math.MaxInt64 {
			return nil, formatErr(at+int64(w), goffload.ErrInvalid, "symbol %d: member offset %#x overflows", i, off)
		}
		syms[i] = Symbol{Name: string(name[:j]), Offset: int64(off)}
	}
	return syms, nil
}

// bsdLayout splits a BSD index into its ranlib array and string table if the
// sizes read in byte order bo fit in data.
func bsdLayout(data []byte, w int, bo binary.ByteOrder) (ranlibs, strs []byte, ok bool) {
	if len(data) < 2*w {
		return nil, nil, false
	}
	n := uintN(bo, data, w)
	if n%uint64(2*w) != 0 || n > uint64(len(data)-2*w) {
		return nil, nil, false
	}
	ranlibs, rest := data[w:w+int(n)], data[w+int(n):]
	s := uintN(bo, rest, w)
	if s > uint64(len(rest)-w) {
		return nil, nil, false
	}
	return ranlibs, rest[w : w+int(s)], true
}
