package elfobj_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/internal/tooltest"
)

// ehRecord is one CIE or FDE of an .eh_frame, split by ehRecords.
type ehRecord struct {
	off  int    // of the length field
	id   uint32 // 0 for a CIE; for an FDE, the distance back to its CIE
	body []byte // after the id
}

// ehRecords splits b into records, checking the framing: lengths inside the
// section, every record aligned to 4, FDEs pointing at a CIE, the section
// ending with a record (no terminator) at a multiple of 8.
func ehRecords(t *testing.T, b []byte, order binary.ByteOrder) []ehRecord {
	t.Helper()
	var recs []ehRecord
	cies := map[int]bool{}
	for off := 0; off < len(b); {
		if off%4 != 0 || len(b)-off < 8 {
			t.Fatalf("record at %#x: misaligned or truncated in %d bytes", off, len(b))
		}
		n := int(order.Uint32(b[off:]))
		if n == 0 || n > len(b)-off-4 {
			t.Fatalf("record at %#x: length %d in %d bytes", off, n, len(b))
		}
		r := ehRecord{off: off, id: order.Uint32(b[off+4:]), body: b[off+8 : off+4+n]}
		if r.id == 0 {
			cies[off] = true
		} else if !cies[off+4-int(r.id)] {
			t.Fatalf("FDE at %#x: CIE pointer %#x does not lead to a CIE", off, r.id)
		}
		recs = append(recs, r)
		off += 4 + n
	}
	if len(b)%8 != 0 {
		t.Errorf("section size %d is not a multiple of 8", len(b))
	}
	return recs
}

// fdeInstructions returns the instructions of the FDE r, padding included.
func fdeInstructions(t *testing.T, r ehRecord) []byte {
	t.Helper()
	if len(r.body) < 9 || r.body[8] != 0 {
		t.Fatalf("FDE at %#x: %x: want pc_begin, pc_range and augmentation length 0", r.off, r.body)
	}
	return r.body[9:]
}

func TestCFIEncodesTheShortestForm(t *testing.T) {
	x86, _ := ehframe.FrameInfoFor(elf.EM_X86_64)
	arm, _ := ehframe.FrameInfoFor(elf.EM_AARCH64)
	ppc, _ := ehframe.FrameInfoFor(elf.EM_PPC64)
	for _, c := range []struct {
		m    elf.Machine
		data elf.Data
		fi   ehframe.FrameInfo
		op   ehframe.CFIOp
		want []byte
	}{
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.AdvanceLoc(0), nil},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.AdvanceLoc(1), []byte{0x41}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.AdvanceLoc(63), []byte{0x7f}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.AdvanceLoc(64), []byte{0x02, 0x40}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.AdvanceLoc(255), []byte{0x02, 0xff}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.AdvanceLoc(256), []byte{0x03, 0x00, 0x01}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.AdvanceLoc(0x10000), []byte{0x04, 0x00, 0x00, 0x01, 0x00}},
		{elf.EM_PPC64, elf.ELFDATA2MSB, ppc, ehframe.AdvanceLoc(4 * 0x102), []byte{0x03, 0x01, 0x02}},
		{elf.EM_PPC64, elf.ELFDATA2MSB, ppc, ehframe.AdvanceLoc(4 * 0x10203), []byte{0x04, 0x00, 0x01, 0x02, 0x03}},
		{elf.EM_PPC64, elf.ELFDATA2LSB, ppc, ehframe.AdvanceLoc(20), []byte{0x45}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.DefCFA(7, 8), []byte{0x0c, 0x07, 0x08}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.DefCFA(6, 200), []byte{0x0c, 0x06, 0xc8, 0x01}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.DefCFAOffset(16), []byte{0x0e, 0x10}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.DefCFARegister(6), []byte{0x0d, 0x06}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.Offset(16, -8), []byte{0x90, 0x01}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.Offset(3, -1600), []byte{0x83, 0xc8, 0x01}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.Offset(3, 800), []byte{0x11, 0x03, 0x9c, 0x7f}},
		{elf.EM_AARCH64, elf.ELFDATA2LSB, arm, ehframe.Offset(30, -16), []byte{0x9e, 0x04}},
		{elf.EM_PPC64, elf.ELFDATA2LSB, ppc, ehframe.Offset(65, 16), []byte{0x11, 0x41, 0x7e}},
		{elf.EM_PPC64, elf.ELFDATA2LSB, ppc, ehframe.Offset(65, -16), []byte{0x05, 0x41, 0x02}},
		{elf.EM_X86_64, elf.ELFDATA2LSB, x86, ehframe.Restore(6), []byte{0xc6}},
		{elf.EM_PPC64, elf.ELFDATA2LSB, ppc, ehframe.Restore(65), []byte{0x06, 0x41}},
	} {
		t.Run(fmt.Sprintf("%v/%v", c.m, c.op), func(t *testing.T) {
			fn := &elfobj.Symbol{Name: "f", Type: elf.STT_FUNC, Bind: elf.STB_GLOBAL, Index: elf.SHN_UNDEF}
			sec, err := ehframe.Build(c.m, c.data, c.fi, []ehframe.FDE{{Symbol: fn, Size: 4, CFI: ehframe.CFI{c.op}}})
			if err != nil {
				t.Fatal(err)
			}
			order := map[elf.Data]binary.ByteOrder{elf.ELFDATA2LSB: binary.LittleEndian, elf.ELFDATA2MSB: binary.BigEndian}[c.data]
			recs := ehRecords(t, sec.Data, order)
			if len(recs) != 2 {
				t.Fatalf("%d records, want a CIE and an FDE", len(recs))
			}
			got := fdeInstructions(t, recs[1])
			if !bytes.HasPrefix(got, c.want) || bytes.Count(got[len(c.want):], []byte{0}) != len(got)-len(c.want) {
				t.Errorf("instructions % x, want % x and DW_CFA_nop padding", got, c.want)
			}
		})
	}
}

