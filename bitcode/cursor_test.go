package bitcode

import (
	"bytes"
	"errors"
	"testing"

	"github.com/goffload/goffload"
	"github.com/google/go-cmp/cmp"
)

// cursorOf returns a cursor of the stream w wrote, past its magic.
func cursorOf(w *bitWriter) *cursor {
	data := w.buf
	return newCursor(&bitReader{r: bytes.NewReader(data), bits: uint64(len(data)) * 8, pos: 32})
}

// readAll reads the records of the block c is in, entering the sub-blocks
// of ID enter and skipping the others, and returns them as code and
// operands (a blob's bytes as operands).
func readAll(t *testing.T, c *cursor, enter uint64) ([][]uint64, error) {
	t.Helper()
	var out [][]uint64
	rec := record{max: -1}
	for depth := 0; ; {
		e, err := c.advance()
		if err != nil {
			return out, err
		}
		switch e.kind {
		case entryEnd:
			if depth--; depth < 0 {
				return out, nil
			}
		case entrySub:
			if e.id == blockInfoID {
				if err := c.readBlockInfo(); err != nil {
					return out, err
				}
				continue
			}
			if e.id != enter {
				if err := c.skipBlock(); err != nil {
					return out, err
				}
				continue
			}
			if err := c.enter(e.id); err != nil {
				return out, err
			}
			depth++
		case entryRecord:
			if err := c.readRecord(e.id, &rec); err != nil {
				return out, err
			}
			out = append(out, append([]uint64{rec.code}, rec.ops...))
		}
	}
}

// TestCursorReadsEveryEncoding writes a block whose abbreviations come
// from BLOCKINFO and from the block itself, records of literal, fixed, VBR,
// char6, array and blob operands (an array of bytes not on a byte
// boundary), an unabbreviated record, and a nested block skipped by its
// length.
func TestCursorReadsEveryEncoding(t *testing.T) {
	w := newBitcode()
	w.enter(blockModule, 3)
	w.enter(blockInfoID, 2)
	w.record(blockInfoSetBID, 20)
	info := w.define(lit(7), fixedOp(3), vbrOp(4)) // abbreviation 4 of blocks 20
	w.end()
	w.enter(20, 4)
	own := w.define(lit(9), arrayOp, char6Op)           // 5
	bytes8 := w.define(fixedOp(5), arrayOp, fixedOp(8)) // 6
	blob := w.define(lit(11), vbrOp(6), blobOp)         // 7
	w.abbrev(4, info, []uint64{5, 1000}, nil)
	w.abbrev(5, own, chars("Hello_9"), nil)
	if (w.bits+4+5+6)%8 == 0 {
		t.Fatal("the array of bytes starts on a byte boundary")
	}
	w.abbrev(6, bytes8, []uint64{3, 0xff, 0x00, 0x81, 0x7e}, nil)
	w.abbrev(7, blob, []uint64{42}, []byte("blob!"))
	w.enter(21, 5) // skipped by its length
	w.record(1, 2, 3)
	w.end()
	w.record(12, 1<<40, 0)
	w.end()
	w.end()
	c := cursorOf(w)
	e, err := c.advance()
	if err != nil || e.kind != entrySub || e.id != blockModule {
		t.Fatalf("%+v, %v", e, err)
	}
	if err := c.enter(blockModule); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(t, c, 20)
	want := [][]uint64{
		{7, 5, 1000},
		append([]uint64{9}, chars("Hello_9")...),
		{3, 0xff, 0x00, 0x81, 0x7e},
		append([]uint64{11, 42}, chars("blob!")...),
		{12, 1 << 40, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" || err != nil {
		t.Errorf("%v\n%s", err, diff)
	}
	// Data mode reads the same bytes in bulk.
	c = cursorOf(w)
	c.advance()
	c.enter(blockModule)
	c.advance()
	c.readBlockInfo()
	c.advance()
	c.enter(20)
	var rec record
	for i := 0; i < 3; i++ {
		e, _ := c.advance()
		rec = record{width: 1, limit: 100}
		if err := c.readRecord(e.id, &rec); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(rec.data, []byte{0xff, 0x00, 0x81, 0x7e}) || rec.code != 3 {
		t.Errorf("bytes in bulk: % x", rec.data)
	}
}

// TestCursorRefusesMalformedStreams: each mistake is an error of its own,
// matching ErrInvalid, and ErrTruncated where the stream ends too soon.
func TestCursorRefusesMalformedStreams(t *testing.T) {
	for _, c := range []struct {
		name      string
		write     func(w *bitWriter)
		truncated bool
	}{
		{"an abbreviation ID no abbreviation has", func(w *bitWriter) { w.emit(5, 3) }, false},
		{"an array not second to last", func(w *bitWriter) {
			ab := w.define(lit(1), arrayOp, fixedOp(8), fixedOp(8))
			w.abbrev(4, ab, []uint64{1}, nil)
		}, false},
		{"an array of arrays", func(w *bitWriter) {
			w.define(lit(1), arrayOp, arrayOp)
			w.emit(4, 3)
		}, false},
		{"a record past its block", func(w *bitWriter) {
			w.record(1, 1<<60) // the block's length is patched below
		}, false},
		{"an array longer than the stream", func(w *bitWriter) {
			w.define(lit(1), arrayOp, fixedOp(8))
			w.emit(4, 3)
			w.vbr(1<<40, 6)
		}, true},
		{"a blob longer than the stream", func(w *bitWriter) {
			w.define(lit(1), blobOp)
			w.emit(4, 3)
			w.vbr(1<<20, 6)
		}, true},
		{"a field width of 65", func(w *bitWriter) {
			w.emit(abbrevDefine, 3)
			w.vbr(1, 5)
			w.emit(0, 1)
			w.emit(encFixed, 3)
			w.vbr(65, 5)
		}, false},
		{"a VBR chunk of 33", func(w *bitWriter) {
			w.emit(abbrevDefine, 3)
			w.vbr(1, 5)
			w.emit(0, 1)
			w.emit(encVBR, 3)
			w.vbr(33, 5)
		}, false},
	} {
		w := newBitcode()
		w.enter(blockModule, 3)
		c.write(w)
		// Cut the stream short for truncation; otherwise end the block, and
		// for the record past its block, end it one word early.
		if !c.truncated {
			w.end()
		}
		data := w.buf
		switch {
		case c.name == "a record past its block":
			data[8]-- // the module block's length in words
		case c.truncated:
			// The block ends with the stream, which ends in the record.
			for len(data)%4 != 0 {
				data = append(data, 0)
			}
			data[8] = byte((len(data) - 12) / 4)
		}
		cur := newCursor(&bitReader{r: bytes.NewReader(data), bits: uint64(len(data)) * 8, pos: 32})
		cur.advance()
		err := cur.enter(blockModule)
		if err == nil {
			_, err = readAll(t, cur, 99)
		}
		if !errors.Is(err, goffload.ErrInvalid) || c.truncated != errors.Is(err, goffload.ErrTruncated) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
