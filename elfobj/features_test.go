package elfobj_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/internal/tooltest"
)

// testMachine is a machine the writer's tests make objects for, with the
// relocation types of debug/elf that its objects use.
type testMachine struct {
	name    string
	triple  string // for llvm-mc
	machine elf.Machine
	data    elf.Data
	flags   uint32 // e_flags as the machine's compilers set them

	abs64, abs32, pc32, call elfobj.RelocType
	callAddend               int64 // what a compiler puts on a call relocation
	foreign                  elfobj.RelocType
}

var testMachines = []testMachine{
	{"x86-64", "x86_64-linux-gnu", elf.EM_X86_64, elf.ELFDATA2LSB, 0,
		elf.R_X86_64_64, elf.R_X86_64_32, elf.R_X86_64_PC32, elf.R_X86_64_PLT32, -4, elf.R_AARCH64_ABS64},
	{"aarch64", "aarch64-linux-gnu", elf.EM_AARCH64, elf.ELFDATA2LSB, 0,
		elf.R_AARCH64_ABS64, elf.R_AARCH64_ABS32, elf.R_AARCH64_PREL32, elf.R_AARCH64_CALL26, 0, elf.R_X86_64_64},
	// ELFv2 (e_flags 2) little-endian and ELFv1 (1) big-endian.
	{"ppc64le", "powerpc64le-linux-gnu", elf.EM_PPC64, elf.ELFDATA2LSB, 2,
		elf.R_PPC64_ADDR64, elf.R_PPC64_ADDR32, elf.R_PPC64_REL32, elf.R_PPC64_REL24, 0, elf.R_RISCV_64},
	{"ppc64", "powerpc64-linux-gnu", elf.EM_PPC64, elf.ELFDATA2MSB, 1,
		elf.R_PPC64_ADDR64, elf.R_PPC64_ADDR32, elf.R_PPC64_REL32, elf.R_PPC64_REL24, 0, elf.R_RISCV_64},
	// RVC and the double-float ABI (e_flags 5), as the lp64d libc.
	{"riscv64", "riscv64-linux-gnu", elf.EM_RISCV, elf.ELFDATA2LSB, 5,
		elf.R_RISCV_64, elf.R_RISCV_32, elf.R_RISCV_32_PCREL, elf.R_RISCV_CALL_PLT, 0, elf.R_PPC64_ADDR64},
}

// lookTool returns the path of a tool without an LLVM release in its name,
// or ends the test by the rule of tooltest.Missing.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		tooltest.Missing(t, fmt.Sprintf("%s not found in $PATH", name))
	}
	return p
}

// runTool runs prog in dir, holding a tooltest.Slot, and returns what it
// printed; a non-zero exit fails the test with both outputs.
func runTool(t *testing.T, dir, prog string, args ...string) (stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &o, &e
	release := tooltest.Slot()
	err := cmd.Run()
	release()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", prog, strings.Join(args, " "), err, o.String(), e.String())
	}
	return o.String(), e.String()
}

var warningLine = regexp.MustCompile(`(?im)^.*warning.*$`)

// writeObjectFile writes o to path.
func writeObjectFile(t *testing.T, path string, o *elfobj.Object) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func openELF(t *testing.T, path string) *elf.File {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// noteGNUStack is the empty section that says the stack need not be
// executable.
func noteGNUStack() *elfobj.Section {
	return &elfobj.Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS, Addralign: 1}
}

// rela is one Elf64_Rela as read from a file.
type rela struct {
	off    uint64
	typ    uint32
	sym    uint32
	addend int64
}

// relaOf parses the SHT_RELA section of f that applies to the section named
// target, by hand rather than with debug/elf.
func relaOf(t *testing.T, f *elf.File, target string) []rela {
	t.Helper()
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA || int(s.Info) >= len(f.Sections) || f.Sections[s.Info].Name != target {
			continue
		}
		return parseRela(t, f, s)
	}
	t.Fatalf("no relocations for %s", target)
	return nil
}

