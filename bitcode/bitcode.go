// Package bitcode reads the two things of an LLVM bitcode file that
// offloading needs, with a bitstream reader of its own (blocks, BLOCKINFO
// and abbreviations as llvm/Bitstream reads them):
//
//   - [Symbols]: its IR symbol table (the SYMTAB_BLOCK and STRTAB_BLOCK that
//     LLVM 5 and later append after the modules, laid out as
//     llvm/Object/IRSymtab.h's storage structures). llvm-ar and
//     clang-offload-bundler -type=a take an archive member's symbols from
//     it; the modules themselves are skipped by their block lengths.
//   - [EmbeddedObjects]: the objects a module embeds through its named
//     metadata llvm.embedded.objects, as LLVM's offloading tools read them:
//     the device code of a host object of `clang -flto`, OffloadBinaries in
//     section .llvm.offloading. The module's types, global values, constants
//     and metadata are read for it; function bodies are skipped.
//
// The device code of a host object, for example:
//
//	objs, err := bitcode.EmbeddedObjects(f, size)
//	for _, o := range objs {
//		if o.Section == bitcode.OffloadingSection {
//			bins, err := offloadbinary.ReadAllBytes(o.Data, nil)
//			...
//		}
//	}
//
// # Security
//
// The readers are meant for untrusted input: every length and offset is
// checked against the file before it is used, what is decoded and kept is
// bounded by the input's size (EmbeddedObjects documents its bound), and
// bad input gives an error matching [goffload.ErrInvalid], never a panic.
package bitcode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/ferr"
)

var (
	// ErrNoSymtab: bitcode without an IR symbol table (made before LLVM 5).
	ErrNoSymtab = errors.New("bitcode without a symbol table")
)

const (
	blockStrtab = 23 // STRTAB_BLOCK_ID
	blockSymtab = 25 // SYMTAB_BLOCK_ID
	recordBlob  = 1  // STRTAB_BLOB and SYMTAB_BLOB
)

// The flag bits of a storage::Symbol: the visibility in the low two bits
// (0 default, 1 hidden, 2 protected), then one bit a flag.
const (
	visibilityMask      = 3
	visibilityHidden    = 1
	visibilityProtected = 2
	flagHasUncommon     = 1 << 2
	flagUndefined       = 1 << 3
	flagWeak            = 1 << 4
	flagCommon          = 1 << 5
	flagMayOmit         = 1 << 9
	flagGlobal          = 1 << 10
	flagFormatSpecific  = 1 << 11
)

// Symbol is one symbol of the IR symbol table.
type Symbol struct {
	Name  string // mangled
	Flags uint32 // storage::Symbol::Flags
	// Section is the section the symbol's global is placed in by name
	// (a section attribute; the table's "uncommon" part), or "".
	Section string
}

// Undefined, Global and FormatSpecific read the symbol's flags.
func (s Symbol) Undefined() bool      { return s.Flags&flagUndefined != 0 }
func (s Symbol) Global() bool         { return s.Flags&flagGlobal != 0 }
func (s Symbol) FormatSpecific() bool { return s.Flags&flagFormatSpecific != 0 }

// Weak, Hidden and MayOmit read the symbol's flags too: weak linkage,
// hidden visibility, and whether it may be left out of a symbol table
// (a linkonce_odr unnamed_addr definition).
func (s Symbol) Weak() bool    { return s.Flags&flagWeak != 0 }
func (s Symbol) Hidden() bool  { return s.Flags&visibilityMask == visibilityHidden }
func (s Symbol) MayOmit() bool { return s.Flags&flagMayOmit != 0 }

// Protected reports protected visibility; Common, a common symbol.
func (s Symbol) Protected() bool { return s.Flags&visibilityMask == visibilityProtected }
func (s Symbol) Common() bool    { return s.Flags&flagCommon != 0 }

// ArchiveSymbol reports whether an archive's symbol index lists the symbol:
// global, defined and not format-specific, as LLVM's archive writer decides.
func (s Symbol) ArchiveSymbol() bool { return s.Global() && !s.Undefined() && !s.FormatSpecific() }

// IsBitcode reports whether b starts as a bitcode file or a bitcode wrapper.
func IsBitcode(b []byte) bool {
	return len(b) >= 4 && (string(b[:4]) == "BC\xc0\xde" || binary.LittleEndian.Uint32(b) == wrapperMagic)
}

const wrapperMagic = 0x0B17C0DE

func formatErr(off int64, what string, val any) error {
	return ferr.New("bitcode", off, what, val, goffload.ErrInvalid)
}

// truncErr is formatErr for what lies past the end of the input: it matches
// goffload.ErrTruncated too.
func truncErr(off int64, what string, val any) error {
	return ferr.New("bitcode", off, what, val, goffload.ErrTruncated)
}

// shortRead is the error of a reader that ends at byte off, before the size
// its caller gave, or its own error.
func shortRead(off int64, err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return truncErr(off, "input shorter than its size", nil)
	}
	return fmt.Errorf("bitcode: reading at byte %#x: %w", off, err)
}

