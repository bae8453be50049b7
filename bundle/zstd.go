package bundle

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// A streaming zstd decoder (RFC 8878) for compressed bundles: frames and
// skippable frames, raw, RLE and compressed blocks, Huffman-coded literals,
// FSE-coded sequences, repeat offsets and the content checksum. Dictionaries
// are not supported (LLVM does not use them). Memory: the frame's window,
// grown as output arrives and never past the window or the reader's limit,
// plus three block buffers of at most 128 KiB each.

const (
	zstdMagic         = 0xFD2FB528
	zstdSkippableMask = 0xFFFFFFF0
	zstdSkippable     = 0x184D2A50
	zstdBlockMax      = 128 << 10
)

type zstdReader struct {
	in        *countingReader
	maxWindow int64

	inFrame  bool
	lastSeen bool // the frame's last block has been decoded
	blockMax int
	fcs      uint64 // frame content size, if hasFCS
	hasFCS   bool
	produced uint64
	checksum bool
	xxh      xxh64
	frameAt  int64 // offset of the frame, for errors at its end

	hist    history
	rep     [3]int
	huff    huffTable
	hasHuff bool
	seq     [3]fseTable // literal lengths, offsets, match lengths
	hasSeq  bool

	block   []byte // compressed block content
	lits    []byte // decoded literals
	out     []byte // decoded block
	pending []byte // out not yet returned by Read
	err     error
}

// newZstdReader decodes the zstd frames of r, whose first byte is at offset
// base of the input (for error offsets), refusing windows over maxWindow.
func newZstdReader(r io.Reader, base, maxWindow int64) *zstdReader {
	return &zstdReader{in: &countingReader{r: bufio.NewReader(r), off: base}, maxWindow: maxWindow}
}

func (z *zstdReader) Read(p []byte) (int, error) {
	for len(z.pending) == 0 {
		if z.err != nil {
			return 0, z.err
		}
		z.err = z.next()
	}
	n := copy(p, z.pending)
	z.pending = z.pending[n:]
	return n, nil
}

// corrupt reports bad data at off.
func corrupt(off int64, field string, val uint64) error {
	return formatErr(off, "zstd "+field, val, ErrCorrupt)
}

// readIn fills p from the input, or gives ErrTruncated naming field.
func (z *zstdReader) readIn(p []byte, field string) error {
	at := z.in.off
	if _, err := io.ReadFull(z.in, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return formatErr(at, "zstd "+field, uint64(len(p)), ErrTruncated)
		}
		return fmt.Errorf("offload bundle: zstd %s at byte %#x: %w", field, at, err)
	}
	return nil
}

// next decodes the next frame header or block into z.pending, or returns
// io.EOF after the last frame.
func (z *zstdReader) next() error {
	if !z.inFrame {
		return z.startFrame()
	}
	if z.lastSeen {
		return z.endFrame()
	}
	return z.decodeBlock()
}

func (z *zstdReader) startFrame() error {
	at := z.in.off
	var m [4]byte
	n, err := io.ReadFull(z.in, m[:])
	if n == 0 && err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return z.readIn(m[n:], "frame magic") // reports the truncation
	}
	magic := le.Uint32(m[:])
	if magic&zstdSkippableMask == zstdSkippable {
		if err := z.readIn(m[:], "skippable frame size"); err != nil {
			return err
		}
		size := int64(le.Uint32(m[:]))
		if n, _ := io.CopyN(io.Discard, z.in, size); n < size {
			return formatErr(at+4, "zstd skippable frame size", uint64(size), ErrTruncated)
		}
		return nil
	}
	if magic != zstdMagic {
		return corrupt(at, "frame magic", uint64(magic))
	}
	var fhd [1]byte
	if err := z.readIn(fhd[:], "frame header"); err != nil {
		return err
	}
	d := fhd[0]
	if d&0x08 != 0 {
		return corrupt(at+4, "frame header reserved bit", uint64(d))
	}
	single := d&0x20 != 0
	var window uint64
	if !single {
		if err := z.readIn(fhd[:], "window descriptor"); err != nil {
			return err
		}
		exp, mant := uint64(fhd[0]>>3), uint64(fhd[0]&7)
		base := uint64(1) << (10 + exp)
		window = base + base/8*mant
	}
	var buf [8]byte
	didSize := [4]int{0, 1, 2, 4}[d&3]
	if err := z.readIn(buf[:didSize], "dictionary ID"); err != nil {
		return err
	}
	if did := le.Uint32(buf[:4]); did != 0 {
		return formatErr(z.in.off-int64(didSize), "zstd dictionary ID", uint64(did), ErrUnsupported)
	}
	fcsSize := [4]int{0, 2, 4, 8}[d>>6]
	if fcsSize == 0 && single {
		fcsSize = 1
	}
	buf = [8]byte{}
	if err := z.readIn(buf[:fcsSize], "frame content size"); err != nil {
		return err
	}
	z.fcs, z.hasFCS = le.Uint64(buf[:]), fcsSize > 0
	if fcsSize == 2 {
		z.fcs += 256
	}
	if single {
		window = z.fcs
	}
	if window > uint64(z.maxWindow) {
		return formatErr(at+5, "zstd window size", window, ErrTooLarge)
	}
	z.blockMax = int(min(window, zstdBlockMax))
	z.hist.reset(int(window))
	z.checksum = d&0x04 != 0
	z.xxh.reset()
	z.rep = [3]int{1, 4, 8}
	z.hasHuff, z.hasSeq = false, false
	z.produced, z.lastSeen, z.inFrame, z.frameAt = 0, false, true, at
	return nil
}

