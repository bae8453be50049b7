package wrap

import (
	"bytes"
	"debug/elf"
	"fmt"
	"testing"

	"github.com/goffload/goffload/elfobj"
)

// objectView is the normalised view of a wrapper object that the comparison
// with LLVM's uses: sections (name, type, flags, alignment, size, and the
// bytes of every section but the string and symbol tables), symbols (name,
// type, binding, visibility, size, section, value) and relocations (section,
// offset, type, symbol, addend).
type objectView struct {
	sections []string
	symbols  []string
	relocs   []string
}

func view(t *testing.T, f *elfobj.File) objectView {
	t.Helper()
	var v objectView
	for _, s := range f.Sections[1:] {
		line := fmt.Sprintf("%s %v %v align=%d size=%d", s.Name, s.Type, s.Flags, s.Addralign, s.Size)
		if s.Type != elf.SHT_STRTAB && s.Type != elf.SHT_SYMTAB && s.Type != elf.SHT_NOBITS {
			data, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			line += fmt.Sprintf(" bytes=%x", data)
		}
		v.sections = append(v.sections, line)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	secName := func(i elf.SectionIndex) string {
		if int(i) < len(f.Sections) && i != 0 {
			return f.Sections[i].Name
		}
		return i.String()
	}
	for _, s := range syms[1:] {
		v.symbols = append(v.symbols, fmt.Sprintf("%q %v %v %v other=%#x size=%d %s value=%#x", s.Name, s.Type(), s.Bind(),
			elf.SymVis(s.Other&3), s.Other&^3, s.Size, secName(s.Section), s.Value))
	}
	for _, rs := range f.Sections[1:] {
		if rs.Type != elf.SHT_RELA {
			continue
		}
		rels, err := f.Relocations(rs)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rels {
			sym := ""
			if r.Symbol != nil {
				sym = r.Symbol.Name
				if r.Symbol.Type() == elf.STT_SECTION {
					sym = "section " + secName(r.Symbol.Section)
				}
			}
			v.relocs = append(v.relocs, fmt.Sprintf("%s %#x %v %s%+d", rs.Name, r.Offset, elfobj.RelocTypeOf(f.Machine, r.Type), sym, r.Addend))
		}
	}
	return v
}

// compareViews reports every line that differs, except those allowed, each
// with the reason why the difference is expected.
func compareViews(t *testing.T, theirs, ours objectView, allowed map[string]string) {
	t.Helper()
	for _, part := range []struct {
		name      string
		want, got []string
	}{{"section", theirs.sections, ours.sections}, {"symbol", theirs.symbols, ours.symbols}, {"relocation", theirs.relocs, ours.relocs}} {
		n := max(len(part.want), len(part.got))
		for i := 0; i < n; i++ {
			var w, g string
			if i < len(part.want) {
				w = part.want[i]
			}
			if i < len(part.got) {
				g = part.got[i]
			}
			if w == g {
				continue
			}
			if why, ok := allowed[w]; ok {
				t.Logf("%s %d differs as expected (%s):\nLLVM %s\nours %s", part.name, i, why, short(w), short(g))
				continue
			}
			t.Errorf("%s %d:\nLLVM %s\nours %s", part.name, i, short(w), short(g))
		}
	}
}

func short(s string) string {
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}

func readObject(t *testing.T, data []byte) *elfobj.File {
	t.Helper()
	f, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
