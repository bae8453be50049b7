package offload

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/ferr"
)

// This file holds the structs the wrapper's registration code hands to the
// runtime on a 64-bit host (docs/registration.md#runtime-structs), and the
// indirect call table the runtime builds for the device
// (docs/entries.md#indirect-call-table).

// Layout of `__tgt_device_image` (docs/registration.md#runtime-structs): four
// pointers.
const (
	DeviceImageSize               = 32
	DeviceImageStartOffset        = 0  // void *ImageStart
	DeviceImageEndOffset          = 8  // void *ImageEnd
	DeviceImageEntriesBeginOffset = 16 // Entry *EntriesBegin
	DeviceImageEntriesEndOffset   = 24 // Entry *EntriesEnd
)

// Layout of `__tgt_bin_desc` (docs/registration.md#runtime-structs): an int32,
// 4 bytes of padding, three pointers.
const (
	BinDescSize                   = 32
	BinDescNumDeviceImagesOffset  = 0  // int32_t NumDeviceImages
	BinDescDeviceImagesOffset     = 8  // __tgt_device_image *DeviceImages
	BinDescHostEntriesBeginOffset = 16 // Entry *HostEntriesBegin
	BinDescHostEntriesEndOffset   = 24 // Entry *HostEntriesEnd
)

// DeviceImage is a `__tgt_device_image` (docs/registration.md#runtime-structs).
// Where ImageStart and ImageEnd point in the embedded OffloadBinary depends on
// the release: see [release.Wrapper] ImageStart. EntriesBegin and EntriesEnd are the
// `__start_` and `__stop_` symbols of the entries section.
type DeviceImage struct {
	ImageStart, ImageEnd     uint64
	EntriesBegin, EntriesEnd uint64
}

// Encode returns the DeviceImageSize bytes of d in byte order order.
func (d DeviceImage) Encode(order binary.ByteOrder) []byte { return d.AppendEncode(nil, order) }

// AppendEncode is like Encode but appends the bytes to dst.
func (d DeviceImage) AppendEncode(dst []byte, order binary.ByteOrder) []byte {
	dst = appendUintN(dst, order, 8, d.ImageStart)
	dst = appendUintN(dst, order, 8, d.ImageEnd)
	dst = appendUintN(dst, order, 8, d.EntriesBegin)
	return appendUintN(dst, order, 8, d.EntriesEnd)
}

// DecodeDeviceImage reads a `__tgt_device_image` from the start of b. A b
// shorter than DeviceImageSize gives a [*goffload.FormatError] matching
// goffload.ErrTruncated, its offset 0 (the struct's, in b).
func DecodeDeviceImage(order binary.ByteOrder, b []byte) (DeviceImage, error) {
	if len(b) < DeviceImageSize {
		return DeviceImage{}, cutShort("__tgt_device_image", 0, "struct", len(b), DeviceImageSize)
	}
	return DeviceImage{
		ImageStart:   order.Uint64(b[DeviceImageStartOffset:]),
		ImageEnd:     order.Uint64(b[DeviceImageEndOffset:]),
		EntriesBegin: order.Uint64(b[DeviceImageEntriesBeginOffset:]),
		EntriesEnd:   order.Uint64(b[DeviceImageEntriesEndOffset:]),
	}, nil
}

// DecodeDeviceImages reads the array of n images that a descriptor's
// DeviceImages points to, from the start of b. It checks n against len(b)
// before allocating: a negative n (the descriptor's NumDeviceImages, whose
// offset b does not hold) is a [*goffload.FormatError] matching
// goffload.ErrInvalid at offset -1, and one needing more bytes than b holds
// a FormatError matching goffload.ErrTruncated at the offset in b of the
// first image cut short.
func DecodeDeviceImages(order binary.ByteOrder, b []byte, n int) ([]DeviceImage, error) {
	const format = "__tgt_device_image array"
	if n < 0 {
		return nil, ferr.New(format, -1, "negative count", n, nil)
	}
	if have := len(b) / DeviceImageSize; n > have {
		return nil, cutShort(format, have*DeviceImageSize, fmt.Sprintf("image %d (count %d)", have, n),
			len(b)-have*DeviceImageSize, DeviceImageSize)
	}
	out := make([]DeviceImage, n)
	for i := range out {
		out[i], _ = DecodeDeviceImage(order, b[i*DeviceImageSize:])
	}
	return out, nil
}

// BinDesc is a `__tgt_bin_desc`, the descriptor the wrapper's constructor
// passes to `__tgt_register_lib` (docs/registration.md#runtime-structs).
type BinDesc struct {
	NumDeviceImages  int32
	DeviceImages     uint64 // address of NumDeviceImages DeviceImage structs
	HostEntriesBegin uint64
	HostEntriesEnd   uint64
}

// Encode returns the BinDescSize bytes of d in byte order order, with zero
// padding.
func (d BinDesc) Encode(order binary.ByteOrder) []byte { return d.AppendEncode(nil, order) }

