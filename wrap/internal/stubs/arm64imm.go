package stubs

import (
	"math/bits"
	"sync"
)

// AArch64 materialises an integer constant in a register with one to four
// instructions, chosen as LLVM's AArch64_IMM::expandMOVImm chooses them
// (AArch64ExpandImm.cpp): MOVZ or MOVN and MOVKs for the 16-bit chunks that
// differ from the background, a single ORR of a logical (bitmask) immediate,
// or two-instruction combinations of those. A value below 2^32 is
// materialised in the 32-bit register (LLVM selects MOVi32imm for an i64
// whose high half is zero), any other in the 64-bit one.

// arm64Imm is one instruction of a constant's materialisation, before it is
// given its register.
type arm64Imm struct {
	op    arm64ImmOp
	imm16 uint32 // MOVZ, MOVN, MOVK: the chunk
	shift uint32 // MOVZ, MOVN, MOVK: the chunk's position, 0, 16, 32 or 48
	enc   uint32 // ORR, AND: N:immr:imms of the logical immediate
	// fromReg says that ORR and AND take the register itself as their
	// source (the second of two), not the zero register.
	fromReg bool
}

type arm64ImmOp int

const (
	arm64MOVZ arm64ImmOp = iota
	arm64MOVN
	arm64MOVK
	arm64ORR
	arm64AND
)

// arm64MovImm returns the instructions that put v in register rd (w<rd>
// when v < 2^32, else x<rd>), in the order LLVM expands them; v must be
// below 2^48 (see expandMovImm). Zero is `mov x<rd>, xzr`, a copy from the
// zero register, as LLVM selects it.
func arm64MovImm(rd uint32, v uint64) []uint32 {
	if v == 0 {
		return []uint32{0xaa1f03e0 | rd} // orr x<rd>, xzr, xzr
	}
	width := 64
	if v>>32 == 0 {
		width = 32
	}
	var out []uint32
	for _, in := range expandMovImm(v, width) {
		out = append(out, in.encode(rd, width))
	}
	return out
}

// encode returns the instruction word of in for register rd of width bits.
func (in arm64Imm) encode(rd uint32, width int) uint32 {
	var sf uint32
	if width == 64 {
		sf = 1 << 31
	}
	switch in.op {
	case arm64MOVZ, arm64MOVN, arm64MOVK:
		opc := map[arm64ImmOp]uint32{arm64MOVN: 0, arm64MOVZ: 2, arm64MOVK: 3}[in.op]
		return sf | opc<<29 | 0x25<<23 | in.shift/16<<21 | in.imm16<<5 | rd
	}
	rn := uint32(31) // the zero register
	if in.fromReg {
		rn = rd
	}
	opc := uint32(1) // ORR
	if in.op == arm64AND {
		opc = 0
	}
	return sf | opc<<29 | 0x24<<23 | in.enc<<10 | rn<<5 | rd
}

// expandMovImm chooses the instructions for imm in a register of width 32
// or 64, following expandMOVImm's order of preference.
func expandMovImm(imm uint64, width int) []arm64Imm {
	chunks := width / 16
	ones, zeros := 0, 0
	for s := 0; s < width; s += 16 {
		switch (imm >> s) & 0xffff {
		case 0xffff:
			ones++
		case 0:
			zeros++
		}
	}
	// MOVZ or MOVN alone, or with one MOVK, is preferred for the `mov` alias.
	if chunks-ones <= 1 || chunks-zeros <= 1 {
		return movSimple(imm, width, ones, zeros)
	}
	u := imm
	if width == 32 {
		u &= 0xffffffff
	}
	if enc, ok := logicalImm(u, width); ok {
		return []arm64Imm{{op: arm64ORR, enc: enc}}
	}
	if ones >= chunks-2 || zeros >= chunks-2 {
		return movSimple(imm, width, ones, zeros)
	}
	// Only 64-bit values get here: every 32-bit one is a MOVZ/MOVK pair.
	// An ORR of the value with one chunk zeroed, filled with ones, or
	// copied from the other half, then a MOVK of that chunk.
	for s := 0; s < 64; s += 16 {
		mask := uint64(0xffff) << s
		zeroed := u &^ mask
		rotated := u<<32 | u>>32
		for _, try := range []uint64{zeroed, u | mask, zeroed | rotated&mask} {
			if enc, ok := logicalImm(try, 64); ok {
				return []arm64Imm{{op: arm64ORR, enc: enc}, {op: arm64MOVK, imm16: uint32(u>>s) & 0xffff, shift: uint32(s)}}
			}
		}
	}
	// Two logical immediates ORed, or ANDed (De Morgan on the complement).
	if a, b, ok := orrOfLogicalImms(u); ok {
		ea, okA := logicalImm(a, 64)
		eb, okB := logicalImm(b, 64)
		if okA && okB {
			return []arm64Imm{{op: arm64ORR, enc: ea}, {op: arm64ORR, enc: eb, fromReg: true}}
		}
	}
	if a, b, ok := orrOfLogicalImms(^u); ok {
		ea, okA := logicalImm(^a, 64)
		eb, okB := logicalImm(^b, 64)
		if okA && okB {
			return []arm64Imm{{op: arm64ORR, enc: ea}, {op: arm64AND, enc: eb, fromReg: true}}
		}
	}
	// Three instructions: MOVZ or MOVN and two MOVKs. (LLVM tries ORR with
	// MOVKs first when no chunk is all zeros or all ones; values of 2^48 and
	// more, which arm64MovImm does not take, are the only such.)
	return movSimple(imm, width, ones, zeros)
}

