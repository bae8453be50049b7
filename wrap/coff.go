package wrap

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/concat"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap/internal/stubs"
)

// COFFHost reports whether triple names a Windows host, whose objects are
// COFF: an OS part "windows" (x86_64-pc-windows-msvc,
// x86_64-w64-windows-gnu) or "mingw32" (x86_64-w64-mingw32, which clang
// reads as windows-gnu). [OpenMPCOFF] and [GPUCOFF] make their registration
// objects; [OpenMP] and [GPU] refuse them.
func COFFHost(triple string) bool {
	parts := strings.Split(triple, "-")
	for _, p := range parts[1:] {
		if p == "windows" || p == "mingw32" {
			return true
		}
	}
	return false
}

// winHost is a Windows host the COFF wrappers are made for.
type winHost struct {
	mingw bool // x86_64-w64-windows-gnu: constructors in .ctors, exports excluded
}

// coffHost checks that triple is an x86-64 Windows host of the MSVC or GNU
// (MinGW) environment and the release one whose COFF wrapper is known
// ([release.Wrapper.COFFBounds]).
func coffHost(r *release.Release, triple string) (winHost, error) {
	parts := strings.Split(triple, "-")
	if !COFFHost(triple) || parts[0] != "x86_64" && parts[0] != "amd64" {
		return winHost{}, fmt.Errorf("wrap: host %q: COFF registration objects are for x86-64 Windows hosts (x86_64-pc-windows-msvc, x86_64-w64-windows-gnu): %w", triple, goffload.ErrUnsupported)
	}
	var h winHost
	switch env := parts[len(parts)-1]; {
	case env == "gnu" || env == "mingw32":
		h.mingw = true
	case env == "msvc" || env == "windows":
	default:
		return winHost{}, fmt.Errorf("wrap: host %q: environment %q (known: msvc, gnu): %w", triple, env, goffload.ErrUnsupported)
	}
	if r.Wrapper.COFFBounds == release.COFFBoundsNone {
		return winHost{}, fmt.Errorf("wrap: %v for a Windows host: %w (the COFF wrapper is known for LLVM 22 to 24)", r, goffload.ErrUnsupported)
	}
	return h, nil
}

// ctorSection is the section of the constructor's pointer at LLVM's
// priority prio: MinGW's .ctors.<65535-prio> (writable, as GNU ld's
// .ctors is), MSVC's .CRT$XCA<prio> (read-only), which the C runtime runs
// in name order (LLVM's getCOFFStaticStructorSection, priorities below 200).
func (h winHost) ctorSection(prio int) (*coffobj.Section, error) {
	if h.mingw {
		return &coffobj.Section{Name: fmt.Sprintf(".ctors.%05d", 65535-prio), Align: 8,
			Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ | coffobj.IMAGE_SCN_MEM_WRITE}, nil
	}
	if prio >= 200 {
		return nil, fmt.Errorf("wrap: constructor priority %d on MSVC: %w", prio, goffload.ErrUnsupported)
	}
	return &coffobj.Section{Name: fmt.Sprintf(".CRT$XCA%05d", prio), Align: 8,
		Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ}, nil
}

const (
	scnCode   = coffobj.IMAGE_SCN_CNT_CODE | coffobj.IMAGE_SCN_MEM_EXECUTE | coffobj.IMAGE_SCN_MEM_READ
	scnRData  = coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ
	scnData   = scnRData | coffobj.IMAGE_SCN_MEM_WRITE
	scnBSS    = coffobj.IMAGE_SCN_CNT_UNINITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ | coffobj.IMAGE_SCN_MEM_WRITE
	funcType  = 0x20 // IMAGE_SYM_DTYPE_FUNCTION << 4
	addr64    = coffobj.IMAGE_REL_AMD64_ADDR64
	rel32     = coffobj.IMAGE_REL_AMD64_REL32
	addr32nb  = coffobj.IMAGE_REL_AMD64_ADDR32NB
	weakAlias = coffobj.IMAGE_WEAK_EXTERN_SEARCH_ALIAS
)

// coffBuilder assembles one COFF wrapper object in LLVM's order: the
// sections' definition symbols first, @feat.00, then every other symbol
// where LLVM's assembler first meets it: the first function, the targets
// of the code's relocations in order, then the data's.
type coffBuilder struct {
	o     *coffobj.Object
	h     winHost
	r     *release.Release
	code  *stubs.WinCode
	entry string // the entries section, llvm_offload_entries

	text, startup, xdata, rdata, start, stop, ctors, pdata *coffobj.Section
	secSym                                                 map[*coffobj.Section]*coffobj.Symbol
	funcs                                                  []*coffobj.Symbol
	local                                                  map[stubs.Target]*coffobj.Symbol // defined in the object
	undef                                                  map[stubs.Target]*coffobj.Symbol
	added                                                  map[*coffobj.Symbol]bool
}

