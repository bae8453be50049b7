package bitcode

import (
	"fmt"
	"io"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/ferr"
)

// The block IDs of LLVM IR bitcode (llvm/Bitcode/LLVMBitCodes.h).
const (
	blockModule         = 8
	blockConstants      = 11
	blockFunction       = 12
	blockIdentification = 13
	blockValueSymtab    = 14
	blockMetadata       = 15
	blockType           = 17
)

// MODULE_BLOCK record codes.
const (
	moduleVersion     = 1
	moduleSectionName = 5
	moduleGlobalVar   = 7
	moduleFunction    = 8
	moduleAliasOld    = 9
	moduleComdat      = 12
	moduleVSTOffset   = 13
	moduleAlias       = 14
	moduleIFunc       = 18
)

// IDENTIFICATION_BLOCK and VALUE_SYMTAB record codes.
const (
	identString = 1
	identEpoch  = 2

	vstEntry   = 1
	vstBBEntry = 2
	vstFnEntry = 3
)

// limitErr is formatErr for input that asks for more than a limit allows.
func limitErr(off int64, what string) error {
	return ferr.New("bitcode", off, what, nil, goffload.ErrLimit)
}

// unsupportedErr is formatErr for what goffload does not read.
func unsupportedErr(off int64, what string, val any) error {
	return ferr.New("bitcode", off, what, val, goffload.ErrUnsupported)
}

// module is what the reader keeps of a bitcode file's module: its types,
// its values (globals, then module-level constants), its metadata and the
// operands of its named metadata llvm.embedded.objects. Constants and
// strings are kept as where their records are, read again when needed.
type module struct {
	size  int64  // of the input
	bytes uint64 // of the stream: LLVM's bound on value and metadata references
	c     *cursor

	begin     uint64 // bit position of the module's first block (identification or module)
	version   uint64
	strtab    string
	numTypes  uint64
	types     []irType
	fwdTypes  map[uint64]bool
	values    []value
	globals   []global
	consts    []constant
	indirect  []initRef // aliasees and resolvers
	sections  uint64
	comdats   uint64
	bodies    int // functions with a body whose block is still to come
	vstOffset uint64
	seenVST   bool

	md        []mdEntry
	mdBlobs   [][]byte
	mdUnknown uint64 // metadata IDs from this one on follow a record of unknown code
	embedded  []initRef

	producer string // of the identification block ("LLVM19.1.7"), "" without one

	spent uint64 // bytes of embedded objects returned
	cache map[int][]byte
	rec   record
}

type valueKind uint8

const (
	// valPlaceholder: an index that metadata referred to before any record
	// defined it; LLVM's value list grows to hold it, and no record fills it.
	valPlaceholder valueKind = iota
	valGlobalVar
	valFunction
	valAlias
	valConstant
)

// value is an entry of the module's value list: its kind and its index in
// module.globals or module.consts.
type value struct {
	kind valueKind
	i    int
}

// global is a global variable.
type global struct {
	name      string
	valueType uint64 // the type of its initializer
	addrSpace uint64
	init      uint64 // its initializer's value ID + 1; 0 for a declaration
	at        int64
}

// constant is a record of a module-level CONSTANTS_BLOCK: its code, the
// type SETTYPE gave it, its operand count and first operand, and where it
// is, to read it again.
type constant struct {
	code uint64
	typ  uint64
	n    uint64
	val  uint64
	pos  uint64
	ab   *[]abbrevOp
	at   int64
}

// initRef is a value or metadata ID read from a record at file offset at.
type initRef struct {
	id uint64
	at int64
}

// maxProducer bounds the producer string kept: LLVM's are "LLVM19.1.7".
const maxProducer = 256

