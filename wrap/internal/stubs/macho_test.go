package stubs

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/internal/tooltest"
)

// machoMachines are the Mach-O hosts with the triples llc compiles for.
var machoMachines = []struct {
	m      MachOMachine
	triple string
	elf    elf.Machine // for the decoders
}{
	{MachOX86_64, "x86_64-apple-macosx10.15.0", elf.EM_X86_64},
	{MachOARM64, "arm64-apple-macosx", elf.EM_AARCH64},
}

// Load commands that debug/macho does not decode (<mach-o/loader.h>).
const (
	lcDataInCode              = 0x29
	lcLinkerOptimizationHint  = 0x2e
	machoCompactUnwindRecord  = 32
	machoRelocUnsignedRelType = 0 // X86_64_RELOC_UNSIGNED, ARM64_RELOC_UNSIGNED
)

// TestMachOGPUMatchesLLC compares MachOGPU with the object llc-22 makes of
// GPUModuleIRMachO(22): __StaticInit's bytes, alignment and relocations
// (with their symbols), the functions' symbols, LC_DATA_IN_CODE,
// LC_LINKER_OPTIMIZATION_HINT (as bytes and as hints), the records of
// __LD,__compact_unwind and the CIE and FDEs of __TEXT,__eh_frame.
func TestMachOGPUMatchesLLC(t *testing.T) {
	t.Parallel()
	llc := tooltest.Tool(t, "llc", 22)
	for _, mm := range machoMachines {
		for _, kind := range gpuKinds {
			t.Run(fmt.Sprintf("%v/%v", mm.m, kind), func(t *testing.T) {
				t.Parallel()
				c, err := MachOGPU(mm.m, kind, 22)
				if err != nil {
					t.Fatal(err)
				}
				obj, err := llcObject(llc, mm.triple, GPUModuleIRMachO(22, kind, gpuImage))
				if err != nil {
					t.Fatal(err)
				}
				raw, err := os.ReadFile(obj)
				if err != nil {
					t.Fatal(err)
				}
				f, err := macho.NewFile(bytes.NewReader(raw))
				if err != nil {
					t.Fatal(err)
				}
				names := machoSymbolNames(t, f, raw)
				checkMachOText(t, f, names, mm.m, c)
				checkMachOCommands(t, f, raw, c)
				checkMachOCompactUnwind(t, f, c)
				checkMachOEHFrame(t, f, names, c)
			})
		}
	}
}

// machoSymbolNames returns the names of the symbol table as the file
// spells them: debug/macho takes the '_' off names with a dot, which
// are Go's.
func machoSymbolNames(t *testing.T, f *macho.File, raw []byte) []string {
	t.Helper()
	st := f.Symtab
	if st == nil {
		t.Fatal("no LC_SYMTAB")
	}
	cmd := st.Raw() // cmd, cmdsize, symoff, nsyms, stroff, strsize (debug/macho leaves SymtabCmd empty)
	if len(cmd) < 24 {
		t.Fatal("short LC_SYMTAB")
	}
	symoff, nsyms, stroff := f.ByteOrder.Uint32(cmd[8:]), f.ByteOrder.Uint32(cmd[12:]), f.ByteOrder.Uint32(cmd[16:])
	var names []string
	for i := range nsyms {
		off := uint64(symoff) + 16*uint64(i) // nlist_64
		if off+16 > uint64(len(raw)) {
			t.Fatalf("symbol %d outside the file", i)
		}
		strx := uint64(stroff) + uint64(f.ByteOrder.Uint32(raw[off:]))
		end := bytes.IndexByte(raw[min(strx, uint64(len(raw))):], 0)
		if strx >= uint64(len(raw)) || end < 0 {
			t.Fatalf("symbol %d: name outside the file", i)
		}
		names = append(names, string(raw[strx:strx+uint64(end)]))
	}
	return names
}

// machoStaticInit returns __TEXT,__StaticInit and its 1-based index.
func machoStaticInit(t *testing.T, f *macho.File) (*macho.Section, int) {
	t.Helper()
	for i, s := range f.Sections {
		if s.Seg == "__TEXT" && s.Name == "__StaticInit" {
			return s, i + 1
		}
	}
	t.Fatal("no __TEXT,__StaticInit")
	return nil, 0
}

