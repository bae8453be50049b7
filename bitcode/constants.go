package bitcode

import "fmt"

// CONSTANTS_BLOCK record codes.
const (
	cstSetType            = 1
	cstNull               = 2
	cstUndef              = 3
	cstInteger            = 4
	cstWideInteger        = 5
	cstFloat              = 6
	cstAggregate          = 7
	cstString             = 8
	cstCString            = 9
	cstCEBinop            = 10
	cstCECast             = 11
	cstCEGEPOld           = 12
	cstCESelect           = 13
	cstCEExtractElt       = 14
	cstCEInsertElt        = 15
	cstCEShuffleVec       = 16
	cstCECmp              = 17
	cstInlineAsmOld       = 18
	cstCEShufVecEx        = 19
	cstCEInboundsGEP      = 20
	cstBlockAddress       = 21
	cstData               = 22
	cstInlineAsmOld2      = 23
	cstCEGEPInrangeOld    = 24
	cstCEUnop             = 25
	cstPoison             = 26
	cstDSOLocalEquivalent = 27
	cstInlineAsmOld3      = 28
	cstNoCFIValue         = 29
	cstInlineAsm          = 30
	cstCEGEPInrange       = 31
	cstCEGEP              = 32
	cstPtrAuth            = 33
	cstPtrAuth2           = 34
)

// cstMinOperands is the number of operands LLVM's parseConstants wants of
// the records it reads a fixed number of operands from.
var cstMinOperands = map[uint64]uint64{
	cstInteger: 1, cstWideInteger: 1, cstFloat: 1, cstAggregate: 1, cstString: 1, cstCString: 1, cstData: 1,
	cstCEUnop: 2, cstCEBinop: 3, cstCECast: 3, cstCEGEPOld: 2, cstCEInboundsGEP: 2, cstCEGEPInrangeOld: 2,
	cstCEGEPInrange: 2, cstCEGEP: 2, cstCESelect: 3, cstCEExtractElt: 3, cstCEInsertElt: 3, cstCEShuffleVec: 3,
	cstCEShufVecEx: 4, cstCECmp: 4, cstInlineAsmOld: 2, cstInlineAsmOld2: 2, cstInlineAsmOld3: 2, cstInlineAsm: 3,
	cstBlockAddress: 3, cstDSOLocalEquivalent: 2, cstNoCFIValue: 2, cstPtrAuth: 4, cstPtrAuth2: 5,
}

// i32 is the type ID a CONSTANTS_BLOCK starts with before any SETTYPE:
// LLVM's i32, which need not be in the type table.
const i32 = ^uint64(0)

// parseConstants reads a module-level CONSTANTS_BLOCK, whose ENTER_SUBBLOCK
// advance returned, as LLVM's parseConstants: every record but SETTYPE
// defines the next value (an unknown one an undef), numbered on from the
// module's value list. What it checks is what LLVM checks when reading
// them; the contents of a record are read again only for the initializer
// of an embedded object.
func (m *module) parseConstants() error {
	c := m.c
	if err := c.enter(blockConstants); err != nil {
		return err
	}
	cur := i32
	rec := &m.rec
	for {
		e, err := c.advanceSkippingBlocks()
		if err != nil {
			return err
		}
		if e.kind == entryEnd {
			return nil
		}
		rec.max = 1
		if err := c.readRecord(e.id, rec); err != nil {
			return err
		}
		if min, ok := cstMinOperands[rec.code]; ok && rec.n < min {
			return formatErr(rec.at, fmt.Sprintf("constant record %d of %d operands", rec.code, rec.n), nil)
		}
		t, _ := m.typ(cur)
		if cur == i32 {
			t = irType{kind: tyInt, n: 32}
		}
		switch rec.code {
		case cstSetType:
			if rec.n < 1 {
				return formatErr(rec.at, "SETTYPE without a type", nil)
			}
			nt, ok := m.typ(rec.op(0))
			if rec.op(0) >= uint64(len(m.types)) || !ok || nt.kind == tyVoid {
				return formatErr(rec.at, "SETTYPE type", rec.op(0))
			}
			cur = rec.op(0)
			continue
		case cstNull:
			if t.kind == tyVoid || t.kind == tyFunction || t.kind == tyLabel {
				return formatErr(rec.at, "null constant type", cur)
			}
		case cstInteger, cstWideInteger:
			if et, ok := m.typ(t.elem); t.kind != tyInt && (t.kind != tyVector || !ok || et.kind != tyInt) {
				return formatErr(rec.at, "integer constant of a type not integer", cur)
			}
		case cstData:
			et, ok := m.typ(t.elem)
			if t.kind != tyArray && t.kind != tyVector || !ok || elemBytes(et) == 0 {
				return formatErr(rec.at, "data constant of a type not an array or a vector of integers or floating-point values", cur)
			}
		case cstString, cstCString:
			// LLVM 19 to 22 make them [N x i8] whatever the type; main
			// wants an array.
		}
		m.values = append(m.values, value{kind: valConstant, i: len(m.consts)})
		m.consts = append(m.consts, constant{code: rec.code, typ: cur, n: rec.n, val: rec.op(0), pos: rec.pos, ab: rec.ab, at: rec.at})
	}
}

