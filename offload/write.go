package offload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/goffload/goffload/internal/strtab"
)

var le = binary.LittleEndian

// appendMeta appends everything of a version-1 binary before its image: header,
// entry, string entries, string table and padding (spec §1.5).
func (im *Image) appendMeta(b []byte, r *Release, l *Layout, st *strtab.Table) ([]byte, error) {
	code, ok := r.OffloadKindCode(im.OffloadKind)
	if !ok {
		return nil, fmt.Errorf("offload kind %v in %v: %w", im.OffloadKind, r, ErrEncoding)
	}
	b = append(b, Magic[:]...)
	b = le.AppendUint32(b, Version)
	b = le.AppendUint64(b, l.Size)
	b = le.AppendUint64(b, HeaderSize)
	b = le.AppendUint64(b, ImageEntrySize)
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
	}
	b = append(b, st.Data...)
	for uint64(len(b))%Alignment != 0 {
		b = append(b, 0)
	}
	return b, nil
}

// WriteBinary writes one version-1 OffloadBinary to w, byte for byte as LLVM's
// OffloadBinary::write does for release r, holding im and the size bytes read
// from data. The image is copied straight from data to w: memory use does not
// depend on size. It returns the number of bytes written, Layout(size).Size on
// success.
func WriteBinary(w io.Writer, r *Release, im *Image, data io.Reader, size int64) (int64, error) {
	rd, _, err := BinaryReader(r, im, data, size)
	if err != nil {
		return 0, err
	}
	return io.Copy(w, rd)
}

// MarshalBinary returns the version-1 OffloadBinary of im holding data, as
// release r writes it.
func MarshalBinary(r *Release, im *Image, data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(int(im.Layout(uint64(len(data))).Size))
	if _, err := WriteBinary(&buf, r, im, bytes.NewReader(data), int64(len(data))); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// BinaryReader returns a reader of the version-1 OffloadBinary that
// WriteBinary would write, and its layout: the image is read from data only
// as the returned reader is read, so a binary can be streamed into an object
// without being held in memory.
func BinaryReader(r *Release, im *Image, data io.Reader, size int64) (io.Reader, Layout, error) {
	if size < 0 {
		return nil, Layout{}, fmt.Errorf("image size %d: %w", size, ErrEncoding)
	}
	l, st := im.layout(uint64(size))
	meta, err := im.appendMeta(make([]byte, 0, l.ImageOffset), r, &l, &st)
	if err != nil {
		return nil, Layout{}, err
	}
	pad := make([]byte, l.Size-l.ImageOffset-l.ImageSize)
	return io.MultiReader(bytes.NewReader(meta), &exactReader{r: data, n: size}, bytes.NewReader(pad)), l, nil
}

// exactReader reads exactly n bytes from r: fewer is io.ErrUnexpectedEOF.
type exactReader struct {
	r io.Reader
	n int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	n, err := e.r.Read(p)
	e.n -= int64(n)
	if err == io.EOF && e.n > 0 {
		err = io.ErrUnexpectedEOF
	} else if err == io.EOF {
		err = nil
	}
	return n, err
}
