package bundle

import (
	"errors"
	"math/bits"
)

// The entropy coders of zstd (RFC 8878 §4): backward bit streams, FSE tables
// and Huffman tables. Errors here carry no offset; the block decoder adds it.

var (
	errBitstream = errors.New("bad bit stream")
	errFSETable  = errors.New("bad FSE table description")
	errHuffTable = errors.New("bad Huffman tree description")
)

// backwardBits reads a bit stream from its last byte to its first (RFC 8878
// §4.1): the last byte's highest set bit marks where the stream starts, and
// each read takes the next highest bits as a little-endian number. Reading
// past the first byte yields zeros and marks the stream over-read.
type backwardBits struct {
	src  []byte
	off  int    // src[:off] is not loaded yet
	acc  uint64 // the low n bits are unread; the next bits are the highest of them
	n    uint
	over bool
}

func (b *backwardBits) init(src []byte) bool {
	if len(src) == 0 || src[len(src)-1] == 0 {
		return false
	}
	last := src[len(src)-1]
	hb := uint(bits.Len8(last) - 1)
	*b = backwardBits{src: src, off: len(src) - 1, acc: uint64(last) & (1<<hb - 1), n: hb}
	return true
}

func (b *backwardBits) fill() {
	if b.off >= 4 && b.n <= 32 {
		b.off -= 4
		b.acc = b.acc<<32 | uint64(le.Uint32(b.src[b.off:]))
		b.n += 32
	}
	for b.n <= 56 && b.off > 0 {
		b.off--
		b.acc = b.acc<<8 | uint64(b.src[b.off])
		b.n += 8
	}
}

// read consumes k ≤ 32 bits.
func (b *backwardBits) read(k uint) uint64 {
	if k == 0 {
		return 0
	}
	if b.n < k {
		b.fill()
		if b.n < k {
			v := (b.acc << (k - b.n)) & (1<<k - 1)
			b.acc, b.n, b.over = 0, 0, true
			return v
		}
	}
	b.n -= k
	return (b.acc >> b.n) & (1<<k - 1)
}

// peek returns the next k ≤ 32 bits without consuming them, zero-padded past
// the start of the stream.
func (b *backwardBits) peek(k uint) uint64 {
	if b.n < k {
		b.fill()
		if b.n < k {
			return (b.acc << (k - b.n)) & (1<<k - 1)
		}
	}
	return (b.acc >> (b.n - k)) & (1<<k - 1)
}

func (b *backwardBits) skip(k uint) {
	if k > b.n {
		b.n, b.over = 0, true
		return
	}
	b.n -= k
}

// done reports whether every bit was read and none past the start.
func (b *backwardBits) done() bool { return b.off == 0 && b.n == 0 && !b.over }

// fseEntry is one state of an FSE decoding table: the symbol it decodes, and
// the next state, base plus nb bits read.
type fseEntry struct {
	sym  uint8
	nb   uint8
	base uint16
}

// fseTable is an FSE decoding table of 1<<log states (log ≤ 9).
type fseTable struct {
	log uint8
	e   [512]fseEntry
}

// readFSETable reads an FSE table description (RFC 8878 §4.1.1) of at most
// maxSym+1 symbols and accuracy log at most maxLog from the front of src,
// builds t from it and returns the number of bytes it takes.
func readFSETable(t *fseTable, src []byte, maxSym int, maxLog uint) (int, error) {
	var norm [256]int16
	var pos uint // bit position in src, read forward
	get := func(k uint) uint32 {
		var w [4]byte
		copy(w[:], src[min(pos/8, uint(len(src))):])
		return (le.Uint32(w[:]) >> (pos % 8)) & (1<<k - 1)
	}
	log := uint(get(4)) + 5
	pos += 4
	if log > maxLog {
		return 0, errFSETable
	}
	remaining := 1<<log + 1
	threshold := 1 << log
	nbBits := log + 1
	sym := 0
	for remaining > 1 && sym <= maxSym {
		limit := 2*threshold - 1 - remaining
		v := int(get(nbBits))
		var count int
		if v&(threshold-1) < limit {
			count = v & (threshold - 1)
			pos += nbBits - 1
		} else {
			count = v & (2*threshold - 1)
			if count >= threshold {
				count -= limit
			}
			pos += nbBits
		}
		count-- // -1 is a probability "less than 1", taking one state
		if count < 0 {
			remaining--
		} else {
			remaining -= count
		}
		norm[sym] = int16(count)
		sym++
		if count == 0 {
			// Two-bit flags count the zero probabilities that follow; a 3
			// is followed by another flag.
			for {
				rep := int(get(2))
				pos += 2
				for k := 0; k < rep; k++ {
					if sym > maxSym {
						return 0, errFSETable
					}
					sym++ // norm[sym] is already 0
				}
				if rep != 3 {
					break
				}
			}
		}
		if remaining < 1 {
			break
		}
		for remaining < threshold {
			nbBits--
			threshold >>= 1
		}
	}
	if remaining != 1 {
		return 0, errFSETable
	}
	n := int((pos + 7) / 8)
	if n > len(src) {
		return 0, errFSETable
	}
	if err := t.build(norm[:sym], log); err != nil {
		return 0, err
	}
	return n, nil
}