// AppendEncode is like Encode but appends the bytes to dst.
func (d BinDesc) AppendEncode(dst []byte, order binary.ByteOrder) []byte {
	dst = appendUintN(dst, order, 4, uint64(uint32(d.NumDeviceImages)))
	dst = append(dst, 0, 0, 0, 0)
	dst = appendUintN(dst, order, 8, d.DeviceImages)
	dst = appendUintN(dst, order, 8, d.HostEntriesBegin)
	return appendUintN(dst, order, 8, d.HostEntriesEnd)
}

// DecodeBinDesc reads a `__tgt_bin_desc` from the start of b; the padding is
// ignored. A b shorter than BinDescSize gives a [*goffload.FormatError]
// matching goffload.ErrTruncated, its offset 0 (the struct's, in b).
func DecodeBinDesc(order binary.ByteOrder, b []byte) (BinDesc, error) {
	if len(b) < BinDescSize {
		return BinDesc{}, cutShort("__tgt_bin_desc", 0, "struct", len(b), BinDescSize)
	}
	return BinDesc{
		NumDeviceImages:  int32(order.Uint32(b[BinDescNumDeviceImagesOffset:])),
		DeviceImages:     order.Uint64(b[BinDescDeviceImagesOffset:]),
		HostEntriesBegin: order.Uint64(b[BinDescHostEntriesBeginOffset:]),
		HostEntriesEnd:   order.Uint64(b[BinDescHostEntriesEndOffset:]),
	}, nil
}

// IndirectPairSize is the size of one pair of the indirect call table
// (docs/entries.md#indirect-call-table).
const IndirectPairSize = 16

// IndirectPair maps the host address of a `declare target indirect` function
// to its device address: `struct { void *HstPtr; void *DevPtr; }`
// (docs/entries.md#indirect-call-table).
type IndirectPair struct {
	Host, Device uint64
}

// IndirectTable is the table the offload runtime builds from the indirect
// entries of an image and copies to the device
// (docs/entries.md#indirect-call-table), sorted by Host.
type IndirectTable []IndirectPair

// BuildIndirectTable returns a sorted copy of pairs. Pairs with the same host
// address are all kept, in their input order: the runtime keeps them too
// (its sort is not stable, and the device search may find any of them), while
// [IndirectTable.Lookup] returns the first.
func BuildIndirectTable(pairs []IndirectPair) IndirectTable {
	t := slices.Clone(pairs)
	slices.SortStableFunc(t, func(a, b IndirectPair) int { return cmp.Compare(a.Host, b.Host) })
	return t
}

// Lookup returns the device address of host by binary search, as the device
// runtime's `__llvm_omp_indirect_call_lookup` does, and false if host is not
// in the table. (On a miss the device function returns host itself, taking it
// for a device address, and it maps null to null.) t must be sorted by Host,
// as BuildIndirectTable and DecodeIndirectTable return it.
func (t IndirectTable) Lookup(host uint64) (device uint64, ok bool) {
	i := sort.Search(len(t), func(i int) bool { return t[i].Host >= host })
	if i < len(t) && t[i].Host == host {
		return t[i].Device, true
	}
	return 0, false
}

// Encode returns the bytes of t, IndirectPairSize per pair, in byte order
// order.
func (t IndirectTable) Encode(order binary.ByteOrder) []byte { return t.AppendEncode(nil, order) }

// AppendEncode is like Encode but appends the bytes to dst.
func (t IndirectTable) AppendEncode(dst []byte, order binary.ByteOrder) []byte {
	dst = slices.Grow(dst, len(t)*IndirectPairSize)
	for _, p := range t {
		dst = appendUintN(dst, order, 8, p.Host)
		dst = appendUintN(dst, order, 8, p.Device)
	}
	return dst
}

// DecodeIndirectTable reads a table of len(b)/IndirectPairSize pairs. A length
// that is not a multiple of IndirectPairSize gives a [*goffload.FormatError]
// matching goffload.ErrTruncated at the partial pair, and pairs not sorted by
// Host one matching goffload.ErrInvalid at the first pair out of order: the
// device's binary search would miss entries. Offsets are in b.
func DecodeIndirectTable(order binary.ByteOrder, b []byte) (IndirectTable, error) {
	const format = "indirect call table"
	if rest := len(b) % IndirectPairSize; rest != 0 {
		return nil, cutShort(format, len(b)-rest, fmt.Sprintf("pair %d", len(b)/IndirectPairSize), rest, IndirectPairSize)
	}
	t := make(IndirectTable, len(b)/IndirectPairSize)
	for i := range t {
		p := b[i*IndirectPairSize:]
		t[i] = IndirectPair{Host: order.Uint64(p), Device: order.Uint64(p[8:])}
		if i > 0 && t[i].Host < t[i-1].Host {
			return nil, ferr.New(format, int64(i*IndirectPairSize),
				fmt.Sprintf("pair %d host address %#x below pair %d's %#x", i, t[i].Host, i-1, t[i-1].Host), nil, nil)
		}
	}
	return t, nil
}

// cutShort is the error of a struct of format (what, at offset off of the
// bytes given) of which only n of its size bytes are there.
func cutShort(format string, off int, what string, n, size int) error {
	return ferr.New(format, int64(off), fmt.Sprintf("%s cut to %d of %d bytes", what, n, size), nil, goffload.ErrTruncated)
}