func parseRela(t *testing.T, f *elf.File, s *elf.Section) []rela {
	t.Helper()
	b, err := s.Data()
	if err != nil || len(b)%24 != 0 {
		t.Fatalf("%s: %d bytes, %v", s.Name, len(b), err)
	}
	var rs []rela
	for ; len(b) > 0; b = b[24:] {
		info := f.ByteOrder.Uint64(b[8:])
		rs = append(rs, rela{f.ByteOrder.Uint64(b), uint32(info), uint32(info >> 32), int64(f.ByteOrder.Uint64(b[16:]))})
	}
	return rs
}

// featureObject returns an object for tm with every kind of section, symbol
// and relocation that the writer handles. Each call makes a new, equal one.
func featureObject(tm testMachine) *elfobj.Object {
	text := &elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 16, Data: pattern(64, 0x10)}
	data := &elfobj.Section{Name: ".data", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Data: pattern(40, 0)}
	rodata := &elfobj.Section{Name: ".rodata", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addralign: 8, Data: []byte("read-only data\x00\x00")}
	bss := &elfobj.Section{Name: ".bss", Type: elf.SHT_NOBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 32, Size: 100}
	offloading := &elfobj.Section{Name: ".llvm.offloading", Type: elfobj.SHT_LLVM_OFFLOADING, Flags: elfobj.SHF_EXCLUDE, Addralign: 8,
		Data: append([]byte{0x10, 0xff, 0x10, 0xad, 1, 0, 0, 0}, pattern(88, 0x40)...)}
	offloadingAlloc := &elfobj.Section{Name: ".llvm.offloading", Type: elfobj.SHT_LLVM_OFFLOADING, Flags: elf.SHF_ALLOC, Addralign: 8,
		Data: append([]byte{0x10, 0xff, 0x10, 0xad, 1, 0, 0, 0}, pattern(24, 0x80)...)}
	initPrio := &elfobj.Section{Name: ".init_array.101", Type: elf.SHT_INIT_ARRAY, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Entsize: 8, Data: make([]byte, 8)}
	initArray := &elfobj.Section{Name: ".init_array", Type: elf.SHT_INIT_ARRAY, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Entsize: 8, Data: make([]byte, 16)}
	fini := &elfobj.Section{Name: ".fini_array.1", Type: elf.SHT_FINI_ARRAY, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Entsize: 8, Data: make([]byte, 8)}
	inl := &elfobj.Section{Name: ".text.inl", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR | elf.SHF_GROUP, Addralign: 4, Data: pattern(24, 0x20)}
	// As compilers do, the relocations of a group member are in the group
	// too, so the object lists their section instead of leaving it to Write.
	inlRela := &elfobj.Section{Name: ".rela.text.inl", Type: elf.SHT_RELA, Flags: elf.SHF_INFO_LINK | elf.SHF_GROUP, Addralign: 8, Entsize: 24, Target: inl}
	// Entsize 0: Write sets the 4 a group's entries take.
	group := &elfobj.Section{Name: ".group", Type: elf.SHT_GROUP, Addralign: 4}
	patchable := &elfobj.Section{Name: "__patchable_function_entries", Type: elf.SHT_PROGBITS,
		Flags: elf.SHF_ALLOC | elf.SHF_WRITE | elf.SHF_LINK_ORDER, Addralign: 8, Link: text, Data: make([]byte, 8)}
	str := &elfobj.Section{Name: ".rodata.str1.1", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_MERGE | elf.SHF_STRINGS, Addralign: 1, Entsize: 1,
		Data: []byte("hello\x00world\x00")}
	comment := &elfobj.Section{Name: ".comment", Type: elf.SHT_PROGBITS, Flags: elf.SHF_MERGE | elf.SHF_STRINGS, Addralign: 1, Entsize: 1, Data: []byte("\x00goffload\x00")}
	addrsig := &elfobj.Section{Name: ".llvm_addrsig", Type: elfobj.SHT_LLVM_ADDRSIG, Flags: elfobj.SHF_EXCLUDE, Addralign: 1}

	sect := func(s *elfobj.Section) *elfobj.Symbol {
		return &elfobj.Symbol{Type: elf.STT_SECTION, Bind: elf.STB_LOCAL, Section: s}
	}
	file := &elfobj.Symbol{Name: "features.c", Type: elf.STT_FILE, Bind: elf.STB_LOCAL, Index: elf.SHN_ABS}
	textSym, dataSym, rodataSym, bssSym, strSym := sect(text), sect(data), sect(rodata), sect(bss), sect(str)
	fooBar := &elfobj.Symbol{Name: "foo_bar", Type: elf.STT_FUNC, Bind: elf.STB_GLOBAL, Section: text, Value: 0, Size: 32}
	if tm.machine == elf.EM_PPC64 && tm.flags == 2 {
		fooBar.Other = 3 << 5 // ELFv2 local entry 8 bytes in
	}
	bar := &elfobj.Symbol{Name: "bar", Type: elf.STT_FUNC, Bind: elf.STB_LOCAL, Section: text, Value: 32, Size: 16}
	hidden := &elfobj.Symbol{Name: "hidden_fn", Type: elf.STT_FUNC, Bind: elf.STB_GLOBAL, Visibility: elf.STV_HIDDEN, Section: text, Value: 48, Size: 16}
	inlSym := &elfobj.Symbol{Name: "inl", Type: elf.STT_FUNC, Bind: elf.STB_WEAK, Section: inl, Size: 24}
	localData := &elfobj.Symbol{Name: "local_data", Type: elf.STT_OBJECT, Bind: elf.STB_LOCAL, Section: data, Value: 8, Size: 8}
	weakData := &elfobj.Symbol{Name: "weak_data", Type: elf.STT_OBJECT, Bind: elf.STB_WEAK, Visibility: elf.STV_PROTECTED, Section: data, Value: 16, Size: 8}
	counter := &elfobj.Symbol{Name: "counter", Type: elf.STT_OBJECT, Bind: elf.STB_GLOBAL, Section: bss, Value: 64, Size: 4}
	puts := &elfobj.Symbol{Name: "puts", Bind: elf.STB_GLOBAL}
	common := &elfobj.Symbol{Name: "common_buf", Type: elf.STT_OBJECT, Bind: elf.STB_GLOBAL, Index: elf.SHN_COMMON, Value: 16, Size: 64}
	abs := &elfobj.Symbol{Name: "abs_sym", Bind: elf.STB_GLOBAL, Index: elf.SHN_ABS, Value: 0x1234}
	// Globals among the locals: Write must put the locals first.
	syms := []*elfobj.Symbol{file, textSym, fooBar, dataSym, rodataSym, bar, puts, bssSym, strSym, inlSym, localData,
		hidden, weakData, counter, common, abs}

	text.Relocs = []elfobj.Reloc{
		{Offset: 4, Type: tm.call, Symbol: puts, Addend: tm.callAddend},
		{Offset: 16, Type: tm.pc32, Symbol: rodataSym, Addend: 8},
		{Offset: 20, Type: tm.pc32, Symbol: bar, Addend: -4},
		{Offset: 24, Type: tm.abs32, Symbol: abs},
	}
	data.Relocs = []elfobj.Reloc{
		{Offset: 0, Type: tm.abs64, Symbol: strSym, Addend: 6},
		{Offset: 8, Type: tm.abs64, Symbol: fooBar},
		{Offset: 16, Type: tm.abs64, Symbol: common},
		{Offset: 24, Type: tm.abs64, Symbol: bssSym, Addend: -8},
		{Offset: 32, Type: tm.abs64, Symbol: counter, Addend: 0x7fffffff},
	}
	initPrio.Relocs = []elfobj.Reloc{{Offset: 0, Type: tm.abs64, Symbol: textSym, Addend: 32}}
	initArray.Relocs = []elfobj.Reloc{{Offset: 0, Type: tm.abs64, Symbol: fooBar}, {Offset: 8, Type: tm.abs64, Symbol: bar}}
	fini.Relocs = []elfobj.Reloc{{Offset: 0, Type: tm.abs64, Symbol: hidden}}
	inl.Relocs = []elfobj.Reloc{{Offset: 8, Type: tm.call, Symbol: puts, Addend: tm.callAddend}, {Offset: 16, Type: tm.pc32, Symbol: rodataSym}}
	patchable.Relocs = []elfobj.Reloc{{Offset: 0, Type: tm.abs64, Symbol: textSym}}
	group.Group = &elfobj.Group{Signature: inlSym, Flags: elfobj.GRP_COMDAT, Members: []*elfobj.Section{inl, inlRela}}
	addrsig.Addrsig = []*elfobj.Symbol{fooBar, bar, weakData}

	fi, err := ehframe.FrameInfoFor(tm.machine)
	if err != nil {
		panic(err)
	}
	eh, err := ehframe.Build(tm.machine, tm.data, fi, []ehframe.FDE{
		{Symbol: textSym, Size: 32, CFI: ehframe.CFI{ehframe.AdvanceLoc(4), ehframe.DefCFAOffset(16), ehframe.AdvanceLoc(24), ehframe.DefCFAOffset(0)}},
		{Symbol: textSym, Addend: 32, Size: 16},
		{Symbol: inlSym, Size: 24},
	})
	if err != nil {
		panic(err)
	}
	return &elfobj.Object{
		Data: tm.data, Machine: tm.machine, Flags: tm.flags,
		// The group comes before its members, as the gABI asks.
		Sections: []*elfobj.Section{group, text, data, rodata, bss, offloading, offloadingAlloc, initPrio, initArray, fini,
			inl, inlRela, patchable, str, comment, noteGNUStack(), eh, addrsig},
		Symbols: syms,
	}
}

