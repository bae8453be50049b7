package bitcode

import (
	"fmt"
	"slices"
)

// The abbreviation IDs every block has (llvm/Bitstream/BitCodeEnums.h);
// those of a block's own abbreviations start at firstAbbrev.
const (
	abbrevEndBlock      = 0
	abbrevEnterSubblock = 1
	abbrevDefine        = 2
	abbrevUnabbreviated = 3
	firstAbbrev         = 4
)

// The BLOCKINFO block, whose abbreviations other blocks start with.
const (
	blockInfoID            = 0
	blockInfoSetBID        = 1
	blockInfoBlockName     = 2
	blockInfoSetRecordName = 3
)

// noBlock is the ID of no block: the top level of the stream.
const noBlock = ^uint64(0)

// cursor reads the blocks and records of an LLVM bitstream as LLVM's
// BitstreamCursor does (llvm/lib/Bitstream/Reader/BitstreamReader.cpp): each
// block has its abbreviation width and its abbreviations (those BLOCKINFO
// gives its block ID, then those it defines); a record is unabbreviated or
// read by an abbreviation. Unlike LLVM, it refuses a block whose records run
// past the length the block declares; nothing it reads lies outside the
// input, and what it keeps of a record is bounded by the caller.
type cursor struct {
	br      *bitReader
	width   uint
	blockID uint64
	info    []*[]abbrevOp // the BLOCKINFO abbreviations of the block
	own     []*[]abbrevOp // the block's own
	stack   []scope

	// blockInfo holds the abbreviations of the last BLOCKINFO block read,
	// by the block ID they are for.
	blockInfo map[uint64][]*[]abbrevOp
}

// scope is what a cursor restores when a block ends.
type scope struct {
	width     uint
	end       uint64
	blockID   uint64
	info, own []*[]abbrevOp
}

func newCursor(br *bitReader) *cursor { return &cursor{br: br, width: 2, blockID: noBlock} }

type entryKind uint8

const (
	entryEnd entryKind = iota + 1
	entrySub
	entryRecord
)

// entry is what cursor.advance read: the end of the block, the start of a
// sub-block (id its block ID), or a record (id its abbreviation ID).
type entry struct {
	kind entryKind
	id   uint64
	at   int64 // its file offset
}

// push makes a block of ID id, abbreviation width width and ending at bit
// end the current one.
func (c *cursor) push(id uint64, width uint, end uint64) {
	c.stack = append(c.stack, scope{c.width, c.br.end, c.blockID, c.info, c.own})
	c.width, c.br.end, c.blockID = width, end, id
	c.info, c.own = c.blockInfo[id], nil
}

// advance reads the next entry of the current block. It reads
// DEFINE_ABBREV records into the block's abbreviations, and an END_BLOCK
// leaves the block; at the top level, where there is no block, an
// END_BLOCK is an error.
func (c *cursor) advance() (entry, error) {
	for {
		e, err := c.next()
		if err != nil || e.kind != entryRecord || e.id != abbrevDefine {
			return e, err
		}
		a, err := c.br.defineAbbrev()
		if err != nil {
			return entry{}, err
		}
		c.own = append(c.own, &a)
	}
}

// next is advance without taking DEFINE_ABBREV records in: they are
// records of abbreviation ID abbrevDefine.
func (c *cursor) next() (entry, error) {
	at := c.br.byteOff()
	id, err := c.br.fixed(c.width)
	if err != nil {
		return entry{}, err
	}
	switch id {
	case abbrevEndBlock:
		if len(c.stack) == 0 {
			return entry{}, formatErr(at, "END_BLOCK outside any block", nil)
		}
		if err := c.br.align32(); err != nil {
			return entry{}, err
		}
		s := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		c.width, c.br.end, c.blockID, c.info, c.own = s.width, s.end, s.blockID, s.info, s.own
		return entry{kind: entryEnd, at: at}, nil
	case abbrevEnterSubblock:
		bid, err := c.br.vbr(8)
		if err != nil {
			return entry{}, err
		}
		return entry{kind: entrySub, id: bid, at: at}, nil
	}
	return entry{kind: entryRecord, id: id, at: at}, nil
}

