package bitcode

import (
	"fmt"
	"io"
)

// bitReader reads an LLVM bitstream from an io.ReaderAt: fields of up to 64
// bits, least significant bit first, from bit pos of the stream that starts
// at byte base.
//
// end, when not 0, is where the block being read ends: a field that would
// cross it is an error, as is one that would cross the stream's end.
type bitReader struct {
	r    io.ReaderAt
	base int64
	bits uint64 // the stream's length in bits
	pos  uint64
	end  uint64 // the current block's end in bits; 0: the stream's

	buf    [4096]byte
	bufOff int64 // stream byte offset of buf[0], -1 before the first read
	bufLen int

	blobAt int64 // file offset of the blob blobRecord returned
}

// limit is where reading must stop: the end of the block being read, or of
// the stream.
func (b *bitReader) limit() uint64 {
	if b.end != 0 {
		return b.end
	}
	return b.bits
}

func (b *bitReader) left() uint64 {
	if l := b.limit(); b.pos < l {
		return l - b.pos
	}
	return 0
}

// pastEnd is the error of a field of what that would cross the end of the
// block (malformed) or of the stream (truncated).
func (b *bitReader) pastEnd(what string) error {
	if b.limit() < b.bits {
		return formatErr(b.byteOff(), what+" past the end of its block", nil)
	}
	return truncErr(b.byteOff(), what+" past the end", nil)
}

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
		return 0, b.pastEnd(fmt.Sprintf("%d-bit field", n))
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
	if p > b.limit() {
		return b.pastEnd("alignment")
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
	// LLVM's BitstreamCursor::EnterSubBlock: 1 to 64 bits.
	if w < 1 || w > 64 {
		return 0, 0, 0, formatErr(b.byteOff(), "abbreviation width", w)
	}
	if err = b.align32(); err != nil {
		return
	}
	words, err = b.fixed(32)
	return id, uint(w), words, err
}

// bytes8 fills dst with the next len(dst) 8-bit fields, a whole array of
// Fixed(8) elements at once, wherever it starts in a byte.
func (b *bitReader) bytes8(dst []byte) error {
	n := uint64(len(dst))
	if n > b.left()/8 {
		return b.pastEnd(fmt.Sprintf("array of %d bytes", n))
	}
	at := b.base + int64(b.pos/8)
	sh := uint(b.pos % 8)
	if sh == 0 {
		if k, err := b.r.ReadAt(dst, at); k < len(dst) {
			return shortRead(at+int64(k), err)
		}
		b.pos += n * 8
		return nil
	}
	// Each byte straddles two: read a chunk and one byte more, into the
	// buffer of byteAt.
	chunk := b.buf[:]
	b.bufLen = 0
	for i := 0; i < len(dst); {
		k := min(len(dst)-i, len(chunk)-1)
		if got, err := b.r.ReadAt(chunk[:k+1], at+int64(i)); got < k+1 {
			return shortRead(at+int64(i+got), err)
		}
		for j := range k {
			dst[i+j] = chunk[j]>>sh | chunk[j+1]<<(8-sh)
		}
		i += k
	}
	b.pos += n * 8
	return nil
}

// Abbreviation operand encodings (llvm/Bitstream/BitCodes.h).
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

// maxAbbrevOps bounds an abbreviation: LLVM's writer makes none with more
// than about a dozen operands, and no more can make a record decode into
// more values than it has bits.
const maxAbbrevOps = 64

// defineAbbrev reads the body of a DEFINE_ABBREV, as LLVM's
// BitstreamCursor::ReadAbbrevRecord does: a Fixed(0) or VBR(0) operand is
// the literal 0; a Fixed field has at most 64 bits and a VBR chunk at most
// 32 (LLVM reads wider ones wrongly, when its assertions are off).
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
			if op.value == 0 {
				op = abbrevOp{literal: true}
			} else if enc == encFixed && op.value > 64 || enc == encVBR && op.value > 32 {
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

// blobRecord reads the records of the block being read, whose abbreviation
// width is width and which ends at bit end, up to its END_BLOCK (or end),
// and returns the blob of its last record of code recordBlob that has one.
func (b *bitReader) blobRecord(width uint, end uint64) ([]byte, error) {
	c := newCursor(b)
	saved := b.end
	defer func() { b.end = saved }()
	c.push(noBlock, width, end)
	var blob []byte
	for b.pos < end {
		e, err := c.advance()
		if err != nil {
			return nil, err
		}
		switch e.kind {
		case entryEnd:
			return blob, nil
		case entrySub:
			if err := c.skipBlock(); err != nil {
				return nil, err
			}
		case entryRecord:
			rec := record{keepBlob: true}
			if err := c.readRecord(e.id, &rec); err != nil {
				return nil, err
			}
			if rec.code == recordBlob && rec.blob != nil {
				blob, b.blobAt = rec.blob, rec.blobAt
			}
		}
	}
	return blob, nil
}
