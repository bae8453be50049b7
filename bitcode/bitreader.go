package bitcode

import (
	"fmt"
	"io"
)

// bitReader reads an LLVM bitstream from an io.ReaderAt: fields of up to 64
// bits, least significant bit first, from bit pos of the stream that starts
// at byte base.
type bitReader struct {
	r    io.ReaderAt
	base int64
	bits uint64 // the stream's length in bits
	pos  uint64

	buf    [4096]byte
	bufOff int64 // stream byte offset of buf[0], -1 before the first read
	bufLen int

	blobAt   int64 // file offset of the blob blobRecord returned
	recordAt int64 // file offset of the blob abbreviatedRecord returned
}

func (b *bitReader) left() uint64 { return b.bits - b.pos }

// byteOff is the file offset of the current position, for errors.
func (b *bitReader) byteOff() int64 { return b.base + int64(b.pos/8) }

func (b *bitReader) byteAt(i int64) (byte, error) {
	if b.bufLen == 0 || i < b.bufOff || i >= b.bufOff+int64(b.bufLen) {
		n, err := b.r.ReadAt(b.buf[:min(int64(len(b.buf)), int64(b.bits/8)-i)], b.base+i)
		if n == 0 {
			return 0, shortRead(b.base+i, err)
		}
		b.bufOff, b.bufLen = i, n
	}
	return b.buf[i-b.bufOff], nil
}

// fixed reads an n-bit field (n <= 64).
func (b *bitReader) fixed(n uint) (uint64, error) {
	if uint64(n) > b.left() {
		return 0, truncErr(b.byteOff(), fmt.Sprintf("%d-bit field past the end", n), nil)
	}
	var v uint64
	for i := uint(0); i < n; {
		c, err := b.byteAt(int64(b.pos / 8))
		if err != nil {
			return 0, err
		}
		sh := uint(b.pos % 8)
		take := min(8-sh, n-i)
		v |= uint64(c>>sh) & (1<<take - 1) << i
		i += take
		b.pos += uint64(take)
	}
	return v, nil
}

// vbr reads a variable-width field of n-bit chunks.
func (b *bitReader) vbr(n uint) (uint64, error) {
	var v uint64
	for shift := uint(0); ; shift += n - 1 {
		chunk, err := b.fixed(n)
		if err != nil {
			return 0, err
		}
		if shift >= 64 {
			return 0, formatErr(b.byteOff(), "VBR field longer than 64 bits", nil)
		}
		v |= (chunk & (1<<(n-1) - 1)) << shift
		if chunk&(1<<(n-1)) == 0 {
			return v, nil
		}
	}
}

// align32 moves to the next multiple of 32 bits.
func (b *bitReader) align32() error {
	p := (b.pos + 31) &^ 31
	if p > b.bits {
		return truncErr(b.byteOff(), "alignment past the end", nil)
	}
	b.pos = p
	return nil
}

// allZero reports whether every bit left is zero (the padding after the last
// top-level block); it does not move.
func (b *bitReader) allZero() bool {
	save := b.pos
	defer func() { b.pos = save }()
	for b.left() > 0 {
		v, err := b.fixed(uint(min(b.left(), 32)))
		if err != nil || v != 0 {
			return false
		}
	}
	return true
}

// enterBlock reads the rest of an ENTER_SUBBLOCK: the block ID, its
// abbreviation width and its length in 32-bit words.
func (b *bitReader) enterBlock() (id uint64, width uint, words uint64, err error) {
	if id, err = b.vbr(8); err != nil {
		return
	}
	w, err := b.vbr(4)
	if err != nil {
		return
	}
	if w < 2 || w > 32 {
		return 0, 0, 0, formatErr(b.byteOff(), "abbreviation width", w)
	}
	if err = b.align32(); err != nil {
		return
	}
	words, err = b.fixed(32)
	return id, uint(w), words, err
}

// Abbreviation operand encodings.
const (
	encFixed = 1
	encVBR   = 2
	encArray = 3
	encChar6 = 4
	encBlob  = 5
)

type abbrevOp struct {
	literal bool
	value   uint64 // the literal, or the width of a fixed or VBR field
	enc     uint64
}

// maxAbbrevOps bounds an abbreviation: LLVM's have a handful.
const maxAbbrevOps = 64