func TestEHFrameRejectsInvalidInput(t *testing.T) {
	fn := &elfobj.Symbol{Name: "f", Type: elf.STT_FUNC, Bind: elf.STB_GLOBAL, Index: elf.SHN_UNDEF}
	x86, _ := ehframe.FrameInfoFor(elf.EM_X86_64)
	ppc, _ := ehframe.FrameInfoFor(elf.EM_PPC64)
	with := func(fi ehframe.FrameInfo, f func(*ehframe.FrameInfo)) ehframe.FrameInfo { f(&fi); return fi }
	for _, c := range []struct {
		name string
		m    elf.Machine
		data elf.Data
		fi   ehframe.FrameInfo
		fdes []ehframe.FDE
		want error
	}{
		{"advance not a multiple of the code alignment", elf.EM_PPC64, elf.ELFDATA2LSB, ppc,
			[]ehframe.FDE{{Symbol: fn, Size: 8, CFI: ehframe.CFI{ehframe.AdvanceLoc(6)}}}, elfobj.ErrInconsistent},
		{"offset not a multiple of the data alignment", elf.EM_X86_64, elf.ELFDATA2LSB, x86,
			[]ehframe.FDE{{Symbol: fn, Size: 8, CFI: ehframe.CFI{ehframe.Offset(6, -12)}}}, elfobj.ErrInconsistent},
		{"advance beyond 32 bits", elf.EM_X86_64, elf.ELFDATA2LSB, x86,
			[]ehframe.FDE{{Symbol: fn, Size: 8, CFI: ehframe.CFI{ehframe.AdvanceLoc(1 << 32)}}}, elfobj.ErrInconsistent},
		{"zero-value instruction", elf.EM_X86_64, elf.ELFDATA2LSB, x86,
			[]ehframe.FDE{{Symbol: fn, Size: 8, CFI: ehframe.CFI{{}}}}, elfobj.ErrInconsistent},
		{"no symbol", elf.EM_X86_64, elf.ELFDATA2LSB, x86, []ehframe.FDE{{Size: 8}}, elfobj.ErrInconsistent},
		{"function of 4 GiB", elf.EM_X86_64, elf.ELFDATA2LSB, x86, []ehframe.FDE{{Symbol: fn, Size: 1 << 32}}, elfobj.ErrInconsistent},
		{"return address register beyond a byte", elf.EM_X86_64, elf.ELFDATA2LSB,
			with(x86, func(fi *ehframe.FrameInfo) { fi.RAReg = 256 }), nil, elfobj.ErrInconsistent},
		{"code alignment 0", elf.EM_X86_64, elf.ELFDATA2LSB, with(x86, func(fi *ehframe.FrameInfo) { fi.CodeAlign = 0 }), nil, elfobj.ErrInconsistent},
		{"data alignment 0", elf.EM_X86_64, elf.ELFDATA2LSB, with(x86, func(fi *ehframe.FrameInfo) { fi.DataAlign = 0 }), nil, elfobj.ErrInconsistent},
		{"no byte order", elf.EM_X86_64, elf.ELFDATANONE, x86, nil, elfobj.ErrInconsistent},
		{"machine without a table", elf.EM_386, elf.ELFDATA2LSB, x86, nil, errors.ErrUnsupported},
	} {
		t.Run(c.name, func(t *testing.T) {
			sec, err := ehframe.Build(c.m, c.data, c.fi, c.fdes)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, %v; want an error wrapping %v", sec, err, c.want)
			}
			t.Log(err)
		})
	}
	if _, err := ehframe.FrameInfoFor(elf.EM_386); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("FrameInfoFor(EM_386): %v, want errors.ErrUnsupported", err)
	}
}

