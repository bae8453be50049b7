package coffobj

import (
	"fmt"

	"github.com/goffload/goffload"
)

// Object loads a relocatable object as an Object for editing, keeping every
// section, symbol (aux records included) and relocation in its order. The
// contents stay in the file and are streamed from it when the Object is
// written; the checksums of section definitions are computed anew. A PE
// image gives an error matching [goffload.ErrUnsupported].
func (f *File) Object() (*Object, error) {
	if f.Image {
		return nil, formatErr(0, goffload.ErrUnsupported, "a PE image is not a relocatable object")
	}
	o := &Object{Machine: f.Machine, TimeDateStamp: f.TimeDateStamp, Characteristics: f.Characteristics}
	secs := make([]*Section, len(f.Sections))
	for i, fs := range f.Sections {
		s := &Section{Name: fs.Name, Characteristics: fs.Characteristics}
		if a := fs.Align(); a != 0 {
			s.Characteristics &^= IMAGE_SCN_ALIGN_MASK
			s.Align = a
		}
		s.Characteristics &^= IMAGE_SCN_LNK_COMDAT | IMAGE_SCN_LNK_NRELOC_OVFL // made by the writer
		if fs.Offset != 0 {
			s.Reader, s.Size = fs.Open(), fs.FileSize()
			s.fileOffset = int64(fs.Offset) + 1
		} else {
			s.Size = int64(fs.SectionHeader.Size)
		}
		secs[i] = s
	}
	o.Sections = secs
	fsyms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	byIndex := make(map[int]*Symbol, len(fsyms))
	section := func(n int16, at int64, what string) (*Section, error) {
		if n <= 0 {
			return nil, nil
		}
		if int(n) > len(secs) {
			return nil, formatErr(at, nil, "%s: section number %d of %d", what, n, len(secs))
		}
		return secs[n-1], nil
	}
	for i := range fsyms {
		fs := &fsyms[i]
		at := int64(f.PointerToSymbolTable) + int64(fs.Index)*symbolSize
		s := &Symbol{Name: fs.Name, Number: fs.SectionNumber, Value: fs.Value, Type: fs.Type, StorageClass: fs.StorageClass, Aux: fs.Aux}
		if s.Section, err = section(fs.SectionNumber, at+12, "symbol "+fs.Name); err != nil {
			return nil, err
		}
		if s.Section != nil {
			s.Number = 0
		}
		if def, ok := fs.SectionDefinition(); ok && s.Section != nil && s.StorageClass == IMAGE_SYM_CLASS_STATIC && len(fs.Aux) == symbolSize && o.SectionSymbol(s.Section) == nil {
			s.SectionDefinition, s.Aux = true, nil
			s.Section.Selection = def.Selection
			if def.Selection == 5 { // associative
				if s.Section.Associative, err = section(int16(def.Number), at+symbolSize+12, "associative section "+fs.Name); err != nil {
					return nil, err
				}
				if s.Section.Associative == nil {
					return nil, formatErr(at+symbolSize+12, nil, "associative section %q goes with section number %d", fs.Name, def.Number)
				}
			}
		}
		switch fs.StorageClass {
		case IMAGE_SYM_CLASS_FILE:
			if len(fs.Aux) > 0 {
				s.File, s.Aux = fs.FileName(), nil
			}
		}
		byIndex[fs.Index] = s
		o.Symbols = append(o.Symbols, s)
	}
	// Weak externals name their default by index, which may come later.
	for i := range fsyms {
		tag, search, ok := fsyms[i].WeakExternal()
		if !ok || len(fsyms[i].Aux) != symbolSize {
			continue
		}
		def := byIndex[int(tag)]
		if def == nil {
			return nil, formatErr(int64(f.PointerToSymbolTable)+int64(fsyms[i].Index+1)*symbolSize, nil, "weak external %q: default symbol index %d is not a symbol", fsyms[i].Name, tag)
		}
		s := o.Symbols[i]
		s.Weak, s.Aux = &WeakExternal{Default: def, Search: search}, nil
	}
	for i, fs := range f.Sections {
		rels, err := f.Relocations(fs)
		if err != nil {
			return nil, err
		}
		if len(rels) > 0 {
			secs[i].Relocs = make([]Reloc, len(rels))
		}
		for j, r := range rels {
			secs[i].Relocs[j] = Reloc{Offset: r.Offset, Type: RelocTypeOf(f.Machine, r.Type), Symbol: byIndex[r.Symbol.Index]}
		}
	}
	return o, nil
}

// String describes the object for messages: machine, sections, symbols.
func (o *Object) String() string {
	return fmt.Sprintf("COFF object for machine %#x: %d sections, %d symbols", o.Machine, len(o.Sections), len(o.Symbols))
}
