package wrap

import (
	"debug/macho"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/internal/objfmt"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/wrap/internal/stubs"
)

// MachOHost reports whether triple names an Apple host, whose objects are
// Mach-O (x86_64-apple-macosx10.15.0, arm64-apple-macos). [GPUMachO]
// makes their registration objects; [GPU] refuses them.
func MachOHost(triple string) bool { return objfmt.Of(triple) == "Mach-O" }

// Flags of the sections of a Mach-O wrapper object, as llc gives them.
const (
	machoCodeFlags    = machoobj.S_ATTR_SOME_INSTRUCTIONS // __TEXT,__StaticInit, named without attributes
	machoEHFrameFlags = 0x6800000b                        // S_COALESCED, S_ATTR_NO_TOC, S_ATTR_STRIP_STATIC_SYMS, S_ATTR_LIVE_SUPPORT
	machoUnwindFlags  = machoobj.S_ATTR_DEBUG
	nNoDeadStrip      = 0x20 // n_desc N_NO_DEAD_STRIP: what llvm.used makes of a symbol
)

// GPUMachO returns the CUDA or HIP registration object that LLVM main's
// clang-linker-wrapper makes for a fatbin on a macOS host, x86-64 or arm64
// (docs/registration.md#macos): the same module as [GPU]'s (the 56-byte
// entries checked for their kind), its functions in __TEXT,__StaticInit,
// the fatbin in __HIP,__hip_fatbin (CUDA: __NV_CUDA,__nv_fatbin), the
// 24-byte wrapper in __HIP,__fatbin (__NV_CUDA,__fatbin), the handle in
// __DATA,__bss, the constructor's pointer in __DATA,__mod_init_func, the
// entries bounded by section$start$__LLVM$offload_entries and
// section$end$__LLVM$offload_entries, which ld64 defines, with a dummy in
// __LLVM,offload_entries kept by N_NO_DEAD_STRIP, and the functions'
// __LD,__compact_unwind and __TEXT,__eh_frame: section by section, symbol
// by symbol and byte for byte what llc-22 makes of that module for the
// triple (the code measured with llc-22; main's own code generator is
// taken to emit the same). Only releases whose wrapper writes Mach-O
// objects (release.Wrapper.MachO: 24) are accepted; the fatbin is checked
// as [GPU] checks it.
func GPUMachO(opt Options, kind offload.OffloadKind, data *io.SectionReader) (*machoobj.Object, error) {
	fb, r, names, err := gpuInputs(opt, kind, data)
	if err != nil {
		return nil, err
	}
	if !r.Wrapper.MachO {
		return nil, fmt.Errorf("wrap: %v for a macOS host: %w (LLVM main's wrapper writes Mach-O objects: 24)", r, goffload.ErrUnsupported)
	}
	o, err := machoobj.ForTriple(opt.Triple)
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	m := stubs.MachOX86_64
	if o.Cpu == machoobj.CpuArm64 {
		m = stubs.MachOARM64
	}
	code, err := stubs.MachOGPU(m, names.kind, r.Major)
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	b := &machoBuilder{o: o, code: code, arm64: m == stubs.MachOARM64}
	return b.build(kind, names, fb)
}

// machoBuilder assembles one Mach-O wrapper object.
type machoBuilder struct {
	o     *machoobj.Object
	code  *stubs.MachOCode
	arm64 bool
	ltmps []*machoobj.Symbol // arm64: one at the start of each section
}

// section adds s (and its ltmp symbol on arm64).
func (b *machoBuilder) section(seg, name string, align uint32, flags uint32) *machoobj.Section {
	s := &machoobj.Section{Seg: seg, Name: name, Align: align, Flags: flags}
	b.o.Sections = append(b.o.Sections, s)
	return s
}

// ltmp adds the arm64 writer's symbol at the start of s to the symbols.
func (b *machoBuilder) ltmp(s *machoobj.Section) *machoobj.Symbol {
	if !b.arm64 {
		return nil
	}
	sym := &machoobj.Symbol{Name: fmt.Sprintf("ltmp%d", len(b.ltmps)), Type: machoobj.N_SECT, Section: s}
	b.ltmps = append(b.ltmps, sym)
	b.o.Symbols = append(b.o.Symbols, sym)
	return sym
}

func local(name string, s *machoobj.Section, off uint64) *machoobj.Symbol {
	return &machoobj.Symbol{Name: name, Type: machoobj.N_SECT, Section: s, Value: off}
}