func (z *zstdReader) endFrame() error {
	if z.hasFCS && z.produced != z.fcs {
		return corrupt(z.frameAt, "frame content size", z.fcs)
	}
	if z.checksum {
		var c [4]byte
		at := z.in.off
		if err := z.readIn(c[:], "content checksum"); err != nil {
			return err
		}
		if got := le.Uint32(c[:]); got != uint32(z.xxh.sum()) {
			return corrupt(at, "content checksum", uint64(got))
		}
	}
	z.inFrame = false
	return nil
}

func (z *zstdReader) decodeBlock() error {
	at := z.in.off
	var h [3]byte
	if err := z.readIn(h[:], "block header"); err != nil {
		return err
	}
	hdr := uint32(h[0]) | uint32(h[1])<<8 | uint32(h[2])<<16
	z.lastSeen = hdr&1 != 0
	size := int(hdr >> 3)
	typ := hdr >> 1 & 3
	if typ == 3 {
		return corrupt(at, "block type", uint64(typ))
	}
	if size > z.blockMax {
		return corrupt(at, "block size", uint64(size))
	}
	var out []byte
	switch typ {
	case 0: // raw
		out = sized(&z.out, size)
		if err := z.readIn(out, "raw block"); err != nil {
			return err
		}
	case 1: // RLE
		var b [1]byte
		if err := z.readIn(b[:], "RLE block"); err != nil {
			return err
		}
		out = sized(&z.out, size)
		for i := range out {
			out[i] = b[0]
		}
	case 2:
		src := sized(&z.block, size)
		if err := z.readIn(src, "compressed block"); err != nil {
			return err
		}
		var err error
		if out, err = z.decodeCompressed(z.out[:0], src, at+3); err != nil {
			return err
		}
		z.out = out[:0] // keep what append grew
	}
	z.produced += uint64(len(out))
	if z.hasFCS && z.produced > z.fcs {
		return corrupt(z.frameAt, "frame content size", z.fcs)
	}
	z.hist.append(out)
	if z.checksum {
		z.xxh.write(out)
	}
	z.pending = out
	return nil
}

// decodeCompressed decodes the compressed block src, which starts at offset
// at of the input, appending to out.
func (z *zstdReader) decodeCompressed(out, src []byte, at int64) ([]byte, error) {
	lits, n, err := z.literals(src, at)
	if err != nil {
		return nil, err
	}
	return z.sequences(out, src[n:], lits, at+int64(n))
}

