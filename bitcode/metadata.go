package bitcode

import (
	"bytes"
	"fmt"

	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/ferr"
)

// METADATA_BLOCK record codes.
const (
	mdStringOld           = 1
	mdValueCode           = 2
	mdNodeCode            = 3
	mdName                = 4
	mdDistinctNode        = 5
	mdKind                = 6
	mdOldNode             = 8
	mdOldFnNode           = 9
	mdNamedNode           = 10
	mdAttachment          = 11
	mdStrings             = 35
	mdGlobalDeclAttach    = 36
	mdIndexOffset         = 38
	mdIndex               = 39
	mdArgList             = 46
	mdLastKnown           = 49 // METADATA_FIXED_POINT_TYPE
	mdReserved42          = 42
	mdReserved43          = 43
	embeddedObjectsName   = "llvm.embedded.objects"
	maxNamedMetadataChars = 64
)

// mdDefines reports whether a METADATA_BLOCK record of code defines the
// next metadata ID, as MetadataLoader's parseOneMetadata assigns them:
// every record it knows but NAME (and the NAMED_NODE it reads with it),
// KIND, ATTACHMENT, GLOBAL_DECL_ATTACHMENT, INDEX_OFFSET and INDEX, and
// STRINGS, which defines one per string. known is false for a code LLVM 22
// does not know, which it ignores.
func mdDefines(code uint64) (defines, known bool) {
	switch code {
	case mdName, mdKind, mdNamedNode, mdAttachment, mdStrings, mdGlobalDeclAttach, mdIndexOffset, mdIndex:
		return false, true
	case 0, mdReserved42, mdReserved43:
		return false, false
	}
	return code <= mdLastKnown, code <= mdLastKnown
}

type mdKindOf uint8

const (
	mdUndefined mdKindOf = iota
	mdString
	mdValue
	mdTuple     // NODE, DISTINCT_NODE: an MDTuple of known operands
	mdOtherNode // another MDNode (debug info, the old nodes), its operands not read
	mdNotNode   // metadata that is no MDNode (DIArgList)
)

// mdEntry is one metadata ID: a string (its blob, offset and length, or
// for METADATA_STRING_OLD where its record is), a value (its type and
// value ID) or a node (its operand count and first two operands, each a
// metadata ID + 1 or 0 for null).
type mdEntry struct {
	kind mdKindOf
	n    uint64
	a, b uint64
	ab   *[]abbrevOp
	at   int64
}

// parseMetadata reads a module-level METADATA_BLOCK, whose ENTER_SUBBLOCK
// advance returned, as MetadataLoader reads it (not lazily: getLazyIRModule
// does not import): it numbers the metadata, keeps strings, values and the
// first two operands of nodes, and the operands of the named metadata
// llvm.embedded.objects. References are checked at the end of the block,
// where LLVM resolves them.
func (m *module) parseMetadata() error {
	c := m.c
	if err := c.enter(blockMetadata); err != nil {
		return err
	}
	first, firstNamed := len(m.md), len(m.embedded)
	rec := &m.rec
	for {
		e, err := c.advanceSkippingBlocks()
		if err != nil {
			return err
		}
		if e.kind == entryEnd {
			return m.metadataBlockEnd(first, firstNamed)
		}
		rec.max, rec.keepBlob = 2, true
		if err := c.readRecord(e.id, rec); err != nil {
			return err
		}
		rec.keepBlob = false
		if err := m.metadataRecord(rec); err != nil {
			return err
		}
	}
}