// Symbols returns the symbols of the IR symbol table of the bitcode file
// held in the size bytes of r, in the table's order.
func Symbols(r io.ReaderAt, size int64) ([]Symbol, error) {
	if err := ferr.CheckInput("bitcode", r, size); err != nil {
		return nil, err
	}
	base, end, err := stream(r, size)
	if err != nil {
		return nil, err
	}
	br := &bitReader{r: r, base: base, bits: uint64(end-base) * 8}
	var symtab, strtab []byte
	var symtabAt int64 // where symtab is in the file
	for br.left() >= 32 {
		id, err := br.fixed(2)
		if err != nil {
			return nil, err
		}
		if id != 1 { // only blocks at the top level; the rest is padding
			if id == 0 && br.allZero() {
				break
			}
			return nil, formatErr(br.byteOff(), "top-level abbreviation ID", id)
		}
		blockID, width, words, err := br.enterBlock()
		if err != nil {
			return nil, err
		}
		bodyEnd := br.pos + words*32
		if words > br.left()/32 {
			return nil, truncErr(br.byteOff()-4, fmt.Sprintf("block %d length past the end", blockID), words)
		}
		if blockID == blockSymtab || blockID == blockStrtab {
			blob, err := br.blobRecord(width, bodyEnd)
			if err != nil {
				return nil, err
			}
			if blockID == blockSymtab {
				symtab, symtabAt = blob, br.blobAt
			} else {
				strtab = blob
			}
		}
		br.pos = bodyEnd
	}
	if symtab == nil {
		return nil, ErrNoSymtab
	}
	return readSymtab(symtab, strtab, symtabAt)
}

// stream returns where the bitstream starts and ends: after the magic, or
// inside a bitcode wrapper.
func stream(r io.ReaderAt, size int64) (start, end int64, err error) {
	var h [20]byte
	n, err := r.ReadAt(h[:min(size, 20)], 0)
	if int64(n) < min(size, 20) {
		return 0, 0, shortRead(int64(n), err)
	}
	switch {
	case n >= 4 && string(h[:4]) == "BC\xc0\xde":
		return 4, size, nil
	case n == 20 && binary.LittleEndian.Uint32(h[:]) == wrapperMagic:
		off, sz := int64(binary.LittleEndian.Uint32(h[8:])), int64(binary.LittleEndian.Uint32(h[12:]))
		switch {
		case off < 20 || sz < 4:
			return 0, 0, formatErr(8, "wrapper offset and size", [2]int64{off, sz})
		case off > size || sz > size-off:
			return 0, 0, truncErr(8, "wrapper offset and size past the end", [2]int64{off, sz})
		}
		var m [4]byte
		if k, err := r.ReadAt(m[:], off); k < len(m) {
			return 0, 0, shortRead(off+int64(k), err)
		}
		if string(m[:]) != "BC\xc0\xde" {
			return 0, 0, formatErr(off, "wrapped magic", m[:])
		}
		return off + 4, off + sz, nil
	case n < 4 && string(h[:n]) == "BC\xc0\xde"[:n]:
		return 0, 0, truncErr(0, fmt.Sprintf("magic cut to %d of 4 bytes", n), nil)
	}
	return 0, 0, formatErr(0, "magic", h[:min(n, 4)])
}

// readSymtab reads the symbols of an irsymtab storage::Header, which is at
// byte at of the file, and its string table: each symbol's name and flags,
// and the section name of those with an "uncommon" record (taken in order,
// one for each symbol whose flags say it has one).
func readSymtab(symtab, strtab []byte, at int64) ([]Symbol, error) {
	le := binary.LittleEndian
	if len(symtab) < 36 {
		return nil, truncErr(at, fmt.Sprintf("symbol table header cut to %d of 36 bytes", len(symtab)), nil)
	}
	off, count := uint64(le.Uint32(symtab[28:])), uint64(le.Uint32(symtab[32:]))
	const symSize = 24 // Name, IRName (Str each), ComdatIndex, Flags
	if off > uint64(len(symtab)) || count > (uint64(len(symtab))-off)/symSize {
		return nil, truncErr(at+28, "symbol range (offset, count) past the table", [2]uint64{off, count})
	}
	// The uncommon records: CommonSize, CommonAlign, the COFF weak
	// external's fallback name (Str) and the section name (Str).
	const uncSize = 24
	var uncOff, uncCount uint64
	if len(symtab) >= 44 {
		uncOff, uncCount = uint64(le.Uint32(symtab[36:])), uint64(le.Uint32(symtab[40:]))
		if uncOff > uint64(len(symtab)) || uncCount > (uint64(len(symtab))-uncOff)/uncSize {
			return nil, truncErr(at+36, "uncommon range (offset, count) past the table", [2]uint64{uncOff, uncCount})
		}
	}
	str := func(b []byte, where int64, what string) (string, error) {
		noff, nlen := uint64(le.Uint32(b)), uint64(le.Uint32(b[4:]))
		if noff > uint64(len(strtab)) || nlen > uint64(len(strtab))-noff {
			return "", truncErr(where, what+" (offset, size) past the string table", [2]uint64{noff, nlen})
		}
		return string(strtab[noff : noff+nlen]), nil
	}
	syms := make([]Symbol, count)
	var unc uint64
	for i := range syms {
		where := at + int64(off) + int64(i)*symSize
		s := symtab[off+uint64(i)*symSize:]
		name, err := str(s, where, fmt.Sprintf("symbol %d name", i))
		if err != nil {
			return nil, err
		}
		syms[i] = Symbol{Name: name, Flags: le.Uint32(s[20:])}
		if syms[i].Flags&flagHasUncommon == 0 {
			continue
		}
		if unc >= uncCount {
			return nil, formatErr(where+20, fmt.Sprintf("symbol %d: an uncommon record past the %d of the table", i, uncCount), syms[i].Flags)
		}
		u := symtab[uncOff+unc*uncSize:]
		if syms[i].Section, err = str(u[16:], at+int64(uncOff+unc*uncSize)+16, fmt.Sprintf("uncommon record %d section name", unc)); err != nil {
			return nil, err
		}
		unc++
	}
	return syms, nil
}
