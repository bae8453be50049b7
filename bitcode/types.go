package bitcode

import "fmt"

// TYPE_BLOCK_ID_NEW record codes.
const (
	typeNumEntry      = 1
	typeVoid          = 2
	typeFloat         = 3
	typeDouble        = 4
	typeLabel         = 5
	typeOpaque        = 6
	typeInteger       = 7
	typePointer       = 8
	typeFunctionOld   = 9
	typeHalf          = 10
	typeArray         = 11
	typeVector        = 12
	typeX86FP80       = 13
	typeFP128         = 14
	typePPCFP128      = 15
	typeMetadata      = 16
	typeX86MMX        = 17
	typeStructAnon    = 18
	typeStructName    = 19
	typeStructNamed   = 20
	typeFunction      = 21
	typeToken         = 22
	typeBFloat        = 23
	typeX86AMX        = 24
	typeOpaquePointer = 25
	typeTargetType    = 26
	typeByte          = 27 // LLVM main after 22
)

type typeKind uint8

const (
	tyNone typeKind = iota
	tyVoid
	tyLabel
	tyMetadata
	tyToken
	tyInt
	tyHalf
	tyBFloat
	tyFloat
	tyDouble
	tyOtherFP // x86_fp80, fp128, ppc_fp128 (n: the record code)
	tyPointer
	tyArray
	tyVector
	tyStruct // named or opaque: a type of its own
	tyAnonStruct
	tyFunction
	tyOther // x86_mmx, x86_amx, target types, bytes
)

// irType is an entry of the type table, as much of it as the reader needs.
type irType struct {
	kind     typeKind
	n        uint64 // integer width, array or vector length, pointer address space
	elem     uint64 // array or vector element type, typed pointer pointee
	typed    bool   // a typed pointer (before opaque pointers)
	scalable bool   // a scalable vector
}

// typ returns the type of ID id, once the type table is read. Type IDs are
// unsigned in LLVM: 32 bits.
func (m *module) typ(id uint64) (irType, bool) {
	id = uint64(uint32(id))
	if id >= uint64(len(m.types)) {
		return irType{}, false
	}
	return m.types[id], true
}

// elemBytes returns the size of the elements of a ConstantDataSequential
// of element type t (LLVM's ConstantDataSequential::isElementTypeCompatible),
// or 0 for a type it cannot have.
func elemBytes(t irType) int {
	switch t.kind {
	case tyInt:
		switch t.n {
		case 8, 16, 32, 64:
			return int(t.n / 8)
		}
	case tyHalf, tyBFloat:
		return 2
	case tyFloat:
		return 4
	case tyDouble:
		return 8
	}
	return 0
}

// sameType reports whether the types of IDs a and b are one type, as LLVM
// uniques them: integers by width, pointers by address space (all pointers
// are opaque since LLVM 17), arrays and vectors by length and element
// type. Structures are compared by ID (named ones are types of their own;
// the writer does not repeat an anonymous one), and so are functions.
func (m *module) sameType(a, b uint64) bool {
	for a != b {
		ta, okA := m.typ(a)
		tb, okB := m.typ(b)
		if !okA || !okB || ta.kind != tb.kind {
			return false
		}
		switch ta.kind {
		case tyInt, tyPointer, tyOtherFP:
			return ta.n == tb.n
		case tyArray, tyVector:
			if ta.n != tb.n || ta.scalable != tb.scalable {
				return false
			}
			a, b = ta.elem, tb.elem // defined before: the loop ends
		case tyVoid, tyLabel, tyMetadata, tyToken, tyHalf, tyBFloat, tyFloat, tyDouble:
			return true
		default:
			return false
		}
	}
	return true
}

// parseTypes reads the type table, whose ENTER_SUBBLOCK advance returned,
// as LLVM's parseTypeTableBody: NUMENTRY gives the number of types, each
// record but NUMENTRY and STRUCT_NAME defines the next one, and only named
// structures may be referred to before they are defined.
func (m *module) parseTypes(at int64) error {
	c := m.c
	if m.numTypes > 0 {
		return formatErr(at, "a second type table", nil)
	}
	if err := c.enter(blockType); err != nil {
		return err
	}
	rec := record{max: -1}
	for {
		e, err := c.advanceSkippingBlocks()
		if err != nil {
			return err
		}
		if e.kind == entryEnd {
			if uint64(len(m.types)) != m.numTypes {
				return formatErr(e.at, fmt.Sprintf("type table of %d types, NUMENTRY says", len(m.types)), m.numTypes)
			}
			return nil
		}
		if err := c.readRecord(e.id, &rec); err != nil {
			return err
		}
		if err := m.typeRecord(&rec); err != nil {
			return err
		}
	}
}

