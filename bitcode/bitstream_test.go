package bitcode

import (
	"encoding/binary"
	"strings"
)

// bitWriter writes LLVM bitstreams for the tests of the reader: fields
// least significant bit first, blocks whose length is filled in when they
// end, records unabbreviated or by an abbreviation of the test's.
type bitWriter struct {
	buf   []byte
	bits  uint64
	width uint
	open  []openBlock
}

type openBlock struct {
	lenAt int
	width uint
}

// newBitcode returns a writer of a bitcode file, past its magic.
func newBitcode() *bitWriter {
	w := &bitWriter{width: 2}
	for _, c := range []byte("BC\xc0\xde") {
		w.emit(uint64(c), 8)
	}
	return w
}

func (w *bitWriter) emit(v uint64, n uint) {
	for i := range n {
		if w.bits%8 == 0 {
			w.buf = append(w.buf, 0)
		}
		if v>>i&1 != 0 {
			w.buf[w.bits/8] |= 1 << (w.bits % 8)
		}
		w.bits++
	}
}

func (w *bitWriter) vbr(v uint64, n uint) {
	for {
		chunk := v & (1<<(n-1) - 1)
		v >>= n - 1
		if v == 0 {
			w.emit(chunk, n)
			return
		}
		w.emit(chunk|1<<(n-1), n)
	}
}

func (w *bitWriter) align32() {
	for w.bits%32 != 0 {
		w.emit(0, 1)
	}
}

// enter starts a block; end ends it, filling in its length.
func (w *bitWriter) enter(id uint64, width uint) {
	w.emit(abbrevEnterSubblock, w.width)
	w.vbr(id, 8)
	w.vbr(uint64(width), 4)
	w.align32()
	w.open = append(w.open, openBlock{len(w.buf), w.width})
	w.emit(0, 32)
	w.width = width
}

func (w *bitWriter) end() {
	w.emit(abbrevEndBlock, w.width)
	w.align32()
	b := w.open[len(w.open)-1]
	w.open = w.open[:len(w.open)-1]
	binary.LittleEndian.PutUint32(w.buf[b.lenAt:], uint32((len(w.buf)-b.lenAt-4)/4))
	w.width = b.width
}

// record writes an unabbreviated record.
func (w *bitWriter) record(code uint64, ops ...uint64) {
	w.emit(abbrevUnabbreviated, w.width)
	w.vbr(code, 6)
	w.vbr(uint64(len(ops)), 6)
	for _, op := range ops {
		w.vbr(op, 6)
	}
}

// wop is an abbreviation operand of the tests.
type wop struct {
	lit   bool
	v     uint64 // the literal
	enc   uint64
	width uint64
}

func lit(v uint64) wop         { return wop{lit: true, v: v} }
func fixedOp(width uint64) wop { return wop{enc: encFixed, width: width} }
func vbrOp(width uint64) wop   { return wop{enc: encVBR, width: width} }

var (
	arrayOp = wop{enc: encArray}
	char6Op = wop{enc: encChar6}
	blobOp  = wop{enc: encBlob}
)

// define writes a DEFINE_ABBREV of ops.
func (w *bitWriter) define(ops ...wop) []wop {
	w.emit(abbrevDefine, w.width)
	w.vbr(uint64(len(ops)), 5)
	for _, op := range ops {
		if op.lit {
			w.emit(1, 1)
			w.vbr(op.v, 8)
			continue
		}
		w.emit(0, 1)
		w.emit(op.enc, 3)
		if op.enc == encFixed || op.enc == encVBR {
			w.vbr(op.width, 5)
		}
	}
	return ops
}

// abbrev writes a record by the abbreviation of ID id, ops: vals are the
// values of its operands (an array's elements last), blob the bytes of a
// blob operand.
func (w *bitWriter) abbrev(id uint64, ops []wop, vals []uint64, blob []byte) {
	w.emit(id, w.width)
	for i := 0; i < len(ops); i++ {
		op := ops[i]
		switch {
		case op.lit:
		case op.enc == encArray:
			w.vbr(uint64(len(vals)), 6)
			for _, v := range vals {
				w.scalar(ops[i+1], v)
			}
			return
		case op.enc == encBlob:
			w.vbr(uint64(len(blob)), 6)
			w.align32()
			for _, c := range blob {
				w.emit(uint64(c), 8)
			}
			w.align32()
		default:
			w.scalar(op, vals[0])
			vals = vals[1:]
		}
	}
}