func newCOFFBuilder(h winHost, r *release.Release, code *stubs.WinCode, entries string) *coffBuilder {
	return &coffBuilder{o: &coffobj.Object{Machine: coffobj.MachineAMD64}, h: h, r: r, code: code, entry: entries,
		secSym: map[*coffobj.Section]*coffobj.Symbol{}, local: map[stubs.Target]*coffobj.Symbol{},
		undef: map[stubs.Target]*coffobj.Symbol{}, added: map[*coffobj.Symbol]bool{}}
}

func (b *coffBuilder) section(s *coffobj.Section) {
	b.secSym[s] = b.o.AddSection(s, nil)
}

// head adds .text, .data, .bss (of bss bytes), .text.startup and .xdata.
func (b *coffBuilder) head(bss int64) *coffobj.Section {
	b.text = &coffobj.Section{Name: ".text", Align: 4, Characteristics: scnCode, Data: []byte{}}
	data := &coffobj.Section{Name: ".data", Align: 4, Characteristics: scnData, Data: []byte{}}
	bssSec := &coffobj.Section{Name: ".bss", Align: 4, Characteristics: scnBSS, Size: bss}
	if bss > 0 {
		bssSec.Align = 8
	}
	b.startup = &coffobj.Section{Name: ".text.startup", Align: uint32(b.code.Align), Characteristics: scnCode, Data: b.code.Text}
	var xdata []byte
	for _, f := range b.code.Funcs {
		xdata = append(xdata, f.Unwind...)
	}
	b.xdata = &coffobj.Section{Name: ".xdata", Align: 4, Characteristics: scnRData, Data: xdata}
	for _, s := range []*coffobj.Section{b.text, data, bssSec, b.startup, b.xdata} {
		b.section(s)
	}
	for _, f := range b.code.Funcs {
		b.funcs = append(b.funcs, &coffobj.Symbol{Name: f.Name, Section: b.startup, Value: uint32(f.Offset), Type: funcType,
			StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC})
	}
	return bssSec
}

// entries adds the sections of __start_ and __stop_, which LLVM defines as
// weak_odr arrays that the linker sorts around the entries ($OE): empty
// (22, 23), or from 24 of one zeroed entry each, the sentinel that keeps
// them under /opt:ref.
func (b *coffBuilder) entries() {
	n := 0
	if b.sentinel() {
		n = b.r.Entries.Size
	}
	b.start = &coffobj.Section{Name: b.entry + "$OA", Align: 8, Characteristics: scnRData, Data: make([]byte, n)}
	b.stop = &coffobj.Section{Name: b.entry + "$OZ", Align: 8, Characteristics: scnRData, Data: make([]byte, n)}
	b.section(b.start)
	b.section(b.stop)
}

// sentinel reports whether the release's bounds hold a sentinel entry, and
// the entries begin one entry after __start_.
func (b *coffBuilder) sentinel() bool {
	return b.r.Wrapper.COFFBounds == release.COFFBoundsSentinel
}

// entriesBegin is the addend of a pointer to the first entry against
// __start_: past the sentinel from 24.
func (b *coffBuilder) entriesBegin() uint64 {
	if b.sentinel() {
		return uint64(b.r.Entries.Size)
	}
	return 0
}