// decodeSigned decodes a signed value stored with its sign in the lowest
// bit, as LLVM's decodeSignRotatedValue.
func decodeSigned(v uint64) uint64 {
	switch {
	case v&1 == 0:
		return v >> 1
	case v != 1:
		return -(v >> 1)
	}
	return 1 << 63
}

// initializer returns the bytes of constant ci as LLVM's
// ConstantDataSequential::getAsString gives them, for the global g it
// initializes: ok is false when the constant is no ConstantDataSequential
// once LLVM has read it (zeroinitializer, an aggregate of other
// constants, a scalar, a pointer), which llvm.embedded.objects then does
// not embed. budget bounds the bytes it may take.
func (m *module) initializer(ci int, g *global, budget uint64) (data []byte, ok bool, err error) {
	k := &m.consts[ci]
	if d, ok := m.cache[ci]; ok {
		return d, d != nil, nil
	}
	defer func() {
		if err == nil {
			m.cache[ci] = data
		}
	}()
	t, _ := m.typ(k.typ)
	if k.typ == i32 {
		t = irType{kind: tyInt, n: 32}
	}
	et, _ := m.typ(t.elem)
	gt, _ := m.typ(g.valueType)
	switch k.code {
	case cstString, cstCString:
		// [N x i8], N+1 with the NUL of a CSTRING.
		if data, err = m.reread(k, 1, budget); err != nil {
			return nil, false, err
		}
		if k.code == cstCString {
			data = append(data, 0)
		}
		if gt.kind != tyArray || gt.n != uint64(len(data)) || !m.isInt(gt.elem, 8) {
			return nil, false, formatErr(k.at, fmt.Sprintf("initializer of %d bytes of @%s, of type %d", len(data), g.name, g.valueType), nil)
		}
	case cstData:
		w := elemBytes(et)
		if data, err = m.reread(k, w, budget); err != nil {
			return nil, false, err
		}
		if gt.kind != t.kind || gt.n != k.n || !m.sameType(gt.elem, t.elem) {
			return nil, false, formatErr(k.at, fmt.Sprintf("initializer of @%s of another type than the global's", g.name), g.valueType)
		}
	case cstAggregate:
		if !m.sameType(k.typ, g.valueType) {
			return nil, false, formatErr(k.at, fmt.Sprintf("initializer of @%s of another type than the global's", g.name), g.valueType)
		}
		if data, ok, err = m.aggregate(k, t, et, budget); !ok || err != nil {
			return nil, false, err
		}
	case cstInteger, cstWideInteger, cstFloat:
		// A vector constant of one value: ConstantDataVector::getSplat.
		w := elemBytes(et)
		if t.kind != tyVector || t.scalable || w == 0 || k.code == cstFloat && et.kind == tyInt {
			return nil, false, nil
		}
		if !m.sameType(k.typ, g.valueType) {
			return nil, false, formatErr(k.at, fmt.Sprintf("initializer of @%s of another type than the global's", g.name), g.valueType)
		}
		if t.n > budget/uint64(w) {
			return nil, false, limitErr(k.at, fmt.Sprintf("a vector of %d elements of %d bytes", t.n, w))
		}
		v := k.val
		if k.code != cstFloat {
			v = decodeSigned(v)
		}
		data = make([]byte, 0, t.n*uint64(w))
		for range t.n {
			data = appendLE(data, v, w)
		}
	default:
		// A vector can be the result of a constant expression LLVM
		// folds into data.
		if t.kind == tyVector && k.code >= cstCEBinop && k.code != cstBlockAddress && k.code != cstPoison && k.code != cstData {
			return nil, false, unsupportedErr(k.at, fmt.Sprintf("initializer of @%s: a constant expression of vector type (record code)", g.name), k.code)
		}
		return nil, false, nil
	}
	for _, b := range data {
		if b != 0 {
			return data, true, nil
		}
	}
	// All zeros: LLVM makes a ConstantAggregateZero of it.
	return nil, false, nil
}