// advanceSkippingBlocks is advance that skips sub-blocks, as LLVM's
// advanceSkippingSubblocks.
func (c *cursor) advanceSkippingBlocks() (entry, error) {
	for {
		e, err := c.advance()
		if err != nil || e.kind != entrySub {
			return e, err
		}
		if err := c.skipBlock(); err != nil {
			return entry{}, err
		}
	}
}

// blockHeader reads what follows a sub-block's ID: its abbreviation width
// and its length, and returns where it ends.
func (c *cursor) blockHeader(id uint64) (width uint, end uint64, err error) {
	at := c.br.byteOff()
	w, err := c.br.vbr(4)
	if err != nil {
		return 0, 0, err
	}
	if err := c.br.align32(); err != nil {
		return 0, 0, err
	}
	words, err := c.br.fixed(32)
	if err != nil {
		return 0, 0, err
	}
	if words > c.br.left()/32 {
		return 0, 0, c.br.pastEnd(fmt.Sprintf("block %d of %d words", id, words))
	}
	if w < 1 || w > 64 {
		return 0, 0, formatErr(at, fmt.Sprintf("block %d abbreviation width", id), w)
	}
	return uint(w), c.br.pos + words*32, nil
}

// enter enters the sub-block of ID id whose ENTER_SUBBLOCK advance
// returned.
func (c *cursor) enter(id uint64) error {
	w, end, err := c.blockHeader(id)
	if err != nil {
		return err
	}
	c.push(id, w, end)
	return nil
}

// skipBlock skips the sub-block whose ENTER_SUBBLOCK advance returned, by
// its length.
func (c *cursor) skipBlock() error {
	_, end, err := c.blockHeader(0)
	if err != nil {
		return err
	}
	c.br.pos = end
	return nil
}

// abbrev returns the abbreviation of ID id in the current block.
func (c *cursor) abbrev(id uint64, at int64) (*[]abbrevOp, error) {
	i := id - firstAbbrev
	switch {
	case id < firstAbbrev:
		return nil, formatErr(at, "abbreviation ID", id)
	case i < uint64(len(c.info)):
		return c.info[i], nil
	case i-uint64(len(c.info)) < uint64(len(c.own)):
		return c.own[i-uint64(len(c.info))], nil
	}
	return nil, formatErr(at, "abbreviation ID", id)
}

// record receives a record's code and operands. What it keeps is bounded
// by its user: at most max operands (all of them when max is negative),
// or, with width set, every operand as width little-endian bytes in data,
// at most limit bytes.
type record struct {
	code uint64
	n    uint64   // the number of operands read
	ops  []uint64 // the first max operands
	max  int

	// keepBlob keeps a blob operand's bytes in blob (as LLVM's readRecord
	// given a blob); else each byte is an operand.
	keepBlob bool
	blob     []byte
	blobAt   int64 // the blob's file offset

	width int
	data  []byte
	limit uint64

	at  int64       // the file offset of the record
	pos uint64      // the bit after its abbreviation ID, to read it again
	ab  *[]abbrevOp // its abbreviation, nil for an unabbreviated record
}

// reset clears r for the next record, keeping its buffers and settings.
func (r *record) reset() {
	r.code, r.n, r.ops, r.blob, r.blobAt, r.data = 0, 0, r.ops[:0], nil, 0, r.data[:0]
}

// wants reports whether r keeps operand values, so that the reader must
// decode them.
func (r *record) wants() bool { return r.width > 0 || r.max < 0 || len(r.ops) < r.max }

func (r *record) add(v uint64) {
	r.n++
	switch {
	case r.width > 0:
		for i := range r.width {
			r.data = append(r.data, byte(v>>(8*i)))
		}
	case r.max < 0 || len(r.ops) < r.max:
		r.ops = append(r.ops, v)
	}
}

