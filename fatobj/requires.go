package fatobj

import (
	"debug/elf"
	"fmt"
	"slices"

	"golang.org/x/arch/arm64/arm64asm"
	"golang.org/x/arch/x86/x86asm"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// The constructor that registers `#pragma omp requires` in LLVM 13 to 18.
const (
	requiresCtor     = ".omp_offloading.requires_reg"
	requiresFunc     = "__tgt_register_requires"
	requiresCtorTab  = ".init_array.0"
	requiresFlagNone = 1 // OMP_REQ_NONE: what clang registers without a pragma
)

// requiresCtor turns the requires constructor of LLVM 13 to 18 into the
// requires entry of the target release: the flags are read from its code,
// its .init_array.0 slot goes (the function stays, unused), and an entry
// joins the OpenMP entries (none for OMP_REQ_NONE, as clang 19 and later
// emit none without a pragma).
func (c *converter) requiresCtor() error {
	if c.from.Entries.Requires != release.RequiresCtor || c.to.Entries.Requires == release.RequiresCtor {
		return nil
	}
	for _, tab := range slices.Clone(c.o.Sections) {
		if tab.Name != requiresCtorTab || len(tab.Relocs) == 0 {
			continue
		}
		var flags []uint64
		for _, r := range tab.Relocs {
			fn := c.function(r)
			if fn == nil || fn.Name != requiresCtor {
				return fmt.Errorf("%w: section %q: a constructor %v that is not %s", ErrConvert, tab.Name, symName(fn), requiresCtor)
			}
			f, err := c.requiresFlags(fn)
			if err != nil {
				return err
			}
			flags = append(flags, f)
		}
		if err := c.o.RemoveSection(tab); err != nil {
			return fmt.Errorf("%w: %v", ErrConvert, err)
		}
		c.conv.note("%s: %s no longer runs", tab.Name, requiresCtor)
		for _, f := range flags {
			if f == requiresFlagNone {
				continue
			}
			if err := c.addRequiresEntry(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// function returns the function a relocation points to: its symbol, or
// the function symbol at the place of a section symbol plus addend.
func (c *converter) function(r elfobj.Reloc) *elfobj.Symbol {
	if r.Symbol == nil {
		return nil
	}
	if r.Symbol.Type != elf.STT_SECTION {
		if r.Symbol.Type == elf.STT_FUNC && r.Addend == 0 {
			return r.Symbol
		}
		return nil
	}
	for _, s := range c.o.Symbols {
		if s.Type == elf.STT_FUNC && s.Section == r.Symbol.Section && int64(s.Value) == r.Addend {
			return s
		}
	}
	return nil
}

func symName(s *elfobj.Symbol) string {
	if s == nil {
		return "(no symbol)"
	}
	return fmt.Sprintf("%q", s.Name)
}

// requiresFlags reads the argument of the call to __tgt_register_requires in
// the constructor fn: the last immediate moved into the first argument
// register before the call.
func (c *converter) requiresFlags(fn *elfobj.Symbol) (uint64, error) {
	fail := func(why string) (uint64, error) {
		return 0, fmt.Errorf("%w: requires constructor %s: %s", ErrConvert, fn.Name, why)
	}
	if fn.Section == nil {
		return fail("not defined here")
	}
	code, err := contents(fn.Section)
	if err != nil {
		return 0, err
	}
	if fn.Value > uint64(len(code)) || fn.Size > uint64(len(code))-fn.Value || fn.Size == 0 {
		return fail("its symbol is outside its section")
	}
	call := ^uint64(0)
	for _, r := range fn.Section.Relocs {
		if r.Symbol != nil && r.Symbol.Name == requiresFunc && r.Offset >= fn.Value && r.Offset < fn.Value+fn.Size {
			call = min(call, r.Offset)
		}
	}
	if call == ^uint64(0) {
		return fail("no call to " + requiresFunc)
	}
	body := code[fn.Value:call]
	var flags uint64
	found := false
	switch c.o.Machine {
	case elf.EM_X86_64:
		for len(body) > 0 {
			in, err := x86asm.Decode(body, 64)
			if err != nil {
				break
			}
			if in.Op == x86asm.MOV && (in.Args[0] == x86asm.EDI || in.Args[0] == x86asm.RDI) {
				if imm, ok := in.Args[1].(x86asm.Imm); ok {
					flags, found = uint64(imm), true
				}
			}
			body = body[in.Len:]
		}
	case elf.EM_AARCH64:
		for len(body) >= 4 {
			in, err := arm64asm.Decode(body)
			body = body[4:]
			if err != nil || in.Op != arm64asm.MOV || (in.Args[0] != arm64asm.W0 && in.Args[0] != arm64asm.X0) {
				continue
			}
			switch imm := in.Args[1].(type) {
			case arm64asm.Imm:
				flags, found = uint64(imm.Imm), true
			case arm64asm.Imm64:
				flags, found = imm.Imm, true
			}
		}
	default:
		return fail(fmt.Sprintf("its code for %v is not read (x86-64 and AArch64 are)", c.o.Machine))
	}
	if !found {
		return fail("no constant argument before the call")
	}
	return flags, nil
}

// addRequiresEntry appends the requires entry of the target release to the
// object's OpenMP entries section, made if there is none.
func (c *converter) addRequiresEntry(flags uint64) error {
	layout := offload.LayoutOf(c.to)
	s := c.openmp
	if s == nil {
		s = &elfobj.Section{Name: c.to.Entries.OpenMP, Type: elf.SHT_PROGBITS, Flags: elf.SHF_WRITE | elf.SHF_ALLOC,
			Addralign: c.to.Entries.Align, Data: []byte{}}
		c.o.AddSection(s, false)
		c.openmp = s
	}
	data, err := contents(s)
	if err != nil {
		return err
	}
	name := ""
	if c.to.Entries.Requires == release.RequiresEntryData {
		name = c.to.Entries.RequiresName
	}
	raw := offload.RawEntry{Flags: uint32(offload.OMPEntryRequires), Data: flags}
	if layout == offload.EntryV1 {
		code, _ := offload.OffloadKindCode(c.to, offload.OffloadOpenMP)
		raw.Version, raw.Kind = offload.EntryVersion, code
	}
	off := uint64(len(data))
	nd, err := layout.AppendEncode(slices.Clone(data), c.bo, raw)
	if err != nil {
		return fmt.Errorf("%w: requires entry: %v", ErrConvert, err)
	}
	sym, add, err := c.stringRef(name)
	if err != nil {
		return err
	}
	setContents(s, nd)
	s.Relocs = append(s.Relocs, elfobj.Reloc{Offset: off + uint64(layout.NameOffset()), Type: c.abs, Symbol: sym, Addend: add})
	c.o.Symbols = append(c.o.Symbols, &elfobj.Symbol{Name: c.to.Entries.SymbolPrefix + name, Type: elf.STT_OBJECT,
		Bind: elf.STB_WEAK, Section: s, Value: off, Size: uint64(layout.Size())})
	c.conv.note("%s: requires entry %q with flags %v", s.Name, name, offload.RequiresFlags(flags))
	return nil
}