func checkMachOText(t *testing.T, f *macho.File, names []string, m MachOMachine, c *MachOCode) {
	sec, index := machoStaticInit(t, f)
	text, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(text, c.Text) {
		t.Errorf("__StaticInit:\n got % x\nwant % x", c.Text, text)
	}
	if got, want := c.Align, uint64(1)<<sec.Align; got != want {
		t.Errorf("alignment %d, llc's %d", got, want)
	}

	type reloc struct {
		Offset        uint32
		Type          string
		PCRel, Extern bool
		Scattered     bool
		Length        uint8
		Symbol        string
	}
	var want, got []reloc
	for _, r := range sec.Relocs {
		sym := fmt.Sprintf("section %d", r.Value)
		if r.Extern {
			sym = names[r.Value]
		}
		want = append(want, reloc{r.Addr, m.RelocTypeName(r.Type), r.Pcrel, r.Extern, r.Scattered, r.Len, sym})
	}
	for _, r := range c.Relocs {
		sym, ok := c.Symbols[r.Target]
		if !ok {
			t.Errorf("no symbol for %s", GPUTargetName(r.Target))
		}
		got = append(got, reloc{uint32(r.Offset), m.RelocTypeName(r.Type), r.PCRel, true, false, r.Length, sym})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("relocations of __StaticInit (-llc +MachOGPU):\n%s", diff)
	}

	for _, fn := range c.Funcs {
		found := false
		for i, s := range f.Symtab.Syms {
			if names[i] == "_"+fn.Name {
				found = true
				if int(s.Sect) != index || s.Value != sec.Addr+fn.Offset {
					t.Errorf("%s: symbol in section %d at %#x, want %d at %#x", fn.Name, s.Sect, s.Value, index, sec.Addr+fn.Offset)
				}
			}
		}
		if !found {
			t.Errorf("no symbol _%s", fn.Name)
		}
	}
}

// machoCommand returns the data of the first load command cmd (a linkedit
// data command: cmd, cmdsize, dataoff, datasize), or nil.
func machoCommand(t *testing.T, f *macho.File, raw []byte, cmd uint32) []byte {
	t.Helper()
	for _, l := range f.Loads {
		b := l.Raw()
		if len(b) < 16 || f.ByteOrder.Uint32(b) != cmd {
			continue
		}
		off, size := f.ByteOrder.Uint32(b[8:]), f.ByteOrder.Uint32(b[12:])
		if uint64(off)+uint64(size) > uint64(len(raw)) {
			t.Fatalf("load command %#x: data [%#x, +%#x) outside the file", cmd, off, size)
		}
		return raw[off : off+size]
	}
	return nil
}

func checkMachOCommands(t *testing.T, f *macho.File, raw []byte, c *MachOCode) {
	sec, _ := machoStaticInit(t, f)

	var dice []MachODataInCode
	data := machoCommand(t, f, raw, lcDataInCode)
	for ; len(data) >= 8; data = data[8:] {
		dice = append(dice, MachODataInCode{
			Offset: uint64(f.ByteOrder.Uint32(data)) - sec.Addr,
			Length: f.ByteOrder.Uint16(data[4:]),
			Kind:   f.ByteOrder.Uint16(data[6:]),
		})
	}
	if diff := cmp.Diff(dice, c.DataInCode); diff != "" {
		t.Errorf("LC_DATA_IN_CODE (-llc +MachOGPU):\n%s", diff)
	}

	loh := machoCommand(t, f, raw, lcLinkerOptimizationHint)
	var hints []MachOLOH
	for r := bytes.NewReader(loh); r.Len() > 0; {
		kind, err1 := binary.ReadUvarint(r)
		n, err2 := binary.ReadUvarint(r)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatalf("LC_LINKER_OPTIMIZATION_HINT: %v", err)
		}
		if kind == 0 && n == 0 { // padding
			continue
		}
		h := MachOLOH{Kind: uint32(kind)}
		for range n {
			a, err := binary.ReadUvarint(r)
			if err != nil {
				t.Fatalf("LC_LINKER_OPTIMIZATION_HINT: %v", err)
			}
			h.Offsets = append(h.Offsets, a-sec.Addr)
		}
		hints = append(hints, h)
	}
	if diff := cmp.Diff(hints, c.LOH); diff != "" {
		t.Errorf("LC_LINKER_OPTIMIZATION_HINT (-llc +MachOGPU):\n%s", diff)
	}
	if got := AppendMachOLOH(nil, c.LOH, sec.Addr); !bytes.Equal(got, loh) && len(c.LOH) > 0 {
		t.Errorf("AppendMachOLOH:\n got % x\nwant % x", got, loh)
	}
}

