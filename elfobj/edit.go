package elfobj

import (
	"debug/elf"
	"errors"
	"fmt"
	"slices"
)

// ErrInUse: a section cannot be removed because something that stays refers
// to it.
var ErrInUse = errors.New("still in use")

// RelocationSection returns the SHT_RELA or SHT_REL section of o that applies
// to s, or nil.
func (o *Object) RelocationSection(s *Section) *Section {
	for _, r := range o.Sections {
		if (r.Type == elf.SHT_RELA || r.Type == elf.SHT_REL) && r.Target == s {
			return r
		}
	}
	return nil
}

// AddSection appends s to o's sections, with a section symbol when section
// is true, and returns that symbol (or nil).
func (o *Object) AddSection(s *Section, section bool) *Symbol {
	o.Sections = append(o.Sections, s)
	if !section {
		return nil
	}
	sym := &Symbol{Type: elf.STT_SECTION, Bind: elf.STB_LOCAL, Section: s}
	o.Symbols = append(o.Symbols, sym)
	return sym
}

// RenameSection renames s to name, and its relocation section too when that
// is named after it (".rela" or ".rel" followed by the old name), as
// llvm-objcopy --rename-section does.
func (o *Object) RenameSection(s *Section, name string) {
	if r := o.RelocationSection(s); r != nil {
		for _, prefix := range []string{".rela", ".rel"} {
			if r.Name == prefix+s.Name {
				r.Name = prefix + name
				break
			}
		}
	}
	s.Name = name
}

// RenameSymbols renames every symbol named old to name and returns how many
// there were.
func (o *Object) RenameSymbols(old, name string) int {
	n := 0
	for _, s := range o.Symbols {
		if s.Name == old {
			s.Name = name
			n++
		}
	}
	return n
}

// RemoveSection removes s from o with what exists only for it: its
// relocation section, its section symbols, its membership of groups (a group
// left with no member goes too, with its signature symbol when that is a
// section symbol of the group), and its symbols in address-significance
// tables. It fails with ErrInUse, changing nothing, when another symbol is
// defined in s, a relocation elsewhere refers to a symbol of s, or a section
// links to s.
func (o *Object) RemoveSection(s *Section) error {
	if !slices.Contains(o.Sections, s) {
		return fmt.Errorf("section %q is not in the object", s.Name)
	}
	gone := map[*Section]bool{s: true}
	if r := o.RelocationSection(s); r != nil {
		gone[r] = true
	}
	var emptied []*Section
	for _, g := range o.Sections {
		if g.Group != nil && !gone[g] && slices.Contains(g.Group.Members, s) &&
			!slices.ContainsFunc(g.Group.Members, func(m *Section) bool { return !gone[m] }) {
			emptied = append(emptied, g)
		}
	}
	for _, g := range emptied {
		gone[g] = true
	}
	goneSym := map[*Symbol]bool{}
	for _, sym := range o.Symbols {
		if sym.Section != nil && gone[sym.Section] {
			if sym.Type != elf.STT_SECTION {
				return fmt.Errorf("section %q: symbol %q is defined in it: %w", s.Name, sym.Name, ErrInUse)
			}
			goneSym[sym] = true
		}
	}
	if err := o.checkUnused(gone, goneSym, s); err != nil {
		return err
	}
	o.Sections = slices.DeleteFunc(o.Sections, func(x *Section) bool { return gone[x] })
	o.Symbols = slices.DeleteFunc(o.Symbols, func(x *Symbol) bool { return goneSym[x] })
	for _, x := range o.Sections {
		if x.Group != nil {
			x.Group.Members = slices.DeleteFunc(slices.Clone(x.Group.Members), func(m *Section) bool { return gone[m] })
		}
		if x.Addrsig != nil {
			x.Addrsig = slices.DeleteFunc(slices.Clone(x.Addrsig), func(a *Symbol) bool { return goneSym[a] })
		}
	}
	return nil
}

// checkUnused reports a reference that stays to a section or symbol that goes.
func (o *Object) checkUnused(gone map[*Section]bool, goneSym map[*Symbol]bool, s *Section) error {
	for _, x := range o.Sections {
		if gone[x] {
			continue
		}
		if x.Link != nil && gone[x.Link] {
			return fmt.Errorf("section %q: section %q links to it: %w", s.Name, x.Name, ErrInUse)
		}
		if x.Group != nil && goneSym[x.Group.Signature] {
			return fmt.Errorf("section %q: its symbol signs group %q: %w", s.Name, x.Name, ErrInUse)
		}
		for _, r := range x.Relocs {
			if goneSym[r.Symbol] {
				return fmt.Errorf("section %q: a relocation of %q at %#x refers to it: %w", s.Name, x.Name, r.Offset, ErrInUse)
			}
		}
	}
	if o.SectionNames != nil && gone[o.SectionNames] {
		return fmt.Errorf("section %q holds the section names: %w", s.Name, ErrInUse)
	}
	return nil
}
