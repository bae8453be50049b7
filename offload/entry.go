package offload

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/release"
)

// This file holds the offload entry, `__tgt_offload_entry` and its successor
// `llvm::offloading::EntryTy` (docs/entries.md#offload-entries): its two binary
// layouts, the entries sections, and the meaning of its flags.

// EntryVersion is the Version field that LLVM 21 and later write in every
// 56-byte entry (docs/entries.md#entry-v1).
const EntryVersion = 1

// The fields of an entry, in the order of the v1 struct.
const (
	entryReserved = iota
	entryVersion
	entryKind
	entryFlags
	entryAddr
	entryName
	entrySize
	entryData
	entryAux
	numEntryFields
)

// entryFieldNames are the v1 field names (docs/entries.md#entry-v1), used in
// errors.
var entryFieldNames = [numEntryFields]string{
	"Reserved", "Version", "Kind", "Flags", "Address", "SymbolName", "Size", "Data", "AuxAddr",
}

// entryField is where a field sits in one layout; width 0: the layout lacks it.
type entryField struct{ off, width int }

type entryFormat struct {
	size   int
	fields [numEntryFields]entryField
}

// entryFormats are the struct layouts on a 64-bit host
// (docs/entries.md#entry-layouts).
var entryFormats = [...]entryFormat{
	// { ptr addr, ptr name, i64 size, i32 flags, i32 reserved }
	EntryLegacy: {size: 32, fields: [numEntryFields]entryField{
		entryAddr:  {0, 8},
		entryName:  {8, 8},
		entrySize:  {16, 8},
		entryFlags: {24, 4},
		entryData:  {28, 4},
	}},
	// { i64 Reserved, i16 Version, i16 Kind, i32 Flags, ptr Address,
	//   ptr SymbolName, i64 Size, i64 Data, ptr AuxAddr }
	EntryV1: {size: 56, fields: [numEntryFields]entryField{
		entryReserved: {0, 8},
		entryVersion:  {8, 2},
		entryKind:     {10, 2},
		entryFlags:    {12, 4},
		entryAddr:     {16, 8},
		entryName:     {24, 8},
		entrySize:     {32, 8},
		entryData:     {40, 8},
		entryAux:      {48, 8},
	}},
}

// EntryLayout is the binary layout of an offload entry
// (docs/entries.md#entry-layouts); [LayoutOf] gives a release's.
type EntryLayout uint8

const (
	// EntryLegacy is the 32-byte __tgt_offload_entry {addr, name, size, flags, reserved}
	// of LLVM 15–20.
	EntryLegacy EntryLayout = iota
	// EntryV1 is the 56-byte llvm::offloading::EntryTy of LLVM 21 and later.
	EntryV1
)

var entryLayoutNames = [...]string{"legacy", "v1"}

func (v EntryLayout) String() string { return enumName(entryLayoutNames[:], int(v), "EntryLayout") }

// enumName returns names[v], or "typ(v)" for a value without a name.
func enumName(names []string, v int, typ string) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return typ + "(" + strconv.Itoa(v) + ")"
}

func (l EntryLayout) format() (*entryFormat, bool) {
	if int(l) < len(entryFormats) {
		return &entryFormats[l], true
	}
	return nil, false
}

// Size returns the size in bytes of one entry on a 64-bit host: 32 for
// EntryLegacy, 56 for EntryV1, 0 for an unknown layout
// (docs/entries.md#entry-layouts).
func (l EntryLayout) Size() int {
	if f, ok := l.format(); ok {
		return f.size
	}
	return 0
}

func (l EntryLayout) offset(field int) int {
	if f, ok := l.format(); ok && f.fields[field].width != 0 {
		return f.fields[field].off
	}
	return -1
}

// AddrOffset returns the byte offset in an entry of the pointer to the
// symbol it describes (`addr`, `Address`): 0 in EntryLegacy, 16 in EntryV1,
// -1 for an unknown layout (docs/entries.md#entry-layouts). A relocation at
// this offset fills it.
func (l EntryLayout) AddrOffset() int { return l.offset(entryAddr) }