// build fills t from normalized probabilities (RFC 8878 §4.1.1, "From
// normalized distribution to decoding tables").
func (t *fseTable) build(norm []int16, log uint) error {
	size := 1 << log
	high := size - 1
	var next [256]uint16
	for s, c := range norm {
		if c == -1 {
			t.e[high].sym = uint8(s)
			high--
			next[s] = 1
		} else {
			next[s] = uint16(c)
		}
	}
	step := size>>1 + size>>3 + 3
	pos := 0
	for s, c := range norm {
		for i := 0; i < int(c); i++ {
			t.e[pos].sym = uint8(s)
			pos = (pos + step) & (size - 1)
			for pos > high {
				pos = (pos + step) & (size - 1)
			}
		}
	}
	if pos != 0 {
		return errFSETable
	}
	for u := 0; u < size; u++ {
		s := t.e[u].sym
		ns := next[s]
		next[s]++
		nb := log - uint(bits.Len16(ns)-1)
		t.e[u].nb = uint8(nb)
		t.e[u].base = uint16(uint(ns)<<nb - uint(size))
	}
	t.log = uint8(log)
	return nil
}

// rle makes t a table of one state that always decodes sym.
func (t *fseTable) rle(sym uint8) {
	t.log = 0
	t.e[0] = fseEntry{sym: sym}
}

// The predefined distributions of sequence codes (RFC 8878 §3.1.1.3.2.2).
var (
	predefLL, predefML, predefOF fseTable
)

func init() {
	ll := []int16{4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
		2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
		-1, -1, -1, -1}
	ml := []int16{1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1,
		-1, -1, -1, -1, -1}
	of := []int16{1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
		1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1}
	if predefLL.build(ll, 6) != nil || predefML.build(ml, 6) != nil || predefOF.build(of, 5) != nil {
		panic("bundle: bad predefined zstd distribution")
	}
}

// Sequence codes: the largest code and accuracy log of each kind, and the
// baseline and extra bits of literal and match length codes (RFC 8878
// §3.1.1.3.2.1). An offset code c stands for (1<<c) + c bits.
const (
	maxLLCode, maxMLCode, maxOFCode = 35, 52, 31
	maxLLLog, maxMLLog, maxOFLog    = 9, 9, 8
)

var (
	llBase = [maxLLCode + 1]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
		16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096,
		8192, 16384, 32768, 65536}
	llBits = [maxLLCode + 1]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12,
		13, 14, 15, 16}
	mlBase = [maxMLCode + 1]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
		19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
		35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051,
		4099, 8195, 16387, 32771, 65539}
	mlBits = [maxMLCode + 1]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11,
		12, 13, 14, 15, 16}
)

// Huffman coding of literals (RFC 8878 §4.2).
const (
	maxHuffLog     = 12  // libzstd's HUF_TABLELOG_MAX (the RFC says 11)
	maxHuffWeights = 255 // the last symbol's weight is implied
	maxHuffFSELog  = 6
)

type huffEntry struct {
	sym uint8
	nb  uint8
}

type huffTable struct {
	log uint
	e   [1 << maxHuffLog]huffEntry
}