// Producer returns the producer string of the IDENTIFICATION_BLOCK of the
// bitcode file held in the size bytes of r (LLVM 4 and later write one
// before the module, "LLVM" and the version: "LLVM19.1.7"), or "" for a
// module without one. The file is read as [EmbeddedObjects] reads it, its
// errors too.
func Producer(r io.ReaderAt, size int64) (string, error) {
	if err := ferr.CheckInput("bitcode", r, size); err != nil {
		return "", err
	}
	m, err := readModule(r, size)
	if err != nil {
		return "", err
	}
	return m.producer, nil
}

// readModule reads the one module of the bitcode file held in the size
// bytes of r, as LLVM's getLazyIRModule reads it.
func readModule(r io.ReaderAt, size int64) (*module, error) {
	start, end, err := stream(r, size)
	if err != nil {
		return nil, err
	}
	base := start - 4 // LLVM's positions count from the magic
	br := &bitReader{r: r, base: base, bits: uint64(end-base) * 8, pos: 32}
	m := &module{size: size, bytes: uint64(end - base), c: newCursor(br), mdUnknown: ^uint64(0),
		cache: map[int][]byte{}, fwdTypes: map[uint64]bool{}}
	mods, err := m.topLevel()
	if err != nil {
		return nil, err
	}
	switch {
	case len(mods) == 0 && !br.allZero():
		// What is left is too short for LLVM to read: a module cut short.
		return nil, truncErr(br.byteOff(), "bitcode cut short before its module", nil)
	case len(mods) == 0:
		return nil, formatErr(start, "no module in the bitcode", nil)
	case len(mods) > 1:
		// llvm::getLazyBitcodeModule: "Expected a single module".
		return nil, unsupportedErr(base+int64(mods[1].begin), fmt.Sprintf("%d modules in one file (as llvm-cat -b writes): LLVM reads the device code of a bitcode file of one module only", len(mods)), nil)
	}
	mod := mods[0]
	m.begin, m.strtab = mod.begin*8, mod.strtab
	if mod.identBit != 0 {
		br.pos = mod.identBit
		if err := m.identification(); err != nil {
			return nil, err
		}
	}
	br.pos = mod.moduleBit
	if err := m.c.enter(blockModule); err != nil {
		return nil, err
	}
	if err := m.parseModule(); err != nil {
		return nil, err
	}
	// llvm::BitcodeReader's initStream refuses a buffer of another size
	// (checked last, so that a file cut short says so).
	if size%4 != 0 {
		return nil, formatErr(size, "size (not a multiple of 4)", size)
	}
	return m, nil
}

// topModule is a module found at the top level of the stream.
type topModule struct {
	begin               uint64 // byte of its first block
	identBit, moduleBit uint64 // bits after the IDs of its blocks (identBit 0: none)
	strtab              string
}

// topLevel lists the modules of the stream and their string tables, as
// LLVM's getBitcodeFileContents does.
func (m *module) topLevel() ([]topModule, error) {
	c, br := m.c, m.c.br
	var mods []topModule
	for {
		begin := br.pos / 8
		// LLVM stops where no other module can fit (trailing garbage).
		if begin+8 >= m.bytes {
			return mods, nil
		}
		e, err := c.advance()
		if err != nil {
			return nil, err
		}
		if e.kind == entryRecord {
			if err := c.readRecord(e.id, &record{}); err != nil {
				return nil, err
			}
			continue
		}
		mod := topModule{begin: begin}
		if e.id == blockIdentification {
			mod.identBit = br.pos
			if err := c.skipBlock(); err != nil {
				return nil, err
			}
			if e, err = c.advance(); err != nil {
				return nil, err
			}
			if e.kind != entrySub || e.id != blockModule {
				return nil, formatErr(e.at, "identification block not followed by a module block", nil)
			}
		}
		switch e.id {
		case blockModule:
			mod.moduleBit = br.pos
			if err := c.skipBlock(); err != nil {
				return nil, err
			}
			mods = append(mods, mod)
		case blockStrtab, blockSymtab:
			blob, err := m.blobInBlock(e.id)
			if err != nil {
				return nil, err
			}
			// A string table serves the modules before it that have none.
			for i := len(mods) - 1; e.id == blockStrtab && i >= 0 && mods[i].strtab == ""; i-- {
				mods[i].strtab = string(blob)
			}
		default:
			if err := c.skipBlock(); err != nil {
				return nil, err
			}
		}
	}
}

