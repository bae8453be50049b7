package elfobj_test

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/internal/tooltest"
)

// What the linked programs print: the constructor's line, then main's.
const (
	ctorLine = "goffload: constructor ran"
	dataLine = "goffload: data relocated"
)

// ctorCode is the constructor `ctor` of the link tests for one machine:
// `puts(msg)` with the stack and return address kept as its compilers keep
// them.
type ctorCode struct {
	code   []byte
	relocs []elfobj.Reloc
	syms   []*elfobj.Symbol // symbols the code needs besides msg and puts
	cfi    ehframe.CFI      // unwind rules, from the first byte
	other  uint8            // st_other bits of ctor above the visibility
}

// words encodes fixed-size instructions.
func words(order binary.AppendByteOrder, ws ...uint32) []byte {
	var b []byte
	for _, w := range ws {
		b = order.AppendUint32(b, w)
	}
	return b
}

// x86Ctor: push %rax (aligning the stack for the call); lea msg(%rip),%rdi;
// call puts@PLT; pop %rax; ret. Encodings from llvm-mc-19 -show-encoding.
func x86Ctor(text *elfobj.Section, msg, puts *elfobj.Symbol) ctorCode {
	return ctorCode{
		code: []byte{
			0x50,                            // 0: push %rax
			0x48, 0x8d, 0x3d, 0x00, 0, 0, 0, // 1: lea msg(%rip),%rdi
			0xe8, 0x00, 0, 0, 0, // 8: call puts
			0x58, // 13: pop %rax
			0xc3, // 14: ret
		},
		relocs: []elfobj.Reloc{
			{Offset: 4, Type: elf.R_X86_64_PC32, Symbol: msg, Addend: -4},
			{Offset: 9, Type: elf.R_X86_64_PLT32, Symbol: puts, Addend: -4},
		},
		cfi: ehframe.CFI{ehframe.AdvanceLoc(1), ehframe.DefCFAOffset(16), ehframe.AdvanceLoc(13), ehframe.DefCFAOffset(8)},
	}
}

// arm64Ctor: stp x29,x30,[sp,#-16]!; mov x29,sp; adrp x0,msg;
// add x0,x0,:lo12:msg; bl puts; ldp x29,x30,[sp],#16; ret.
func arm64Ctor(text *elfobj.Section, msg, puts *elfobj.Symbol) ctorCode {
	return ctorCode{
		code: words(binary.LittleEndian, 0xa9bf7bfd, 0x910003fd, 0x90000000, 0x91000000, 0x94000000, 0xa8c17bfd, 0xd65f03c0),
		relocs: []elfobj.Reloc{
			{Offset: 8, Type: elf.R_AARCH64_ADR_PREL_PG_HI21, Symbol: msg},
			{Offset: 12, Type: elf.R_AARCH64_ADD_ABS_LO12_NC, Symbol: msg},
			{Offset: 16, Type: elf.R_AARCH64_CALL26, Symbol: puts},
		},
		cfi: ehframe.CFI{ehframe.AdvanceLoc(4), ehframe.DefCFAOffset(16), ehframe.Offset(30, -8), ehframe.Offset(29, -16),
			ehframe.AdvanceLoc(20), ehframe.DefCFAOffset(0), ehframe.Restore(30), ehframe.Restore(29)},
	}
}

// ppc64leCtor is an ELFv2 function with a global entry that derives the TOC
// pointer from r12, and a local entry 8 bytes in (st_other 3<<5):
//
//	addis r2,r12,.TOC.-ctor@ha; addi r2,r2,.TOC.-ctor@l
//	mflr r0; std r0,16(r1); stdu r1,-32(r1)
//	addis r3,r2,msg@toc@ha; addi r3,r3,msg@toc@l
//	bl puts; nop (the linker's TOC restore)
//	addi r1,r1,32; ld r0,16(r1); mtlr r0; blr
//
// The relocations are those powerpc64le-linux-gnu-gcc -O2 emits; on little
// endian a 16-bit field is at its instruction's offset.
func ppc64leCtor(text *elfobj.Section, msg, puts *elfobj.Symbol) ctorCode {
	toc := &elfobj.Symbol{Name: ".TOC.", Bind: elf.STB_GLOBAL}
	return ctorCode{
		code: words(binary.LittleEndian, 0x3c4c0000, 0x38420000, 0x7c0802a6, 0xf8010010, 0xf821ffe1, 0x3c620000,
			0x38630000, 0x48000001, 0x60000000, 0x38210020, 0xe8010010, 0x7c0803a6, 0x4e800020),
		relocs: []elfobj.Reloc{
			{Offset: 0, Type: elf.R_PPC64_REL16_HA, Symbol: toc},
			{Offset: 4, Type: elf.R_PPC64_REL16_LO, Symbol: toc, Addend: 4},
			{Offset: 20, Type: elf.R_PPC64_TOC16_HA, Symbol: msg},
			{Offset: 24, Type: elf.R_PPC64_TOC16_LO, Symbol: msg},
			{Offset: 28, Type: elf.R_PPC64_REL24, Symbol: puts},
		},
		syms:  []*elfobj.Symbol{toc},
		other: 3 << 5,
		cfi: ehframe.CFI{ehframe.AdvanceLoc(20), ehframe.DefCFAOffset(32), ehframe.Offset(65, 16),
			ehframe.AdvanceLoc(20), ehframe.DefCFAOffset(0), ehframe.AdvanceLoc(8), ehframe.Restore(65)},
	}
}

