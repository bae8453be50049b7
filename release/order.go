package release

import (
	"encoding/binary"
	"math/bits"
)

// This file models the two hash tables whose iteration order
// clang-offload-packager leaks into its output
// (docs/offload-binary.md#map-orders): llvm::StringMap hashed with djbHash, and
// llvm::DenseMap<StringRef, ...> hashed with llvm::hash_value(StringRef).

// djbHash is llvm::djbHash(s, 0): h = h*33 + c over the bytes, 32 bits.
func djbHash(s string) uint32 {
	var h uint32
	for i := 0; i < len(s); i++ {
		h = h*33 + uint32(s[i])
	}
	return h
}

// Constants of llvm/ADT/Hashing.h (CityHash-derived).
const (
	hk0 uint64 = 0xc3a5c85c97cb3127
	hk1 uint64 = 0xb492b66fbe98f273
	hk2 uint64 = 0x9ae16a3b2f90404f
	hk3 uint64 = 0xc949d7c7509e6557
	// hashSeed is get_execution_seed() of a release build of LLVM (no
	// LLVM_ENABLE_ABI_BREAKING_CHECKS), as Debian ships it.
	hashSeed uint64 = 0xff51afd7ed558ccd
)

func f64(s string, i int) uint64  { return binary.LittleEndian.Uint64([]byte(s[i : i+8])) }
func f32(s string, i int) uint64  { return uint64(binary.LittleEndian.Uint32([]byte(s[i : i+4]))) }
func rotr(v uint64, n int) uint64 { return bits.RotateLeft64(v, -n) }
func shiftMix(v uint64) uint64    { return v ^ v>>47 }

func hash16(lo, hi uint64) uint64 {
	const mul = 0x9ddfea08eb382d69
	a := (lo ^ hi) * mul
	a ^= a >> 47
	b := (hi ^ a) * mul
	b ^= b >> 47
	return b * mul
}

// hashValue is llvm::hash_value(StringRef): hash_combine_range over the bytes.
func hashValue(s string) uint64 {
	n := len(s)
	if n <= 64 {
		return hashShort(s, hashSeed)
	}
	var st hashState
	st.init(s, hashSeed)
	end := n &^ 63
	for i := 64; i < end; i += 64 {
		st.mix(s[i:])
	}
	if n&63 != 0 {
		st.mix(s[n-64:])
	}
	return st.finalize(uint64(n))
}

func hashShort(s string, seed uint64) uint64 {
	n := len(s)
	un := uint64(n)
	switch {
	case n >= 4 && n <= 8:
		return hash16(un+f32(s, 0)<<3, seed^f32(s, n-4))
	case n > 8 && n <= 16:
		a, b := f64(s, 0), f64(s, n-8)
		return hash16(seed^a, rotr(b+un, n&63)) ^ b
	case n > 16 && n <= 32:
		a := f64(s, 0) * hk1
		b := f64(s, 8)
		c := f64(s, n-8) * hk2
		d := f64(s, n-16) * hk0
		return hash16(rotr(a-b, 43)+rotr(c^seed, 30)+d, a+rotr(b^hk3, 20)-c+un+seed)
	case n > 32:
		z := f64(s, 24)
		a := f64(s, 0) + (un+f64(s, n-16))*hk0
		b := rotr(a+z, 52)
		c := rotr(a, 37)
		a += f64(s, 8)
		c += rotr(a, 7)
		a += f64(s, 16)
		vf := a + z
		vs := b + rotr(a, 31) + c
		a = f64(s, 16) + f64(s, n-32)
		z = f64(s, n-8)
		b = rotr(a+z, 52)
		c = rotr(a, 37)
		a += f64(s, n-24)
		c += rotr(a, 7)
		a += f64(s, n-16)
		wf := a + z
		ws := b + rotr(a, 31) + c
		r := shiftMix((vf+ws)*hk2 + (wf+vs)*hk0)
		return shiftMix((seed^(r*hk0))+vs) * hk2
	case n != 0:
		a, b, c := uint64(s[0]), uint64(s[n>>1]), uint64(s[n-1])
		y := uint64(uint32(a + b<<8))
		z := uint64(uint32(un + c<<2))
		return shiftMix(y*hk2^z*hk3^seed) * hk2
	}
	return hk2 ^ seed
}