// blobInBlock reads the block whose ENTER_SUBBLOCK advance returned and
// returns the blob of its last record of code recordBlob, as LLVM's
// readBlobInRecord.
func (m *module) blobInBlock(id uint64) ([]byte, error) {
	c := m.c
	if err := c.enter(id); err != nil {
		return nil, err
	}
	var blob []byte
	rec := record{keepBlob: true}
	for {
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
		default:
			if err := c.readRecord(e.id, &rec); err != nil {
				return nil, err
			}
			if rec.code == recordBlob {
				blob = rec.blob
			}
		}
	}
}

// identification reads the IDENTIFICATION_BLOCK as LLVM does: a producer
// string (kept in m.producer) and the epoch, which must be 0.
func (m *module) identification() error {
	c := m.c
	if err := c.enter(blockIdentification); err != nil {
		return err
	}
	rec := record{max: maxProducer}
	for {
		e, err := c.advance()
		if err != nil {
			return err
		}
		switch e.kind {
		case entryEnd:
			return nil
		case entrySub:
			return formatErr(e.at, "block in the identification block", e.id)
		}
		if err := c.readRecord(e.id, &rec); err != nil {
			return err
		}
		switch rec.code {
		case identString:
			b := make([]byte, 0, len(rec.ops))
			for _, c := range rec.ops {
				b = append(b, byte(c))
			}
			m.producer = string(b)
		case identEpoch:
			if rec.n < 1 {
				return formatErr(rec.at, "epoch record without an epoch", nil)
			}
			if rec.op(0) != 0 {
				return unsupportedErr(rec.at, "bitcode epoch", rec.op(0))
			}
		default:
			return formatErr(rec.at, "identification record code", rec.code)
		}
	}
}

// parseModule reads the module block, which c has entered, as LLVM's lazy
// reader does: up to its end, or up to the first function body once the
// value symbol table is known (where getLazyIRModule stops reading).
func (m *module) parseModule() error {
	c := m.c
	rec := &m.rec
	for {
		e, err := c.advance()
		if err != nil {
			return err
		}
		switch e.kind {
		case entryEnd:
			return m.checkInits()
		case entrySub:
			var err error
			switch e.id {
			case blockInfoID:
				err = c.readBlockInfo()
			case blockType:
				err = m.parseTypes(e.at)
			case blockConstants:
				err = m.parseConstants()
			case blockMetadata:
				err = m.parseMetadata()
			case blockValueSymtab:
				if m.seenVST {
					err = c.skipBlock()
					break
				}
				err = m.parseVST(false)
				m.seenVST = true
			case blockFunction:
				stop, err := m.functionBlock(e.at)
				if err != nil {
					return err
				}
				if stop {
					return m.checkInits()
				}
			default:
				err = c.skipBlock()
			}
			if err != nil {
				return err
			}
			continue
		}
		rec.max = 16
		if err := c.readRecord(e.id, rec); err != nil {
			return err
		}
		if err := m.moduleRecord(rec); err != nil {
			return err
		}
	}
}

