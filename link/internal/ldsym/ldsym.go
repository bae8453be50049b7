// Package ldsym decides which members of static archives a host link uses,
// as GNU ld decides it: inputs are taken in command-line order, each
// object's global symbols defining and referring; an archive, when it is
// reached, gives up every member whose symbol-index entry names a symbol
// that is still undefined (a weak reference pulls nothing), again and again
// until a pass pulls no member; a --whole-archive archive gives up all its
// members. The device code of exactly those members belongs in the program.
package ldsym

import (
	"debug/elf"
	"fmt"

	"github.com/goffload/goffload/elfobj"
)

// Member is an archive member as the resolution sees it.
type Member struct {
	// Defines lists the member's symbols in the archive's index (or, for
	// an archive without one, its global defined symbols).
	Defines []string
	// Load returns the member's ELF file, read when the member is pulled;
	// nil for a member that is not an object.
	Load func() (*elfobj.File, error)
	// Symbols returns, when the member is pulled, the symbols it adds
	// beside its ELF file's (device code's, in a name space of the caller's:
	// see [Symbol]); nil for none.
	Symbols func() ([]Symbol, error)
}

// Symbol is a symbol of an input that is not a host ELF object's, such as a
// device image's: the caller keeps them apart from the host's by naming
// them in a name space of its own (a prefix no host symbol has).
type Symbol struct {
	Name      string
	Undefined bool
	Weak      bool
}

// Input is one input of the link: an object, or an archive.
type Input struct {
	Object       *elfobj.File
	Symbols      []Symbol // an object's symbols beside its ELF file's
	Members      []Member // for an archive
	WholeArchive bool
}

// Resolver holds the link's symbols as inputs are added.
type Resolver struct {
	defined   map[string]bool
	undefined map[string]bool
}

// New returns a resolver with the symbols the link starts with undefined
// (ld's -u, and the entry point of a program: "_start" references "main"
// through the crt files, which the caller gives as objects or as names).
func New(undefined ...string) *Resolver {
	r := &Resolver{defined: map[string]bool{}, undefined: map[string]bool{}}
	for _, s := range undefined {
		r.undefined[s] = true
	}
	return r
}

// Add takes the next input of the link and returns, for an archive, the
// indexes of the members it pulls, in the order they are pulled.
func (r *Resolver) Add(in Input) ([]int, error) {
	if in.Members == nil {
		if in.Object != nil {
			if err := r.object(in.Object); err != nil {
				return nil, err
			}
		}
		r.symbols(in.Symbols)
		return nil, nil
	}
	pulled := map[int]bool{}
	var order []int
	pull := func(i int) error {
		pulled[i] = true
		order = append(order, i)
		if sf := in.Members[i].Symbols; sf != nil {
			syms, err := sf()
			if err != nil {
				return err
			}
			r.symbols(syms)
		}
		if in.Members[i].Load == nil {
			return nil
		}
		f, err := in.Members[i].Load()
		if err != nil {
			return err
		}
		if f == nil {
			return nil
		}
		return r.object(f)
	}
	if in.WholeArchive {
		for i := range in.Members {
			if err := pull(i); err != nil {
				return nil, err
			}
		}
		return order, nil
	}
	for again := true; again; {
		again = false
		for i, m := range in.Members {
			if pulled[i] {
				continue
			}
			for _, s := range m.Defines {
				if r.undefined[s] {
					if err := pull(i); err != nil {
						return nil, fmt.Errorf("member %d: %w", i, err)
					}
					again = true
					break
				}
			}
		}
	}
	return order, nil
}

// object adds an object's global symbols.
func (r *Resolver) object(f *elfobj.File) error {
	syms, err := FileSymbols(f, "")
	if err != nil {
		return err
	}
	r.symbols(syms)
	return nil
}

// FileSymbols returns the global and weak symbols of an ELF file as the
// resolution reads them, each name after prefix (a name space: see
// [Symbol]).
func FileSymbols(f *elfobj.File, prefix string) ([]Symbol, error) {
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	var out []Symbol
	for _, s := range syms {
		bind := s.Bind()
		if s.Index == 0 || s.Name == "" || bind != elf.STB_GLOBAL && bind != elf.STB_WEAK {
			continue
		}
		out = append(out, Symbol{Name: prefix + s.Name, Undefined: s.Section == elf.SHN_UNDEF, Weak: bind == elf.STB_WEAK})
	}
	return out, nil
}

// symbols adds symbols given by name.
func (r *Resolver) symbols(syms []Symbol) {
	for _, s := range syms {
		switch {
		case !s.Undefined:
			r.defined[s.Name] = true
			delete(r.undefined, s.Name)
		case !s.Weak && !r.defined[s.Name]:
			r.undefined[s.Name] = true
		}
	}
}

// Undefined reports whether name is referred to and not yet defined.
func (r *Resolver) Undefined(name string) bool { return r.undefined[name] }