func (m *module) isInt(id uint64, width uint64) bool {
	t, ok := m.typ(id)
	return ok && t.kind == tyInt && t.n == width
}

func appendLE(b []byte, v uint64, w int) []byte {
	for i := range w {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

// reread reads constant k's record again, its operands as w-byte elements.
func (m *module) reread(k *constant, w int, budget uint64) ([]byte, error) {
	c := m.c
	saved := c.br.end
	defer func() { c.br.end = saved }()
	c.br.end = 0
	rec := record{width: w, limit: budget}
	if err := c.rereadRecord(k.pos, k.ab, &rec); err != nil {
		return nil, err
	}
	return rec.data, nil
}

// aggregate returns the bytes of an AGGREGATE of type t, elements of type
// et: LLVM's ConstantArray::get and ConstantVector::get make a
// ConstantDataSequential of elements that are all integers or
// floating-point values (a zeroinitializer, an undef or a poison when they
// all are one).
func (m *module) aggregate(k *constant, t, et irType, budget uint64) ([]byte, bool, error) {
	w := elemBytes(et)
	if t.kind != tyArray && t.kind != tyVector || w == 0 {
		return nil, false, nil
	}
	if k.n > budget/uint64(w) {
		return nil, false, limitErr(k.at, fmt.Sprintf("an aggregate of %d elements of %d bytes", k.n, w))
	}
	c := m.c
	saved := c.br.end
	defer func() { c.br.end = saved }()
	c.br.end = 0
	rec := record{max: -1}
	if err := c.rereadRecord(k.pos, k.ab, &rec); err != nil {
		return nil, false, err
	}
	data := make([]byte, 0, rec.n*uint64(w))
	simple := true
	for _, id := range rec.ops {
		id = uint64(uint32(id)) // unsigned in LLVM
		if id >= uint64(len(m.values)) || m.values[id].kind != valConstant {
			return nil, false, unsupportedErr(k.at, "aggregate initializer element that is no constant (value ID)", id)
		}
		e := &m.consts[m.values[id].i]
		if !m.sameType(e.typ, t.elem) {
			return nil, false, formatErr(e.at, "aggregate element of another type than the aggregate's", e.typ)
		}
		switch e.code {
		case cstInteger, cstWideInteger:
			data = appendLE(data, decodeSigned(e.val), w)
		case cstFloat:
			data = appendLE(data, e.val, w)
		case cstNull:
			data = appendLE(data, 0, w)
		case cstUndef, cstPoison:
			simple = false
		default:
			if _, known := cstMinOperands[e.code]; !known {
				simple = false // an unknown constant, which LLVM reads as undef
				continue
			}
			return nil, false, unsupportedErr(e.at, "aggregate initializer element LLVM may fold (record code)", e.code)
		}
	}
	if !simple {
		return nil, false, nil
	}
	return data, true, nil
}