// weak returns the weak external name, defaulting to a global symbol at
// the start of sec, as LLVM writes a weak_odr definition on COFF.
func (b *coffBuilder) weak(name string, sec *coffobj.Section) *coffobj.Symbol {
	def := &coffobj.Symbol{Name: ".weak." + name + ".default", Section: sec, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
	return &coffobj.Symbol{Name: name, StorageClass: coffobj.IMAGE_SYM_CLASS_WEAK_EXTERNAL,
		Weak: &coffobj.WeakExternal{Default: def, Search: weakAlias}}
}

// tail adds the constructor's pointer, .drectve (MinGW: the entries'
// bounds are not exported from a DLL) and .pdata, after the sections
// added in between.
func (b *coffBuilder) tail() error {
	ctors, err := b.h.ctorSection(b.r.Wrapper.CtorPriority)
	if err != nil {
		return err
	}
	ctors.Data = make([]byte, 8)
	ctors.Relocs = []coffobj.Reloc{{Type: addr64, Symbol: b.funcs[0]}}
	b.ctors = ctors
	b.section(ctors)
	if b.h.mingw {
		b.section(coffobj.Directives("-exclude-symbols:__start_"+b.entry, "-exclude-symbols:__stop_"+b.entry))
	}
	b.pdata = &coffobj.Section{Name: ".pdata", Align: 4, Characteristics: scnRData, Data: make([]byte, 12*len(b.code.Funcs))}
	var xoff uint32
	for i, f := range b.code.Funcs {
		at := uint32(12 * i)
		binary.LittleEndian.PutUint32(b.pdata.Data[at:], uint32(f.Offset))
		binary.LittleEndian.PutUint32(b.pdata.Data[at+4:], uint32(f.Offset+f.Size))
		binary.LittleEndian.PutUint32(b.pdata.Data[at+8:], xoff)
		xoff += uint32(len(f.Unwind))
		b.pdata.Relocs = append(b.pdata.Relocs,
			coffobj.Reloc{Offset: at, Type: addr32nb, Symbol: b.secSym[b.startup]},
			coffobj.Reloc{Offset: at + 4, Type: addr32nb, Symbol: b.secSym[b.startup]},
			coffobj.Reloc{Offset: at + 8, Type: addr32nb, Symbol: b.secSym[b.xdata]})
	}
	b.section(b.pdata)
	b.o.Symbols = append(b.o.Symbols, &coffobj.Symbol{Name: "@feat.00", Number: coffobj.IMAGE_SYM_ABSOLUTE, StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC})
	return nil
}

// add appends s (and a weak external's default) where LLVM first meets it.
func (b *coffBuilder) add(s *coffobj.Symbol) {
	if s == nil || b.added[s] || s.SectionDefinition {
		return
	}
	b.added[s] = true
	b.o.Symbols = append(b.o.Symbols, s)
	if s.Weak != nil {
		b.o.Symbols = append(b.o.Symbols, s.Weak.Default)
	}
}

// target is the symbol a relocation of the code refers to.
func (b *coffBuilder) target(t stubs.Target) (*coffobj.Symbol, error) {
	switch t {
	case stubs.TextStartup:
		return b.secSym[b.startup], nil
	case stubs.JumpTable:
		return b.secSym[b.rdata], nil
	}
	if s, ok := b.local[t]; ok {
		return s, nil
	}
	if s, ok := b.undef[t]; ok {
		return s, nil
	}
	name, ok := b.code.Symbols[t]
	if !ok {
		return nil, fmt.Errorf("wrap: code relocation against %s: %w", stubs.GPUTargetName(t), goffload.ErrUnsupported)
	}
	s := &coffobj.Symbol{Name: name, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
	b.undef[t] = s
	return s, nil
}

// code relocates .text.startup (and the jump table) and adds the symbols in
// the order the functions meet them.
func (b *coffBuilder) codeRelocs() error {
	next := 0
	for i, f := range b.code.Funcs {
		b.add(b.funcs[i])
		for ; next < len(b.code.Relocs) && b.code.Relocs[next].Offset < f.Offset+f.Size; next++ {
			r := b.code.Relocs[next]
			s, err := b.target(r.Target)
			if err != nil {
				return err
			}
			b.add(s)
			b.startup.Relocs = append(b.startup.Relocs, coffobj.Reloc{Offset: uint32(r.Offset), Type: rel32, Symbol: s})
		}
	}
	if jt := b.code.JumpTable; jt != nil {
		for _, r := range jt.Relocs {
			s, err := b.target(r.Target)
			if err != nil {
				return err
			}
			b.rdata.Relocs = append(b.rdata.Relocs, coffobj.Reloc{Offset: uint32(r.Offset), Type: rel32, Symbol: s})
		}
	}
	return nil
}

// finish adds the .file symbol of the module.
func (b *coffBuilder) finish() *coffobj.Object {
	b.o.Symbols = append(b.o.Symbols, &coffobj.Symbol{Name: ".file", Number: coffobj.IMAGE_SYM_DEBUG,
		StorageClass: coffobj.IMAGE_SYM_CLASS_FILE, File: wrapperFile})
	return b.o
}

// OpenMPCOFF returns the registration object that clang-linker-wrapper of
// LLVM 22 to 24 makes for the OpenMP device binaries bins on an x86-64
// Windows host (x86_64-pc-windows-msvc or x86_64-w64-windows-gnu;
// docs/registration.md#windows): the binaries in .llvm.offloading (8-byte
// aligned), the __tgt_device_images and the __tgt_bin_desc in .rdata, the
// entries' bounds as weak externals defaulting to the sections
// llvm_offload_entries$OA and $OZ (empty, or from 24 a zeroed sentinel
// entry each, the entries then beginning after __start_'s), and
// descriptor_reg, which registers the descriptor and descriptor_unreg with
// atexit, called from .CRT$XCA00101 (MSVC) or .ctors.65434 (MinGW), with
// the functions' unwind information in .xdata and .pdata: section by
// section and symbol by symbol the object of clang-linker-wrapper-22 (for
// 23 and 24, the object llc-22 makes of the module their sources build).
// Suffix and Relocatable are refused, as are other releases.
func OpenMPCOFF(opt Options, bins []Binary) (*coffobj.Object, error) {
	r := opt.Release
	if r == nil {
		r = release.Default()
	}
	h, err := coffHost(r, opt.Triple)
	if err != nil {
		return nil, err
	}
	if len(bins) == 0 {
		return nil, fmt.Errorf("wrap: no device binary")
	}
	if opt.Relocatable || opt.Suffix != "" {
		return nil, fmt.Errorf("wrap: relocatable or suffixed wrappers for a Windows host: %w", goffload.ErrUnsupported)
	}
	for i, bin := range bins {
		if err := bin.check(); err != nil {
			return nil, fmt.Errorf("wrap: binary %d: %w", i, err)
		}
		if err := checkForm(r, bin); err != nil {
			return nil, fmt.Errorf("wrap: binary %d: %w", i, err)
		}
	}
	code, err := stubs.WinOpenMP(r.Major)
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	b := newCOFFBuilder(h, r, code, offload.EntriesSection(r, offload.OffloadOpenMP))
	b.head(0)
	b.entries()
	images := &coffobj.Section{Name: ".llvm.offloading", Align: 8, Characteristics: scnRData}
	all := &concat.ReaderAt{}
	var offs []int64
	for _, bin := range bins {
		all.AddZeros(int64(alignUp(uint64(all.Size()), 8)) - all.Size())
		offs = append(offs, all.Size())
		all.Add(bin.Data, 0, bin.size())
	}
	images.Reader, images.Size = all, all.Size()
	b.section(images)
	n := len(bins)
	b.rdata = &coffobj.Section{Name: ".rdata", Align: 16, Characteristics: scnRData, Data: make([]byte, imageSize*n+descSize)}
	b.section(b.rdata)
	desc := &coffobj.Symbol{Name: nameDesc, Section: b.rdata, Value: uint32(imageSize * n), StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC}
	b.local[stubs.Descriptor] = desc
	b.local[stubs.Unreg] = b.funcs[1]
	if err := b.tail(); err != nil {
		return nil, err
	}
	if err := b.codeRelocs(); err != nil {
		return nil, err
	}
	// The data, as LLVM emits the module's globals: the bounds, the images,
	// the array of __tgt_device_image.
	start, stop := b.weak("__start_"+b.entry, b.start), b.weak("__stop_"+b.entry, b.stop)
	b.add(start)
	b.add(stop)
	var imageSyms []*coffobj.Symbol
	for i := range bins {
		name := nameImage
		if i > 0 {
			name += fmt.Sprintf(".%d", i)
		}
		s := &coffobj.Symbol{Name: name, Section: images, Value: uint32(offs[i]), StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC}
		imageSyms = append(imageSyms, s)
		b.add(s)
	}
	devImages := &coffobj.Symbol{Name: nameImages, Section: b.rdata, StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC}
	b.add(devImages)
	d := b.rdata.Data
	le := binary.LittleEndian
	for i, bin := range bins {
		at := uint32(i * imageSize)
		s, e := bounds(r, 0, bin)
		le.PutUint64(d[at+offload.DeviceImageStartOffset:], s)
		le.PutUint64(d[at+offload.DeviceImageEndOffset:], e)
		le.PutUint64(d[at+offload.DeviceImageEntriesBeginOffset:], b.entriesBegin())
		b.rdata.Relocs = append(b.rdata.Relocs,
			coffobj.Reloc{Offset: at + offload.DeviceImageStartOffset, Type: addr64, Symbol: imageSyms[i]},
			coffobj.Reloc{Offset: at + offload.DeviceImageEndOffset, Type: addr64, Symbol: imageSyms[i]},
			coffobj.Reloc{Offset: at + offload.DeviceImageEntriesBeginOffset, Type: addr64, Symbol: start},
			coffobj.Reloc{Offset: at + offload.DeviceImageEntriesEndOffset, Type: addr64, Symbol: stop})
	}
	at := uint32(imageSize * n)
	le.PutUint32(d[at:], uint32(n))
	le.PutUint64(d[at+offload.BinDescHostEntriesBeginOffset:], b.entriesBegin())
	b.rdata.Relocs = append(b.rdata.Relocs,
		coffobj.Reloc{Offset: at + offload.BinDescDeviceImagesOffset, Type: addr64, Symbol: devImages},
		coffobj.Reloc{Offset: at + offload.BinDescHostEntriesBeginOffset, Type: addr64, Symbol: start},
		coffobj.Reloc{Offset: at + offload.BinDescHostEntriesEndOffset, Type: addr64, Symbol: stop})
	return b.finish(), nil
}

// bounds returns where the __tgt_device_image of bin, embedded at off,
// points: the release's ImageStart and ImageEnd.
func bounds(r *release.Release, off uint64, bin Binary) (start, end uint64) {
	return (&builder{r: r}).bounds(off, bin)
}

// GPUCOFF returns the CUDA or HIP registration object that
// clang-linker-wrapper of LLVM 22 to 24 makes for a fatbin on an x86-64 Windows
// host (docs/registration.md#windows): the fatbin in .nv_fatbin or
// .hip_fatbin, the read-only 24-byte wrapper in .nvFatBinSegment or
// .hipFatBinSegment, the handle in .bss, the entries' bounds as in
// [OpenMPCOFF], and fatbin_reg, fatbin_unreg and globals_reg in the
// Microsoft x64 convention (HIP's switch through a jump table in .rdata),
// with their unwind information, called from .CRT$XCA00101 (MSVC) or
// .ctors.65434 (MinGW): section by section and symbol by symbol the
// object of clang-linker-wrapper-22 (23 and 24: of llc-22 from their
// module). The fatbin is checked as [GPU] checks it.
func GPUCOFF(opt Options, kind offload.OffloadKind, data *io.SectionReader) (*coffobj.Object, error) {
	fb, r, names, err := gpuInputs(opt, kind, data)
	if err != nil {
		return nil, err
	}
	h, err := coffHost(r, opt.Triple)
	if err != nil {
		return nil, err
	}
	code, err := stubs.WinGPU(names.kind, r.Major)
	if err != nil {
		return nil, fmt.Errorf("wrap: %w", err)
	}
	b := newCOFFBuilder(h, r, code, offload.EntriesSection(r, kind))
	bss := b.head(8)
	if jt := code.JumpTable; jt != nil {
		b.rdata = &coffobj.Section{Name: ".rdata", Align: 4, Characteristics: scnRData, Data: jt.Data}
		b.section(b.rdata)
	}
	b.entries()
	fat := &coffobj.Section{Name: names.fatbin, Align: uint32(stubs.GPUFatbinAlign(elf.EM_X86_64, uint64(fb.Size))),
		Characteristics: scnRData, Reader: fb.R, Size: fb.Size}
	if fb.R == nil {
		fat.Data = []byte{}
	}
	b.section(fat)
	seg := make([]byte, 24)
	binary.LittleEndian.PutUint32(seg, names.magic)
	binary.LittleEndian.PutUint32(seg[4:], 1)
	segment := &coffobj.Section{Name: names.segment, Align: 8, Characteristics: scnRData, Data: seg}
	b.section(segment)
	image := &coffobj.Symbol{Name: ".fatbin_image", Section: fat, StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC}
	segment.Relocs = []coffobj.Reloc{{Offset: 8, Type: addr64, Symbol: image}}
	b.local[stubs.FatbinWrapper] = &coffobj.Symbol{Name: ".fatbin_wrapper", Section: segment, StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC}
	b.local[stubs.BinaryHandle] = &coffobj.Symbol{Name: "." + names.prefix + ".binary_handle", Section: bss, StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC}
	b.local[stubs.FatbinUnreg] = b.funcs[1]
	b.local[stubs.GlobalsReg] = b.funcs[2]
	b.undef[stubs.EntriesStart] = b.weak("__start_"+b.entry, b.start)
	b.undef[stubs.EntriesStop] = b.weak("__stop_"+b.entry, b.stop)
	if err := b.tail(); err != nil {
		return nil, err
	}
	if err := b.codeRelocs(); err != nil {
		return nil, err
	}
	b.add(image)
	return b.finish(), nil
}
