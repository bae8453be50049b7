package stubs

import (
	"debug/elf"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload/internal/tooltest"
)

// gpuObjectGolden describes the whole object llc makes of the LLVM 19 and
// 22 wrapper modules (20-byte image), per machine and kind: sections in
// order with type, flags, alignment and size; symbols in .symtab order;
// every relocation against its symbol or section symbol. It is what an
// object builder around GPU's code must reproduce; GPUKind's documentation
// summarises it. Regenerate with `go test -run TestGPUObjectShape
// -gpu.update`.
const gpuObjectGolden = "gpu_objects.golden"

func TestGPUObjectShape(t *testing.T) {
	t.Parallel()
	llcs := map[int]string{19: tooltest.Tool(t, "llc", 19), 22: tooltest.Tool(t, "llc", 22)}
	var b strings.Builder
	for _, llvm := range []int{19, 22} {
		for _, m := range gpuMachines {
			for _, kind := range gpuKinds {
				obj := compileGPU(t, llcs[llvm], m.triple, gpuIR(llvm, kind, gpuImage))
				fmt.Fprintf(&b, "## %s %v LLVM %d\n", m.name, kind, llvm)
				b.WriteString(describeObject(t, obj))
				b.WriteString("\n")
			}
		}
	}
	got := b.String()
	if *updateGPUGolden {
		if err := os.WriteFile(gpuObjectGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(gpuObjectGolden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", gpuObjectGolden, diff)
	}
}

// describeObject lists the sections, symbols and relocations of an object.
func describeObject(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	for i, s := range f.Sections[1:] {
		flags := strings.TrimPrefix(strings.ReplaceAll(s.Flags.String(), "SHF_", ""), "0x0")
		fmt.Fprintf(&b, "section %2d %-24s %-22v %-18s align %-2d size %#x", i+1, s.Name, s.Type, flags, s.Addralign, s.Size)
		switch {
		case s.Type == elf.SHT_RELA || s.Type == elf.SHT_SYMTAB:
			fmt.Fprintf(&b, " link %d info %d", s.Link, s.Info)
		case s.Type != elf.SHT_NOBITS && s.Size > 0 && s.Size <= 32 && s.Flags&elf.SHF_EXECINSTR == 0:
			data, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, " [% x]", data)
		}
		b.WriteString("\n")
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range syms {
		name := s.Name
		sec := "UND"
		switch {
		case s.Section == elf.SHN_ABS:
			sec = "ABS"
		case s.Section != elf.SHN_UNDEF && int(s.Section) < len(f.Sections):
			sec = f.Sections[s.Section].Name
		}
		if elf.ST_TYPE(s.Info) == elf.STT_SECTION {
			name = "(section)"
		}
		fmt.Fprintf(&b, "symbol %2d %-36s %-11v %-10v %-13v %-24s value %#x size %d\n", i+1, name,
			elf.ST_TYPE(s.Info), elf.ST_BIND(s.Info), elf.ST_VISIBILITY(s.Other), sec, s.Value, s.Size)
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA {
			continue
		}
		for _, r := range relocations(t, f, s.Name) {
			sym := syms[r.sym-1]
			name := sym.Name
			if elf.ST_TYPE(sym.Info) == elf.STT_SECTION {
				name = "section " + f.Sections[sym.Section].Name
			}
			fmt.Fprintf(&b, "reloc %-22s %#06x %-28s %s%+#x\n", s.Name, r.off, elfRelocName(f.Machine, r.typ), name, r.addend)
		}
	}
	return b.String()
}