// NameOffset returns the byte offset in an entry of the pointer to its name
// string (`name`, `SymbolName`): 8 in EntryLegacy, 24 in EntryV1, -1 for an
// unknown layout (docs/entries.md#entry-layouts).
func (l EntryLayout) NameOffset() int { return l.offset(entryName) }

// AuxOffset returns the byte offset of the `AuxAddr` pointer (48 in EntryV1),
// or -1 and false for a layout without one (docs/entries.md#entry-layouts).
func (l EntryLayout) AuxOffset() (int, bool) {
	off := l.offset(entryAux)
	return off, off >= 0
}

// RawEntry is an offload entry as the numbers stored in it
// (docs/entries.md#entry-layouts). The pointers Addr, Name and Aux are the
// values in the bytes, which are 0 in a relocatable object until the linker
// applies the relocations.
//
// EntryLegacy lacks Reserved, Version, Kind and Aux: they decode as 0 and must
// be 0 to encode. Its `int32 flags` and `int32 reserved` fields are held
// zero-extended in Flags and Data.
type RawEntry struct {
	Reserved uint64 // 0: tells a v1 entry from a legacy one, whose first word is a non-null address
	Version  uint16 // EntryVersion
	Kind     uint16 // the release's OffloadKind code, see [OffloadKindCode]
	Flags    uint32 // OpenMPFlags or GPUFlags, by Kind
	Addr     uint64 // address of the kernel, variable or function
	Name     uint64 // address of the NUL-terminated name
	Size     uint64 // size of the variable; 0 for a kernel
	Data     uint64 // requires flags, managed alignment, texture/surface type; legacy `reserved`
	Aux      uint64 // HIP managed variable: address of the shadow pointer
}

func (e RawEntry) values() [numEntryFields]uint64 {
	return [numEntryFields]uint64{
		e.Reserved, uint64(e.Version), uint64(e.Kind), uint64(e.Flags),
		e.Addr, e.Name, e.Size, e.Data, e.Aux,
	}
}

func rawEntryOf(v [numEntryFields]uint64) RawEntry {
	return RawEntry{
		Reserved: v[entryReserved], Version: uint16(v[entryVersion]), Kind: uint16(v[entryKind]),
		Flags: uint32(v[entryFlags]), Addr: v[entryAddr], Name: v[entryName],
		Size: v[entrySize], Data: v[entryData], Aux: v[entryAux],
	}
}

// Encode returns the l.Size() bytes of e in layout l
// (docs/entries.md#entry-layouts) and byte order order. It fails with
// ErrEncoding when a value does not fit: a nonzero field the layout lacks
// (Reserved, Version, Kind or Aux in EntryLegacy) or a Data above 32 bits in
// EntryLegacy.
func (l EntryLayout) Encode(order binary.ByteOrder, e RawEntry) ([]byte, error) {
	return l.AppendEncode(nil, order, e)
}

// AppendEncode is like Encode but appends the bytes to dst. On error dst is
// returned unchanged.
func (l EntryLayout) AppendEncode(dst []byte, order binary.ByteOrder, e RawEntry) ([]byte, error) {
	if err := l.check(e); err != nil {
		return dst, err
	}
	f, _ := l.format()
	v := e.values()
	n := len(dst)
	dst = append(dst, make([]byte, f.size)...)
	b := dst[n:]
	for i, fd := range f.fields {
		putUintN(order, b[fd.off:], fd.width, v[i])
	}
	return dst, nil
}

// check reports a value of e that layout l cannot hold.
func (l EntryLayout) check(e RawEntry) error {
	f, ok := l.format()
	if !ok {
		return fmt.Errorf("offload entry: layout %v: %w", l, ErrEncoding)
	}
	v := e.values()
	for i, fd := range f.fields {
		if fd.width == 0 && v[i] != 0 {
			return fmt.Errorf("offload entry: %s %#x: the %v layout has no such field: %w",
				entryFieldNames[i], v[i], l, ErrEncoding)
		}
		if fd.width < 8 && v[i]>>(8*fd.width) != 0 {
			return fmt.Errorf("offload entry: %s %#x does not fit in %d bytes of the %v layout: %w",
				entryFieldNames[i], v[i], fd.width, l, ErrEncoding)
		}
	}
	return nil
}