// riscv64Ctor: addi sp,sp,-16; sd ra,8(sp);
// 1: auipc a0,%pcrel_hi(msg); addi a0,a0,%pcrel_lo(1b);
// call puts (auipc ra + jalr ra); ld ra,8(sp); addi sp,sp,16; ret.
// %pcrel_lo refers to a local label at the auipc, as the psABI asks. There
// are no R_RISCV_RELAX relocations: the linker must not relax this code.
func riscv64Ctor(text *elfobj.Section, msg, puts *elfobj.Symbol) ctorCode {
	hi := &elfobj.Symbol{Name: ".Lpcrel_hi0", Bind: elf.STB_LOCAL, Section: text, Value: 8}
	return ctorCode{
		code: words(binary.LittleEndian, 0xff010113, 0x00113423, 0x00000517, 0x00050513, 0x00000097, 0x000080e7,
			0x00813083, 0x01010113, 0x00008067),
		relocs: []elfobj.Reloc{
			{Offset: 8, Type: elf.R_RISCV_PCREL_HI20, Symbol: msg},
			{Offset: 12, Type: elf.R_RISCV_PCREL_LO12_I, Symbol: hi},
			{Offset: 16, Type: elf.R_RISCV_CALL_PLT, Symbol: puts},
		},
		syms: []*elfobj.Symbol{hi},
		cfi: ehframe.CFI{ehframe.AdvanceLoc(4), ehframe.DefCFAOffset(16), ehframe.AdvanceLoc(4), ehframe.Offset(1, -8),
			ehframe.AdvanceLoc(24), ehframe.DefCFAOffset(0), ehframe.Restore(1)},
	}
}

// linkMachine is how to link and run a program for one machine.
type linkMachine struct {
	testMachine
	cc      string   // the (cross) gcc driver
	qemu    string   // "" to run natively
	sysroot string   // for qemu -L
	linkers []string // -fuse-ld values
	ctor    func(text *elfobj.Section, msg, puts *elfobj.Symbol) ctorCode
}

func testMachineNamed(name string) testMachine {
	for _, tm := range testMachines {
		if tm.name == name {
			return tm
		}
	}
	panic("no test machine " + name)
}

var linkMachines = []linkMachine{
	{testMachineNamed("x86-64"), "gcc", "", "", []string{"bfd", "gold", "lld"}, x86Ctor},
	{testMachineNamed("aarch64"), "aarch64-linux-gnu-gcc", "qemu-aarch64", "/usr/aarch64-linux-gnu", []string{"bfd", "gold", "lld"}, arm64Ctor},
	{testMachineNamed("ppc64le"), "powerpc64le-linux-gnu-gcc", "qemu-ppc64le", "/usr/powerpc64le-linux-gnu", []string{"bfd", "gold", "lld"}, ppc64leCtor},
	{testMachineNamed("riscv64"), "riscv64-linux-gnu-gcc", "qemu-riscv64", "/usr/riscv64-linux-gnu", []string{"bfd", "lld"}, riscv64Ctor},
}