func (b *machoBuilder) build(kind offload.OffloadKind, names gpuKindNames, fb fatbin) (*machoobj.Object, error) {
	o, c := b.o, b.code
	fatbin, wrapperSec, _ := offload.MachOFatbinSections(kind) // a kind gpuInputs took
	fatSeg, fatSec, _ := strings.Cut(fatbin, ",")
	wrapSeg, wrapSec, _ := strings.Cut(wrapperSec, ",")
	text := b.section("__TEXT", "__text", 1, machoobj.S_ATTR_PURE_INSTRUCTIONS)
	text.Data = []byte{}
	code := b.section("__TEXT", "__StaticInit", uint32(c.Align), machoCodeFlags)
	code.Data = c.Text
	entries := b.section(offload.MachOEntriesSegment, offload.MachOEntriesSection, 8, machoobj.S_REGULAR)
	entries.Data = []byte{0} // the zero-sized dummy takes a byte, as LLVM gives every Mach-O global
	fat := b.section(fatSeg, fatSec, uint32(machoFatbinAlign(fb.Size)), machoobj.S_REGULAR)
	if fb.R == nil {
		fat.Data = []byte{}
	} else {
		fat.Reader, fat.Size = fb.R, fb.Size
	}
	wrapper := b.section(wrapSeg, wrapSec, 8, machoobj.S_REGULAR)
	bss := b.section("__DATA", "__bss", 8, machoobj.S_ZEROFILL)
	bss.Size = 8
	initFunc := b.section("__DATA", "__mod_init_func", 8, machoobj.S_MOD_INIT_FUNC_POINTERS)
	unwind := b.section("__LD", "__compact_unwind", 8, machoUnwindFlags)
	eh := b.section("__TEXT", "__eh_frame", 8, machoEHFrameFlags)

	// The symbols, in the order LLVM's code generator makes them.
	funcs := map[string]*machoobj.Symbol{}
	for _, f := range c.Funcs {
		funcs[f.Name] = local("_"+f.Name, code, f.Offset)
	}
	p := "." + names.prefix
	wrapSym := local("_.fatbin_wrapper", wrapper, 0)
	handle := local("_"+p+".binary_handle", bss, 0)
	dummy := local("___dummy."+offload.MachOEntriesSegment+","+offload.MachOEntriesSection, entries, 0)
	dummy.Desc = nNoDeadStrip
	image := local("_.fatbin_image", fat, 0)
	b.ltmp(text)
	b.ltmp(code)
	o.Symbols = append(o.Symbols, funcs[p+".fatbin_reg"], wrapSym, handle, funcs[p+".globals_reg"], funcs[p+".fatbin_unreg"])
	b.ltmp(entries)
	o.Symbols = append(o.Symbols, dummy)
	b.ltmp(fat)
	o.Symbols = append(o.Symbols, image)
	for _, s := range []*machoobj.Section{wrapper, bss, initFunc, unwind} {
		b.ltmp(s)
	}
	ehStart := b.ltmp(eh)
	targets := map[stubs.Target]*machoobj.Symbol{
		stubs.FatbinWrapper: wrapSym, stubs.BinaryHandle: handle,
		stubs.GlobalsReg: funcs[p+".globals_reg"], stubs.FatbinUnreg: funcs[p+".fatbin_unreg"],
	}
	for t, name := range c.Symbols {
		if _, ok := targets[t]; !ok {
			u := &machoobj.Symbol{Name: name, Type: machoobj.N_UNDF | machoobj.N_EXT}
			targets[t] = u
			o.Symbols = append(o.Symbols, u)
		}
	}

	// __StaticInit's relocations, and what the code says of the object.
	for _, r := range c.Relocs {
		code.Relocs = append(code.Relocs, machoobj.Reloc{Offset: uint32(r.Offset), Symbol: targets[r.Target], Type: r.Type, PCRel: r.PCRel, Length: r.Length})
	}
	for _, d := range c.DataInCode {
		o.DataInCode = append(o.DataInCode, machoobj.DataInCode{Section: code, Offset: uint32(d.Offset), Length: d.Length, Kind: d.Kind})
	}
	for _, h := range c.LOH {
		hint := machoobj.Hint{Kind: uint64(h.Kind)}
		for _, off := range h.Offsets {
			hint.Args = append(hint.Args, machoobj.Place{Section: code, Offset: off})
		}
		o.Hints = append(o.Hints, hint)
	}

	// The data: the wrapper, the constructor's pointer.
	wrapper.Data = make([]byte, 24)
	binary.LittleEndian.PutUint32(wrapper.Data, names.magic)
	binary.LittleEndian.PutUint32(wrapper.Data[4:], 1)
	unsigned := uint8(macho.X86_64_RELOC_UNSIGNED) // 0, as ARM64_RELOC_UNSIGNED
	wrapper.Relocs = []machoobj.Reloc{{Offset: 8, Symbol: image, Type: unsigned, Length: 3}}
	initFunc.Data = make([]byte, 8)
	initFunc.Relocs = []machoobj.Reloc{{Symbol: funcs[p+".fatbin_reg"], Type: unsigned, Length: 3}}

	// The unwind sections need the layout: their bytes hold addresses.
	addrs, err := machoobj.Addresses(o)
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	for i, s := range o.Sections {
		s.Base = addrs[i]
	}
	unwind.Data = make([]byte, 32*len(c.Funcs))
	for i, f := range c.Funcs {
		rec := unwind.Data[32*i:]
		binary.LittleEndian.PutUint64(rec, code.Base+f.Offset)
		binary.LittleEndian.PutUint32(rec[8:], uint32(f.Size))
		binary.LittleEndian.PutUint32(rec[12:], f.CompactUnwind)
	}
	for i := len(c.Funcs) - 1; i >= 0; i-- {
		unwind.Relocs = append(unwind.Relocs, machoobj.Reloc{Offset: uint32(32 * i), Section: code, Type: unsigned, Length: 3})
	}
	ehData, pcBegins, err := machoEHFrame(c)
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	eh.Data = ehData
	for i, f := range c.Funcs {
		at := pcBegins[i]
		if b.arm64 {
			// ld64 takes the function minus the section's start, plus the
			// field's distance back to that start.
			binary.LittleEndian.PutUint64(eh.Data[at:], uint64(-int64(at)))
			continue
		}
		binary.LittleEndian.PutUint64(eh.Data[at:], uint64(int64(code.Base+f.Offset)-int64(eh.Base+at)))
	}
	if b.arm64 {
		for i := len(c.Funcs) - 1; i >= 0; i-- {
			at := uint32(pcBegins[i])
			eh.Relocs = append(eh.Relocs,
				machoobj.Reloc{Offset: at, Symbol: ehStart, Type: uint8(macho.ARM64_RELOC_SUBTRACTOR), Length: 3},
				machoobj.Reloc{Offset: at, Symbol: funcs[c.Funcs[i].Name], Type: uint8(macho.ARM64_RELOC_UNSIGNED), Length: 3})
		}
	}
	return o, nil
}