// Decode reads one entry of layout l from the start of b; bytes after the
// entry are ignored. A b shorter than l.Size() gives a [*goffload.FormatError]
// matching goffload.ErrTruncated, its offset 0 (the entry's, in b). Decode
// does not check the values: a v1 entry whose Reserved is not 0 or whose
// Version is not 1 decodes as it is. An unknown layout is an argument error
// matching fs.ErrInvalid.
func (l EntryLayout) Decode(order binary.ByteOrder, b []byte) (RawEntry, error) {
	f, ok := l.format()
	if !ok {
		return RawEntry{}, unknownLayout(l)
	}
	if len(b) < f.size {
		return RawEntry{}, ferr.New(entriesFormat, 0,
			fmt.Sprintf("%v entry cut to %d of %d bytes", l, len(b), f.size), nil, goffload.ErrTruncated)
	}
	var v [numEntryFields]uint64
	for i, fd := range f.fields {
		v[i] = uintN(order, b[fd.off:], fd.width)
	}
	return rawEntryOf(v), nil
}

// DecodeAll reads the entries of an entries section
// (docs/entries.md#entry-globals), which holds them back to back. A size that
// is not a multiple of l.Size() gives a [*goffload.FormatError] matching
// goffload.ErrTruncated whose offset is that of the partial entry in b. An
// unknown layout is an argument error matching fs.ErrInvalid.
func (l EntryLayout) DecodeAll(order binary.ByteOrder, b []byte) ([]RawEntry, error) {
	size := l.Size()
	if size == 0 {
		return nil, unknownLayout(l)
	}
	if rest := len(b) % size; rest != 0 {
		return nil, ferr.New(entriesFormat, int64(len(b)-rest),
			fmt.Sprintf("entry %d cut to %d of %d bytes", len(b)/size, rest, size), nil, goffload.ErrTruncated)
	}
	out := make([]RawEntry, 0, len(b)/size)
	for off := 0; off < len(b); off += size {
		e, err := l.Decode(order, b[off:])
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// entriesFormat is the Format of the errors about entries and their
// sections.
const entriesFormat = "offload entries"

// unknownLayout is the error of a layout that is not EntryLegacy or EntryV1:
// the caller's, not the input's.
func unknownLayout(l EntryLayout) error {
	return fmt.Errorf("offload entries: unknown layout %v: %w", l, fs.ErrInvalid)
}

// putUintN writes v as width (2, 4 or 8) bytes in byte order order.
func putUintN(order binary.ByteOrder, b []byte, width int, v uint64) {
	switch width {
	case 2:
		order.PutUint16(b, uint16(v))
	case 4:
		order.PutUint32(b, uint32(v))
	case 8:
		order.PutUint64(b, v)
	}
}

// appendUintN appends v as width bytes in byte order order.
func appendUintN(dst []byte, order binary.ByteOrder, width int, v uint64) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, width)...)
	putUintN(order, dst[n:], width, v)
	return dst
}

func uintN(order binary.ByteOrder, b []byte, width int) uint64 {
	switch width {
	case 2:
		return uint64(order.Uint16(b))
	case 4:
		return uint64(order.Uint32(b))
	case 8:
		return order.Uint64(b)
	}
	return 0
}

// entrySection finds an entries section name in the release table
// (docs/entries.md#entry-globals), accepting the `_<hex>` suffix that a
// relocatable link appends (docs/registration.md#relocatable-link). The kind is
// the section's for a legacy section, whose entries carry none, and OffloadNone
// for a unified one, whose entries name their own.
func entrySection(name string) (layout EntryLayout, kind OffloadKind, ok bool) {
	for _, r := range table {
		for _, k := range []OffloadKind{OffloadOpenMP, OffloadCUDA, OffloadHIP} {
			sec := EntriesSection(r, k)
			if sec == "" { // the release has no entries of kind k
				continue
			}
			rest, found := strings.CutPrefix(name, sec)
			if !found || (rest != "" && !isRelocatableSuffix(rest)) {
				continue
			}
			if LayoutOf(r) == EntryV1 {
				k = OffloadNone
			}
			return LayoutOf(r), k, true
		}
	}
	return 0, 0, false
}