// linkObject returns the object of the link tests, made only with elfobj:
// a local function ctor in .text that calls the undefined puts, an
// .init_array entry for it, the global pointer goffload_msg in .data that
// an absolute relocation points at a string in .rodata, .eh_frame for ctor
// and .note.GNU-stack.
func linkObject(lm linkMachine) *elfobj.Object {
	text := &elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 16}
	rodata := &elfobj.Section{Name: ".rodata", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addralign: 8,
		Data: []byte(ctorLine + "\x00\x00\x00\x00\x00\x00\x00" + dataLine + "\x00")}
	data := &elfobj.Section{Name: ".data", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Data: make([]byte, 8)}
	initArray := &elfobj.Section{Name: ".init_array", Type: elf.SHT_INIT_ARRAY, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addralign: 8, Entsize: 8, Data: make([]byte, 8)}

	file := &elfobj.Symbol{Name: "goffload-link.o", Type: elf.STT_FILE, Bind: elf.STB_LOCAL, Index: elf.SHN_ABS}
	textSym := &elfobj.Symbol{Type: elf.STT_SECTION, Bind: elf.STB_LOCAL, Section: text}
	rodataSym := &elfobj.Symbol{Type: elf.STT_SECTION, Bind: elf.STB_LOCAL, Section: rodata}
	msg := &elfobj.Symbol{Name: "msg_ctor", Type: elf.STT_OBJECT, Bind: elf.STB_LOCAL, Section: rodata, Size: uint64(len(ctorLine) + 1)}
	puts := &elfobj.Symbol{Name: "puts", Bind: elf.STB_GLOBAL}
	c := lm.ctor(text, msg, puts)
	text.Data, text.Relocs = c.code, c.relocs
	ctor := &elfobj.Symbol{Name: "ctor", Type: elf.STT_FUNC, Bind: elf.STB_LOCAL, Other: c.other, Section: text, Size: uint64(len(c.code))}
	gmsg := &elfobj.Symbol{Name: "goffload_msg", Type: elf.STT_OBJECT, Bind: elf.STB_GLOBAL, Section: data, Size: 8}
	dataOff := int64(strings.Index(string(rodata.Data), dataLine))
	data.Relocs = []elfobj.Reloc{{Offset: 0, Type: lm.abs64, Symbol: rodataSym, Addend: dataOff}}
	initArray.Relocs = []elfobj.Reloc{{Offset: 0, Type: lm.abs64, Symbol: ctor}}

	fi, err := ehframe.FrameInfoFor(lm.machine)
	if err != nil {
		panic(err)
	}
	eh, err := ehframe.Build(lm.machine, lm.data, fi, []ehframe.FDE{{Symbol: textSym, Size: uint64(len(c.code)), CFI: c.cfi}})
	if err != nil {
		panic(err)
	}
	return &elfobj.Object{
		Data: lm.data, Machine: lm.machine, Flags: lm.flags,
		Sections: []*elfobj.Section{text, rodata, data, initArray, eh, noteGNUStack()},
		Symbols:  append([]*elfobj.Symbol{file, textSym, rodataSym, msg, ctor, gmsg, puts}, c.syms...),
	}
}

