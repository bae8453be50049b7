package bundle

import "math/bits"

// xxh64 is XXH64 with seed 0, streaming: zstd's content checksum is its low 32
// bits (RFC 8878 §3.1.1).
type xxh64 struct {
	v     [4]uint64
	total uint64
	mem   [32]byte
	n     int // bytes in mem
}

const (
	xxPrime1 uint64 = 11400714785074694791
	xxPrime2 uint64 = 14029467366897019727
	xxPrime3 uint64 = 1609587929392839161
	xxPrime4 uint64 = 9650029242287828579
	xxPrime5 uint64 = 2870177450012600261
)

func (x *xxh64) reset() {
	p1, p2 := xxPrime1, xxPrime2 // variables: the sums wrap
	*x = xxh64{v: [4]uint64{p1 + p2, p2, 0, -p1}}
}

func xxRound(acc, in uint64) uint64 {
	return bits.RotateLeft64(acc+in*xxPrime2, 31) * xxPrime1
}

func (x *xxh64) stripe(p []byte) {
	for i := range x.v {
		x.v[i] = xxRound(x.v[i], le.Uint64(p[8*i:]))
	}
}

func (x *xxh64) write(p []byte) {
	x.total += uint64(len(p))
	if x.n > 0 {
		k := copy(x.mem[x.n:], p)
		x.n += k
		p = p[k:]
		if x.n < len(x.mem) {
			return
		}
		x.stripe(x.mem[:])
		x.n = 0
	}
	for ; len(p) >= 32; p = p[32:] {
		x.stripe(p)
	}
	x.n = copy(x.mem[:], p)
}

func (x *xxh64) sum() uint64 {
	var h uint64
	if x.total >= 32 {
		v := x.v
		h = bits.RotateLeft64(v[0], 1) + bits.RotateLeft64(v[1], 7) + bits.RotateLeft64(v[2], 12) + bits.RotateLeft64(v[3], 18)
		for _, vi := range v {
			h = (h^xxRound(0, vi))*xxPrime1 + xxPrime4
		}
	} else {
		h = x.v[2] + xxPrime5
	}
	h += x.total
	p := x.mem[:x.n]
	for ; len(p) >= 8; p = p[8:] {
		h ^= xxRound(0, le.Uint64(p))
		h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	}
	if len(p) >= 4 {
		h ^= uint64(le.Uint32(p)) * xxPrime1
		h = bits.RotateLeft64(h, 23)*xxPrime2 + xxPrime3
		p = p[4:]
	}
	for _, b := range p {
		h ^= uint64(b) * xxPrime5
		h = bits.RotateLeft64(h, 11) * xxPrime1
	}
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}