// isRelocatableSuffix reports whether s is "_" followed by the lower-case,
// unpadded hex digits of a 64-bit number: utohexstr of the low MD5 half
// (docs/registration.md#relocatable-link).
func isRelocatableSuffix(s string) bool {
	hex, ok := strings.CutPrefix(s, "_")
	if !ok || len(hex) == 0 || len(hex) > 16 || (len(hex) > 1 && hex[0] == '0') {
		return false
	}
	for _, c := range []byte(hex) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// DetectEntryLayout returns the entry layout of the entries section named
// sectionName: EntryV1 for `llvm_offload_entries`, EntryLegacy for
// `omp_offloading_entries`, `cuda_offloading_entries` and
// `hip_offloading_entries` (docs/entries.md#entry-globals), each also with the
// `_<hex>` suffix of a relocatable link
// (docs/registration.md#relocatable-link). It returns false for any other name.
func DetectEntryLayout(sectionName string) (EntryLayout, bool) {
	layout, _, ok := entrySection(sectionName)
	return layout, ok
}

// EntrySectionKind returns the offload kind of the entries in the section
// named sectionName: OffloadOpenMP, OffloadCUDA or OffloadHIP for the legacy
// sections, whose entries carry no kind, and OffloadNone for
// `llvm_offload_entries`, whose entries name their own
// (docs/entries.md#entry-layouts, docs/entries.md#entry-globals). It
// accepts the names DetectEntryLayout accepts and returns false for others.
func EntrySectionKind(sectionName string) (OffloadKind, bool) {
	_, kind, ok := entrySection(sectionName)
	return kind, ok
}

// SymbolRef is a pointer in an entry as a symbol and an addend, the form it
// has in a relocatable object. An empty Symbol is no symbol: with Addend 0 the
// null pointer, else the absolute address Addend.
type SymbolRef struct {
	Symbol string
	Addend int64
}

// IsNull reports whether r is the null pointer.
func (r SymbolRef) IsNull() bool { return r.Symbol == "" && r.Addend == 0 }

// String returns "null", "sym", "sym+0x10", "sym-0x10", or "0x10" for an
// absolute address.
func (r SymbolRef) String() string {
	switch {
	case r.IsNull():
		return "null"
	case r.Symbol == "":
		return "0x" + strconv.FormatUint(uint64(r.Addend), 16)
	case r.Addend == 0:
		return r.Symbol
	case r.Addend < 0:
		return r.Symbol + "-0x" + strconv.FormatUint(-uint64(r.Addend), 16)
	}
	return r.Symbol + "+0x" + strconv.FormatUint(uint64(r.Addend), 16)
}

// Entry is an offload entry as its meaning, independent of the release and
// layout (docs/entries.md#entry-layouts, docs/entries.md#what-gets-an-entry):
// pointers are symbol references and the kind is the logical OffloadKind.
type Entry struct {
	Kind    OffloadKind
	Flags   uint32 // OpenMPFlags for OffloadOpenMP, GPUFlags for OffloadCUDA and OffloadHIP
	Name    string // the string the name pointer points to
	Size    uint64
	Data    uint64
	Address SymbolRef
	Aux     SymbolRef // EntryV1 only
}

// EntryRole is what an offload entry registers, whatever the kind and the
// release: what its flags and size say together.
type EntryRole string

const (
	RoleKernel         EntryRole = "kernel"          // a kernel (an OpenMP target region, a __global__ function): no size
	RoleGlobal         EntryRole = "global"          // a device variable (declare target to/enter, __device__)
	RoleLink           EntryRole = "link"            // a `declare target link` reference pointer
	RoleIndirect       EntryRole = "indirect"        // a `declare target indirect` function
	RoleIndirectVTable EntryRole = "indirect-vtable" // a `declare target indirect` virtual table (LLVM main after 22)
	RoleRequires       EntryRole = "requires"        // `#pragma omp requires`: Data holds the flags (LLVM 19+)
	RoleCtor           EntryRole = "ctor"            // the constructor of a declare-target variable (LLVM 15-17)
	RoleDtor           EntryRole = "dtor"            // its destructor
	RoleManaged        EntryRole = "managed"         // a CUDA/HIP managed variable
	RoleSurface        EntryRole = "surface"         // a CUDA/HIP surface reference
	RoleTexture        EntryRole = "texture"         // a CUDA/HIP texture reference
	RoleUnknown        EntryRole = "unknown"         // flags that no release defines
)

// Role returns what e registers: for OpenMP the role its flags give (the
// first of requires, link, indirect, indirect-vtable, ctor, dtor), else a
// kernel when it has no size and a global when it has one; for CUDA and HIP
// the type of its flags, a global of no size being a kernel. Flags no
// release defines are RoleUnknown.
func (e Entry) Role() EntryRole {
	switch e.Kind {
	case OffloadCUDA, OffloadHIP:
		switch GPUFlags(e.Flags).Type() {
		case GPUGlobal:
			if e.Size == 0 {
				return RoleKernel
			}
			return RoleGlobal
		case GPUManaged:
			return RoleManaged
		case GPUSurface:
			return RoleSurface
		case GPUTexture:
			return RoleTexture
		}
		return RoleUnknown
	}
	f := OpenMPFlags(e.Flags)
	switch {
	case f&OMPEntryRequires != 0:
		return RoleRequires
	case f&OMPEntryLink != 0:
		return RoleLink
	case f&OMPEntryIndirectVTable != 0:
		return RoleIndirectVTable
	case f&OMPEntryIndirect != 0:
		return RoleIndirect
	case f&OMPEntryCtor != 0:
		return RoleCtor
	case f&OMPEntryDtor != 0:
		return RoleDtor
	case f&^0x3f != 0:
		return RoleUnknown
	case e.Size == 0:
		return RoleKernel
	}
	return RoleGlobal
}

// Raw returns the numeric fields of e as release r stores them
// (docs/entries.md#entry-v1): Reserved 0, Version EntryVersion and the Kind
// code in a 56-byte entry; Flags, Size and Data. The pointers are left 0, to be
// filled by relocations.
//
// It fails with ErrEncoding when r cannot hold e: a kind the release has no
// code for (SYCL before LLVM 21) or, in the 32-byte layout, a kind without an
// entries section, an Aux pointer, or a Data above 32 bits.
func (e Entry) Raw(r *release.Release) (RawEntry, error) {
	raw := RawEntry{Flags: e.Flags, Size: e.Size, Data: e.Data}
	switch LayoutOf(r) {
	case EntryV1:
		code, ok := OffloadKindCode(r, e.Kind)
		if !ok {
			return RawEntry{}, fmt.Errorf("offload entry %q: %v has no offload kind %v: %w", e.Name, r, e.Kind, ErrEncoding)
		}
		raw.Version, raw.Kind = EntryVersion, code
	case EntryLegacy:
		if EntriesSection(r, e.Kind) == "" {
			return RawEntry{}, fmt.Errorf("offload entry %q: %v has no entries section for %v: %w", e.Name, r, e.Kind, ErrEncoding)
		}
		if !e.Aux.IsNull() {
			return RawEntry{}, fmt.Errorf("offload entry %q: aux pointer %v in a %v entry: %w", e.Name, e.Aux, LayoutOf(r), ErrEncoding)
		}
	}
	if err := LayoutOf(r).check(raw); err != nil {
		return RawEntry{}, fmt.Errorf("offload entry %q: %w", e.Name, err)
	}
	return raw, nil
}

// EntryFromRaw returns the meaning of raw, an entry of layout layout read from
// a section of kind sectionKind (see [EntrySectionKind]) in an object of
// release r. A v1 entry names its own kind, decoded with r's numbering; a
// legacy entry takes sectionKind. Name, Address and Aux are left empty: they
// come from the relocations or the linked image, which the caller resolves.
func EntryFromRaw(r *release.Release, layout EntryLayout, sectionKind OffloadKind, raw RawEntry) Entry {
	e := Entry{Kind: sectionKind, Flags: raw.Flags, Size: raw.Size, Data: raw.Data}
	if layout == EntryV1 {
		e.Kind = OffloadKindOf(r, raw.Kind)
	}
	return e
}

// bitName names a value of the bits mask in a flags word: a single flag
// (mask == value) or one value of a multi-bit field. An alias is accepted by
// parsing and never printed.
type bitName struct {
	mask, value uint64
	name        string
	alias       bool
}

// formatBits prints v as the names of its set flags and fields in table
// order, joined by "+", then any bits left as one hex number; 0 prints "0"
// unless a field names the value 0.
func formatBits(v uint64, names []bitName) string {
	var parts []string
	var used uint64
	for _, n := range names {
		if n.alias || used&n.mask != 0 || v&n.mask != n.value {
			continue
		}
		parts = append(parts, n.name)
		used |= n.mask
	}
	if rest := v &^ used; rest != 0 {
		parts = append(parts, "0x"+strconv.FormatUint(rest, 16))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, "+")
}

// parseBits parses the form formatBits prints: names and numbers (in Go
// syntax) joined by "+". A name given twice, or two values of one field, is an
// error. An optional prefix before a name is ignored.
func parseBits(s string, names []bitName, bitSize int, what, prefix string) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("%s %q: empty: %w", what, s, ErrUnknownFlag)
	}
	var v, seen uint64
	for _, part := range strings.Split(s, "+") {
		if n, err := strconv.ParseUint(part, 0, bitSize); err == nil {
			v |= n
			continue
		}
		name := strings.TrimPrefix(part, prefix)
		i := 0
		for i < len(names) && names[i].name != name {
			i++
		}
		if i == len(names) {
			return 0, fmt.Errorf("%s %q: unknown flag %q: %w", what, s, part, ErrUnknownFlag)
		}
		if seen&names[i].mask != 0 {
			return 0, fmt.Errorf("%s %q: %q repeats or conflicts: %w", what, s, part, ErrUnknownFlag)
		}
		seen |= names[i].mask
		v |= names[i].value
	}
	return v, nil
}