// lldDir returns a folder holding ld.lld of LLVM 19 under that name, for
// gcc's -B with -fuse-ld=lld.
func lldDir(t *testing.T) string {
	lld := tooltest.Tool(t, "ld.lld", 19)
	if filepath.Base(lld) == "ld.lld" {
		return filepath.Dir(lld)
	}
	dir := t.TempDir()
	if err := os.Symlink(lld, filepath.Join(dir, "ld.lld")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// linkColumns are the links of TestLinkObjectMadeWithElfobj's matrix:
// column k is linker k mod 3 with PIE or not (k mod 2).
var linkColumns = func() [][2]string {
	var cols [][2]string
	for k := range 6 {
		cols = append(cols, [2]string{[]string{"bfd", "gold", "lld"}[k%3], []string{"-pie", "-no-pie"}[k%2]})
	}
	return cols
}()

// TestLinkObjectMadeWithElfobj links an object made only with elfobj with a C
// main by ld.bfd, ld.gold and ld.lld 19, as PIE and not, for x86-64,
// AArch64, ppc64le and riscv64, and runs the programs (under qemu-user for
// the others): the constructor must run before main and the data pointer must
// be relocated. The linkers must print nothing, readelf must read the program
// without a warning, and the program's .eh_frame_hdr must index ctor with
// the FDE from the object.
//
// Its matrix, machines × linkColumns (riscv64 has no gold), runs its default
// sample (tooltest.Sampled: every machine, every linker with PIE and
// without); the readelfs run once for all the programs.
func TestLinkObjectMadeWithElfobj(t *testing.T) {
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	t.Parallel()
	type linked struct {
		name, prog string
		ctorSize   int
	}
	var progs []linked
	top := t.TempDir()
	for i, lm := range linkMachines {
		t.Run(lm.name, func(t *testing.T) {
			cc := lookTool(t, lm.cc)
			var run []string
			if lm.qemu != "" {
				run = []string{lookTool(t, lm.qemu), "-L", lm.sysroot}
			}
			dir := filepath.Join(top, lm.name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			o := linkObject(lm)
			writeObjectFile(t, filepath.Join(dir, "obj.o"), o)
			ctorSize := len(o.Section(".text").Data)
			main, err := filepath.Abs(filepath.Join("testdata", "link", "main.c"))
			if err != nil {
				t.Fatal(err)
			}
			mainDone := false
			for k, col := range linkColumns {
				ld, pie := col[0], col[1]
				if !slices.Contains(lm.linkers, ld) {
					continue // no such cell
				}
				t.Run(ld+pie, func(t *testing.T) {
					tooltest.Sample(t, i, k, len(linkMachines), len(linkColumns))
					if !mainDone {
						runTool(t, dir, cc, "-c", main, "-o", "main.o")
						mainDone = true
					}
					args := []string{"-fuse-ld=" + ld, pie, "main.o", "obj.o", "-o", "prog-" + ld + pie}
					if ld == "lld" {
						args = append([]string{"-B" + lldDir(t)}, args...)
					} else {
						lookTool(t, strings.TrimSuffix(lm.cc, "gcc")+"ld."+ld) // gcc's error would not say why
					}
					prog := linkAndRun(t, dir, cc, run, args)
					progs = append(progs, linked{lm.name + "/" + ld + pie, prog, ctorSize})
				})
			}
		})
	}
	if len(progs) == 0 {
		return
	}
	var files []string
	for _, p := range progs {
		files = append(files, p.prog)
	}
	checkReadelfCleanAll(t, files, []string{"--all"}, []string{"-aW"})
	frames, _ := toolOnFiles(t, "", lookTool(t, "readelf"), []string{"-wf"}, files, readelfHead)
	for _, p := range progs {
		t.Run("unwind/"+p.name, func(t *testing.T) { checkUnwindTable(t, p.prog, p.ctorSize, frames[p.prog]) })
	}
}

// linkAndRun links with cc args in dir and runs the program (under run):
// the linker must print nothing, and the program its two lines. It returns
// the program.
func linkAndRun(t *testing.T, dir, cc string, run, args []string) string {
	prog := filepath.Join(dir, args[len(args)-1])
	stdout, stderr := runTool(t, dir, cc, args...)
	if stdout != "" || stderr != "" {
		t.Errorf("%s %s printed:\n%s%s", cc, strings.Join(args, " "), stdout, stderr)
	}
	got, _ := runTool(t, dir, append(run, prog)[0], append(run, prog)[1:]...)
	if want := ctorLine + "\n" + dataLine + "\n"; got != want {
		t.Errorf("%s printed %q, want %q", filepath.Base(prog), got, want)
	}
	return prog
}

// checkUnwindTable finds ctor in the linked program's .eh_frame_hdr search
// table (LSB §10.6.2) and its FDE, with the function's pc range, in what
// binutils readelf -wf prints of it (frames).
func checkUnwindTable(t *testing.T, prog string, size int, frames string) {
	t.Helper()
	f := openELF(t, prog)
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var ctor uint64
	for _, s := range syms {
		if s.Name == "ctor" {
			ctor = s.Value
		}
	}
	if ctor == 0 {
		t.Fatal("no symbol ctor in the program")
	}
	hdr := f.Section(".eh_frame_hdr")
	if hdr == nil {
		t.Fatal("no .eh_frame_hdr")
	}
	b, err := hdr.Data()
	// version 1; eh_frame_ptr pcrel|sdata4; fde_count udata4; table datarel|sdata4.
	if err != nil || len(b) < 12 || !bytes.Equal(b[:4], []byte{1, 0x1b, 0x03, 0x3b}) {
		t.Fatalf(".eh_frame_hdr % x, %v", b, err)
	}
	n := int(f.ByteOrder.Uint32(b[8:]))
	indexed := false
	for i := 0; i < n && 12+8*i+8 <= len(b); i++ {
		loc := hdr.Addr + uint64(int32(f.ByteOrder.Uint32(b[12+8*i:])))
		indexed = indexed || loc == ctor
	}
	if !indexed {
		t.Errorf(".eh_frame_hdr has %d entries, none for ctor at %#x", n, ctor)
	}
	segment := false
	for _, p := range f.Progs {
		segment = segment || p.Type == elf.PT_GNU_EH_FRAME && p.Vaddr == hdr.Addr
	}
	if !segment {
		t.Error("no PT_GNU_EH_FRAME segment for .eh_frame_hdr")
	}
	if want := fmt.Sprintf("pc=%016x..%016x", ctor, ctor+uint64(size)); !strings.Contains(frames, want) {
		t.Errorf("readelf -wf shows no FDE with %s:\n%s", want, frames)
	}
}