// room checks that n more operands fit in r's data.
func (r *record) room(n uint64, at int64) error {
	if r.width > 0 && (n > r.limit || uint64(len(r.data))+n*uint64(r.width) > r.limit) {
		return limitErr(at, fmt.Sprintf("a record of %d elements of %d bytes", n, r.width))
	}
	return nil
}

// op returns operand i of r, 0 when it has fewer (the caller checks r.n).
func (r *record) op(i int) uint64 {
	if i < len(r.ops) {
		return r.ops[i]
	}
	return 0
}

// readRecord reads the record of abbreviation ID id that advance returned,
// as LLVM's BitstreamCursor::readRecord does.
func (c *cursor) readRecord(id uint64, r *record) error {
	r.reset()
	r.at, r.pos, r.ab = c.br.byteOff(), c.br.pos, nil
	if id == abbrevUnabbreviated {
		code, err := c.br.vbr(6)
		if err != nil {
			return err
		}
		n, err := c.br.vbr(6)
		if err != nil {
			return err
		}
		if n > c.br.left()/6 { // each operand takes 6 bits or more
			return c.br.pastEnd(fmt.Sprintf("record of %d operands", n))
		}
		if err := r.room(n, r.at); err != nil {
			return err
		}
		r.code = code
		for range n {
			v, err := c.br.vbr(6)
			if err != nil {
				return err
			}
			r.add(v)
		}
		return nil
	}
	ab, err := c.abbrev(id, r.at)
	if err != nil {
		return err
	}
	r.ab = ab
	return c.readAbbreviated(*ab, r)
}

// rereadRecord reads again the record r was read from, at bit pos: of
// abbreviation ab, or unabbreviated if nil.
func (c *cursor) rereadRecord(pos uint64, ab *[]abbrevOp, r *record) error {
	c.br.pos = pos
	if ab == nil {
		return c.readRecord(abbrevUnabbreviated, r)
	}
	r.reset()
	r.at, r.pos, r.ab = c.br.byteOff(), pos, ab
	return c.readAbbreviated(*ab, r)
}

func (c *cursor) readAbbreviated(ops []abbrevOp, r *record) error {
	first := ops[0]
	if !first.literal && (first.enc == encArray || first.enc == encBlob) {
		return formatErr(r.at, "abbreviation starting with an array or a blob", nil)
	}
	code, err := c.scalar(first)
	if err != nil {
		return err
	}
	r.code = code
	for i := 1; i < len(ops); i++ {
		op := ops[i]
		switch {
		case op.literal:
			r.add(op.value)
		case op.enc == encArray:
			if i+2 != len(ops) {
				return formatErr(r.at, "abbreviation with an array that is not second to last", nil)
			}
			elt := ops[i+1]
			if elt.literal || elt.enc == encArray || elt.enc == encBlob {
				return formatErr(r.at, "abbreviation with an array of neither a fixed, a VBR nor a char6 field", nil)
			}
			if err := c.array(elt, r); err != nil {
				return err
			}
			return nil
		case op.enc == encBlob:
			if err := c.blob(r); err != nil {
				return err
			}
		default:
			v, err := c.scalar(op)
			if err != nil {
				return err
			}
			r.add(v)
		}
	}
	return nil
}

// array reads an array operand of elements elt into r.
func (c *cursor) array(elt abbrevOp, r *record) error {
	n, err := c.br.vbr(6)
	if err != nil {
		return err
	}
	if n > c.br.left() { // each element takes a bit or more
		return c.br.pastEnd(fmt.Sprintf("array of %d elements", n))
	}
	if err := r.room(n, r.at); err != nil {
		return err
	}
	if r.width == 1 && elt.enc == encFixed && elt.value == 8 {
		// A string of bytes, as clang writes an embedded object.
		start := len(r.data)
		r.data = slices.Grow(r.data, int(n))[:start+int(n)]
		r.n += n
		return c.br.bytes8(r.data[start:])
	}
	for k := range n {
		if !r.wants() && elt.enc != encVBR {
			// The rest is not kept: skip it as LLVM's skipRecord does.
			w := elt.value
			if elt.enc == encChar6 {
				w = 6
			}
			if (n-k)*w > c.br.left() {
				return c.br.pastEnd(fmt.Sprintf("array of %d elements", n))
			}
			c.br.pos += (n - k) * w
			r.n += n - k
			return nil
		}
		v, err := c.scalar(elt)
		if err != nil {
			return err
		}
		r.add(v)
	}
	return nil
}