// OpenMPFlags are the flags of an OpenMP entry
// (`OpenMPOffloadingDeclareTargetFlags`, docs/entries.md#openmp-flags). A
// target region or a `declare target to/enter` global has none.
type OpenMPFlags uint32

const (
	OMPEntryLink     OpenMPFlags = 0x01 // OMP_DECLARE_TARGET_LINK: a `declare target link` reference pointer
	OMPEntryCtor     OpenMPFlags = 0x02 // global constructor of a declare-target variable (LLVM 15–17)
	OMPEntryDtor     OpenMPFlags = 0x04 // global destructor of a declare-target variable (LLVM 15–17)
	OMPEntryIndirect OpenMPFlags = 0x08 // OMP_DECLARE_TARGET_INDIRECT: a `declare target indirect` function (LLVM 18+)
	OMPEntryRequires OpenMPFlags = 0x10 // OMP_REGISTER_REQUIRES: Data holds RequiresFlags (LLVM 19+)
	// OMPEntryIndirectVTable is OMP_DECLARE_TARGET_INDIRECT_VTABLE, in LLVM's
	// main branch after 22 only.
	OMPEntryIndirectVTable OpenMPFlags = 0x20
)

var openMPFlagNames = []bitName{
	{0x01, 0x01, "link", false},
	{0x02, 0x02, "ctor", false},
	{0x04, 0x04, "dtor", false},
	{0x08, 0x08, "indirect", false},
	{0x10, 0x10, "requires", false},
	{0x20, 0x20, "indirect_vtable", false},
}

