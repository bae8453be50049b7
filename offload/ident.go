package offload

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/goffload/goffload/internal/ferr"
)

// This file holds `ident_t`, the source location the host code passes to the
// OpenMP runtime (docs/entries.md#ident-t), e.g. to `__tgt_target_kernel`.

const (
	// IdentSize is the size of `ident_t` on a 64-bit host: four int32 and a
	// pointer (docs/entries.md#ident-t).
	IdentSize = 24
	// IdentPSourceOffset is the byte offset of the `psource` pointer, the field
	// a relocation fills (docs/entries.md#ident-t).
	IdentPSourceOffset = 16

	// DefaultSourceLocation is the psource of code without debug information
	// (22 bytes; docs/entries.md#ident-t).
	DefaultSourceLocation = ";unknown;unknown;0;0;;"
)

// IdentFlags are the flags of an `ident_t` (KMP_IDENT_* in openmp/runtime
// kmp.h, omp::IdentFlag in OMPKinds.def; docs/entries.md#ident-t). Bits 0x1C0
// hold one field, the kind of implicit barrier.
type IdentFlags uint32

const (
	IdentIMB          IdentFlags = 0x01 // KMP_IDENT_IMB
	IdentKMPC         IdentFlags = 0x02 // KMP_IDENT_KMPC: set by every clang ident
	IdentAutoPar      IdentFlags = 0x08 // KMP_IDENT_AUTOPAR
	IdentAtomicReduce IdentFlags = 0x10 // KMP_IDENT_ATOMIC_REDUCE
	IdentBarrierExpl  IdentFlags = 0x20 // KMP_IDENT_BARRIER_EXPL: an explicit barrier

	IdentBarrierImpl          IdentFlags = 0x040 // KMP_IDENT_BARRIER_IMPL: an implicit barrier
	IdentBarrierImplMask      IdentFlags = 0x1C0 // KMP_IDENT_BARRIER_IMPL_MASK
	IdentBarrierImplFor       IdentFlags = 0x040 // KMP_IDENT_BARRIER_IMPL_FOR, the same value as IdentBarrierImpl
	IdentBarrierImplSections  IdentFlags = 0x0C0 // KMP_IDENT_BARRIER_IMPL_SECTIONS
	IdentBarrierImplSingle    IdentFlags = 0x140 // KMP_IDENT_BARRIER_IMPL_SINGLE
	IdentBarrierImplWorkshare IdentFlags = 0x1C0 // KMP_IDENT_BARRIER_IMPL_WORKSHARE

	IdentWorkLoop       IdentFlags = 0x200 // KMP_IDENT_WORK_LOOP
	IdentWorkSections   IdentFlags = 0x400 // KMP_IDENT_WORK_SECTIONS
	IdentWorkDistribute IdentFlags = 0x800 // KMP_IDENT_WORK_DISTRIBUTE
)

var identFlagNames = []bitName{
	{0x01, 0x01, "IMB", false},
	{0x02, 0x02, "KMPC", false},
	{0x08, 0x08, "AUTOPAR", false},
	{0x10, 0x10, "ATOMIC_REDUCE", false},
	{0x20, 0x20, "BARRIER_EXPL", false},
	{0x1C0, 0x040, "BARRIER_IMPL", false},
	{0x1C0, 0x040, "BARRIER_IMPL_FOR", true},
	{0x1C0, 0x0C0, "BARRIER_IMPL_SECTIONS", false},
	{0x1C0, 0x140, "BARRIER_IMPL_SINGLE", false},
	{0x1C0, 0x1C0, "BARRIER_IMPL_WORKSHARE", false},
	{0x200, 0x200, "WORK_LOOP", false},
	{0x400, 0x400, "WORK_SECTIONS", false},
	{0x800, 0x800, "WORK_DISTRIBUTE", false},
}

// String returns the kmp.h names without their KMP_IDENT_ prefix, joined by
// "+" ("KMPC+BARRIER_EXPL"), unknown bits in hex, and "0" for none. The
// implicit-barrier value 0x40 prints as "BARRIER_IMPL".
func (f IdentFlags) String() string { return formatBits(uint64(f), identFlagNames) }

// ParseIdentFlags parses the form String prints. Names may keep their
// KMP_IDENT_ prefix; "BARRIER_IMPL_FOR" is accepted for 0x40.
func ParseIdentFlags(s string) (IdentFlags, error) {
	v, err := parseBits(s, identFlagNames, 32, "ident flags", "KMP_IDENT_")
	return IdentFlags(v), err
}

