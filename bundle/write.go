package bundle

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/goffload/goffload/internal/concat"
)

// Input is one bundle entry to write: its ID and its data (nil: empty, as
// the host entry of a HIP fatbin is).
type Input struct {
	ID   string
	Data *io.SectionReader
}

// size is the number of bytes of the input's data.
func (in *Input) size() int64 {
	if in.Data == nil {
		return 0
	}
	return in.Data.Size()
}

// EntryOffsets returns the entries that [Write] writes for inputs, and the size of
// the bundle: the header, then each input's data at the next multiple of
// align after the end of the previous data (or of the header), as
// clang-offload-bundler's binary handler lays them out. The entries keep the
// order of inputs.
func EntryOffsets(align uint64, inputs []Input) ([]Entry, uint64, error) {
	if align == 0 {
		return nil, 0, errors.New("offload bundle: alignment 0")
	}
	seen := make(map[string]bool, len(inputs))
	end := uint64(headerSize)
	for i, in := range inputs {
		if seen[in.ID] {
			return nil, 0, fmt.Errorf("offload bundle: input %d: %q: %w", i, in.ID, ErrDuplicateID)
		}
		seen[in.ID] = true
		end += entryFixedSize + uint64(len(in.ID))
	}
	entries := make([]Entry, len(inputs))
	for i, in := range inputs {
		off, ok := alignUp(end, align)
		if !ok || uint64(in.size()) > math.MaxUint64-off {
			return nil, 0, fmt.Errorf("offload bundle: input %d (%q): bundle larger than 2^64 bytes", i, in.ID)
		}
		entries[i] = Entry{ID: in.ID, Offset: off, Size: uint64(in.size())}
		end = off + uint64(in.size())
	}
	return entries, end, nil
}

func alignUp(n, align uint64) (uint64, bool) {
	r := n % align
	if r == 0 {
		return n, true
	}
	if n > math.MaxUint64-(align-r) {
		return 0, false
	}
	return n + align - r, true
}

// Write writes the uncompressed bundle of inputs to w, streaming each input's
// data once, with zero bytes before each entry up to its aligned offset and
// none after the last: the bytes that `clang-offload-bundler -type=o
// -bundle-align=<align> -targets=<IDs> -input=...` writes when the host input
// is not an object file (for HIP, /dev/null), given IDs in the form the
// bundler writes them (see [DeviceID]; the bundler of LLVM 17 and later
// rewrites some -targets spellings). Duplicate IDs give [ErrDuplicateID]; an
// input shorter than its Size gives an error wrapping io.ErrUnexpectedEOF.
// On error, w may hold part of the bundle.
func Write(w io.Writer, align uint64, inputs []Input) error {
	entries, _, err := EntryOffsets(align, inputs)
	if err != nil {
		return err
	}
	hdr := header(entries)
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	pos := uint64(len(hdr))
	for i, e := range entries {
		if err := writeZeros(w, e.Offset-pos); err != nil {
			return err
		}
		if e.Size > 0 {
			n, err := io.Copy(w, io.NewSectionReader(inputs[i].Data, 0, int64(e.Size)))
			if err == nil && n < int64(e.Size) {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				return fmt.Errorf("offload bundle: input %d (%q): %d of %d bytes: %w", i, e.ID, n, e.Size, err)
			}
		}
		pos = e.Offset + e.Size
	}
	return nil
}

// NewReader returns the bundle that [Write] writes for inputs as a reader of
// known size that reads the inputs only as it is read, at random, as often as
// asked and from several goroutines at once when the inputs allow that (files
// and byte slices do): a fatbin to embed in an object (wrap.GPU) without
// writing it anywhere first. An input shorter than its Size gives
// io.ErrUnexpectedEOF when it is read.
func NewReader(align uint64, inputs []Input) (*io.SectionReader, error) {
	entries, _, err := EntryOffsets(align, inputs)
	if err != nil {
		return nil, err
	}
	var c concat.ReaderAt
	hdr := header(entries)
	c.AddBytes(hdr)
	pos := uint64(len(hdr))
	for i, e := range entries {
		c.AddZeros(int64(e.Offset - pos))
		if e.Size > 0 {
			c.Add(inputs[i].Data, 0, int64(e.Size))
		}
		pos = e.Offset + e.Size
	}
	return c.Section(), nil
}

// header returns the bytes of the bundle header of entries: the magic, the
// count and each entry's offset, size, ID length and ID.
func header(entries []Entry) []byte {
	hdr := make([]byte, 0, headerSize+len(entries)*entryFixedSize)
	hdr = append(hdr, Magic...)
	hdr = le.AppendUint64(hdr, uint64(len(entries)))
	for _, e := range entries {
		hdr = le.AppendUint64(hdr, e.Offset)
		hdr = le.AppendUint64(hdr, e.Size)
		hdr = le.AppendUint64(hdr, uint64(len(e.ID)))
		hdr = append(hdr, e.ID...)
	}
	return hdr
}

var zeros [4096]byte

func writeZeros(w io.Writer, n uint64) error {
	for n > 0 {
		c := min(n, uint64(len(zeros)))
		if _, err := w.Write(zeros[:c]); err != nil {
			return err
		}
		n -= c
	}
	return nil
}