// functionBlock skips a function body. It returns whether the reading of
// the module stops there, as LLVM's lazy reader stops: once the value
// symbol table has been read, the one a VSTOFFSET record points to first.
func (m *module) functionBlock(at int64) (bool, error) {
	c := m.c
	if m.vstOffset > 0 && !m.seenVST {
		back := c.br.pos
		to := m.begin + m.vstOffset*32
		if to >= c.br.limit() || to < m.begin {
			return false, formatErr(at, "VSTOFFSET past the module", m.vstOffset+1)
		}
		c.br.pos = to
		e, err := c.advance()
		if err != nil {
			return false, err
		}
		if e.kind != entrySub || e.id != blockValueSymtab {
			return false, formatErr(e.at, "VSTOFFSET not pointing to a value symbol table", m.vstOffset+1)
		}
		if err := m.parseVST(m.version >= 2); err != nil {
			return false, err
		}
		m.seenVST = true
		c.br.pos = back
	}
	if m.bodies == 0 {
		return false, formatErr(at, "function body without a function record", nil)
	}
	m.bodies--
	if err := c.skipBlock(); err != nil {
		return false, err
	}
	return m.seenVST, nil
}

// checkInits checks, as LLVM's globalCleanup, that the initializers of
// globals and the targets of aliases and ifuncs are values of the module.
func (m *module) checkInits() error {
	for _, g := range m.globals {
		if g.init > uint64(len(m.values)) {
			return formatErr(g.at, "global initializer value ID", g.init-1)
		}
	}
	for _, a := range m.indirect {
		if a.id >= uint64(len(m.values)) {
			return formatErr(a.at, "alias or ifunc target value ID", a.id)
		}
	}
	return nil
}

// name takes the name of a global value off the start of record rec, from
// the string table in version 2, as LLVM's readNameFromStrtab; it returns
// the name, the operands that follow (those rec kept) and their number.
func (m *module) name(rec *record) (string, []uint64, uint64, error) {
	if m.version < 2 {
		return "", rec.ops, rec.n, nil
	}
	if rec.n < 2 || rec.op(0) > uint64(len(m.strtab)) || rec.op(1) > uint64(len(m.strtab))-rec.op(0) {
		return "", nil, 0, formatErr(rec.at, "name (offset, size) past the string table", [2]uint64{rec.op(0), rec.op(1)})
	}
	return m.strtab[rec.op(0) : rec.op(0)+rec.op(1)], rec.ops[2:], rec.n - 2, nil
}

// moduleRecord reads a record of the module block: those that define the
// module's global values (in value ID order), and those they refer to.
func (m *module) moduleRecord(rec *record) error {
	switch rec.code {
	case moduleVersion:
		if rec.n < 1 {
			return formatErr(rec.at, "version record without a version", nil)
		}
		if rec.op(0) > 2 {
			return unsupportedErr(rec.at, "module version", rec.op(0))
		}
		m.version = rec.op(0)
	case moduleSectionName:
		m.sections++
	case moduleComdat:
		m.comdats++
	case moduleVSTOffset:
		if rec.n < 1 {
			return formatErr(rec.at, "VSTOFFSET record without an offset", nil)
		}
		// Counted from the word before the module's first block.
		m.vstOffset = rec.op(0) - 1
	case moduleGlobalVar:
		return m.globalVar(rec)
	case moduleFunction:
		_, ops, n, err := m.name(rec)
		if err != nil {
			return err
		}
		if n < 8 {
			return formatErr(rec.at, "function record of too few operands", rec.n)
		}
		t, ok := m.typ(ops[0])
		if ok && t.kind == tyPointer && t.typed {
			t, ok = m.typ(t.elem)
		}
		if !ok || t.kind != tyFunction {
			return formatErr(rec.at, "function type", ops[0])
		}
		if ops[1]&^1023 != 0 {
			return formatErr(rec.at, "calling convention", ops[1])
		}
		if ops[2] == 0 {
			m.bodies++
		}
		m.values = append(m.values, value{kind: valFunction})
	case moduleAliasOld, moduleAlias, moduleIFunc:
		_, ops, n, err := m.name(rec)
		if err != nil {
			return err
		}
		newRecord := uint64(0)
		if rec.code != moduleAliasOld {
			newRecord = 1
		}
		if n < 3+newRecord {
			return formatErr(rec.at, "alias or ifunc record of too few operands", rec.n)
		}
		if _, ok := m.typ(ops[0]); !ok {
			return formatErr(rec.at, "alias or ifunc type", ops[0])
		}
		m.indirect = append(m.indirect, initRef{ops[1+newRecord], rec.at})
		m.values = append(m.values, value{kind: valAlias})
	}
	return nil
}