func checkMachOCompactUnwind(t *testing.T, f *macho.File, c *MachOCode) {
	sec, _ := machoStaticInit(t, f)
	cu := f.Section("__compact_unwind")
	if cu == nil || cu.Seg != "__LD" {
		t.Fatal("no __LD,__compact_unwind")
	}
	data, err := cu.Data()
	if err != nil {
		t.Fatal(err)
	}
	type record struct {
		Func     string
		Size     uint32
		Encoding string
	}
	var want, got []record
	for ; len(data) >= machoCompactUnwindRecord; data = data[machoCompactUnwindRecord:] {
		addr := f.ByteOrder.Uint64(data) // relocated against __StaticInit: its address
		name := fmt.Sprintf("%#x", addr)
		for _, fn := range c.Funcs {
			if sec.Addr+fn.Offset == addr {
				name = fn.Name
			}
		}
		if p, l := f.ByteOrder.Uint64(data[16:]), f.ByteOrder.Uint64(data[24:]); p != 0 || l != 0 {
			t.Errorf("%s: personality %#x, lsda %#x", name, p, l)
		}
		want = append(want, record{name, f.ByteOrder.Uint32(data[8:]), fmt.Sprintf("%#08x", f.ByteOrder.Uint32(data[12:]))})
	}
	for _, fn := range c.Funcs {
		got = append(got, record{fn.Name, uint32(fn.Size), fmt.Sprintf("%#08x", fn.CompactUnwind)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("__compact_unwind (-llc +MachOGPU):\n%s", diff)
	}
}

// machoFDE is an FDE of __eh_frame as the test compares it.
type machoFDE struct {
	Func  string // the function at pc_begin
	Range uint64
	CFI   []string
}

func checkMachOEHFrame(t *testing.T, f *macho.File, names []string, c *MachOCode) {
	sec, _ := machoStaticInit(t, f)
	eh := f.Section("__eh_frame")
	if eh == nil || eh.Seg != "__TEXT" {
		t.Fatal("no __TEXT,__eh_frame")
	}
	data, err := eh.Data()
	if err != nil {
		t.Fatal(err)
	}
	funcAt := func(addr uint64) string {
		for _, fn := range c.Funcs {
			if sec.Addr+fn.Offset == addr {
				return fn.Name
			}
		}
		return fmt.Sprintf("%#x", addr)
	}
	var cie ehframe.FrameInfo
	var fdes []machoFDE
	for off := 0; off+4 <= len(data); {
		n := int(f.ByteOrder.Uint32(data[off:]))
		if n == 0 || off+4+n > len(data) {
			break
		}
		rec := data[off+4 : off+4+n]
		if f.ByteOrder.Uint32(rec) == 0 {
			cie = decodeMachOCIE(t, rec)
		} else {
			// pc_begin and pc_range are 8 bytes (the CIE's pointer
			// encoding, MachOFDEPointerEncoding); pc_begin is resolved
			// (x86-64) or an UNSIGNED/SUBTRACTOR pair naming the function
			// (arm64).
			if len(rec) < 21 || rec[20] != 0 {
				t.Fatalf("FDE at %#x: % x", off, rec)
			}
			fde := machoFDE{Range: f.ByteOrder.Uint64(rec[12:])}
			field := uint64(off + 8)
			fde.Func = funcAt(eh.Addr + field + f.ByteOrder.Uint64(rec[4:]))
			for _, r := range eh.Relocs {
				if uint64(r.Addr) == field && r.Extern && r.Type == machoRelocUnsignedRelType {
					fde.Func = strings.TrimPrefix(names[r.Value], "_")
				}
			}
			fde.CFI = decodeCFIStrings(t, rec[21:], cie)
			fdes = append(fdes, fde)
		}
		off += 4 + n
	}
	wantCIE := []string{fmt.Sprint(cie.CodeAlign, cie.DataAlign, cie.RAReg), fmt.Sprint(cie.Initial)}
	gotCIE := []string{fmt.Sprint(c.Frame.CodeAlign, c.Frame.DataAlign, c.Frame.RAReg), fmt.Sprint(c.Frame.Initial)}
	if diff := cmp.Diff(wantCIE, gotCIE); diff != "" {
		t.Errorf("CIE (-llc +MachOGPU):\n%s", diff)
	}
	var got []machoFDE
	for _, fn := range c.Funcs {
		var cfi []string
		for _, op := range fn.CFI {
			cfi = append(cfi, op.String())
		}
		got = append(got, machoFDE{fn.Name, fn.Size, cfi})
	}
	if diff := cmp.Diff(fdes, got); diff != "" {
		t.Errorf("FDEs (-llc +MachOGPU):\n%s", diff)
	}
}

// decodeMachOCIE reads a version-1 "zR" CIE after its length field.
func decodeMachOCIE(t *testing.T, rec []byte) ehframe.FrameInfo {
	t.Helper()
	if len(rec) < 8 || string(rec[4:8]) != "\x01zR\x00" {
		t.Fatalf("CIE: not version 1 \"zR\": % x", rec)
	}
	r := bytes.NewReader(rec[8:])
	code, err1 := binary.ReadUvarint(r)
	data, err2 := readSLEB(r)
	ra, err3 := r.ReadByte()
	augLen, err4 := binary.ReadUvarint(r)
	enc, err5 := r.ReadByte()
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		t.Fatalf("CIE: %v", err)
	}
	if augLen != 1 || enc != MachOFDEPointerEncoding {
		t.Errorf("CIE: augmentation data length %d, pointer encoding %#x; want 1, %#x", augLen, enc, MachOFDEPointerEncoding)
	}
	fi := ehframe.FrameInfo{CodeAlign: code, DataAlign: data, RAReg: uint64(ra)}
	fi.Initial = decodeCFI(t, rec[len(rec)-r.Len():], fi)
	return fi
}

// readSLEB reads a signed LEB128 number.
func readSLEB(r io.ByteReader) (int64, error) {
	var v int64
	for shift := 0; shift < 64; shift += 7 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		v |= int64(b&0x7f) << shift
		if b&0x80 == 0 {
			if shift+7 < 64 && b&0x40 != 0 {
				v -= 1 << (shift + 7)
			}
			return v, nil
		}
	}
	return 0, errors.New("SLEB128 too long")
}