// Ident is an `ident_t` (docs/entries.md#ident-t): `{ i32 reserved_1, i32
// flags, i32 reserved_2, i32 reserved_3, ptr psource }`. The int32 fields are
// held as their 32-bit patterns.
type Ident struct {
	Reserved1 uint32 // 0
	Flags     IdentFlags
	Reserved2 uint32 // 0 on the host; device code may keep execution-mode bits here
	Reserved3 uint32 // strlen(PSource)
	PSource   string // the string psource points to, without its NUL
}

// NewIdent returns the ident clang writes for flags and psource: the reserved
// fields 0 but Reserved3, which is len(psource) (docs/entries.md#ident-t).
func NewIdent(flags IdentFlags, psource string) Ident {
	return Ident{Flags: flags, Reserved3: uint32(len(psource)), PSource: psource}
}

// Encode returns the IdentSize bytes of id in byte order order, with the
// psource pointer 0 (a relocation at IdentPSourceOffset fills it). Reserved3
// is written as it is, not recomputed from PSource.
func (id Ident) Encode(order binary.ByteOrder) []byte {
	return id.AppendEncode(nil, order)
}

// AppendEncode is like Encode but appends the bytes to dst.
func (id Ident) AppendEncode(dst []byte, order binary.ByteOrder) []byte {
	dst = appendUintN(dst, order, 4, uint64(id.Reserved1))
	dst = appendUintN(dst, order, 4, uint64(id.Flags))
	dst = appendUintN(dst, order, 4, uint64(id.Reserved2))
	dst = appendUintN(dst, order, 4, uint64(id.Reserved3))
	return appendUintN(dst, order, 8, 0)
}

// DecodeIdent reads an `ident_t` from the start of b. PSource is left empty:
// the string is elsewhere, at the returned psource pointer. A b shorter than
// IdentSize gives a [*goffload.FormatError] matching goffload.ErrTruncated, its
// offset 0 (the struct's, in b).
func DecodeIdent(order binary.ByteOrder, b []byte) (id Ident, psource uint64, err error) {
	if len(b) < IdentSize {
		return Ident{}, 0, cutShort("ident_t", 0, "struct", len(b), IdentSize)
	}
	id = Ident{
		Reserved1: order.Uint32(b[0:]),
		Flags:     IdentFlags(order.Uint32(b[4:])),
		Reserved2: order.Uint32(b[8:]),
		Reserved3: order.Uint32(b[12:]),
	}
	return id, order.Uint64(b[IdentPSourceOffset:]), nil
}

// Location parses id.PSource.
func (id Ident) Location() (SourceLocation, error) { return ParseSourceLocation(id.PSource) }

// SourceLocation is the meaning of a psource string (docs/entries.md#ident-t).
type SourceLocation struct {
	File     string // the presumed file name as spelled, or "unknown"
	Function string // the qualified function name, or "unknown"
	Line     int
	Column   int
}

// Format returns the psource string ";file;function;line;column;;". Like
// clang it does not escape: a File or Function holding ';', or a negative
// Line or Column, gives a string that ParseSourceLocation rejects.
func (s SourceLocation) Format() string {
	return ";" + s.File + ";" + s.Function + ";" + strconv.Itoa(s.Line) + ";" + strconv.Itoa(s.Column) + ";;"
}

// ParseSourceLocation parses a psource string ";file;function;line;column;;"
// (docs/entries.md#ident-t). Line and column must be unsigned decimal numbers;
// file and function may be empty but cannot hold ';'. A string of another form
// is a [*goffload.FormatError] of Format "source location" (its offset -1: the
// string is not where it was read from).
func ParseSourceLocation(s string) (SourceLocation, error) {
	bad := func(format string, args ...any) error {
		return ferr.New("source location", -1, fmt.Sprintf("%q ", s)+fmt.Sprintf(format, args...), nil, nil)
	}
	inner, ok := strings.CutPrefix(s, ";")
	if ok {
		inner, ok = strings.CutSuffix(inner, ";;")
	}
	if !ok {
		return SourceLocation{}, bad("is not of the form ;file;function;line;column;;")
	}
	f := strings.Split(inner, ";")
	if len(f) != 4 {
		return SourceLocation{}, bad("has %d fields, want 4", len(f))
	}
	line, ok := parseDecimal(f[2])
	if !ok {
		return SourceLocation{}, bad("line %q is not a decimal int", f[2])
	}
	col, ok := parseDecimal(f[3])
	if !ok {
		return SourceLocation{}, bad("column %q is not a decimal int", f[3])
	}
	return SourceLocation{File: f[0], Function: f[1], Line: line, Column: col}, nil
}

// parseDecimal accepts only digits, no sign, within int.
func parseDecimal(s string) (int, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
