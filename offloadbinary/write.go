package offloadbinary

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"math"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/concat"
	"github.com/goffload/goffload/internal/strtab"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

var le = binary.LittleEndian

// ImageData is one image of a binary that [WriteBinaries] writes: its
// metadata, and Size bytes read from Data when the image's turn comes.
type ImageData struct {
	Image
	Data io.Reader
	Size int64
}

// appendMeta appends everything of release r's binary of ims before the first
// image (docs/offload-binary.md#binary-layout): the header, an entry per image,
// the string entries of every image, the string table ls[0].StringTable points
// to, and zeros to ls[0].ImageOffset. Version 1 (LLVM 15 to 22) holds one image
// and has EntrySize 40 where later versions count the entries; from version 2 a
// string entry holds its value's size too; version 3 (main after 23) has a
// 40-byte header ending in InflatedSize, 0 here.
func appendMeta(b []byte, r *release.Release, ims []ImageData, ls []Layout, st *strtab.Table) ([]byte, error) {
	v := r.BinaryVersion
	hdr, _ := recordSizes(v)
	b = append(b, Magic[:]...)
	b = le.AppendUint32(b, v)
	b = le.AppendUint64(b, ls[0].Size)
	b = le.AppendUint64(b, hdr) // EntryOffset, EntriesOffset
	if v == 1 {
		b = le.AppendUint64(b, ImageEntrySize) // EntrySize
	} else {
		b = le.AppendUint64(b, uint64(len(ims))) // EntriesCount
	}
	if v >= VersionCompressed {
		b = le.AppendUint64(b, 0) // InflatedSize
	}
	for i := range ims {
		im, l := &ims[i].Image, &ls[i]
		code, ok := offload.OffloadKindCode(r, im.OffloadKind)
		if !ok {
			return nil, fmt.Errorf("offload kind %v in %v: %w", im.OffloadKind, r, offload.ErrEncoding)
		}
		b = le.AppendUint16(b, uint16(im.Kind))
		b = le.AppendUint16(b, code)
		b = le.AppendUint32(b, im.Flags)
		b = le.AppendUint64(b, l.StringOffset)
		b = le.AppendUint64(b, uint64(len(im.Strings)))
		b = le.AppendUint64(b, l.ImageOffset)
		b = le.AppendUint64(b, l.ImageSize)
	}
	for i := range ims {
		for _, kv := range ims[i].Strings {
			b = le.AppendUint64(b, ls[0].StringTable+st.Offset(kv.Key))
			b = le.AppendUint64(b, ls[0].StringTable+st.Offset(kv.Value))
			if v >= 2 {
				b = le.AppendUint64(b, uint64(len(kv.Value)))
			}
		}
	}
	b = append(b, st.Data...)
	for uint64(len(b)) < ls[0].ImageOffset {
		b = append(b, 0)
	}
	return b, nil
}

// WriteBinary writes one OffloadBinary (version 1; 2 for 23; 3 for main after 23) to w, byte for byte as LLVM's
// OffloadBinary::write does for release r, holding im and the size bytes read
// from data. The image is copied straight from data to w: memory use does not
// depend on size. It returns the number of bytes written, Layout(size).Size on
// success.
func WriteBinary(w io.Writer, r *release.Release, im *Image, data io.Reader, size int64) (int64, error) {
	return writeBinaries(w, r, []ImageData{{Image: *im, Data: data, Size: size}})
}

// WriteBinaries writes one OffloadBinary holding every image of ims, in
// order, to w, byte for byte as OffloadBinary::write of LLVM 23 and later
// writes a list of images (what its llvm-offload-binary writes for all its
// --image arguments): the header (EntriesCount = len(ims)), the entries,
// the string entries of all images in turn, one string table of all their
// strings, zeros to a multiple of 8, the images one after another without
// padding between them, and zeros to a multiple of 8. One image gives the
// bytes WriteBinary gives. Only a release that writes version 2 or later
// (BinaryVersion >= 2: LLVM 23 and later, --llvm 23 or 24) has such binaries; others
// give goffload.ErrUnsupported, as does an empty list fs.ErrInvalid (LLVM requires
// an image). Each image is copied straight from its Data to w: memory use
// does not depend on the images' sizes. It returns the bytes written.
func WriteBinaries(w io.Writer, r *release.Release, ims []ImageData) (int64, error) {
	if err := checkMulti(r, len(ims)); err != nil {
		return 0, err
	}
	return writeBinaries(w, r, ims)
}

// checkMulti refuses a binary of n images that release r cannot write:
// none, or several where it writes version 1.
func checkMulti(r *release.Release, n int) error {
	if err := checkBinary(r); err != nil {
		return err
	}
	if r.BinaryVersion < 2 {
		return fmt.Errorf("%v writes OffloadBinary version %d, one image a binary (several came with version 2, LLVM 23): %w", r, r.BinaryVersion, goffload.ErrUnsupported)
	}
	if n == 0 {
		return fmt.Errorf("an OffloadBinary of no image (LLVM requires one at least): %w", fs.ErrInvalid)
	}
	return nil
}

func writeBinaries(w io.Writer, r *release.Release, ims []ImageData) (int64, error) {
	meta, ls, err := encode(r, ims)
	if err != nil {
		return 0, err
	}
	if err := checkReaders(ims); err != nil {
		return 0, err
	}
	n, err := w.Write(meta)
	written := int64(n)
	if err != nil {
		return written, err
	}
	m, err := writeImages(w, ims, ls)
	return written + m, err
}

// checkReaders refuses an image of some bytes without a reader.
func checkReaders(ims []ImageData) error {
	for i := range ims {
		if ims[i].Data == nil && ims[i].Size > 0 {
			return fmt.Errorf("%s of %d bytes: no reader: %w", imageName(ims, i), ims[i].Size, fs.ErrInvalid)
		}
	}
	return nil
}