func decodeCFIStrings(t *testing.T, b []byte, fi ehframe.FrameInfo) []string {
	var out []string
	for _, op := range decodeCFI(t, b, fi) {
		out = append(out, op.String())
	}
	return out
}

// decodeCFI decodes the call-frame instructions that these functions use,
// unfactored with fi, dropping DW_CFA_nop.
func decodeCFI(t *testing.T, b []byte, fi ehframe.FrameInfo) ehframe.CFI {
	t.Helper()
	r := bytes.NewReader(b)
	var out ehframe.CFI
	for r.Len() > 0 {
		op, _ := r.ReadByte()
		var err error
		switch {
		case op&0xc0 == 0x40: // DW_CFA_advance_loc
			out = append(out, ehframe.AdvanceLoc(uint64(op&0x3f)*fi.CodeAlign))
		case op&0xc0 == 0x80: // DW_CFA_offset
			var off uint64
			off, err = binary.ReadUvarint(r)
			out = append(out, ehframe.Offset(uint64(op&0x3f), int64(off)*fi.DataAlign))
		case op == 0x0c: // DW_CFA_def_cfa
			var reg, off uint64
			reg, err = binary.ReadUvarint(r)
			if err == nil {
				off, err = binary.ReadUvarint(r)
			}
			out = append(out, ehframe.DefCFA(reg, off))
		case op == 0x0e: // DW_CFA_def_cfa_offset
			var off uint64
			off, err = binary.ReadUvarint(r)
			out = append(out, ehframe.DefCFAOffset(off))
		case op == 0x02: // DW_CFA_advance_loc1
			var d byte
			d, err = r.ReadByte()
			out = append(out, ehframe.AdvanceLoc(uint64(d)*fi.CodeAlign))
		case op == 0x00: // DW_CFA_nop
		default:
			t.Fatalf("call-frame instruction %#x not decoded", op)
		}
		if err != nil {
			t.Fatalf("call-frame instruction %#x: %v", op, err)
		}
	}
	return out
}