// machoFatbinAlign is the alignment llc gives the fatbin global on a
// Mach-O host: 16 for more than 16 bytes, else 1 (Darwin's data layouts
// give i8 no preferred alignment of its own).
func machoFatbinAlign(size int64) uint64 {
	if size > 16 {
		return 16
	}
	return 1
}

// machoEHFrame returns __eh_frame as LLVM writes it for a Mach-O object:
// one CIE (version 1, "zR", 8-byte pc-relative pointers), padded to end
// at a multiple of 4, then an FDE per function, each padded to end at a
// multiple of 8 (LLVM aligns the stream, not the record's length), and
// the offsets of the FDEs' pc_begin fields.
func machoEHFrame(c *stubs.MachOCode) ([]byte, []uint64, error) {
	le := binary.LittleEndian
	var b []byte
	record := func(align int, body func() error) error {
		start := len(b)
		b = append(b, 0, 0, 0, 0)
		if err := body(); err != nil {
			return err
		}
		for len(b)%align != 0 { // the section's offset: it starts aligned to 8
			b = append(b, 0) // DW_CFA_nop
		}
		le.PutUint32(b[start:], uint32(len(b)-start-4))
		return nil
	}
	fi := c.Frame
	err := record(4, func() error {
		b = le.AppendUint32(b, 0)
		b = append(b, 1, 'z', 'R', 0)
		b = binary.AppendUvarint(b, fi.CodeAlign)
		b = appendSLEB(b, fi.DataAlign)
		b = append(b, byte(fi.RAReg), 1, stubs.MachOFDEPointerEncoding)
		var err error
		b, err = ehframe.AppendCFI(b, fi, fi.Initial)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var pcBegins []uint64
	for _, f := range c.Funcs {
		err := record(8, func() error {
			b = le.AppendUint32(b, uint32(len(b))) // back to the CIE at 0
			pcBegins = append(pcBegins, uint64(len(b)))
			b = le.AppendUint64(b, 0)
			b = le.AppendUint64(b, f.Size)
			b = append(b, 0) // augmentation data length
			var err error
			b, err = ehframe.AppendCFI(b, fi, f.CFI)
			return err
		})
		if err != nil {
			return nil, nil, fmt.Errorf("FDE of %s: %w", f.Name, err)
		}
	}
	return b, pcBegins, nil
}

// appendSLEB appends v as signed LEB128.
func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
