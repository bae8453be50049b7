package link

import (
	"bytes"
	"debug/elf"
	"fmt"

	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/offloadbinary"
)

// printWrapped writes to Stderr what the registration object at path holds
// (Options.PrintWrappedModule): its sections with their sizes, its defined
// global symbols, and the device images it carries as fatobj reads them,
// each line a comment as LLVM IR has them.
func (l *Link) printWrapped(path string) error {
	f, err := fatobj.Open(path, &offloadbinary.ReadOptions{Release: l.Release})
	if err != nil {
		return fmt.Errorf("--print-wrapped-module: %w", err)
	}
	defer f.Close()
	var b bytes.Buffer
	fmt.Fprintf(&b, "; the registration object %s, as %v's wrapper compiles its module (goffload writes the object, not LLVM IR)\n", path, l.Release)
	for _, o := range f.Objects {
		if o.ELF != nil {
			for _, s := range o.ELF.Sections[1:] {
				if s.Type == elf.SHT_SYMTAB || s.Type == elf.SHT_STRTAB || s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL {
					continue
				}
				fmt.Fprintf(&b, "; section %s %d bytes\n", s.Name, s.Size)
			}
			syms, err := o.ELF.Symbols()
			if err != nil {
				return fmt.Errorf("--print-wrapped-module: %s: %w", path, err)
			}
			for _, s := range syms {
				bind := elf.ST_BIND(s.Info)
				if s.Index == 0 || bind == elf.STB_LOCAL && elf.ST_TYPE(s.Info) != elf.STT_OBJECT && elf.ST_TYPE(s.Info) != elf.STT_FUNC {
					continue
				}
				where := "undefined"
				if s.Section != elf.SHN_UNDEF {
					where = "defined"
					if int(s.Section) < len(o.ELF.Sections) {
						where += " in " + o.ELF.Sections[s.Section].Name
					}
				}
				fmt.Fprintf(&b, "; symbol %s %s %s, %d bytes\n", s.Name, bindName(bind), where, s.Size)
			}
		}
		for i, im := range o.Images {
			fmt.Fprintf(&b, "; image %d: %s for %s %q (%v), %d bytes in %s\n", i, im.Kind, im.Triple(), im.Arch(), im.OffloadKind, im.Size, im.Section)
		}
	}
	printMu.Lock()
	defer printMu.Unlock()
	_, err = l.opt.Stderr.Write(b.Bytes())
	return err
}

func bindName(b elf.SymBind) string {
	switch b {
	case elf.STB_LOCAL:
		return "local"
	case elf.STB_WEAK:
		return "weak"
	}
	return "global"
}