func (w *bitWriter) scalar(op wop, v uint64) {
	switch op.enc {
	case encFixed:
		w.emit(v, uint(op.width))
	case encVBR:
		w.vbr(v, uint(op.width))
	case encChar6:
		w.emit(uint64(strings.IndexByte(char6, byte(v))), 6)
	}
}

// chars returns the bytes of s as record operands.
func chars(s string) []uint64 {
	ops := make([]uint64, len(s))
	for i := range len(s) {
		ops[i] = uint64(s[i])
	}
	return ops
}

// synthModule describes a module the tests write bit by bit: a global
// @obj (value 0) initialized by constant 1, a STRING of payload, listed in
// llvm.embedded.objects with section. Its hooks add records: constants
// after the initializer (values 2 on), metadata before the global's
// VALUE (IDs 1 on, after the section string), and what the module holds
// after its metadata.
type synthModule struct {
	version    uint64 // 0 or 1: names in a value symbol table; 2: in the string table
	payload    []byte
	section    string
	oldString  bool // the section as a METADATA_STRING_OLD record
	constants  func(w *bitWriter)
	metadata   func(w *bitWriter) uint64 // returns how many IDs it defined
	after      func(w *bitWriter)
	named      func(node uint64) []uint64 // the operands of llvm.embedded.objects
	numTypes   uint64
	types      func(w *bitWriter) // types 3 on
	globalType uint64             // the global's type, if not synthArray
	init       uint64             // its initializer's value ID + 1, if not 2
}

// The type IDs of a synthModule: i8, [len(payload) x i8], ptr.
const (
	synthI8    = 0
	synthArray = 1
	synthPtr   = 2
)

func (s synthModule) bytes() []byte {
	w := newBitcode()
	w.enter(blockIdentification, 5)
	w.record(identString, chars("synth")...)
	w.record(identEpoch, 0)
	w.end()
	w.enter(blockModule, 3)
	w.record(moduleVersion, s.version)
	w.enter(blockType, 4)
	w.record(typeNumEntry, 3+s.numTypes)
	w.record(typeInteger, 8)
	w.record(typeArray, uint64(len(s.payload)), synthI8)
	w.record(typeOpaquePointer, 0)
	if s.types != nil {
		s.types(w)
	}
	w.end()
	// [strtab offset, size,] type, constant|explicit type, initializer + 1,
	// linkage, alignment, section.
	gtype, init := uint64(synthArray), uint64(2)
	if s.globalType != 0 {
		gtype = s.globalType
	}
	if s.init != 0 {
		init = s.init
	}
	gv := []uint64{gtype, 3, init, 0, 0, 0}
	if s.version >= 2 {
		gv = append([]uint64{0, 3}, gv...)
	}
	w.record(moduleGlobalVar, gv...)
	w.enter(blockConstants, 4)
	w.record(cstSetType, synthArray)
	str := w.define(lit(cstString), arrayOp, fixedOp(8))
	w.abbrev(firstAbbrev, str, bytesOps(s.payload), nil)
	if s.constants != nil {
		s.constants(w)
	}
	w.end()
	w.enter(blockMetadata, 4)
	if s.oldString {
		w.record(mdStringOld, chars(s.section)...)
	} else {
		strs := w.define(lit(mdStrings), vbrOp(6), vbrOp(6), blobOp)
		lengths := &bitWriter{}
		lengths.vbr(uint64(len(s.section)), 6)
		lengths.align32()
		w.abbrev(firstAbbrev, strs, []uint64{1, uint64(len(lengths.buf))}, append(lengths.buf, s.section...))
	}
	defined := uint64(0)
	if s.metadata != nil {
		defined = s.metadata(w)
	}
	value := 1 + defined
	w.record(mdValueCode, synthPtr, 0)
	w.record(mdNodeCode, value+1, 1) // !{ptr @obj, !"<section>"}
	named := []uint64{value + 1}
	if s.named != nil {
		named = s.named(value + 1)
	}
	w.record(mdName, chars(embeddedObjectsName)...)
	w.record(mdNamedNode, named...)
	w.end()
	if s.version < 2 {
		w.enter(blockValueSymtab, 4)
		w.record(vstEntry, append([]uint64{0}, chars("obj")...)...)
		w.end()
	}
	if s.after != nil {
		s.after(w)
	}
	w.end()
	if s.version >= 2 {
		w.enter(blockStrtab, 3)
		ab := w.define(lit(recordBlob), blobOp)
		w.abbrev(firstAbbrev, ab, nil, []byte("obj"))
		w.end()
	}
	return w.buf
}

func bytesOps(b []byte) []uint64 {
	ops := make([]uint64, len(b))
	for i, c := range b {
		ops[i] = uint64(c)
	}
	return ops
}
