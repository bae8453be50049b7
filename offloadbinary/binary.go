package offloadbinary

import (
	"io"

	"github.com/goffload/goffload/internal/strtab"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// The OffloadBinary container (docs/offload-binary.md#offload-binary). All
// fields are little-endian, as every LLVM host that has been run writes them
// (docs/offload-binary.md#byte-order).

// Magic is the first four bytes of every OffloadBinary.
var Magic = [4]byte{0x10, 0xFF, 0x10, 0xAD}

// StartsWithMagic reports whether r starts with [Magic]: an image that is
// itself an OffloadBinary, nested (LLVM 23 and later list and extract those).
func StartsWithMagic(r io.ReaderAt) bool {
	var head [4]byte
	n, _ := r.ReadAt(head[:], 0)
	return n == len(head) && head == Magic
}

// Sizes of the OffloadBinary records (docs/offload-binary.md#header,
// docs/offload-binary.md#image-entry, docs/offload-binary.md#string-map).
const (
	HeaderSize        = 32 // Magic, Version, Size, EntryOffset, EntrySize/EntriesCount
	ImageEntrySize    = 40 // ImageKind, OffloadKind, Flags, StringOffset, NumStrings, ImageOffset, ImageSize
	StringEntrySize   = 16 // version 1: KeyOffset, ValueOffset
	StringEntrySizeV2 = 24 // version 2: KeyOffset, ValueOffset, ValueSize
	// Alignment is the alignment of a binary, of its image and of its size.
	Alignment = 8
)

// Version is the OffloadBinary version that every LLVM release 15–22 writes.
const Version = 1

// FlagMetadata is OIF_Metadata, bit 0 of an entry's Flags in LLVM main after
// 22 ([release.Main] NestedImages): the entry holds only metadata (its strings),
// no image. Main's writer gives such an entry an empty image (ImageSize 0,
// ImageOffset where the images end) and its readers list it as any other
// entry, with an image size of 0 bytes; nothing checks the flag. Releases 15
// to 22 define no flag: to them it is a number.
const FlagMetadata uint32 = 1 << 0

// KeyValue is one entry of a binary's string map.
type KeyValue struct {
	Key, Value string
}

// Image is the metadata of one device image in an OffloadBinary: one `Entry` of
// the format (docs/offload-binary.md#image-entry) with its strings.
type Image struct {
	Kind        offload.ImageKind
	OffloadKind offload.OffloadKind
	Flags       uint32
	// Strings in the order they are written. LLVM's reader keeps the last value
	// of a repeated key in version 1 (a StringMap) and the first in version 2.
	Strings []KeyValue
}

// Lookup returns the value of key as LLVM's version-1 reader sees it: the last
// entry with that key.
func (im *Image) Lookup(key string) (string, bool) {
	for i := len(im.Strings) - 1; i >= 0; i-- {
		if im.Strings[i].Key == key {
			return im.Strings[i].Value, true
		}
	}
	return "", false
}

// IsMetadata reports whether im has the OIF_Metadata flag ([FlagMetadata]):
// an entry of LLVM 23 and later that holds strings but no image.
func (im *Image) IsMetadata() bool { return im.Flags&FlagMetadata != 0 }

// Triple returns the "triple" string, or "".
func (im *Image) Triple() string { v, _ := im.Lookup("triple"); return v }

// Arch returns the "arch" string, or "".
func (im *Image) Arch() string { v, _ := im.Lookup("arch"); return v }

// Set replaces the value of key, or appends key if it is not there.
func (im *Image) Set(key, value string) {
	for i := len(im.Strings) - 1; i >= 0; i-- {
		if im.Strings[i].Key == key {
			im.Strings[i].Value = value
			return
		}
	}
	im.Strings = append(im.Strings, KeyValue{key, value})
}

// Layout gives the offsets of a binary, relative to its start
// (docs/offload-binary.md#binary-layout). In a binary of several entries
// (version 2 and later: [WriteBinaries]) a Layout is one entry's: its own
// string entries and image, the string table all entries share, and the size of
// the whole binary.
type Layout struct {
	StringOffset uint64 // first string entry (72; 80 in version 3)
	StringTable  uint64 // first byte of the string table
	ImageOffset  uint64 // first byte of the image; a multiple of 8 for the first image
	ImageSize    uint64
	Size         uint64 // whole binary, padded to 8
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) &^ (a - 1) }

// Layout returns where a version-1 binary of im with an image of imageSize bytes
// puts each part.
func (im *Image) Layout(imageSize uint64) Layout {
	l, _ := im.layout(1, imageSize)
	return l
}

// LayoutFor returns where release r's binary (its BinaryVersion) of im with
// an image of imageSize bytes puts each part, uncompressed.
func (im *Image) LayoutFor(r *release.Release, imageSize uint64) Layout {
	l, _ := im.layout(r.BinaryVersion, imageSize)
	return l
}

// layout places a binary of version v holding im alone.
func (im *Image) layout(v uint32, imageSize uint64) (Layout, strtab.Table) {
	ls, st := layoutAll(v, []*Image{im}, []uint64{imageSize})
	return ls[0], st
}

// recordSizes returns the sizes of the header and of a string entry in
// version v: 32 and 16 in version 1, 32 and 24 in version 2, 40 and 24 from
// version 3.
func recordSizes(v uint32) (header, stringEntry uint64) {
	switch {
	case v >= VersionCompressed:
		return HeaderSizeV3, StringEntrySizeV2
	case v == 2:
		return HeaderSize, StringEntrySizeV2
	}
	return HeaderSize, StringEntrySize
}

// layoutAll places a binary of version v holding the images ims, of
// sizes[i] bytes each, as LLVM's OffloadBinary::write does (in version 1,
// one image): the header; an entry per image; the string entries of every
// image, in the order of the images; one string table of all their keys
// and values (StringTableBuilder::ELF: shared and tail-merged); zeros to a
// multiple of 8; the images one after another, unpadded; zeros to a
// multiple of 8.
func layoutAll(v uint32, ims []*Image, sizes []uint64) ([]Layout, strtab.Table) {
	var strs []string
	nstr := uint64(0)
	for _, im := range ims {
		for _, kv := range im.Strings {
			strs = append(strs, kv.Key, kv.Value)
		}
		nstr += uint64(len(im.Strings))
	}
	st := strtab.Build(strs)
	hdr, es := recordSizes(v)
	stringEntries := hdr + ImageEntrySize*uint64(len(ims))
	table := stringEntries + es*nstr
	image := alignUp(table+uint64(len(st.Data)), Alignment)
	ls := make([]Layout, len(ims))
	for i, im := range ims {
		ls[i] = Layout{StringOffset: stringEntries, StringTable: table, ImageOffset: image, ImageSize: sizes[i]}
		stringEntries += es * uint64(len(im.Strings))
		image += sizes[i]
	}
	size := alignUp(image, Alignment)
	for i := range ls {
		ls[i].Size = size
	}
	return ls, st
}

// LinkedImage returns the metadata clang-linker-wrapper gives the binary it
// makes after device linking (docs/offload-binary.md#map-orders): an ELF object
// image of offload kind k with the strings "triple" then "arch", in that order
// in every release.
func LinkedImage(k offload.OffloadKind, triple, arch string) Image {
	return Image{Kind: offload.ImageObject, OffloadKind: k, Strings: []KeyValue{{"triple", triple}, {"arch", arch}}}
}