// hashState is the 64-byte block state of hash_combine_range for long inputs.
type hashState struct{ h0, h1, h2, h3, h4, h5, h6 uint64 }

func (st *hashState) init(s string, seed uint64) {
	*st = hashState{0, seed, hash16(seed, hk1), rotr(seed^hk1, 49), seed * hk1, shiftMix(seed), 0}
	st.h6 = hash16(st.h4, st.h5)
	st.mix(s)
}

func mix32(s string, a, b *uint64) {
	*a += f64(s, 0)
	c := f64(s, 24)
	*b = rotr(*b+*a+c, 21)
	d := *a
	*a += f64(s, 8) + f64(s, 16)
	*b += rotr(*a, 44) + d
	*a += c
}

func (st *hashState) mix(s string) {
	st.h0 = rotr(st.h0+st.h1+st.h3+f64(s, 8), 37) * hk1
	st.h1 = rotr(st.h1+st.h4+f64(s, 48), 42) * hk1
	st.h0 ^= st.h6
	st.h1 += st.h3 + f64(s, 40)
	st.h2 = rotr(st.h2+st.h5, 33) * hk1
	st.h3 = st.h4 * hk1
	st.h4 = st.h0 + st.h5
	mix32(s, &st.h3, &st.h4)
	st.h5 = st.h2 + st.h6
	st.h6 = st.h1 + f64(s, 16)
	mix32(s[32:], &st.h5, &st.h6)
	st.h0, st.h2 = st.h2, st.h0
}

func (st *hashState) finalize(n uint64) uint64 {
	return hash16(hash16(st.h3, st.h5)+shiftMix(st.h1)*hk1+st.h2,
		hash16(st.h4, st.h6)+shiftMix(n)*hk1+st.h0)
}

// orderedKeys returns keys (distinct, in insertion order) in the iteration order
// of the container o holding them.
// Order returns keys, distinct and given in the order they were inserted,
// in the order in which the LLVM container o names iterates over them: what
// clang-offload-packager's maps do to an image's strings, and
// clang-offload-bundler's llvm::StringMap to a bundle's entries.
func (o MapOrder) Order(keys []string) []string {
	switch o {
	case OrderStringMap:
		// StringMap allocates 16 buckets, inserts, then grows when items*4 > n*3.
		return probeTable(keys, 16, false, func(n, items int) bool { return items*4 > n*3 },
			func(k string) uint32 { return djbHash(k) })
	case OrderDenseMap:
		// DenseMap allocates 64 buckets at the first insertion and grows before
		// inserting when the new count*4 >= n*3.
		return probeTable(keys, 64, true, func(n, items int) bool { return items*4 >= n*3 },
			func(k string) uint32 { return uint32(hashValue(k)) })
	}
	return append([]string(nil), keys...)
}

// probeTable simulates an open-addressing hash table with quadratic probing
// (bucket += 1, 2, 3, ...) that doubles when full(n, items) holds, moving the old
// buckets in order, and returns the keys in bucket order. growFirst says whether
// the check runs before the new key is placed (DenseMap) or after (StringMap).
func probeTable(keys []string, n int, growFirst bool, full func(n, items int) bool, hash func(string) uint32) []string {
	table := make([]string, n)
	used := make([]bool, n)
	place := func(k string) {
		mask := uint32(len(table) - 1)
		b := hash(k) & mask
		for p := uint32(1); used[b]; p++ {
			b = (b + p) & mask
		}
		table[b], used[b] = k, true
	}
	grow := func() {
		oldT, oldU := table, used
		table, used = make([]string, 2*len(oldT)), make([]bool, 2*len(oldT))
		for j, u := range oldU {
			if u {
				place(oldT[j])
			}
		}
	}
	for i, k := range keys {
		if growFirst && full(len(table), i+1) {
			grow()
		}
		place(k)
		if !growFirst && full(len(table), i+1) {
			grow()
		}
	}
	out := make([]string, 0, len(keys))
	for i, u := range used {
		if u {
			out = append(out, table[i])
		}
	}
	return out
}
