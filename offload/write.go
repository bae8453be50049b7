package offload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"

	"github.com/goffload/goffload/internal/concat"
	"github.com/goffload/goffload/internal/strtab"
)

var le = binary.LittleEndian

// appendMeta appends everything of a binary of release r before its image:
// header, entry, string entries, string table and padding (spec §1.5); in
// version 3 (main after 22) the header is 40 bytes (EntriesCount 1,
// InflatedSize 0) and each string entry holds the value's size too.
func (im *Image) appendMeta(b []byte, r *Release, l *Layout, st *strtab.Table) ([]byte, error) {
	code, ok := r.OffloadKindCode(im.OffloadKind)
	if !ok {
		return nil, fmt.Errorf("offload kind %v in %v: %w", im.OffloadKind, r, ErrEncoding)
	}
	v3 := r.BinaryVersion >= VersionCompressed
	b = append(b, Magic[:]...)
	if v3 {
		b = le.AppendUint32(b, VersionCompressed)
		b = le.AppendUint64(b, l.Size)
		b = le.AppendUint64(b, HeaderSizeV3)
		b = le.AppendUint64(b, 1) // EntriesCount
		b = le.AppendUint64(b, 0) // InflatedSize
	} else {
		b = le.AppendUint32(b, Version)
		b = le.AppendUint64(b, l.Size)
		b = le.AppendUint64(b, HeaderSize)
		b = le.AppendUint64(b, ImageEntrySize)
	}
	b = le.AppendUint16(b, uint16(im.Kind))
	b = le.AppendUint16(b, code)
	b = le.AppendUint32(b, im.Flags)
	b = le.AppendUint64(b, l.StringOffset)
	b = le.AppendUint64(b, uint64(len(im.Strings)))
	b = le.AppendUint64(b, l.ImageOffset)
	b = le.AppendUint64(b, l.ImageSize)
	for _, kv := range im.Strings {
		b = le.AppendUint64(b, l.StringTable+st.Offset(kv.Key))
		b = le.AppendUint64(b, l.StringTable+st.Offset(kv.Value))
		if v3 {
			b = le.AppendUint64(b, uint64(len(kv.Value)))
		}
	}
	b = append(b, st.Data...)
	for uint64(len(b))%Alignment != 0 {
		b = append(b, 0)
	}
	return b, nil
}

// WriteBinary writes one OffloadBinary (version 1; 3 for main after 22) to w, byte for byte as LLVM's
// OffloadBinary::write does for release r, holding im and the size bytes read
// from data. The image is copied straight from data to w: memory use does not
// depend on size. It returns the number of bytes written, Layout(size).Size on
// success.
func WriteBinary(w io.Writer, r *Release, im *Image, data io.Reader, size int64) (int64, error) {
	meta, l, err := im.meta(r, size)
	if err != nil {
		return 0, err
	}
	if data == nil && size > 0 {
		return 0, fmt.Errorf("image of %d bytes: no reader: %w", size, fs.ErrInvalid)
	}
	n, err := w.Write(meta)
	written := int64(n)
	if err != nil {
		return written, err
	}
	m, err := io.CopyN(w, data, size)
	written += m
	if err == io.EOF {
		return written, fmt.Errorf("image: got %d of %d bytes: %w", m, size, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return written, err
	}
	n, err = w.Write(make([]byte, l.Size-l.ImageOffset-l.ImageSize))
	return written + int64(n), err
}

// MarshalBinary returns the version-1 OffloadBinary of im holding data, as
// release r writes it.
func MarshalBinary(r *Release, im *Image, data []byte) ([]byte, error) {
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
func BinaryReader(r *Release, im *Image, data io.ReaderAt, size int64) (*io.SectionReader, Layout, error) {
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

// meta returns everything of the binary of im and size image bytes before
// the image, and its layout.
func (im *Image) meta(r *Release, size int64) ([]byte, Layout, error) {
	if err := r.checkBinary(); err != nil {
		return nil, Layout{}, err
	}
	if size < 0 {
		return nil, Layout{}, fmt.Errorf("image size %d: %w", size, ErrEncoding)
	}
	l, st := im.layout(r.BinaryVersion, uint64(size))
	meta, err := im.appendMeta(make([]byte, 0, l.ImageOffset), r, &l, &st)
	if err != nil {
		return nil, Layout{}, err
	}
	return meta, l, nil
}

// checkBinary refuses a release without OffloadBinaries (BinaryVersion 0:
// LLVM 13 and 14), rather than writing one that its tools never made.
func (r *Release) checkBinary() error {
	if r.BinaryVersion == 0 {
		return fmt.Errorf("%v has no OffloadBinary (it came with LLVM 15; %v embeds raw device images): %w", r, r, ErrUnsupported)
	}
	return nil
}