func (m *module) metadataRecord(rec *record) error {
	entry := mdEntry{at: rec.at}
	switch rec.code {
	case mdStrings:
		return m.strings(rec)
	case mdName:
		return m.namedMetadata(rec)
	case mdKind:
		if rec.n < 2 {
			return formatErr(rec.at, "metadata kind record of too few operands", rec.n)
		}
		return nil
	case mdGlobalDeclAttach:
		if rec.n%2 == 0 || rec.op(0) >= uint64(len(m.values)) {
			return formatErr(rec.at, "global attachment record", rec.op(0))
		}
		return nil
	case mdValueCode:
		if rec.n != 2 {
			return formatErr(rec.at, "metadata value record of operands", rec.n)
		}
		// Type and value IDs are unsigned in LLVM: 32 bits.
		typ, id := uint64(uint32(rec.op(0))), uint64(uint32(rec.op(1)))
		if err := m.metadataValue(typ, id, rec.at); err != nil {
			return err
		}
		entry.kind, entry.a, entry.b = mdValue, typ, id
	case mdNodeCode, mdDistinctNode:
		// The operands are unsigned in LLVM: 32 bits.
		entry.kind, entry.n, entry.a, entry.b = mdTuple, rec.n, uint64(uint32(rec.op(0))), uint64(uint32(rec.op(1)))
	case mdStringOld:
		entry.kind, entry.n, entry.a, entry.ab = mdString, ^uint64(0), rec.pos, rec.ab
	case mdOldNode, mdOldFnNode:
		if rec.n%2 == 1 {
			return formatErr(rec.at, "old metadata node of an odd number of operands", rec.n)
		}
		entry.kind = mdOtherNode
	case mdArgList:
		entry.kind = mdNotNode
	default:
		defines, known := mdDefines(rec.code)
		if !known {
			m.mdUnknown = min(m.mdUnknown, uint64(len(m.md)))
		}
		if !defines {
			return nil
		}
		entry.kind = mdOtherNode // debug information
	}
	m.md = append(m.md, entry)
	return nil
}

// metadataValue checks a METADATA_VALUE's type and value as LLVM's
// getValueFwdRef: a value not defined yet is a forward reference, which
// grows the value list; a global's type must be a pointer of its address
// space.
func (m *module) metadataValue(typ, id uint64, at int64) error {
	t, ok := m.typ(typ)
	if !ok || t.kind == tyVoid || t.kind == tyMetadata {
		return formatErr(at, "metadata value type", typ)
	}
	if id >= m.bytes {
		return formatErr(at, "metadata value ID", id)
	}
	for uint64(len(m.values)) <= id {
		m.values = append(m.values, value{kind: valPlaceholder})
	}
	if v := m.values[id]; v.kind == valGlobalVar && (t.kind != tyPointer || t.n != m.globals[v.i].addrSpace) {
		return formatErr(at, fmt.Sprintf("metadata value of @%s of type", m.globals[v.i].name), typ)
	}
	return nil
}

// strings reads a METADATA_STRINGS record: [count, offset] and a blob of
// count VBR6 lengths, then the characters from offset on; each string is
// the next metadata ID.
func (m *module) strings(rec *record) error {
	// unsigned in LLVM: 32 bits.
	count, off := uint64(uint32(rec.op(0))), uint64(uint32(rec.op(1)))
	blob := rec.blob
	switch {
	case rec.n != 2:
		return formatErr(rec.at, "metadata strings record of operands", rec.n)
	case count == 0:
		return formatErr(rec.at, "metadata strings record of no strings", nil)
	case off > uint64(len(blob)):
		return formatErr(rec.at, "metadata strings offset past the blob", off)
	}
	lengths := &bitReader{r: bytes.NewReader(blob[:off]), bits: off * 8}
	idx := uint64(len(m.mdBlobs))
	m.mdBlobs = append(m.mdBlobs, blob)
	at := off
	for range count {
		if lengths.left() == 0 {
			return formatErr(rec.blobAt, fmt.Sprintf("metadata strings: %d lengths for", len(m.md)), count)
		}
		n, err := lengths.vbr(6)
		if err != nil {
			return ferr.Rebase(err, rec.blobAt)
		}
		if n > uint64(len(blob))-at {
			return formatErr(rec.blobAt+int64(at), "metadata string length past the blob", n)
		}
		m.md = append(m.md, mdEntry{kind: mdString, n: idx, a: at, b: n, at: rec.at})
		at += n
	}
	return nil
}