// globalVar reads a GLOBALVAR record, as LLVM's parseGlobalVarRecord:
// [name?, type, isconst|explicit type|addrspace, initid, linkage,
// alignment, section, ..., comdat, ...].
func (m *module) globalVar(rec *record) error {
	name, ops, n, err := m.name(rec)
	if err != nil {
		return err
	}
	if n < 6 {
		return formatErr(rec.at, "global variable record of too few operands", rec.n)
	}
	g := global{name: name, valueType: ops[0], at: rec.at}
	t, ok := m.typ(ops[0])
	if !ok {
		return formatErr(rec.at, "global variable type", ops[0])
	}
	if ops[1]&2 != 0 { // explicit type
		g.addrSpace = ops[1] >> 2
	} else {
		if t.kind != tyPointer {
			return formatErr(rec.at, "global variable type (not a pointer)", ops[0])
		}
		if !t.typed {
			return formatErr(rec.at, "global variable type (an opaque pointer, without the explicit-type flag)", ops[0])
		}
		g.addrSpace, g.valueType = t.n, t.elem
	}
	// The initializer's ID is unsigned in LLVM; an alignment is 2^32 at
	// most (parseAlignmentValue).
	g.init = uint64(uint32(ops[2]))
	if ops[4] > 33 {
		return formatErr(rec.at, "global variable alignment", ops[4])
	}
	if ops[5] != 0 && ops[5]-1 >= m.sections {
		return formatErr(rec.at, "global variable section ID", ops[5])
	}
	if n > 11 && ops[11] > m.comdats {
		return formatErr(rec.at, "global variable comdat ID", ops[11])
	}
	m.values = append(m.values, value{kind: valGlobalVar, i: len(m.globals)})
	m.globals = append(m.globals, g)
	return nil
}

// parseVST reads a module-level VALUE_SYMTAB_BLOCK, whose ENTER_SUBBLOCK
// advance returned: the names of values (before version 2), or with
// global, the function offsets of a module whose names are in the string
// table, which are checked and not kept.
func (m *module) parseVST(global bool) error {
	c := m.c
	if err := c.enter(blockValueSymtab); err != nil {
		return err
	}
	rec := record{max: -1}
	for {
		e, err := c.advanceSkippingBlocks()
		if err != nil {
			return err
		}
		if e.kind == entryEnd {
			return nil
		}
		if err := c.readRecord(e.id, &rec); err != nil {
			return err
		}
		nameAt := uint64(1)
		switch {
		case global && rec.code == vstFnEntry:
			if rec.n < 1 || rec.op(0) >= uint64(len(m.values)) || m.values[rec.op(0)].kind != valFunction {
				return formatErr(rec.at, "symbol table entry of no function", rec.op(0))
			}
			continue
		case global:
			continue
		case rec.code == vstFnEntry:
			nameAt = 2
		case rec.code == vstBBEntry:
			return formatErr(rec.at, "basic block name outside a function", nil)
		case rec.code != vstEntry:
			continue
		}
		if rec.n < nameAt {
			return formatErr(rec.at, "symbol table entry of too few operands", rec.n)
		}
		id := rec.op(0)
		if id >= uint64(len(m.values)) || m.values[id].kind == valPlaceholder {
			return formatErr(rec.at, "symbol table entry value ID", id)
		}
		name := make([]byte, 0, rec.n-nameAt)
		for _, v := range rec.ops[nameAt:] {
			if byte(v) == 0 {
				return formatErr(rec.at, "value name with a NUL", nil)
			}
			name = append(name, byte(v))
		}
		if v := m.values[id]; v.kind == valGlobalVar {
			m.globals[v.i].name = string(name)
		}
	}
}