// literals decodes the literals section at the front of src and returns the
// literals and the section's size.
func (z *zstdReader) literals(src []byte, at int64) ([]byte, int, error) {
	if len(src) == 0 {
		return nil, 0, corrupt(at, "literals section", 0)
	}
	b0 := src[0]
	typ, sf := b0&3, b0>>2&3
	var hs, regen, csize int
	if typ < 2 { // raw or RLE: sizes of 5, 12 or 20 bits
		switch sf {
		case 0, 2:
			hs, regen = 1, int(b0>>3)
		case 1:
			hs = 2
		case 3:
			hs = 3
		}
		if hs > len(src) {
			return nil, 0, corrupt(at, "literals section header", uint64(b0))
		}
		if hs == 2 {
			regen = int(b0>>4) + int(src[1])<<4
		} else if hs == 3 {
			regen = int(b0>>4) + int(src[1])<<4 + int(src[2])<<12
		}
	} else { // compressed or treeless: two sizes of 10, 14 or 18 bits
		hs = [4]int{3, 3, 4, 5}[sf]
		if hs > len(src) {
			return nil, 0, corrupt(at, "literals section header", uint64(b0))
		}
		var h uint64
		for i := hs - 1; i >= 0; i-- {
			h = h<<8 | uint64(src[i])
		}
		w := [4]uint{10, 10, 14, 18}[sf]
		regen = int(h >> 4 & (1<<w - 1))
		csize = int(h >> (4 + w) & (1<<w - 1))
	}
	if regen > z.blockMax {
		return nil, 0, corrupt(at, "literals size", uint64(regen))
	}
	switch typ {
	case 0:
		if hs+regen > len(src) {
			return nil, 0, corrupt(at, "raw literals size", uint64(regen))
		}
		return src[hs : hs+regen], hs + regen, nil
	case 1:
		if hs+1 > len(src) {
			return nil, 0, corrupt(at, "RLE literals", 0)
		}
		lits := z.litBuf(regen)
		for i := range lits {
			lits[i] = src[hs]
		}
		return lits, hs + 1, nil
	}
	if hs+csize > len(src) {
		return nil, 0, corrupt(at, "compressed literals size", uint64(csize))
	}
	data := src[hs : hs+csize]
	if typ == 2 {
		n, err := z.huff.read(data)
		if err != nil {
			z.hasHuff = false
			return nil, 0, corrupt(at+int64(hs), "Huffman tree", 0)
		}
		z.hasHuff = true
		data = data[n:]
	} else if !z.hasHuff {
		return nil, 0, corrupt(at, "treeless literals without a Huffman tree", 0)
	}
	lits := z.litBuf(regen)
	var err error
	if sf == 0 {
		err = z.huff.decode(lits, data)
	} else {
		err = z.huff.decode4(lits, data)
	}
	if err != nil {
		return nil, 0, corrupt(at, "Huffman-coded literals", uint64(regen))
	}
	return lits, hs + csize, nil
}

func (z *zstdReader) litBuf(n int) []byte { return sized(&z.lits, n) }

// sized returns (*buf)[:n], growing *buf when it is too small. Buffers grow
// with the blocks of the input, up to zstdBlockMax, rather than being made
// that large for every frame.
func sized(buf *[]byte, n int) []byte {
	if cap(*buf) < n {
		*buf = make([]byte, n, min(max(n, 2*cap(*buf)), zstdBlockMax))
	}
	return (*buf)[:n]
}

// sequences decodes the sequences section src, which starts at offset at, and
// executes the sequences with lits, appending to out.
func (z *zstdReader) sequences(out, src, lits []byte, at int64) ([]byte, error) {
	if len(src) == 0 {
		return nil, corrupt(at, "sequences section", 0)
	}
	nseq, p := int(src[0]), 1
	switch {
	case nseq == 0:
		if len(src) != 1 {
			return nil, corrupt(at, "sequences section size", uint64(len(src)))
		}
		return append(out, lits...), nil
	case nseq < 128:
	case nseq < 255:
		if len(src) < 2 {
			return nil, corrupt(at, "number of sequences", uint64(nseq))
		}
		nseq, p = (nseq-128)<<8+int(src[1]), 2
	default:
		if len(src) < 3 {
			return nil, corrupt(at, "number of sequences", uint64(nseq))
		}
		nseq, p = int(src[1])+int(src[2])<<8+0x7F00, 3
	}
	if p >= len(src) {
		return nil, corrupt(at, "symbol compression modes", 0)
	}
	modes := src[p]
	if modes&3 != 0 {
		return nil, corrupt(at+int64(p), "symbol compression modes", uint64(modes))
	}
	p++
	kinds := [3]struct {
		mode   uint8
		predef *fseTable
		maxSym int
		maxLog uint
	}{
		{modes >> 6, &predefLL, maxLLCode, maxLLLog},
		{modes >> 4 & 3, &predefOF, maxOFCode, maxOFLog},
		{modes >> 2 & 3, &predefML, maxMLCode, maxMLLog},
	}
	for k, kd := range kinds {
		t := &z.seq[k]
		switch kd.mode {
		case 0:
			*t = *kd.predef
		case 1:
			if p >= len(src) || int(src[p]) > kd.maxSym {
				return nil, corrupt(at+int64(p), "RLE sequence code", 0)
			}
			t.rle(src[p])
			p++
		case 2:
			n, err := readFSETable(t, src[p:], kd.maxSym, kd.maxLog)
			if err != nil {
				z.hasSeq = false
				return nil, corrupt(at+int64(p), "FSE table", 0)
			}
			p += n
		case 3:
			if !z.hasSeq {
				return nil, corrupt(at, "repeated sequence table without a previous one", 0)
			}
		}
	}
	z.hasSeq = true
	var br backwardBits
	if !br.init(src[p:]) {
		return nil, corrupt(at+int64(p), "sequences bit stream", 0)
	}
	ll, of, ml := &z.seq[0], &z.seq[1], &z.seq[2]
	sLL := br.read(uint(ll.log))
	sOF := br.read(uint(of.log))
	sML := br.read(uint(ml.log))
	for i := 0; i < nseq; i++ {
		llc, ofc, mlc := ll.e[sLL].sym, of.e[sOF].sym, ml.e[sML].sym
		if llc > maxLLCode || mlc > maxMLCode || ofc > maxOFCode {
			return nil, corrupt(at, "sequence code", 0)
		}
		ofv := uint64(1)<<ofc + br.read(uint(ofc))
		mlen := int(mlBase[mlc]) + int(br.read(uint(mlBits[mlc])))
		llen := int(llBase[llc]) + int(br.read(uint(llBits[llc])))
		if i != nseq-1 {
			sLL = uint64(ll.e[sLL].base) + br.read(uint(ll.e[sLL].nb))
			sML = uint64(ml.e[sML].base) + br.read(uint(ml.e[sML].nb))
			sOF = uint64(of.e[sOF].base) + br.read(uint(of.e[sOF].nb))
		}
		if br.over {
			return nil, corrupt(at, "sequences bit stream", uint64(i))
		}
		if llen > len(lits) || len(out)+llen+mlen > z.blockMax {
			return nil, corrupt(at, "sequence length", uint64(llen+mlen))
		}
		out = append(out, lits[:llen]...)
		lits = lits[llen:]
		off, err := z.offset(ofv, llen)
		if err != nil || off > uint64(len(out)+z.hist.len()) {
			return nil, corrupt(at, "match offset", off)
		}
		out = z.copyMatch(out, int(off), mlen)
	}
	if !br.done() {
		return nil, corrupt(at, "sequences bit stream", 0)
	}
	if len(out)+len(lits) > z.blockMax {
		return nil, corrupt(at, "block size", uint64(len(out)+len(lits)))
	}
	return append(out, lits...), nil
}