// namedMetadata reads a METADATA_NAME record and the NAMED_NODE record that
// must follow it, keeping the operands of llvm.embedded.objects (LLVM
// appends those of a name given twice).
func (m *module) namedMetadata(rec *record) error {
	c := m.c
	name := make([]byte, 0, min(rec.n, maxNamedMetadataChars))
	// LLVM reads the name as a record of operands (a blob apart), and the
	// NAMED_NODE as one without a blob.
	rec.max, rec.keepBlob = maxNamedMetadataChars, true
	if err := c.rereadRecord(rec.pos, rec.ab, rec); err != nil {
		return err
	}
	rec.keepBlob = false
	for _, v := range rec.ops {
		name = append(name, byte(v))
	}
	ours := rec.n == uint64(len(embeddedObjectsName)) && string(name) == embeddedObjectsName
	// MetadataLoader reads the next abbreviation ID and a record with it.
	at := c.br.byteOff()
	id, err := c.br.fixed(c.width)
	if err != nil {
		return err
	}
	if id < abbrevUnabbreviated {
		return formatErr(at, "METADATA_NAME not followed by a record", nil)
	}
	rec.max = 0
	if ours {
		rec.max = -1
	}
	if err := c.readRecord(id, rec); err != nil {
		return err
	}
	if rec.code != mdNamedNode {
		return formatErr(rec.at, "METADATA_NAME not followed by METADATA_NAMED_NODE", rec.code)
	}
	if !ours {
		return nil
	}
	for _, op := range rec.ops {
		op = uint64(uint32(op)) // unsigned in LLVM
		if op >= m.bytes {
			return formatErr(rec.at, "operand of llvm.embedded.objects: metadata ID", op)
		}
		// Each operand is an object at most, of objectCost bytes at least.
		if uint64(len(m.embedded)) >= budget.Factor*uint64(m.size)/objectCost {
			return limitErr(rec.at, fmt.Sprintf("more than %d operands of llvm.embedded.objects in %d bytes", len(m.embedded), m.size))
		}
		m.embedded = append(m.embedded, initRef{op, rec.at})
	}
	return nil
}

// metadataBlockEnd checks, at the end of a METADATA_BLOCK, the references
// made in it: LLVM resolves forward references there, and one to an ID
// still undefined is no metadata it can read.
func (m *module) metadataBlockEnd(first, firstNamed int) error {
	n := uint64(len(m.md))
	for _, r := range m.embedded[firstNamed:] {
		if r.id >= n {
			return formatErr(r.at, "operand of llvm.embedded.objects: undefined metadata ID", r.id)
		}
	}
	for i := first; i < len(m.md); i++ {
		e := &m.md[i]
		if e.kind != mdTuple {
			continue
		}
		for k, raw := range [2]uint64{e.a, e.b} {
			if uint64(k) < e.n && raw != 0 && raw-1 < m.bytes && raw-1 >= n {
				return formatErr(e.at, fmt.Sprintf("metadata node operand %d: undefined metadata ID", k), raw-1)
			}
		}
	}
	return nil
}

// mdStringAt returns the string of metadata ID id, which is a string.
func (m *module) mdStringAt(e *mdEntry) (string, error) {
	if e.n != ^uint64(0) {
		b := m.mdBlobs[e.n]
		return string(b[e.a : e.a+e.b]), nil
	}
	c := m.c
	saved := c.br.end
	defer func() { c.br.end = saved }()
	c.br.end = 0
	rec := record{max: -1, keepBlob: true}
	if err := c.rereadRecord(e.a, e.ab, &rec); err != nil {
		return "", err
	}
	s := make([]byte, len(rec.ops))
	for i, v := range rec.ops {
		s[i] = byte(v)
	}
	return string(s), nil
}