// blob reads a blob operand into r.
func (c *cursor) blob(r *record) error {
	n, err := c.br.vbr(6)
	if err != nil {
		return err
	}
	if err := c.br.align32(); err != nil {
		return err
	}
	// The bytes and the padding to 32 bits.
	if n > c.br.left()/8 || (n+3)&^3 > c.br.left()/8 {
		return c.br.pastEnd(fmt.Sprintf("blob of %d bytes", n))
	}
	at := c.br.byteOff()
	end := c.br.pos + (n+3)&^3*8
	switch {
	case r.keepBlob:
		r.blob, r.blobAt = make([]byte, n), at
		if got, err := c.br.r.ReadAt(r.blob, at); got < len(r.blob) {
			return shortRead(at+int64(got), err)
		}
	case r.wants():
		if err := r.room(n, at); err != nil {
			return err
		}
		b := make([]byte, n)
		if err := c.br.bytes8(b); err != nil {
			return err
		}
		for _, v := range b {
			r.add(uint64(v))
		}
	default:
		r.n += n
	}
	c.br.pos = end
	return nil
}

// scalar reads a literal, fixed, VBR or char6 operand.
func (c *cursor) scalar(op abbrevOp) (uint64, error) {
	switch {
	case op.literal:
		return op.value, nil
	case op.enc == encFixed:
		return c.br.fixed(uint(op.value))
	case op.enc == encVBR:
		return c.br.vbr(uint(op.value))
	case op.enc == encChar6:
		v, err := c.br.fixed(6)
		return uint64(char6[v]), err
	}
	return 0, formatErr(c.br.byteOff(), "operand encoding", op.enc)
}

// char6 decodes the 6-bit characters of LLVM's Char6 encoding.
const char6 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._"

// readBlockInfo reads a BLOCKINFO block, whose ENTER_SUBBLOCK advance
// returned, as LLVM's ReadBlockInfoBlock does: DEFINE_ABBREV records after a
// SETBID record are abbreviations of the blocks of that ID. The block's
// abbreviations replace those of any BLOCKINFO read before, as the bitcode
// reader replaces them.
func (c *cursor) readBlockInfo() error {
	if err := c.enter(blockInfoID); err != nil {
		return err
	}
	info := map[uint64][]*[]abbrevOp{}
	cur, have := uint64(0), false
	var rec record
	rec.max = 1
	for {
		e, err := c.next()
		if err != nil {
			return err
		}
		switch {
		case e.kind == entryEnd:
			c.blockInfo = info
			return nil
		case e.kind == entrySub:
			if err := c.skipBlock(); err != nil {
				return err
			}
		case e.id == abbrevDefine:
			if !have {
				return formatErr(e.at, "BLOCKINFO abbreviation before SETBID", nil)
			}
			a, err := c.br.defineAbbrev()
			if err != nil {
				return err
			}
			info[cur] = append(info[cur], &a)
		default:
			if err := c.readRecord(e.id, &rec); err != nil {
				return err
			}
			switch rec.code {
			case blockInfoSetBID:
				if rec.n < 1 {
					return formatErr(rec.at, "SETBID without a block ID", nil)
				}
				cur, have = rec.op(0), true
			case blockInfoBlockName, blockInfoSetRecordName:
				if !have {
					return formatErr(rec.at, fmt.Sprintf("BLOCKINFO record %d before SETBID", rec.code), nil)
				}
			}
		}
	}
}