// blobRecord reads the records of a block up to its END_BLOCK (or end) and
// returns the blob of its record of code recordBlob.
func (b *bitReader) blobRecord(width uint, end uint64) ([]byte, error) {
	var abbrevs [][]abbrevOp
	var blob []byte
	for b.pos < end {
		id, err := b.fixed(width)
		if err != nil {
			return nil, err
		}
		switch id {
		case 0: // END_BLOCK
			return blob, b.align32()
		case 1: // ENTER_SUBBLOCK: skipped
			_, _, words, err := b.enterBlock()
			if err != nil {
				return nil, err
			}
			if words*32 > end-b.pos {
				return nil, truncErr(b.byteOff()-4, "nested block length past the end", words)
			}
			b.pos += words * 32
		case 2: // DEFINE_ABBREV
			a, err := b.defineAbbrev()
			if err != nil {
				return nil, err
			}
			abbrevs = append(abbrevs, a)
		case 3: // UNABBREV_RECORD
			if _, err := b.vbr(6); err != nil {
				return nil, err
			}
			n, err := b.vbr(6)
			if err != nil {
				return nil, err
			}
			if n > b.left() {
				return nil, formatErr(b.byteOff(), "operand count", n)
			}
			for range n {
				if _, err := b.vbr(6); err != nil {
					return nil, err
				}
			}
		default:
			if id-4 >= uint64(len(abbrevs)) {
				return nil, formatErr(b.byteOff(), "abbreviation ID", id)
			}
			code, data, err := b.abbreviatedRecord(abbrevs[id-4])
			if err != nil {
				return nil, err
			}
			if code == recordBlob && data != nil {
				blob, b.blobAt = data, b.recordAt
			}
		}
	}
	return blob, nil
}

func (b *bitReader) defineAbbrev() ([]abbrevOp, error) {
	n, err := b.vbr(5)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > maxAbbrevOps {
		return nil, formatErr(b.byteOff(), "abbreviation operand count", n)
	}
	ops := make([]abbrevOp, 0, n)
	for range n {
		lit, err := b.fixed(1)
		if err != nil {
			return nil, err
		}
		if lit == 1 {
			v, err := b.vbr(8)
			if err != nil {
				return nil, err
			}
			ops = append(ops, abbrevOp{literal: true, value: v})
			continue
		}
		enc, err := b.fixed(3)
		if err != nil {
			return nil, err
		}
		op := abbrevOp{enc: enc}
		switch enc {
		case encFixed, encVBR:
			if op.value, err = b.vbr(5); err != nil {
				return nil, err
			}
			if op.value > 64 || enc == encVBR && op.value < 2 {
				return nil, formatErr(b.byteOff(), "field width", op.value)
			}
		case encArray, encChar6, encBlob:
		default:
			return nil, formatErr(b.byteOff(), "operand encoding", enc)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// abbreviatedRecord reads a record by its abbreviation and returns its code
// and its blob, if it has one.
func (b *bitReader) abbreviatedRecord(ops []abbrevOp) (code uint64, blob []byte, err error) {
	first := true
	for i := 0; i < len(ops); i++ {
		op := ops[i]
		var v uint64
		switch {
		case op.literal:
			v = op.value
		case op.enc == encArray:
			if i+1 >= len(ops) || ops[i+1].enc == encArray || ops[i+1].enc == encBlob {
				return 0, nil, formatErr(b.byteOff(), "array without an element type", nil)
			}
			n, err := b.vbr(6)
			if err != nil {
				return 0, nil, err
			}
			if n > b.left() {
				return 0, nil, formatErr(b.byteOff(), "array length", n)
			}
			for range n {
				if _, err := b.scalar(ops[i+1]); err != nil {
					return 0, nil, err
				}
			}
			i++
			continue
		case op.enc == encBlob:
			n, err := b.vbr(6)
			if err != nil {
				return 0, nil, err
			}
			if err := b.align32(); err != nil {
				return 0, nil, err
			}
			if n > b.left()/8 {
				return 0, nil, truncErr(b.byteOff(), "blob length past the end", n)
			}
			blob = make([]byte, n)
			b.recordAt = b.base + int64(b.pos/8)
			if got, err := b.r.ReadAt(blob, b.recordAt); got < len(blob) {
				return 0, nil, shortRead(b.recordAt+int64(got), err)
			}
			b.pos += n * 8
			if err := b.align32(); err != nil {
				return 0, nil, err
			}
			continue
		default:
			if v, err = b.scalar(op); err != nil {
				return 0, nil, err
			}
		}
		if first {
			code, first = v, false
		}
	}
	return code, blob, nil
}

func (b *bitReader) scalar(op abbrevOp) (uint64, error) {
	switch {
	case op.literal:
		return op.value, nil
	case op.enc == encFixed:
		return b.fixed(uint(op.value))
	case op.enc == encVBR:
		return b.vbr(uint(op.value))
	case op.enc == encChar6:
		return b.fixed(6)
	}
	return 0, formatErr(b.byteOff(), "operand encoding", op.enc)
}
