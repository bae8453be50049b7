package ar

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// NewMember is one member to write: its header fields and its data, read
// when the archive is written (nil: empty).
type NewMember struct {
	Name     string
	Date     int64
	UID, GID int
	Mode     uint32
	Data     *io.SectionReader
	// Symbols are the global symbols the member defines, for the index.
	Symbols []string
}

// WriteGNU writes a GNU (SysV) archive of members to w as LLVM's archive
// writer lays one out: the symbol index "/" (32-bit offsets) when a member
// has symbols, padded to an even size with a NUL that its size counts; the
// long-name table "//" when a name does not fit in 15 bytes, padded with a
// '\n' that its size counts; then the members, each padded to an even size
// with a '\n' that its size does not count, their data copied straight from
// their readers.
func WriteGNU(w io.Writer, members []NewMember) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var longNames strings.Builder
	names := make([]string, len(members))
	for i, m := range members {
		if m.Name == "" || strings.ContainsAny(m.Name, "/\n") {
			return fmt.Errorf("ar: member name %q cannot be written", m.Name)
		}
		if len(m.Name) <= 15 {
			names[i] = m.Name + "/"
			continue
		}
		names[i] = fmt.Sprintf("/%d", longNames.Len())
		longNames.WriteString(m.Name + "/\n")
	}
	var nsyms, strSize int
	for _, m := range members {
		nsyms += len(m.Symbols)
		for _, s := range m.Symbols {
			strSize += len(s) + 1
		}
	}
	indexSize := int64(0)
	if nsyms > 0 {
		indexSize = int64(4 + 4*nsyms + strSize)
		indexSize += indexSize % 2
	}
	if longNames.Len()%2 == 1 {
		longNames.WriteByte('\n')
	}
	// Offsets of the members' headers, which the index stores.
	off := int64(len(Magic))
	if nsyms > 0 {
		off += HeaderSize + indexSize
	}
	if longNames.Len() > 0 {
		off += HeaderSize + int64(longNames.Len())
	}
	offsets := make([]int64, len(members))
	for i, m := range members {
		offsets[i] = off
		off += HeaderSize + m.size() + m.size()%2
	}
	if off > 1<<32-1 && nsyms > 0 {
		return fmt.Errorf("ar: %d bytes: a member lies past the 32-bit offsets of the symbol index", off)
	}
	bw.WriteString(Magic)
	if nsyms > 0 {
		idx := binary.BigEndian.AppendUint32(nil, uint32(nsyms))
		for i, m := range members {
			for range m.Symbols {
				idx = binary.BigEndian.AppendUint32(idx, uint32(offsets[i]))
			}
		}
		for _, m := range members {
			for _, s := range m.Symbols {
				idx = append(append(idx, s...), 0)
			}
		}
		if len(idx)%2 == 1 {
			idx = append(idx, 0)
		}
		if err := writeMember(bw, "/", 0, 0, 0, 0, int64(len(idx)), strings.NewReader(string(idx))); err != nil {
			return err
		}
	}
	if longNames.Len() > 0 {
		if err := writeMember(bw, "//", -1, -1, -1, 0, int64(longNames.Len()), strings.NewReader(longNames.String())); err != nil {
			return err
		}
	}
	for i, m := range members {
		if err := writeMember(bw, names[i], m.Date, m.UID, m.GID, m.Mode, m.size(), m.reader()); err != nil {
			return fmt.Errorf("ar: member %q: %w", m.Name, err)
		}
	}
	return bw.Flush()
}

// writeMember writes one header and the data; a negative date, uid or gid
// leaves the field blank (the long-name table's header has none).
func writeMember(w *bufio.Writer, name string, date int64, uid, gid int, mode uint32, size int64, r io.Reader) error {
	field := func(v int64, width int, format string) string {
		if v < 0 {
			return strings.Repeat(" ", width)
		}
		return fmt.Sprintf("%-*s", width, fmt.Sprintf(format, v))
	}
	modeField := strings.Repeat(" ", 8)
	if date >= 0 {
		modeField = fmt.Sprintf("%-8o", mode)
	}
	hdr := fmt.Sprintf("%-16s%s%s%s%s%-10d`\n", name, field(date, 12, "%d"), field(int64(uid), 6, "%d"), field(int64(gid), 6, "%d"), modeField, size)
	if len(hdr) != HeaderSize {
		return fmt.Errorf("a field does not fit its header: %q", hdr)
	}
	if _, err := w.WriteString(hdr); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	n, err := io.CopyN(w, r, size)
	if err == io.EOF {
		return fmt.Errorf("got %d of %d bytes: %w", n, size, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return err
	}
	if size%2 == 1 {
		return w.WriteByte('\n')
	}
	return nil
}

func (m *NewMember) size() int64 {
	if m.Data == nil {
		return 0
	}
	return m.Data.Size()
}

func (m *NewMember) reader() io.Reader {
	if m.Data == nil {
		return bytes.NewReader(nil)
	}
	return io.NewSectionReader(m.Data, 0, m.Data.Size())
}