// movSimple is MOVZ (or MOVN, when more chunks are all ones than all zeros)
// of the lowest chunk that differs from the background, then a MOVK for each
// higher chunk that differs, up to the highest.
func movSimple(imm uint64, width, ones, zeros int) []arm64Imm {
	neg := ones > zeros
	first := arm64MOVZ
	if neg {
		imm, first = ^imm, arm64MOVN
	}
	if width == 32 {
		imm &= 0xffffffff
	}
	var shift, last uint32
	if imm != 0 {
		shift = uint32(bits.TrailingZeros64(imm)) / 16 * 16
		last = uint32(63-bits.LeadingZeros64(imm)) / 16 * 16
	}
	out := []arm64Imm{{op: first, imm16: uint32(imm>>shift) & 0xffff, shift: shift}}
	if neg {
		imm = ^imm
	}
	background := uint32(0)
	if neg {
		background = 0xffff
	}
	for shift < last {
		shift += 16
		if c := uint32(imm>>shift) & 0xffff; c != background {
			out = append(out, arm64Imm{op: arm64MOVK, imm16: c, shift: shift})
		}
	}
	return out
}

// orrOfLogicalImms splits u into two logical immediates whose OR is u: the
// largest one inside u from its first run of ones (after rotating away the
// run that wraps around bit 0), then the largest covering what is left.
func orrOfLogicalImms(u uint64) (a, b uint64, ok bool) {
	if u == 0 || u == ^uint64(0) {
		return 0, 0, false
	}
	rot := bits.TrailingZeros64(^u)
	rotated := bits.RotateLeft64(u, -rot)
	first := widestWithin(rotated, rotated)
	rest := rotated &^ first
	second := widestWithin(rest, rotated)
	if rest&^second != 0 {
		return 0, 0, false
	}
	return bits.RotateLeft64(first, rot), bits.RotateLeft64(second, rot), true
}

// widestWithin takes the run of ones of original that starts at the lowest
// set bit of remaining and replicates it with periods 64, 32, ... 2 for as
// long as the result stays inside original.
func widestWithin(remaining, original uint64) uint64 {
	pos := bits.TrailingZeros64(remaining)
	n := bits.TrailingZeros64(^(original >> pos))
	run := ^uint64(0)
	if n < 64 {
		run = 1<<n - 1
	}
	result := run << pos
	for period := 64; period >= 2; period /= 2 {
		closure := result | bits.RotateLeft64(result, period)
		if closure&^original != 0 {
			break
		}
		result = closure
	}
	return result
}

// logicalImm returns the N:immr:imms encoding of v as a logical immediate
// of a width-bit instruction, if it is one.
func logicalImm(v uint64, width int) (uint32, bool) {
	logicalOnce.Do(buildLogical)
	if width == 32 {
		e, ok := logical32[uint32(v)]
		return e, ok && v>>32 == 0
	}
	e, ok := logical64[v]
	return e, ok
}

var (
	logicalOnce sync.Once
	logical32   map[uint32]uint32
	logical64   map[uint64]uint32
)

// buildLogical enumerates every logical immediate: an element of 2, 4, ...
// 64 bits holding a run of 1 to size-1 ones rotated right by 0 to size-1,
// replicated, encoded as the architecture decodes it (DecodeBitMasks): N set
// for 64-bit elements, imms the run length less one under the size's
// prefix, immr the rotation. Each value has one encoding.
func buildLogical() {
	logical32 = map[uint32]uint32{}
	logical64 = map[uint64]uint32{}
	for size := uint(2); size <= 64; size *= 2 {
		var n uint32
		if size == 64 {
			n = 1
		}
		for ones := uint(1); ones < size; ones++ {
			elem := uint64(1)<<ones - 1
			for r := uint(0); r < size; r++ {
				v := rotateRight(elem, r, size)
				for w := size; w < 64; w *= 2 {
					v |= v << w
				}
				imms := uint32(^(uint64(size)-1)<<1|uint64(ones-1)) & 0x3f
				enc := n<<12 | uint32(r)<<6 | imms
				logical64[v] = enc
				if size <= 32 {
					logical32[uint32(v)] = enc
				}
			}
		}
	}
}

// rotateRight rotates the low size bits of v right by r.
func rotateRight(v uint64, r, size uint) uint64 {
	if r == 0 {
		return v
	}
	if size == 64 {
		return bits.RotateLeft64(v, -int(r))
	}
	return (v>>r | v<<(size-r)) & (uint64(1)<<size - 1)
}