// FrameInfoFor must hand out copies: changing one must not change the next.
func TestFrameInfoForReturnsACopy(t *testing.T) {
	fi, _ := ehframe.FrameInfoFor(elf.EM_X86_64)
	fi.Initial[0] = ehframe.DefCFA(6, 16)
	again, _ := ehframe.FrameInfoFor(elf.EM_X86_64)
	if again.Initial[0] != ehframe.DefCFA(7, 8) {
		t.Errorf("FrameInfoFor(EM_X86_64).Initial[0] = %v after a caller changed its copy", again.Initial[0])
	}
}

// cfiStep is one step of a test function: skip bytes of code, or state a
// rule both as an assembler directive and as a CFIOp.
type cfiStep struct {
	skip uint64
	dir  string
	op   ehframe.CFIOp
}

// cfiFunc is a function of the .eh_frame tests.
type cfiFunc struct {
	name  string
	steps []cfiStep
}

func skip(n uint64) cfiStep                     { return cfiStep{skip: n} }
func rule(dir string, op ehframe.CFIOp) cfiStep { return cfiStep{dir: dir, op: op} }

// ehFuncs are, per machine, functions whose rules exercise each instruction
// and each size of advance, in the registers that machine's prologues save.
var ehFuncs = map[elf.Machine][]cfiFunc{
	elf.EM_X86_64: {
		{"f1", []cfiStep{skip(1), rule(".cfi_def_cfa_offset 16", ehframe.DefCFAOffset(16)),
			rule(".cfi_offset 6, -16", ehframe.Offset(6, -16)), skip(3),
			rule(".cfi_def_cfa_register 6", ehframe.DefCFARegister(6)), skip(300),
			rule(".cfi_def_cfa 7, 8", ehframe.DefCFA(7, 8)), rule(".cfi_restore 6", ehframe.Restore(6)), skip(1)}},
		{"f2", []cfiStep{skip(2)}},
		{"f3", []cfiStep{skip(70), rule(".cfi_offset 3, -24", ehframe.Offset(3, -24)), skip(5)}},
	},
	elf.EM_AARCH64: {
		{"f1", []cfiStep{skip(4), rule(".cfi_def_cfa_offset 16", ehframe.DefCFAOffset(16)),
			rule(".cfi_offset 30, -8", ehframe.Offset(30, -8)), rule(".cfi_offset 29, -16", ehframe.Offset(29, -16)), skip(4),
			rule(".cfi_def_cfa 29, 16", ehframe.DefCFA(29, 16)), skip(400),
			rule(".cfi_def_cfa 31, 0", ehframe.DefCFA(31, 0)), rule(".cfi_restore 30", ehframe.Restore(30)),
			rule(".cfi_restore 29", ehframe.Restore(29)), skip(4)}},
		{"f2", []cfiStep{skip(8)}},
	},
	elf.EM_PPC64: {
		{"f1", []cfiStep{skip(20), rule(".cfi_def_cfa_offset 32", ehframe.DefCFAOffset(32)),
			rule(".cfi_offset 65, 16", ehframe.Offset(65, 16)), rule(".cfi_offset 31, -8", ehframe.Offset(31, -8)), skip(1200),
			rule(".cfi_restore 65", ehframe.Restore(65)), rule(".cfi_def_cfa_offset 0", ehframe.DefCFAOffset(0)), skip(4)}},
		{"f2", []cfiStep{skip(16)}},
		{"f3", []cfiStep{skip(8), rule(".cfi_def_cfa_register 31", ehframe.DefCFARegister(31)), skip(8)}},
	},
	elf.EM_RISCV: {
		{"f1", []cfiStep{skip(4), rule(".cfi_def_cfa_offset 16", ehframe.DefCFAOffset(16)), skip(4),
			rule(".cfi_offset 1, -8", ehframe.Offset(1, -8)), rule(".cfi_offset 8, -16", ehframe.Offset(8, -16)), skip(4),
			rule(".cfi_def_cfa 8, 0", ehframe.DefCFA(8, 0)), skip(300),
			rule(".cfi_def_cfa 2, 16", ehframe.DefCFA(2, 16)), rule(".cfi_restore 1", ehframe.Restore(1)),
			rule(".cfi_restore 8", ehframe.Restore(8)), rule(".cfi_def_cfa_offset 0", ehframe.DefCFAOffset(0)), skip(4)}},
		{"f2", []cfiStep{skip(4)}},
	},
}