// pattern returns n bytes counting up from start.
func pattern(n int, start byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

// wantHeader is what the test expects of one section header.
type wantHeader struct {
	Name      string
	Type      elf.SectionType
	Flags     elf.SectionFlag
	Addralign uint64
	Entsize   uint64
	Size      uint64
	Link      uint32
	Info      uint32
}

// layout is where Write must put the sections and symbols of o: the file
// index of each section, the relocation sections it adds, the symbol table
// order (locals first, each kind in the object's order).
type layout struct {
	index   map[*elfobj.Section]uint32
	headers []wantHeader // from section 1
	relOf   map[*elfobj.Section]uint32
	syms    []*elfobj.Symbol
	symIdx  map[*elfobj.Symbol]uint32
	locals  int
}

func expectLayout(o *elfobj.Object) *layout {
	l := &layout{index: map[*elfobj.Section]uint32{}, relOf: map[*elfobj.Section]uint32{}, symIdx: map[*elfobj.Symbol]uint32{}}
	explicit := map[*elfobj.Section]bool{}
	for _, s := range o.Sections {
		if s.Target != nil {
			explicit[s.Target] = true
		}
	}
	n := uint32(0)
	for _, s := range o.Sections {
		n++
		l.index[s] = n
		if len(s.Relocs) > 0 && !explicit[s] {
			n++
			l.relOf[s] = n
		}
	}
	for _, local := range []bool{true, false} {
		for _, s := range o.Symbols {
			if s.IsLocal() == local {
				l.syms = append(l.syms, s)
				l.symIdx[s] = uint32(len(l.syms))
				if local {
					l.locals++
				}
			}
		}
	}
	symtab := n + 1
	for _, s := range o.Sections {
		h := wantHeader{s.Name, s.Type, s.Flags, s.Addralign, s.Entsize, uint64(s.ContentSize()), 0, s.Info}
		if s.Link != nil {
			h.Link = l.index[s.Link]
		}
		switch s.Type {
		case elf.SHT_RELA:
			h.Size, h.Link, h.Info, h.Entsize = uint64(24*len(s.Target.Relocs)), symtab, l.index[s.Target], 24
		case elf.SHT_GROUP:
			h.Size, h.Link, h.Info, h.Entsize = uint64(4+4*len(s.Group.Members)), symtab, l.symIdx[s.Group.Signature], 4
		case elfobj.SHT_LLVM_ADDRSIG:
			h.Size, h.Link = uint64(len(s.Addrsig)), symtab // indices below 128: a byte each
		}
		l.headers = append(l.headers, h)
		if l.relOf[s] != 0 {
			l.headers = append(l.headers, wantHeader{".rela" + s.Name, elf.SHT_RELA, elf.SHF_INFO_LINK, 8, 24, uint64(24 * len(s.Relocs)), symtab, l.index[s]})
		}
	}
	l.headers = append(l.headers,
		wantHeader{".symtab", elf.SHT_SYMTAB, 0, 8, 24, uint64(24 * (1 + len(l.syms))), symtab + 1, uint32(1 + l.locals)},
		wantHeader{".strtab", elf.SHT_STRTAB, 0, 1, 0, 0, 0, 0},
		wantHeader{".shstrtab", elf.SHT_STRTAB, 0, 1, 0, 0, 0, 0})
	return l
}

// TestWriteObjectsOfEveryFeature writes, for each machine, an object with
// every kind of section, symbol and relocation, and checks it with
// llvm-readelf, binutils readelf (each run once for the objects of all the
// machines) and debug/elf.
func TestWriteObjectsOfEveryFeature(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, tm := range testMachines {
		var buf bytes.Buffer
		if _, err := elfobj.Write(&buf, featureObject(tm)); err != nil {
			continue // the machine's subtest says why
		}
		path := filepath.Join(dir, tm.name+".o")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	if len(files) > 0 {
		checkReadelfCleanAll(t, files, []string{"--all"}, []string{"-aW"})
	}
	for _, tm := range testMachines {
		t.Run(tm.name, func(t *testing.T) {
			o := featureObject(tm)
			var buf bytes.Buffer
			n, err := elfobj.Write(&buf, o)
			if err != nil {
				t.Fatal(err)
			}
			if n != int64(buf.Len()) {
				t.Errorf("Write returned %d for %d bytes", n, buf.Len())
			}
			t.Run("DoesNotModifyObject", func(t *testing.T) {
				if diff := cmp.Diff(featureObject(tm), o, cmp.AllowUnexported(elfobj.Section{})); diff != "" {
					t.Errorf("Write changed the object (-before +after):\n%s", diff)
				}
			})
			t.Run("SameBytesTwice", func(t *testing.T) {
				var again bytes.Buffer
				if _, err := elfobj.Write(&again, o); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), again.Bytes()) {
					t.Error("two writes of one object differ")
				}
			})
			f, err := elf.NewFile(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			l := expectLayout(o)
			t.Run("Header", func(t *testing.T) { checkHeader(t, f, buf.Bytes(), tm) })
			t.Run("Sections", func(t *testing.T) { checkSections(t, f, o, l) })
			t.Run("Symbols", func(t *testing.T) { checkSymbols(t, f, l) })
			t.Run("Relocations", func(t *testing.T) { checkRelocations(t, f, o, l) })
			t.Run("StringTablesTailMerge", func(t *testing.T) { checkTailMerge(t, f, buf.Bytes(), l) })
		})
	}
}

func checkHeader(t *testing.T, f *elf.File, file []byte, tm testMachine) {
	if f.Class != elf.ELFCLASS64 || f.Data != tm.data || f.Type != elf.ET_REL || f.Machine != tm.machine || f.Version != elf.EV_CURRENT {
		t.Errorf("header %+v", f.FileHeader)
	}
	// debug/elf does not keep e_flags, at byte 48.
	if got := f.ByteOrder.Uint32(file[48:]); got != tm.flags {
		t.Errorf("e_flags = %d, want %d", got, tm.flags)
	}
}

func checkSections(t *testing.T, f *elf.File, o *elfobj.Object, l *layout) {
	var got []wantHeader
	for _, s := range f.Sections[1:] {
		got = append(got, wantHeader{s.Name, s.Type, s.Flags, s.Addralign, s.Entsize, s.Size, s.Link, s.Info})
	}
	want := append([]wantHeader(nil), l.headers...)
	// The sizes of the string tables depend on tail merging, checked apart.
	for i := len(want) - 2; i < len(want) && i < len(got); i++ {
		want[i].Size = got[i].Size
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("section headers (-want +got):\n%s", diff)
	}
	for _, s := range o.Sections {
		fs := f.Sections[l.index[s]]
		switch s.Type {
		case elf.SHT_NOBITS, elf.SHT_RELA:
			continue
		case elf.SHT_GROUP:
			words := []uint32{s.Group.Flags}
			for _, m := range s.Group.Members {
				words = append(words, l.index[m])
			}
			b, _ := fs.Data()
			for i, w := range words {
				if g := f.ByteOrder.Uint32(b[4*i:]); g != w {
					t.Errorf("%s word %d = %d, want %d", s.Name, i, g, w)
				}
			}
		case elfobj.SHT_LLVM_ADDRSIG:
			var want []byte
			for _, sym := range s.Addrsig {
				want = binary.AppendUvarint(want, uint64(l.symIdx[sym]))
			}
			if b, _ := fs.Data(); !bytes.Equal(b, want) {
				t.Errorf("%s = % x, want % x", s.Name, b, want)
			}
		default:
			if b, err := fs.Data(); err != nil || !bytes.Equal(b, s.Data) {
				t.Errorf("%s (section %d): % x, %v; want % x", s.Name, l.index[s], b, err, s.Data)
			}
		}
	}
	for _, fs := range f.Sections {
		if fs.Addralign > 1 && fs.Offset%fs.Addralign != 0 {
			t.Errorf("%s at %#x is not aligned to %d", fs.Name, fs.Offset, fs.Addralign)
		}
	}
}

// symbolView is what debug/elf tells of a symbol.
type symbolView struct {
	Name        string
	Info, Other byte
	Section     elf.SectionIndex
	Value, Size uint64
}

func checkSymbols(t *testing.T, f *elf.File, l *layout) {
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var want, got []symbolView
	for _, s := range l.syms {
		shndx := s.Index
		if s.Section != nil {
			shndx = elf.SectionIndex(l.index[s.Section])
		}
		want = append(want, symbolView{s.Name, elf.ST_INFO(s.Bind, s.Type), byte(s.Visibility) | s.Other, shndx, s.Value, s.Size})
	}
	for _, s := range syms {
		got = append(got, symbolView{s.Name, s.Info, s.Other, s.Section, s.Value, s.Size})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("symbols (-want +got):\n%s", diff)
	}
	seenGlobal := false
	for i, s := range syms {
		local := elf.ST_BIND(s.Info) == elf.STB_LOCAL
		if local && seenGlobal {
			t.Errorf("local symbol %d %q after a global", i+1, s.Name)
		}
		seenGlobal = seenGlobal || !local
	}
	symtab := f.SectionByType(elf.SHT_SYMTAB)
	if int(symtab.Info) != 1+l.locals {
		t.Errorf(".symtab sh_info = %d, want %d (the first global)", symtab.Info, 1+l.locals)
	}
}

// relocView is a relocation by the name of its symbol (or section, for a
// section symbol).
type relocView struct {
	Offset uint64
	Type   string
	Sym    uint32
	Name   string
	Addend int64
}

func checkRelocations(t *testing.T, f *elf.File, o *elfobj.Object, l *layout) {
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	symName := func(i uint32) string {
		if i == 0 || int(i) > len(syms) {
			return fmt.Sprintf("#%d", i)
		}
		s := syms[i-1]
		if elf.ST_TYPE(s.Info) == elf.STT_SECTION {
			return f.Sections[s.Section].Name
		}
		return s.Name
	}
	for _, s := range o.Sections {
		if len(s.Relocs) == 0 {
			continue
		}
		relIdx := l.relOf[s]
		for _, c := range o.Sections {
			if c.Target == s {
				relIdx = l.index[c]
			}
		}
		var want, got []relocView
		for _, r := range s.Relocs {
			name := r.Symbol.Name
			if r.Symbol.Type == elf.STT_SECTION {
				name = r.Symbol.Section.Name
			}
			want = append(want, relocView{r.Offset, r.Type.String(), l.symIdx[r.Symbol], name, r.Addend})
		}
		for _, r := range parseRela(t, f, f.Sections[relIdx]) {
			got = append(got, relocView{r.off, elfobj.RelocTypeOf(f.Machine, r.typ).String(), r.sym, symName(r.sym), r.addend})
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("relocations of %s (-want +got):\n%s", s.Name, diff)
		}
	}
}

// checkTailMerge checks that names that end another name share its bytes:
// "bar" in "foo_bar", ".text" in ".rela.text".
func checkTailMerge(t *testing.T, f *elf.File, file []byte, l *layout) {
	symtab := f.SectionByType(elf.SHT_SYMTAB)
	b, _ := symtab.Data()
	nameOff := map[string]uint32{}
	for i, s := range l.syms {
		nameOff[s.Name] = f.ByteOrder.Uint32(b[24*(i+1):])
	}
	if nameOff["bar"] != nameOff["foo_bar"]+4 {
		t.Errorf(`"bar" at %d in .strtab, want the tail of "foo_bar" at %d`, nameOff["bar"], nameOff["foo_bar"])
	}
	shname := func(i int) uint32 {
		shoff := f.ByteOrder.Uint64(file[40:])
		return f.ByteOrder.Uint32(file[shoff+64*uint64(i):])
	}
	text, relText := -1, -1
	for i, s := range f.Sections {
		switch s.Name {
		case ".text":
			text = i
		case ".rela.text":
			relText = i
		}
	}
	if shname(text) != shname(relText)+5 {
		t.Errorf(`".text" at %d in .shstrtab, want the tail of ".rela.text" at %d`, shname(text), shname(relText))
	}
}

// TestWriteInconsistentObjects: each change makes the feature object one that
// cannot be written, and Write must say so with ErrInconsistent.
func TestWriteInconsistentObjects(t *testing.T) {
	for _, tm := range testMachines {
		for _, c := range []struct {
			name   string
			change func(o *elfobj.Object)
		}{
			{"relocation past the end of its section", func(o *elfobj.Object) {
				s := o.Section(".data")
				s.Relocs = append(s.Relocs, elfobj.Reloc{Offset: uint64(len(s.Data)) - 4, Type: tm.abs64, Symbol: o.Symbol("foo_bar")})
			}},
			{"relocation at the end of its section", func(o *elfobj.Object) {
				s := o.Section(".init_array")
				s.Relocs = append(s.Relocs, elfobj.Reloc{Offset: uint64(len(s.Data)), Type: tm.abs64, Symbol: o.Symbol("foo_bar")})
			}},
			{"symbol in a section outside the object", func(o *elfobj.Object) {
				lost := &elfobj.Section{Name: ".lost", Type: elf.SHT_PROGBITS, Data: []byte{1}}
				o.Symbols = append(o.Symbols, &elfobj.Symbol{Name: "lost", Bind: elf.STB_GLOBAL, Section: lost})
			}},
			{"relocation against a symbol outside the table", func(o *elfobj.Object) {
				s := o.Section(".data")
				s.Relocs = append(s.Relocs, elfobj.Reloc{Offset: 0, Type: tm.abs64, Symbol: &elfobj.Symbol{Name: "stray", Bind: elf.STB_GLOBAL}})
			}},
			{"alignment 3", func(o *elfobj.Object) { o.Section(".rodata").Addralign = 3 }},
			{"group member without SHF_GROUP", func(o *elfobj.Object) { o.Section(".text.inl").Flags &^= elf.SHF_GROUP }},
			{"relocation type of another machine", func(o *elfobj.Object) { o.Section(".data").Relocs[1].Type = tm.foreign }},
			{"relocations in SHT_NOBITS", func(o *elfobj.Object) {
				s := o.Section(".bss")
				s.Relocs = []elfobj.Reloc{{Offset: 0, Type: tm.abs64, Symbol: o.Symbol("foo_bar")}}
			}},
		} {
			t.Run(tm.name+"/"+c.name, func(t *testing.T) {
				o := featureObject(tm)
				c.change(o)
				n, err := elfobj.Write(io.Discard, o)
				if !errors.Is(err, elfobj.ErrInconsistent) {
					t.Fatalf("Write: %d, %v; want an error wrapping ErrInconsistent", n, err)
				}
				if n != 0 {
					t.Errorf("Write wrote %d bytes before failing", n)
				}
			})
		}
	}
}

// TestWriteStreamsReader: contents given by an io.ReaderAt, wherever it
// holds them, come out as the same bytes as contents given in Data.
func TestWriteStreamsReader(t *testing.T) {
	for _, tm := range testMachines {
		t.Run(tm.name, func(t *testing.T) {
			var want bytes.Buffer
			if _, err := elfobj.Write(&want, featureObject(tm)); err != nil {
				t.Fatal(err)
			}
			for name, wrap := range map[string]func([]byte) io.ReaderAt{
				"bytes": func(b []byte) io.ReaderAt { return bytes.NewReader(b) },
				// The contents at byte 5 of a larger input.
				"section": func(b []byte) io.ReaderAt {
					in := append(append([]byte("junk!"), b...), "more junk"...)
					return io.NewSectionReader(bytes.NewReader(in), 5, int64(len(b)))
				},
			} {
				o := featureObject(tm)
				for _, s := range []*elfobj.Section{o.Section(".llvm.offloading"), o.Section(".text")} {
					s.Reader, s.Size, s.Data = wrap(s.Data), int64(len(s.Data)), nil
				}
				var got bytes.Buffer
				n, err := elfobj.Write(&got, o)
				if err != nil || n != int64(got.Len()) || !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Errorf("%s: %d bytes (%d counted), %v: differs from the object with Data", name, got.Len(), n, err)
				}
			}
			// A reader shorter than Size is an error, not a short section.
			o := featureObject(tm)
			s := o.Section(".llvm.offloading")
			s.Reader, s.Size, s.Data = bytes.NewReader(s.Data[:10]), int64(len(s.Data)), nil
			if _, err := elfobj.Write(io.Discard, o); !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("short reader: %v, want io.ErrUnexpectedEOF", err)
			}
		})
	}
}