// String returns the flag names joined by "+" ("link+indirect"), unknown
// bits in hex ("link+0x40"), and "0" for no flags.
func (f OpenMPFlags) String() string { return formatBits(uint64(f), openMPFlagNames) }

// ParseOpenMPFlags parses the form String prints; numbers ("0x40", "8") may
// stand for any bits.
func ParseOpenMPFlags(s string) (OpenMPFlags, error) {
	v, err := parseBits(s, openMPFlagNames, 32, "OpenMP entry flags", "")
	return OpenMPFlags(v), err
}

// GPUFlags are the flags of a CUDA or HIP entry (`OffloadEntryKindFlag`,
// docs/entries.md#gpu-flags): a type in the low 3 bits, and bit flags.
type GPUFlags uint32

const (
	// GPUGlobal (OffloadGlobalEntry) is a kernel when the entry's Size is 0,
	// else a variable.
	GPUGlobal  GPUFlags = 0
	GPUManaged GPUFlags = 1 // OffloadGlobalManagedEntry: a managed variable
	GPUSurface GPUFlags = 2 // OffloadGlobalSurfaceEntry: Data holds the surface type
	GPUTexture GPUFlags = 3 // OffloadGlobalTextureEntry: Data holds the texture type
	// GPUTypeMask selects the type.
	GPUTypeMask GPUFlags = 0x7

	GPUExtern     GPUFlags = 0x08 // OffloadGlobalExtern
	GPUConstant   GPUFlags = 0x10 // OffloadGlobalConstant: a __constant__ variable (LLVM 18+)
	GPUNormalized GPUFlags = 0x20 // OffloadGlobalNormalized: a texture with normalized coordinates
)