// ehAssembly returns the functions as assembly for llvm-mc.
func ehAssembly(funcs []cfiFunc) string {
	var b strings.Builder
	b.WriteString("\t.text\n")
	for _, f := range funcs {
		fmt.Fprintf(&b, "\t.globl %s\n\t.type %s,@function\n%s:\n\t.cfi_startproc\n", f.name, f.name, f.name)
		for _, s := range f.steps {
			if s.dir != "" {
				fmt.Fprintf(&b, "\t%s\n", s.dir)
			} else {
				fmt.Fprintf(&b, "\t.skip %d\n", s.skip)
			}
		}
		fmt.Fprintf(&b, "\t.cfi_endproc\n\t.size %s, .-%s\n", f.name, f.name)
	}
	return b.String()
}

// ehObject returns the functions as an Object made with elfobj: their code
// (zeros) in .text, a symbol each, and an .eh_frame whose FDEs refer to the
// section symbol of .text, as LLVM's do.
func ehObject(t *testing.T, tm testMachine, funcs []cfiFunc) *elfobj.Object {
	t.Helper()
	text := &elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 4}
	textSym := &elfobj.Symbol{Type: elf.STT_SECTION, Bind: elf.STB_LOCAL, Section: text}
	o := &elfobj.Object{Data: tm.data, Machine: tm.machine, Flags: tm.flags, Symbols: []*elfobj.Symbol{textSym}}
	var fdes []ehframe.FDE
	var code []byte
	for _, f := range funcs {
		start := uint64(len(code))
		var cfi ehframe.CFI
		var pending uint64
		for _, s := range f.steps {
			if s.dir == "" {
				code = append(code, make([]byte, s.skip)...)
				pending += s.skip
				continue
			}
			if pending > 0 {
				cfi = append(cfi, ehframe.AdvanceLoc(pending))
				pending = 0
			}
			cfi = append(cfi, s.op)
		}
		size := uint64(len(code)) - start
		o.Symbols = append(o.Symbols, &elfobj.Symbol{Name: f.name, Type: elf.STT_FUNC, Bind: elf.STB_GLOBAL, Section: text, Value: start, Size: size})
		fdes = append(fdes, ehframe.FDE{Symbol: textSym, Addend: int64(start), Size: size, CFI: cfi})
	}
	text.Data = code
	fi, err := ehframe.FrameInfoFor(tm.machine)
	if err != nil {
		t.Fatal(err)
	}
	eh, err := ehframe.Build(tm.machine, tm.data, fi, fdes)
	if err != nil {
		t.Fatal(err)
	}
	o.Sections = []*elfobj.Section{text, eh, noteGNUStack()}
	return o
}

// ehTarget is where a pc_begin relocation points: a section and an offset.
type ehTarget struct {
	Offset  uint64
	Type    uint32
	Section string
	Value   int64
}

