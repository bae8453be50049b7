package stubs

import (
	"encoding/binary"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
)

// gpuAsm lays out the three functions of a CUDA or HIP wrapper. Unlike the
// OpenMP functions, they branch: an x86 branch starts in its short form and
// grows to the long one when its target is out of reach, as LLVM's
// assembler relaxes it, and loop headers are aligned, so where anything is
// is known only once the whole section is laid out. The machine's writer
// therefore lists items first (instructions, labels, alignment, call-frame
// rules) and assemble places them.
type gpuAsm struct {
	align uint64             // of each function
	pad   func(n int) []byte // padding
	items []gpuItem
	// The jump table: the labels of its entries, in order, and the type of
	// their relocations.
	table      []string
	tableReloc elfobj.RelocType
}

// gpuItem is one element of the section. Exactly one of its groups is set.
type gpuItem struct {
	// An instruction with its relocations (Offset relative to its start).
	text   []byte
	relocs []Reloc

	// An instruction that refers to label to: forms are its encodings,
	// shortest first.
	to    string
	forms []gpuForm

	label   string // a position that instructions refer to
	mapping string // a mapping symbol written to .symtab
	align   uint64 // padding to this alignment (a loop header)
	rules   ehframe.CFI
	begin   string // a function starts here, after padding to gpuAsm.align; also a label
	end     bool   // the current function ends here
}

// gpuForm is one encoding of a reference to a label.
type gpuForm struct {
	size int
	// encode returns the instruction at pc referring to to, and whether
	// the distance fits this form.
	encode func(pc, to uint64) ([]byte, bool)
}

func (a *gpuAsm) inst(text []byte, relocs ...Reloc) {
	a.items = append(a.items, gpuItem{text: text, relocs: relocs})
}

func (a *gpuAsm) ref(to string, forms ...gpuForm) {
	a.items = append(a.items, gpuItem{to: to, forms: forms})
}

func (a *gpuAsm) label(name string) { a.items = append(a.items, gpuItem{label: name}) }

func (a *gpuAsm) mappingSymbol(name string) { a.items = append(a.items, gpuItem{mapping: name}) }

func (a *gpuAsm) alignTo(n uint64) { a.items = append(a.items, gpuItem{align: n}) }

func (a *gpuAsm) rule(ops ...ehframe.CFIOp) { a.items = append(a.items, gpuItem{rules: ops}) }

func (a *gpuAsm) begin(name string) { a.items = append(a.items, gpuItem{begin: name}) }

func (a *gpuAsm) end() { a.items = append(a.items, gpuItem{end: true}) }

// jumpTable records the labels of a jump table in .rodata, which the code
// addresses as JumpTable, and the relocation type of its entries.
func (a *gpuAsm) jumpTable(typ elfobj.RelocType, labels ...string) {
	a.table, a.tableReloc = labels, typ
}

// layout returns where each item starts and the labels' addresses, with
// item i of a reference in its form[form[i]].
func (a *gpuAsm) layout(form []int) (pos []uint64, labels map[string]uint64) {
	pos = make([]uint64, len(a.items)+1)
	labels = map[string]uint64{}
	pc := uint64(0)
	for i, it := range a.items {
		switch {
		case it.begin != "":
			pc = alignUp(pc, a.align)
		case it.align != 0:
			pc = alignUp(pc, it.align)
		}
		pos[i] = pc
		switch {
		case it.label != "":
			labels[it.label] = pc
		case it.begin != "":
			labels[it.begin] = pc
		case it.forms != nil:
			pc += uint64(it.forms[form[i]].size)
		default:
			pc += uint64(len(it.text))
		}
	}
	pos[len(a.items)] = pc
	return pos, labels
}

// assemble relaxes the references until every one reaches its label, then
// writes the code.
func (a *gpuAsm) assemble() *GPUCode {
	form := make([]int, len(a.items))
	pos, labels := a.layout(form)
	for grown := true; grown; {
		grown = false
		for i, it := range a.items {
			if it.forms == nil {
				continue
			}
			if _, ok := it.forms[form[i]].encode(pos[i], labels[it.to]); !ok {
				if form[i]+1 == len(it.forms) {
					panic("stubs: label " + it.to + " out of reach") // a bug in a function's listing
				}
				form[i]++
				grown = true
			}
		}
		if grown {
			pos, labels = a.layout(form)
		}
	}
	return a.write(form, pos, labels)
}

func (a *gpuAsm) write(form []int, pos []uint64, labels map[string]uint64) *GPUCode {
	c := &GPUCode{Align: a.align}
	var text []byte
	var start, cfiAt uint64
	var cfi ehframe.CFI
	for i, it := range a.items {
		if pad := int(pos[i]) - len(text); pad > 0 {
			text = append(text, a.pad(pad)...)
		}
		switch {
		case it.begin != "":
			start, cfiAt, cfi = pos[i], pos[i], nil
			c.Funcs = append(c.Funcs, Func{Name: it.begin, Offset: start})
		case it.end:
			f := &c.Funcs[len(c.Funcs)-1]
			f.Size, f.CFI = pos[i]-start, cfi
		case it.rules != nil:
			if d := pos[i] - cfiAt; d > 0 {
				cfi = append(cfi, ehframe.AdvanceLoc(d))
			}
			cfi, cfiAt = append(cfi, it.rules...), pos[i]
		case it.mapping != "":
			c.Labels = append(c.Labels, Label{Name: it.mapping, Offset: pos[i], Func: len(c.Funcs) - 1})
		case it.forms != nil:
			b, _ := it.forms[form[i]].encode(pos[i], labels[it.to])
			text = append(text, b...)
		default:
			for _, r := range it.relocs {
				r.Offset += pos[i]
				c.Relocs = append(c.Relocs, r)
			}
			text = append(text, it.text...)
		}
	}
	c.Text = text
	if a.table != nil {
		t := &GPUJumpTable{Align: 4, Data: make([]byte, 4*len(a.table))}
		for i, l := range a.table {
			off := uint64(4 * i)
			t.Relocs = append(t.Relocs, Reloc{Offset: off, Type: a.tableReloc, Target: TextStartup, Addend: int64(labels[l] + off)})
		}
		c.JumpTable = t
	}
	return c
}

// le32 appends w little-endian.
func le32(b []byte, w uint32) []byte { return binary.LittleEndian.AppendUint32(b, w) }