func TestMachOGPURefuses(t *testing.T) {
	for _, c := range []struct {
		m    MachOMachine
		kind GPUKind
		llvm int
	}{
		{MachOMachine(7), HIP, 22},
		{MachOX86_64, GPUKind(9), 22},
		{MachOARM64, CUDA, 19}, // no Kind-checking module, so no Mach-O one
		{MachOARM64, CUDA, 99},
	} {
		if _, err := MachOGPU(c.m, c.kind, c.llvm); !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("MachOGPU(%v, %v, %d): %v, want ErrUnsupported", c.m, c.kind, c.llvm, err)
		}
	}
}

// machoGoldenFile holds MachOGPU's code as golang.org/x/arch decodes it,
// with relocations, hints and the jump table, checked by eye against
// `llvm-objdump -d -r` of llc-22's objects. Regenerate with
// `go test -run TestMachODecodeMatchesGolden -gpu.update`.
const machoGoldenFile = "macho_decode.golden"

func TestMachODecodeMatchesGolden(t *testing.T) {
	var b strings.Builder
	for _, mm := range machoMachines {
		for _, kind := range gpuKinds {
			c, err := MachOGPU(mm.m, kind, 22)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "## %v %v LLVM 22\n", mm.m, kind)
			listing, err := machoListing(mm.m, mm.elf, c)
			if err != nil {
				t.Errorf("%v %v: %v", mm.m, kind, err)
			}
			b.WriteString(listing + "\n")
		}
	}
	got := b.String()
	if *updateGPUGolden {
		if err := os.WriteFile(machoGoldenFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(machoGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", machoGoldenFile, diff)
	}
}

// machoListing is c decoded, one instruction a line, with the functions'
// names and compact unwind encodings, the relocations after their
// instruction, the data-in-code ranges as words and the hints at the end.
func machoListing(m MachOMachine, em elf.Machine, c *MachOCode) (string, error) {
	var b strings.Builder
	relocs := map[uint64][]MachOReloc{}
	for _, r := range c.Relocs {
		relocs[r.Offset] = append(relocs[r.Offset], r)
	}
	for pc := 0; pc < len(c.Text); {
		for _, f := range c.Funcs {
			if f.Offset == uint64(pc) {
				fmt.Fprintf(&b, "%s: (compact unwind %#08x)\n", f.Name, f.CompactUnwind)
			}
		}
		var text string
		n := 0
		for _, d := range c.DataInCode {
			if uint64(pc) >= d.Offset && uint64(pc) < d.Offset+uint64(d.Length) {
				text, n = fmt.Sprintf(".long %#x", binary.LittleEndian.Uint32(c.Text[pc:])), 4
			}
		}
		if n == 0 {
			var err error
			if text, n, err = decodeOne(em, c.Text[pc:], uint64(pc)); err != nil {
				return b.String(), fmt.Errorf("%v at %#x: % x: %w", m, pc, c.Text[pc:min(pc+4, len(c.Text))], err)
			}
		}
		fmt.Fprintf(&b, "%#04x: %s", pc, text)
		for off := pc; off < pc+n; off++ {
			for _, r := range relocs[uint64(off)] {
				fmt.Fprintf(&b, "  [%s %s %s]", m.RelocTypeName(r.Type), GPUTargetName(r.Target), c.Symbols[r.Target])
			}
		}
		b.WriteString("\n")
		pc += n
	}
	for _, h := range c.LOH {
		fmt.Fprintf(&b, "hint %d %#x\n", h.Kind, h.Offsets)
	}
	return b.String(), nil
}