// read reads a Huffman tree description from the front of src into h and
// returns the number of bytes it takes. On error h is unchanged.
func (h *huffTable) read(src []byte) (int, error) {
	if len(src) == 0 {
		return 0, errHuffTable
	}
	var w [maxHuffWeights + 1]uint8
	var nw, n int
	if hb := int(src[0]); hb < 128 {
		// FSE-compressed weights, two interleaved states.
		if 1+hb > len(src) {
			return 0, errHuffTable
		}
		var t fseTable
		tn, err := readFSETable(&t, src[1:1+hb], 255, maxHuffFSELog)
		if err != nil {
			return 0, err
		}
		var br backwardBits
		if !br.init(src[1+tn : 1+hb]) {
			return 0, errHuffTable
		}
		s1 := br.read(uint(t.log))
		s2 := br.read(uint(t.log))
		states := [2]*uint64{&s1, &s2}
		for i := 0; ; i++ {
			if nw >= maxHuffWeights {
				return 0, errHuffTable
			}
			s := states[i&1]
			e := t.e[*s]
			w[nw] = e.sym
			nw++
			*s = uint64(e.base) + br.read(uint(e.nb))
			if br.over {
				if nw >= maxHuffWeights {
					return 0, errHuffTable
				}
				w[nw] = t.e[*states[(i+1)&1]].sym
				nw++
				break
			}
		}
		n = 1 + hb
	} else {
		nw = hb - 127
		n = 1 + (nw+1)/2
		if n > len(src) {
			return 0, errHuffTable
		}
		for i := 0; i < nw; i++ {
			b := src[1+i/2]
			if i%2 == 0 {
				w[i] = b >> 4
			} else {
				w[i] = b & 15
			}
		}
	}
	var rank [maxHuffLog + 2]int
	sum := 0
	for _, x := range w[:nw] {
		if x > maxHuffLog {
			return 0, errHuffTable
		}
		rank[x]++
		if x > 0 {
			sum += 1 << (x - 1)
		}
	}
	if sum == 0 {
		return 0, errHuffTable
	}
	log := uint(bits.Len(uint(sum)))
	if log > maxHuffLog {
		return 0, errHuffTable
	}
	rest := 1<<log - sum // > 0: log is one more than the highest bit of sum
	if rest&(rest-1) != 0 {
		return 0, errHuffTable
	}
	last := uint8(bits.Len(uint(rest)))
	w[nw] = last
	rank[last]++
	nsym := nw + 1
	if rank[1] < 2 || rank[1]&1 != 0 {
		return 0, errHuffTable
	}
	// Codes go to weights from the lowest, symbols in order within a weight:
	// weight x takes 1<<(x-1) consecutive states.
	var start [maxHuffLog + 2]int
	next := 0
	for x := 1; x <= int(log); x++ {
		start[x] = next
		next += rank[x] << (x - 1)
	}
	h.log = log
	for s, x := range w[:nsym] {
		if x == 0 {
			continue
		}
		e := huffEntry{sym: uint8(s), nb: uint8(log + 1 - uint(x))}
		for u := start[x]; u < start[x]+1<<(x-1); u++ {
			h.e[u] = e
		}
		start[x] += 1 << (x - 1)
	}
	return n, nil
}

// decode fills dst from the Huffman-coded stream src, which must be used up
// exactly.
func (h *huffTable) decode(dst, src []byte) error {
	var br backwardBits
	if !br.init(src) {
		return errBitstream
	}
	for i := range dst {
		e := h.e[br.peek(h.log)]
		dst[i] = e.sym
		br.skip(uint(e.nb))
	}
	if !br.done() {
		return errBitstream
	}
	return nil
}

// decode4 fills dst from four Huffman-coded streams after a jump table of
// their first three sizes.
func (h *huffTable) decode4(dst, src []byte) error {
	if len(src) < 10 || len(dst) < 6 {
		return errBitstream
	}
	s1, s2, s3 := int(le.Uint16(src)), int(le.Uint16(src[2:])), int(le.Uint16(src[4:]))
	src = src[6:]
	if s1+s2+s3 >= len(src) {
		return errBitstream
	}
	seg := (len(dst) + 3) / 4
	sizes := [4]int{s1, s2, s3, len(src) - s1 - s2 - s3}
	for k := 0; k < 4; k++ {
		out := dst[min(k*seg, len(dst)):min((k+1)*seg, len(dst))]
		if err := h.decode(out, src[:sizes[k]]); err != nil {
			return err
		}
		src = src[sizes[k]:]
	}
	return nil
}