// offset resolves an offset value against the repeat offsets and updates
// them (RFC 8878 §3.1.2.5).
func (z *zstdReader) offset(ofv uint64, llen int) (uint64, error) {
	r := &z.rep
	if ofv > 3 {
		off := ofv - 3
		r[2], r[1], r[0] = r[1], r[0], int(off)
		return off, nil
	}
	idx := int(ofv) - 1
	if llen == 0 {
		idx++
	}
	var off int
	switch idx {
	case 0:
		return uint64(r[0]), nil
	case 1:
		off = r[1]
		r[1] = r[0]
	case 2:
		off = r[2]
		r[2], r[1] = r[1], r[0]
	case 3:
		off = r[0] - 1
		r[2], r[1] = r[1], r[0]
	}
	if off <= 0 {
		return 0, errBitstream
	}
	r[0] = off
	return uint64(off), nil
}

// copyMatch appends n bytes that start off bytes back from the end of the
// frame's output so far (history, then out), which may overlap what it
// appends.
func (z *zstdReader) copyMatch(out []byte, off, n int) []byte {
	if back := off - len(out); back > 0 { // starts in the history
		k := min(back, n)
		out = z.hist.appendFrom(out, back, k)
		n -= k
		off = len(out) // the rest starts at the block's first byte
	}
	start := len(out) - off
	for n > 0 {
		k := min(n, len(out)-start)
		out = append(out, out[start:start+k]...)
		start += k
		n -= k
	}
	return out
}

// history keeps the last size bytes of a frame's output, in a ring that grows
// as output arrives.
type history struct {
	buf  []byte
	size int
	w    int // when len(buf) == size: where the oldest byte is and the next goes
}

func (h *history) reset(size int) {
	h.buf, h.size, h.w = h.buf[:0], size, 0
}

func (h *history) len() int { return len(h.buf) }

func (h *history) append(p []byte) {
	if h.size == 0 {
		return
	}
	if len(p) >= h.size {
		p = p[len(p)-h.size:]
	}
	if room := h.size - len(h.buf); room > 0 {
		k := min(room, len(p))
		if len(h.buf)+k > cap(h.buf) {
			grown := make([]byte, len(h.buf), min(h.size, max(2*cap(h.buf), len(h.buf)+k)))
			copy(grown, h.buf)
			h.buf = grown
		}
		h.buf = append(h.buf, p[:k]...)
		p = p[k:]
		h.w = 0
	}
	for len(p) > 0 {
		k := copy(h.buf[h.w:], p)
		p = p[k:]
		h.w = (h.w + k) % h.size
	}
}

// appendFrom appends n ≤ back bytes starting back bytes before the end.
func (h *history) appendFrom(out []byte, back, n int) []byte {
	end := len(h.buf)
	if len(h.buf) == h.size {
		end = h.w
	}
	i := end - back
	if i < 0 {
		i += len(h.buf)
	}
	for n > 0 {
		k := min(n, len(h.buf)-i)
		out = append(out, h.buf[i:i+k]...)
		n -= k
		i = 0
	}
	return out
}