var gpuFlagNames = []bitName{
	{0x7, 0, "global", false},
	{0x7, 1, "managed", false},
	{0x7, 2, "surface", false},
	{0x7, 3, "texture", false},
	{0x08, 0x08, "extern", false},
	{0x10, 0x10, "constant", false},
	{0x20, 0x20, "normalized", false},
}

// Type returns the type bits: GPUGlobal, GPUManaged, GPUSurface, GPUTexture,
// or another value of the 3 bits that LLVM does not define.
func (f GPUFlags) Type() GPUFlags { return f & GPUTypeMask }

// String returns the type name followed by the flag names, joined by "+"
// ("global", "managed+extern", "texture+extern+normalized"). An undefined type
// or unknown bits print as one hex number ("global+0x40", "0x5").
func (f GPUFlags) String() string { return formatBits(uint64(f), gpuFlagNames) }

// ParseGPUFlags parses the form String prints. The type may be left out
// ("extern" is GPUGlobal|GPUExtern); numbers may stand for any bits.
func ParseGPUFlags(s string) (GPUFlags, error) {
	v, err := parseBits(s, gpuFlagNames, 32, "GPU entry flags", "")
	return GPUFlags(v), err
}

// RequiresFlags are the clauses of `#pragma omp requires`, in the Data of a
// requires entry (LLVM 19: the legacy `reserved` field) or the argument of
// `__tgt_register_requires` (LLVM 15–18) (docs/entries.md#requires). The values
// are LLVM's OpenMPOffloadingRequiresDirFlags. Clang 19 and 22 write only
// RequiresUnifiedSharedMemory: a requires entry exists only with that clause.
type RequiresFlags uint64

const (
	RequiresNone                RequiresFlags = 0x01 // OMP_REQ_NONE: no requires directive (LLVM 15–18 ctor argument)
	RequiresReverseOffload      RequiresFlags = 0x02 // OMP_REQ_REVERSE_OFFLOAD
	RequiresUnifiedAddress      RequiresFlags = 0x04 // OMP_REQ_UNIFIED_ADDRESS
	RequiresUnifiedSharedMemory RequiresFlags = 0x08 // OMP_REQ_UNIFIED_SHARED_MEMORY
	RequiresDynamicAllocators   RequiresFlags = 0x10 // OMP_REQ_DYNAMIC_ALLOCATORS
)

var requiresFlagNames = []bitName{
	{0x01, 0x01, "none", false},
	{0x02, 0x02, "reverse_offload", false},
	{0x04, 0x04, "unified_address", false},
	{0x08, 0x08, "unified_shared_memory", false},
	{0x10, 0x10, "dynamic_allocators", false},
}

// String returns the clause names joined by "+" ("unified_shared_memory"),
// unknown bits in hex, and "0" for OMP_REQ_UNDEFINED.
func (f RequiresFlags) String() string { return formatBits(uint64(f), requiresFlagNames) }

// ParseRequiresFlags parses the form String prints.
func ParseRequiresFlags(s string) (RequiresFlags, error) {
	v, err := parseBits(s, requiresFlagNames, 64, "requires flags", "")
	return RequiresFlags(v), err
}
