package bitcode

import (
	"fmt"
	"io"

	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/ferr"
)

// OffloadingSection is the section string of the llvm.embedded.objects
// nodes whose objects LLVM's offloading tools read: OffloadBinaries.
const OffloadingSection = ".llvm.offloading"

// Embedded is an object a bitcode module embeds: the initializer of a
// global variable that its named metadata llvm.embedded.objects lists with
// a section name, as `clang -fembed-offload-object` makes it for the
// device code of `-flto` (the section .llvm.offloading, where the global
// goes when the module is compiled).
type Embedded struct {
	// Global is the name of the global variable ("llvm.embedded.object").
	Global string
	// Section is the section string of its node (".llvm.offloading").
	Section string
	// Data holds the bytes of the global's initializer as LLVM reads them
	// (ConstantDataSequential::getAsString: the elements one after the
	// other, little-endian). They are decoded from the bitstream, so they
	// are held in memory; an object listed twice shares them.
	Data []byte
}

// What EmbeddedObjects returns, its objects' bytes counted each time
// llvm.embedded.objects lists one and with objectCost more for each, is
// bounded by the module's one rule (internal/budget): at most 16 times the
// input's size plus 1 MiB. LLVM's writer takes 8 bits of input per byte of
// an array of i8, and 6 bits or more per element of another type, 8 bytes
// at most.
const objectCost = 64 // an Embedded

// EmbeddedObjects returns the objects embedded in the module of the
// bitcode file held in the size bytes of r, as LLVM's extractFromBitcode
// (llvm/lib/Object/OffloadBinary.cpp) finds them: for each operand of the
// named metadata llvm.embedded.objects, in order, a node of two operands
// or more whose operand 1 is a string (the section) and operand 0 a global
// variable whose initializer is a ConstantDataSequential; other nodes are
// skipped, as LLVM skips them. clang writes the initializer as an array of
// i8; one of another element type (i16 to i64, half, bfloat, float,
// double) gives its elements in little-endian order, as LLVM on such a
// host reads them. A module without llvm.embedded.objects embeds nothing:
// nil, nil. The format and where goffload departs from LLVM are in the
// repository's docs/offload-binary.md#bitcode.
//
// The module is read as LLVM's lazy reader reads it (a bitcode wrapper
// honoured, function bodies skipped). LLVM reads the device code of a file
// of one module only: a file of several (llvm-cat -b) gives an error
// matching goffload.ErrUnsupported, as does an operand that is a
// debug-information node.
//
// Bad input gives a *goffload.FormatError matching goffload.ErrInvalid,
// and goffload.ErrTruncated for a file cut short: an operand that is no
// node, a global of section .llvm.offloading without an initializer or one
// of another type is an error, never skipped. The objects of other
// sections, which LLVM never reads, are returned when they read without
// error. The objects' bytes are decoded from the bitstream and held in
// memory (an object listed twice shares them); their cost is bounded by
// the input's size: counted each time an object is listed, and with 64
// bytes more for each, they are at most 16 times the size plus 1 MiB, and
// llvm.embedded.objects has at most one operand per 4 bytes
// (more gives an error matching goffload.ErrLimit).
func EmbeddedObjects(r io.ReaderAt, size int64) ([]Embedded, error) {
	if err := ferr.CheckInput("bitcode", r, size); err != nil {
		return nil, err
	}
	m, err := readModule(r, size)
	if err != nil {
		return nil, err
	}
	var out []Embedded
	for _, ref := range m.embedded {
		e, ok, err := m.object(ref)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, e)
		}
	}
	return out, nil
}

// object returns the object of operand ref of llvm.embedded.objects, and
// whether there is one.
func (m *module) object(ref initRef) (Embedded, bool, error) {
	if ref.id >= m.mdUnknown {
		return Embedded{}, false, unsupportedErr(ref.at, "operand of llvm.embedded.objects numbered after a metadata record of unknown code", ref.id)
	}
	node := &m.md[ref.id]
	switch node.kind {
	case mdTuple:
	case mdOtherNode:
		return Embedded{}, false, unsupportedErr(node.at, "operand of llvm.embedded.objects: a debug-information node, not read (metadata ID)", ref.id)
	default:
		return Embedded{}, false, formatErr(node.at, "operand of llvm.embedded.objects: metadata that is no node (metadata ID)", ref.id)
	}
	if node.n < 2 {
		return Embedded{}, false, nil
	}
	sec, ok, err := m.operand(node, node.b)
	if err != nil || !ok || sec.kind != mdString {
		return Embedded{}, false, err
	}
	section, err := m.mdStringAt(sec)
	if err != nil {
		return Embedded{}, false, err
	}
	// LLVM reads no further than the section of another node: what goes
	// wrong past it is no error, only no object.
	e, ok, err := m.nodeObject(node, section)
	if err != nil && section != OffloadingSection {
		return Embedded{}, false, nil
	}
	return e, ok, err
}

// operand returns the metadata of a node operand (its ID + 1, 0 for null)
// and whether it is not null. LLVM makes a null operand of an ID past its
// bound on references.
func (m *module) operand(node *mdEntry, raw uint64) (*mdEntry, bool, error) {
	if raw == 0 || raw-1 >= m.bytes {
		return nil, false, nil
	}
	if raw-1 >= m.mdUnknown {
		return nil, false, unsupportedErr(node.at, "metadata node operand numbered after a metadata record of unknown code", raw-1)
	}
	return &m.md[raw-1], true, nil
}

// nodeObject returns the object of a node whose section is section.
func (m *module) nodeObject(node *mdEntry, section string) (Embedded, bool, error) {
	op, ok, err := m.operand(node, node.a)
	if err != nil || !ok || op.kind != mdValue {
		return Embedded{}, false, err
	}
	v := m.values[op.b]
	if v.kind != valGlobalVar {
		return Embedded{}, false, nil
	}
	g := &m.globals[v.i]
	if g.init == 0 {
		return Embedded{}, false, formatErr(g.at, fmt.Sprintf("global @%s of llvm.embedded.objects without an initializer", g.name), nil)
	}
	init := m.values[g.init-1]
	if init.kind != valConstant {
		if init.kind == valPlaceholder {
			return Embedded{}, false, formatErr(g.at, fmt.Sprintf("initializer of @%s: value ID no record defines", g.name), g.init-1)
		}
		return Embedded{}, false, nil // a global value: no data
	}
	left := budget.Linear(uint64(m.size)) - m.spent
	data, ok, err := m.initializer(init.i, g, left)
	if err != nil || !ok {
		return Embedded{}, false, err
	}
	if uint64(len(data)) > left || left-uint64(len(data)) < objectCost {
		return Embedded{}, false, limitErr(g.at, fmt.Sprintf("embedded objects of more than %d times the input's %d bytes plus %d", budget.Factor, m.size, budget.Slack))
	}
	m.spent += uint64(len(data)) + objectCost
	return Embedded{Global: g.name, Section: section, Data: data}, true, nil
}