// TestWriteReaderSectionsAgainAndAtOnce: an object whose sections are read
// from io.ReaderAts writes the same bytes twice and from several goroutines
// at once, and the same as with the contents in Data.
func TestWriteReaderSectionsAgainAndAtOnce(t *testing.T) {
	for _, tm := range testMachines {
		t.Run(tm.name, func(t *testing.T) {
			var want bytes.Buffer
			if _, err := elfobj.Write(&want, featureObject(tm)); err != nil {
				t.Fatal(err)
			}
			o := featureObject(tm)
			for _, s := range o.Sections {
				if s.Data != nil {
					s.Reader, s.Size, s.Data = bytes.NewReader(s.Data), int64(len(s.Data)), nil
				}
			}
			got := tooltest.SameBytes(t, func(w io.Writer) error { _, err := elfobj.Write(w, o); return err })
			if !bytes.Equal(got, want.Bytes()) {
				t.Error("differs from the object with Data")
			}
		})
	}
}

// TestWriteLoadedObjectAgainAndAtOnce: an object loaded from a file, its
// contents left in the file, writes the same bytes twice and from several
// goroutines at once.
func TestWriteLoadedObjectAgainAndAtOnce(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm19.o"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elfobj.Read(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	o, err := ef.Object()
	if err != nil {
		t.Fatal(err)
	}
	if s := o.Section(".llvm.offloading"); s == nil || s.Reader == nil {
		t.Fatal("no .llvm.offloading read from the file")
	}
	tooltest.SameBytes(t, func(w io.Writer) error { _, err := elfobj.Write(w, o); return err })
}
