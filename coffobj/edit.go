package coffobj

import (
	"errors"
	"fmt"
	"slices"
)

// ErrInUse is the error of removing a section that the rest of the object
// still refers to.
var ErrInUse = errors.New("in use")

// RemoveSection removes s from o with the symbols it defines: its
// definition symbol, and static symbols in it (labels, a COMDAT leader) that
// nothing refers to. A section that an external symbol is defined in, that
// a relocation of another section refers to (through a symbol defined in
// it), or that another COMDAT section is associated with gives an error
// matching [ErrInUse], and o is left as it was.
func (o *Object) RemoveSection(s *Section) error {
	if !slices.Contains(o.Sections, s) {
		return fmt.Errorf("section %q is not in the object", s.Name)
	}
	gone := map[*Symbol]bool{}
	for _, sym := range o.Symbols {
		if sym.Section != s {
			continue
		}
		if sym.StorageClass != IMAGE_SYM_CLASS_STATIC && sym.StorageClass != IMAGE_SYM_CLASS_LABEL {
			return fmt.Errorf("section %q: symbol %q (%v) is defined in it: %w", s.Name, sym.Name, sym.StorageClass, ErrInUse)
		}
		gone[sym] = true
	}
	for _, x := range o.Sections {
		if x == s {
			continue
		}
		if x.Associative == s {
			return fmt.Errorf("section %q: COMDAT section %q is associated with it: %w", s.Name, x.Name, ErrInUse)
		}
		for _, r := range x.Relocs {
			if gone[r.Symbol] {
				return fmt.Errorf("section %q: a relocation of %q refers to symbol %q in it: %w", s.Name, x.Name, r.Symbol.Name, ErrInUse)
			}
		}
	}
	for _, sym := range o.Symbols {
		if sym.Weak != nil && gone[sym.Weak.Default] {
			return fmt.Errorf("section %q: weak external %q defaults to symbol %q in it: %w", s.Name, sym.Name, sym.Weak.Default.Name, ErrInUse)
		}
	}
	o.Sections = slices.DeleteFunc(o.Sections, func(x *Section) bool { return x == s })
	o.Symbols = slices.DeleteFunc(o.Symbols, func(x *Symbol) bool { return gone[x] })
	return nil
}