// ref returns the type a type record refers to by id: one defined before,
// or a named structure defined later.
func (m *module) ref(id uint64) (irType, bool) {
	id = uint64(uint32(id))
	if id < uint64(len(m.types)) {
		return m.types[id], true
	}
	if id < m.numTypes {
		m.fwdTypes[id] = true
		return irType{kind: tyStruct}, true
	}
	return irType{}, false
}

// refs checks the type IDs of operands from on.
func (m *module) refs(rec *record, from int) bool {
	for i := from; i < len(rec.ops); i++ {
		if _, ok := m.ref(rec.ops[i]); !ok {
			return false
		}
	}
	return true
}

func (m *module) typeRecord(rec *record) error {
	var t irType
	bad := func(what string) error { return formatErr(rec.at, what, rec.code) }
	switch rec.code {
	case typeNumEntry:
		if rec.n < 1 {
			return bad("NUMENTRY record without a number")
		}
		m.numTypes = rec.op(0)
		return nil
	case typeStructName:
		return nil
	case typeVoid:
		t.kind = tyVoid
	case typeLabel:
		t.kind = tyLabel
	case typeMetadata:
		t.kind = tyMetadata
	case typeToken:
		t.kind = tyToken
	case typeHalf:
		t.kind = tyHalf
	case typeBFloat:
		t.kind = tyBFloat
	case typeFloat:
		t.kind = tyFloat
	case typeDouble:
		t.kind = tyDouble
	case typeX86FP80, typeFP128, typePPCFP128:
		t = irType{kind: tyOtherFP, n: rec.code}
	case typeX86MMX, typeX86AMX:
		t.kind = tyOther
	case typeInteger, typeByte:
		if rec.n < 1 || rec.op(0) < 1 || rec.op(0) > 1<<23 {
			return bad("integer type width")
		}
		t = irType{kind: tyInt, n: rec.op(0)}
		if rec.code == typeByte {
			t = irType{kind: tyOther, n: rec.op(0)}
		}
	case typePointer:
		if rec.n < 1 {
			return bad("pointer type record without a pointee")
		}
		p, ok := m.ref(rec.op(0))
		if !ok || p.kind == tyVoid || p.kind == tyLabel || p.kind == tyMetadata || p.kind == tyToken {
			return bad("pointer type pointee")
		}
		t = irType{kind: tyPointer, elem: rec.op(0), typed: true}
		if rec.n == 2 {
			t.n = rec.op(1)
		}
	case typeOpaquePointer:
		if rec.n != 1 {
			return bad("opaque pointer type record")
		}
		t = irType{kind: tyPointer, n: rec.op(0)}
	case typeFunctionOld, typeFunction:
		first := 1 // the return type
		if rec.code == typeFunctionOld {
			first = 2
		}
		if rec.n < uint64(first)+1 || !m.refs(rec, first) {
			return bad("function type")
		}
		t.kind = tyFunction
	case typeStructAnon:
		if rec.n < 1 || !m.refs(rec, 1) {
			return bad("structure type")
		}
		t.kind = tyAnonStruct
	case typeStructNamed, typeOpaque:
		if rec.n < 1 || rec.code == typeOpaque && rec.n != 1 || rec.code == typeStructNamed && !m.refs(rec, 1) {
			return bad("named structure type")
		}
		t.kind = tyStruct
	case typeTargetType:
		if rec.n < 1 || rec.op(0) >= rec.n {
			return bad("target extension type")
		}
		for i := range rec.op(0) {
			if _, ok := m.ref(rec.op(int(i) + 1)); !ok {
				return bad("target extension type parameter")
			}
		}
		t.kind = tyOther
	case typeArray, typeVector:
		if rec.n < 2 {
			return bad("array or vector type record")
		}
		e, ok := m.ref(rec.op(1))
		if !ok {
			return bad("array or vector element type")
		}
		t = irType{kind: tyArray, n: rec.op(0), elem: rec.op(1)}
		if rec.code == typeVector {
			t.kind, t.scalable = tyVector, rec.n > 2 && rec.op(2) != 0
			if t.n == 0 || e.kind != tyInt && e.kind != tyPointer && elemBytes(e) == 0 && e.kind != tyOtherFP {
				return bad("vector type")
			}
		} else if k := e.kind; k == tyVoid || k == tyLabel || k == tyMetadata || k == tyFunction || k == tyToken || k == tyVector && e.scalable {
			return bad("array element type")
		}
	default:
		return unsupportedErr(rec.at, "type record code", rec.code)
	}
	id := uint64(len(m.types))
	if id >= m.numTypes {
		return formatErr(rec.at, "more types than NUMENTRY says", m.numTypes)
	}
	if m.fwdTypes[id] && t.kind != tyStruct {
		return formatErr(rec.at, "type referred to before it is defined, not a named structure", id)
	}
	m.types = append(m.types, t)
	return nil
}