// imageName names image i of ims in a message: "image", or "image i" when
// there are several.
func imageName(ims []ImageData, i int) string {
	if len(ims) == 1 {
		return "image"
	}
	return fmt.Sprintf("image %d", i)
}

// writeImages copies the images of ims to w, one after another, then the
// zeros that end the binary of layout ls.
func writeImages(w io.Writer, ims []ImageData, ls []Layout) (int64, error) {
	var written int64
	for i := range ims {
		// An empty image is copied too: a compressing w may mark it in its
		// stream, and one image gives the bytes it always gave.
		m, err := io.CopyN(w, ims[i].Data, ims[i].Size)
		written += m
		if err == io.EOF {
			return written, fmt.Errorf("%s: got %d of %d bytes: %w", imageName(ims, i), m, ims[i].Size, io.ErrUnexpectedEOF)
		}
		if err != nil {
			return written, err
		}
	}
	last := ls[len(ls)-1]
	n, err := w.Write(make([]byte, last.Size-last.ImageOffset-last.ImageSize))
	return written + int64(n), err
}

// MarshalBinary returns the version-1 OffloadBinary of im holding data, as
// release r writes it.
func MarshalBinary(r *release.Release, im *Image, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(im.LayoutFor(r, uint64(len(data))).Size))
	if _, err := WriteBinary(&buf, r, im, bytes.NewReader(data), int64(len(data))); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// BinaryReader returns the version-1 OffloadBinary that WriteBinary would
// write, and its layout, as a reader that reads the image from data only as it
// is read: a binary can be embedded in an object without being held in memory,
// and read again, at random and from several goroutines at once when data
// allows that (files and byte slices do). An image shorter than size gives
// io.ErrUnexpectedEOF when it is read.
func BinaryReader(r *release.Release, im *Image, data io.ReaderAt, size int64) (*io.SectionReader, Layout, error) {
	meta, l, err := im.meta(r, size)
	if err != nil {
		return nil, Layout{}, err
	}
	if data == nil && size > 0 {
		return nil, Layout{}, fmt.Errorf("image of %d bytes: no reader: %w", size, fs.ErrInvalid)
	}
	var c concat.ReaderAt
	c.AddBytes(meta)
	c.Add(data, 0, size)
	c.AddZeros(int64(l.Size - l.ImageOffset - l.ImageSize))
	return c.Section(), l, nil
}

// BinariesReader returns the OffloadBinary that WriteBinaries writes of ims
// (WriteBinary where ims holds one image) as a reader, as BinaryReader does
// for one image: each image is read from its Data only as the binary is
// read, so Data must be an io.ReaderAt too (a file, an *io.SectionReader, a
// *bytes.Reader), or fs.ErrInvalid is returned. Several images need a
// release that writes version 2 or later, as for WriteBinaries.
func BinariesReader(r *release.Release, ims []ImageData) (*io.SectionReader, error) {
	if len(ims) != 1 {
		if err := checkMulti(r, len(ims)); err != nil {
			return nil, err
		}
	}
	meta, ls, err := encode(r, ims)
	if err != nil {
		return nil, err
	}
	var c concat.ReaderAt
	c.AddBytes(meta)
	for i := range ims {
		if ims[i].Size == 0 {
			continue
		}
		data, ok := ims[i].Data.(io.ReaderAt)
		if !ok {
			return nil, fmt.Errorf("%s of %d bytes: its reader is not an io.ReaderAt: %w", imageName(ims, i), ims[i].Size, fs.ErrInvalid)
		}
		c.Add(data, 0, ims[i].Size)
	}
	last := ls[len(ls)-1]
	c.AddZeros(int64(last.Size - last.ImageOffset - last.ImageSize))
	return c.Section(), nil
}

// meta returns everything of the binary of im and size image bytes before
// the image, and its layout.
func (im *Image) meta(r *release.Release, size int64) ([]byte, Layout, error) {
	meta, ls, err := encode(r, []ImageData{{Image: *im, Size: size}})
	if err != nil {
		return nil, Layout{}, err
	}
	return meta, ls[0], nil
}

// encode returns everything of release r's binary of ims before the first
// image, and the layout of each entry.
func encode(r *release.Release, ims []ImageData) ([]byte, []Layout, error) {
	if err := checkBinary(r); err != nil {
		return nil, nil, err
	}
	ptrs := make([]*Image, len(ims))
	sizes := make([]uint64, len(ims))
	var total uint64
	for i := range ims {
		if ims[i].Size < 0 {
			return nil, nil, fmt.Errorf("%s size %d: %w", imageName(ims, i), ims[i].Size, offload.ErrEncoding)
		}
		ptrs[i], sizes[i] = &ims[i].Image, uint64(ims[i].Size)
		if total += sizes[i]; total > math.MaxInt64 {
			return nil, nil, fmt.Errorf("images of more than %d bytes in all: %w", int64(math.MaxInt64), offload.ErrEncoding)
		}
	}
	ls, st := layoutAll(r.BinaryVersion, ptrs, sizes)
	meta, err := appendMeta(make([]byte, 0, ls[0].ImageOffset), r, ims, ls, &st)
	if err != nil {
		return nil, nil, err
	}
	return meta, ls, nil
}

// checkBinary refuses a release without OffloadBinaries (BinaryVersion 0:
// LLVM 13 and 14), rather than writing one that its tools never made.
func checkBinary(r *release.Release) error {
	if r.BinaryVersion == 0 {
		return fmt.Errorf("%v has no OffloadBinary (it came with LLVM 15; %v embeds raw device images): %w", r, r, goffload.ErrUnsupported)
	}
	return nil
}