// ehTargets resolves the relocations of f's .eh_frame to section offsets, so
// that a relocation against a local label (LLVM on riscv64) and one against
// the section symbol compare equal.
func ehTargets(t *testing.T, f *elf.File) []ehTarget {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var out []ehTarget
	for _, r := range relaOf(t, f, ".eh_frame") {
		s := syms[r.sym-1]
		out = append(out, ehTarget{r.off, r.typ, f.Sections[s.Section].Name, int64(s.Value) + r.addend})
	}
	return out
}

// TestEHFrameMatchesLLVM assembles functions with .cfi directives with
// llvm-mc 19 and builds the same rules with ehframe.Build: the .eh_frame
// sections must be equal byte for byte, their relocations must have the same
// types and targets, and llvm-dwarfdump and binutils readelf must print the
// same for both. Each of those two runs once for all the objects.
func TestEHFrameMatchesLLVM(t *testing.T) {
	t.Parallel()
	mc := tooltest.Tool(t, "llvm-mc", 19)
	dwarfdump := tooltest.Tool(t, "llvm-dwarfdump", 19)
	readelf := lookTool(t, "readelf")
	dir := t.TempDir()
	var files []string // llvm-mc's, elfobj's of each machine, relative to dir
	for _, tm := range testMachines {
		llvmDir, ourDir := filepath.Join(dir, tm.name, "llvm"), filepath.Join(dir, tm.name, "elfobj")
		for _, d := range []string{llvmDir, ourDir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(llvmDir, "f.s"), []byte(ehAssembly(ehFuncs[tm.machine])), 0o644); err != nil {
			t.Fatal(err)
		}
		runTool(t, llvmDir, mc, "-triple="+tm.triple, "-filetype=obj", "f.s", "-o", "f.o")
		writeObjectFile(t, filepath.Join(ourDir, "f.o"), ehObject(t, tm, ehFuncs[tm.machine]))
		files = append(files, filepath.Join(tm.name, "llvm", "f.o"), filepath.Join(tm.name, "elfobj", "f.o"))
	}
	type dump struct {
		tool, opt string
		outs      map[string]string
	}
	var dumps []dump
	for _, tool := range []struct {
		prog, opt string
		head      func(string) string
	}{{dwarfdump, "--eh-frame", dwarfdumpHead}, {readelf, "-wf", readelfHead}} {
		outs, _ := toolOnFiles(t, dir, tool.prog, []string{tool.opt}, files, tool.head)
		dumps = append(dumps, dump{filepath.Base(tool.prog), tool.opt, outs})
	}
	for i, tm := range testMachines {
		t.Run(tm.name, func(t *testing.T) {
			funcs := ehFuncs[tm.machine]
			llvmName, ourName := files[2*i], files[2*i+1]
			llvmFile, ourFile := openELF(t, filepath.Join(dir, llvmName)), openELF(t, filepath.Join(dir, ourName))
			want, got := llvmFile.Section(".eh_frame"), ourFile.Section(".eh_frame")
			if got.Type != want.Type || got.Flags != want.Flags || got.Addralign != want.Addralign {
				t.Errorf("section header: got %v %v align %d, LLVM %v %v align %d", got.Type, got.Flags, got.Addralign, want.Type, want.Flags, want.Addralign)
			}
			wantData, _ := want.Data()
			gotData, _ := got.Data()
			if !bytes.Equal(gotData, wantData) {
				t.Errorf("contents differ from LLVM's:\n got % x\nwant % x", gotData, wantData)
			}
			ehRecords(t, gotData, ourFile.ByteOrder)
			if diff := cmp.Diff(ehTargets(t, llvmFile), ehTargets(t, ourFile)); diff != "" {
				t.Errorf("relocations (-LLVM +elfobj):\n%s", diff)
			}
			for _, d := range dumps {
				wantOut, gotOut := d.outs[llvmName], d.outs[ourName]
				if diff := cmp.Diff(wantOut, gotOut); diff != "" {
					t.Errorf("%s %s (-LLVM +elfobj):\n%s", d.tool, d.opt, diff)
				}
				if !strings.Contains(gotOut, "zR") || strings.Count(gotOut, "FDE cie=") != len(funcs) {
					t.Errorf("%s %s: want a zR CIE and %d FDEs:\n%s", d.tool, d.opt, len(funcs), gotOut)
				}
			}
		})
	}
}
