package machoobj

import (
	"bytes"
	"debug/macho"
	"fmt"
	"io"
	"strconv"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/ferr"
)

// formatErr is a FormatError matching err (goffload.ErrTruncated,
// goffload.ErrUnsupported, goffload.ErrLimit, or nil) besides
// goffload.ErrInvalid.
func formatErr(off int64, err error, field string, args ...any) error {
	return ferr.New("mach-o", off, fmt.Sprintf(field, args...), nil, err)
}

// readAt reads len(p) bytes at off of r.
func readAt(r io.ReaderAt, p []byte, off int64) error { return ferr.ReadAt("mach-o", r, p, off) }

// Magic numbers of the Mach-O files this package recognises but does not
// read.
const (
	magic32      = 0xfeedface
	magicFatLE   = 0xbebafeca // CA FE BA BE read little-endian: a universal file
	magic64Swap  = 0xcffaedfe // a big-endian 64-bit file, read little-endian
	magic32Swap  = 0xcefaedfe
	maxAlignLog2 = 15 // what LLVM's writer emits at most (32 KiB); ld64 takes up to 2^15
)

// IsMachO reports whether head starts a Mach-O file of any kind (64- or
// 32-bit, either byte order) or a universal ("fat") file, as LLVM's
// identify_magic recognises them.
func IsMachO(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	switch le.Uint32(head) {
	case magic64, magic32, magic64Swap, magic32Swap:
		return true
	}
	// 0xcafebabe is also a Java class file: LLVM takes it for a universal
	// file only when the count of architectures that follows is small.
	return len(head) >= 8 && bytes.Equal(head[:4], []byte{0xca, 0xfe, 0xba, 0xbe}) &&
		head[4] == 0 && head[5] == 0 && head[6] == 0 && head[7] != 0 && head[7] < 43
}

// File is a 64-bit little-endian Mach-O file read from an io.ReaderAt: a
// relocatable object (MH_OBJECT), or a linked image (an executable, a
// dylib, a bundle), whose sections it finds in every segment. Section
// contents, symbols and relocations are read only when asked for.
type File struct {
	Cpu    macho.Cpu
	SubCpu uint32
	Type   uint32 // MH_OBJECT, MH_EXECUTE, MH_DYLIB, ...
	Flags  uint32
	// Sections are in load-command order, all segments' together:
	// Sections[i] is section number i+1 (a symbol's n_sect).
	Sections []*FileSection
	// Loads are the load commands, in order.
	Loads []Load

	r    io.ReaderAt
	size int64
	refs *budget.Counter

	symoff, nsyms, stroff, strsize int64
	nlocal, nextdef, nundef        int64 // from LC_DYSYMTAB, -1 without it
	indoff, nind                   int64
	dice, hints                    Load // LC_DATA_IN_CODE, LC_LINKER_OPTIMIZATION_HINT; Cmd 0 for none
	version                        *Version

	syms    []FileSymbol
	symErr  error
	symRead bool
}

// Load is one load command: its type, and where it is in the file.
type Load struct {
	Cmd    uint32
	Offset int64 // of the command in the file
	Size   uint32
	// DataOff and DataSize locate the data of a linkedit_data_command
	// (LC_DATA_IN_CODE, LC_LINKER_OPTIMIZATION_HINT).
	DataOff, DataSize uint32
}

// Size returns the size of the input the file was read from.
func (f *File) Size() int64 { return f.size }

// FileSection is one section header of a File.
type FileSection struct {
	Seg, Name  string
	Addr, Size uint64
	Offset     uint32
	// AlignLog2 is the alignment's log2, as the header holds it.
	AlignLog2                       uint32
	Reloff, Nreloc, Flags           uint32
	Reserved1, Reserved2, Reserved3 uint32
	// Header is the offset of the section's header in the file.
	Header int64

	f *File
}

// ZeroFill reports whether the section has no bytes in the file.
func (s *FileSection) ZeroFill() bool { return virtual(s.Flags) }

// FileSize returns how many bytes of the section the file holds: none
// for a zero-fill section, Size otherwise.
func (s *FileSection) FileSize() int64 {
	if s.ZeroFill() {
		return 0
	}
	return int64(s.Size)
}

// Open returns a reader of the section's bytes in the file.
func (s *FileSection) Open() *io.SectionReader {
	return io.NewSectionReader(s.f.r, int64(s.Offset), s.FileSize())
}

// Data returns the section's bytes in the file.
func (s *FileSection) Data() ([]byte, error) {
	b := make([]byte, s.FileSize()) // checked against the file's size by Read
	if err := readAt(s.f.r, b, int64(s.Offset)); err != nil {
		return nil, fmt.Errorf("section %s,%s: %w", s.Seg, s.Name, err)
	}
	return b, nil
}

// Section returns the first section seg,name, or nil.
func (f *File) Section(seg, name string) *FileSection {
	for _, s := range f.Sections {
		if s.Seg == seg && s.Name == name {
			return s
		}
	}
	return nil
}

// Read reads the Mach-O file of size bytes of r: its header and load
// commands, each checked against the file's size. A 32-bit, big-endian or
// universal file gives an error matching goffload.ErrUnsupported; a
// malformed one a *goffload.FormatError.
func Read(r io.ReaderAt, size int64) (*File, error) {
	if err := ferr.CheckInput("mach-o", r, size); err != nil {
		return nil, err
	}
	f := &File{r: r, size: size, refs: budget.For(size), nlocal: -1}
	if err := f.read(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) read() error {
	var h [headerSize]byte
	if f.size < 4 {
		return formatErr(0, goffload.ErrTruncated, "header: %d bytes", f.size)
	}
	if err := readAt(f.r, h[:4], 0); err != nil {
		return err
	}
	switch m := le.Uint32(h[:]); m {
	case magic64:
	case magic32, magic32Swap:
		return formatErr(0, goffload.ErrUnsupported, "a 32-bit Mach-O file")
	case magic64Swap:
		return formatErr(0, goffload.ErrUnsupported, "a big-endian Mach-O file")
	default:
		if m == magicFatLE {
			return formatErr(0, goffload.ErrUnsupported, "a universal (fat) Mach-O file")
		}
		return ferr.New("mach-o", 0, "magic", m, nil)
	}
	if f.size < headerSize {
		return formatErr(0, goffload.ErrTruncated, "header: %d bytes", f.size)
	}
	if err := readAt(f.r, h[:], 0); err != nil {
		return err
	}
	f.Cpu, f.SubCpu, f.Type = macho.Cpu(le.Uint32(h[4:])), le.Uint32(h[8:]), le.Uint32(h[12:])
	ncmds, sizeofcmds := int64(le.Uint32(h[16:])), int64(le.Uint32(h[20:]))
	f.Flags = le.Uint32(h[24:])
	if headerSize+sizeofcmds > f.size {
		return ferr.New("mach-o", 20, "sizeofcmds past the end of the file", sizeofcmds, goffload.ErrTruncated)
	}
	if ncmds*8 > sizeofcmds {
		return ferr.New("mach-o", 16, "ncmds: more than sizeofcmds holds", ncmds, nil)
	}
	cmds := make([]byte, sizeofcmds)
	if err := readAt(f.r, cmds, headerSize); err != nil {
		return err
	}
	var fileBytes int64 // of relocations, symbols and the like: each is in the file once
	at := int64(0)
	for i := int64(0); i < ncmds; i++ {
		off := headerSize + at
		if at+8 > sizeofcmds {
			return formatErr(off, goffload.ErrTruncated, "load command %d past sizeofcmds", i)
		}
		cmd, n := le.Uint32(cmds[at:]), int64(le.Uint32(cmds[at+4:]))
		if n < 8 || n%8 != 0 || at+n > sizeofcmds {
			return ferr.New("mach-o", off+4, fmt.Sprintf("load command %d cmdsize", i), n, nil)
		}
		c := cmds[at : at+n]
		l := Load{Cmd: cmd, Offset: off, Size: uint32(n)}
		var err error
		switch cmd {
		case LC_SEGMENT_64:
			err = f.segment(c, off, &fileBytes)
		case LC_SYMTAB:
			err = f.symtab(c, off)
		case LC_DYSYMTAB:
			err = f.dysymtab(c, off)
		case LC_DATA_IN_CODE, LC_LINKER_OPTIMIZATION_HINT:
			err = f.linkedit(c, off, &l)
		case LC_BUILD_VERSION, LC_VERSION_MIN_MACOSX, LC_VERSION_MIN_IPHONEOS, LC_VERSION_MIN_TVOS, LC_VERSION_MIN_WATCHOS:
			err = f.versionCmd(c, off)
		case uint32(macho.LoadCmdSegment):
			err = formatErr(off, nil, "a 32-bit segment in a 64-bit file")
		}
		if err != nil {
			return err
		}
		f.Loads = append(f.Loads, l)
		at += n
	}
	if f.nlocal >= 0 && f.nlocal+f.nextdef+f.nundef > f.nsyms {
		return formatErr(-1, nil, "LC_DYSYMTAB: %d+%d+%d symbols, and the symbol table holds %d", f.nlocal, f.nextdef, f.nundef, f.nsyms)
	}
	return nil
}

// within checks that n bytes at off are in the file.
func (f *File) within(off, n int64, at int64, what string) error {
	if off < 0 || n < 0 || off > f.size || n > f.size-off {
		return formatErr(at, goffload.ErrTruncated, "%s: %d bytes at %#x past the end of the file (%d bytes)", what, n, off, f.size)
	}
	return nil
}

func (f *File) segment(c []byte, off int64, fileBytes *int64) error {
	if len(c) < segmentSize {
		return formatErr(off+4, nil, "LC_SEGMENT_64 of %d bytes", len(c))
	}
	seg := cstr16(c[8:])
	nsects := int64(le.Uint32(c[64:]))
	if int64(len(c)) != segmentSize+nsects*sectionSize {
		return ferr.New("mach-o", off+64, fmt.Sprintf("segment %q: nsects does not fit cmdsize %d", seg, len(c)), nsects, nil)
	}
	for j := int64(0); j < nsects; j++ {
		b := c[segmentSize+j*sectionSize:]
		h := off + segmentSize + j*sectionSize
		s := &FileSection{Name: cstr16(b), Seg: cstr16(b[16:]), Addr: le.Uint64(b[32:]), Size: le.Uint64(b[40:]),
			Offset: le.Uint32(b[48:]), AlignLog2: le.Uint32(b[52:]), Reloff: le.Uint32(b[56:]), Nreloc: le.Uint32(b[60:]),
			Flags: le.Uint32(b[64:]), Reserved1: le.Uint32(b[68:]), Reserved2: le.Uint32(b[72:]), Reserved3: le.Uint32(b[76:]),
			Header: h, f: f}
		what := "section " + s.Seg + "," + s.Name
		if s.AlignLog2 > 31 {
			return ferr.New("mach-o", h+52, what+": align", s.AlignLog2, nil)
		}
		if !s.ZeroFill() {
			if s.Size > uint64(f.size) {
				return formatErr(h+40, goffload.ErrTruncated, "%s: %d bytes, more than the file's %d", what, s.Size, f.size)
			}
			if err := f.within(int64(s.Offset), int64(s.Size), h+48, what); err != nil {
				return err
			}
		}
		if s.Nreloc > 0 {
			n := int64(s.Nreloc) * relocSize
			if err := f.within(int64(s.Reloff), n, h+56, what+": relocations"); err != nil {
				return err
			}
			// Sections do not share relocations: more records than the file
			// holds is a file built to multiply them.
			if *fileBytes += n; *fileBytes > f.size {
				return formatErr(h+60, goffload.ErrLimit, "%s: the relocations up to it take %d bytes, more than the file's %d", what, *fileBytes, f.size)
			}
		}
		f.Sections = append(f.Sections, s)
	}
	return nil
}

func (f *File) symtab(c []byte, off int64) error {
	if len(c) != symtabSize {
		return formatErr(off+4, nil, "LC_SYMTAB of %d bytes", len(c))
	}
	if f.symoff != 0 || f.stroff != 0 {
		return formatErr(off, nil, "a second LC_SYMTAB")
	}
	f.symoff, f.nsyms, f.stroff, f.strsize = int64(le.Uint32(c[8:])), int64(le.Uint32(c[12:])), int64(le.Uint32(c[16:])), int64(le.Uint32(c[20:]))
	if err := f.within(f.symoff, f.nsyms*nlistSize, off+8, "symbol table"); err != nil {
		return err
	}
	return f.within(f.stroff, f.strsize, off+16, "string table")
}

func (f *File) dysymtab(c []byte, off int64) error {
	if len(c) != dysymtabSize {
		return formatErr(off+4, nil, "LC_DYSYMTAB of %d bytes", len(c))
	}
	if f.nlocal >= 0 {
		return formatErr(off, nil, "a second LC_DYSYMTAB")
	}
	u := func(i int) int64 { return int64(le.Uint32(c[8+4*i:])) }
	ilocal, nlocal, iext, next, iundef, nundef := u(0), u(1), u(2), u(3), u(4), u(5)
	if ilocal != 0 || iext != nlocal || iundef != iext+next {
		return formatErr(off+8, nil, "LC_DYSYMTAB: the groups %d+%d, %d+%d, %d+%d do not follow each other", ilocal, nlocal, iext, next, iundef, nundef)
	}
	f.nlocal, f.nextdef, f.nundef = nlocal, next, nundef
	f.indoff, f.nind = u(12), u(13)
	return f.within(f.indoff, f.nind*4, off+56, "indirect symbol table")
}

func (f *File) linkedit(c []byte, off int64, l *Load) error {
	if len(c) != linkeditSize {
		return formatErr(off+4, nil, "linkedit_data_command of %d bytes", len(c))
	}
	l.DataOff, l.DataSize = le.Uint32(c[8:]), le.Uint32(c[12:])
	if err := f.within(int64(l.DataOff), int64(l.DataSize), off+8, "linkedit data"); err != nil {
		return err
	}
	switch l.Cmd {
	case LC_DATA_IN_CODE:
		if l.DataSize%diceSize != 0 {
			return ferr.New("mach-o", off+12, "LC_DATA_IN_CODE datasize: not a multiple of 8", l.DataSize, nil)
		}
		f.dice = *l
	default:
		f.hints = *l
	}
	return nil
}

func (f *File) versionCmd(c []byte, off int64) error {
	v := &Version{Cmd: le.Uint32(c)}
	if v.Cmd == LC_BUILD_VERSION {
		if len(c) < buildSize {
			return formatErr(off+4, nil, "LC_BUILD_VERSION of %d bytes", len(c))
		}
		v.Platform, v.Min, v.SDK = le.Uint32(c[8:]), le.Uint32(c[12:]), le.Uint32(c[16:])
		n := int64(le.Uint32(c[20:]))
		if int64(len(c)) != buildSize+8*n {
			return ferr.New("mach-o", off+20, "LC_BUILD_VERSION ntools", n, nil)
		}
		for i := int64(0); i < n; i++ {
			v.Tools = append(v.Tools, [2]uint32{le.Uint32(c[buildSize+8*i:]), le.Uint32(c[buildSize+8*i+4:])})
		}
	} else {
		if len(c) != versionSize {
			return formatErr(off+4, nil, "LC_VERSION_MIN_* of %d bytes", len(c))
		}
		v.Min, v.SDK = le.Uint32(c[8:]), le.Uint32(c[12:])
	}
	if f.version == nil {
		f.version = v
	}
	return nil
}

// Version returns the file's deployment target, or nil without one.
func (f *File) Version() *Version { return f.version }

// FileSymbol is one nlist_64 record of the symbol table.
type FileSymbol struct {
	Index int
	Name  string
	Type  uint8
	Sect  uint8 // n_sect: section number i+1 is Sections[i], 0 for none
	Desc  uint16
	Value uint64
}

// Symbols returns the records of the symbol table, read on the first call.
// The slice is shared by later calls: do not modify it.
func (f *File) Symbols() ([]FileSymbol, error) {
	if !f.symRead {
		f.symRead = true
		f.syms, f.symErr = f.readSymbols()
	}
	return f.syms, f.symErr
}

func (f *File) readSymbols() ([]FileSymbol, error) {
	if f.nsyms == 0 {
		return nil, nil
	}
	strs := make([]byte, f.strsize) // checked against the file by Read
	if err := readAt(f.r, strs, f.stroff); err != nil {
		return nil, err
	}
	recs := make([]byte, f.nsyms*nlistSize) // checked against the file by Read
	if err := readAt(f.r, recs, f.symoff); err != nil {
		return nil, err
	}
	names := map[uint32]string{}
	syms := make([]FileSymbol, f.nsyms)
	for i := range syms {
		b := recs[i*nlistSize:]
		at := f.symoff + int64(i)*nlistSize
		strx := le.Uint32(b)
		s := FileSymbol{Index: i, Type: b[4], Sect: b[5], Desc: le.Uint16(b[6:]), Value: le.Uint64(b[8:])}
		if int64(strx) >= f.strsize && strx != 0 {
			return nil, ferr.New("mach-o", at, "symbol "+strconv.Itoa(i)+" n_strx past the string table", strx, nil)
		}
		name, ok := names[strx]
		if !ok && f.strsize > 0 {
			rest := strs[strx:]
			if n := bytes.IndexByte(rest, 0); n >= 0 {
				rest = rest[:n]
			}
			name = string(rest)
			names[strx] = name
		}
		// Each reference to a name counts: what a caller does per symbol
		// (print, compare, copy) must not multiply past the file's size.
		if !f.refs.Take(uint64(len(name))) {
			return nil, formatErr(at, goffload.ErrLimit, "symbol %d: the names up to it take more than %d times the file's %d bytes plus %d", i, budget.Factor, f.size, budget.Slack)
		}
		s.Name = name
		if s.Type&N_STAB == 0 && s.Type&N_TYPE == N_SECT && (s.Sect == 0 || int(s.Sect) > len(f.Sections)) {
			return nil, ferr.New("mach-o", at+5, "symbol "+strconv.Itoa(i)+" n_sect", s.Sect, nil)
		}
		syms[i] = s
	}
	return syms, nil
}

// FileReloc is one relocation_info record, resolved.
type FileReloc struct {
	Offset uint32 // r_address
	// Num is r_symbolnum: the target's index in the symbol table
	// (Extern), or the target section's number (0 for none, R_ABS), or
	// ARM64_RELOC_ADDEND's addend.
	Num    uint32
	Extern bool
	PCRel  bool
	Length uint8
	Type   uint8
}

// Relocations returns the relocations of s, each checked: an external
// one's symbol in the table, a section-relative one's section in the file.
// Scattered relocations (32-bit formats only) are refused.
func (f *File) Relocations(s *FileSection) ([]FileReloc, error) {
	if s.Nreloc == 0 {
		return nil, nil
	}
	b := make([]byte, int64(s.Nreloc)*relocSize) // checked against the file by Read
	if err := readAt(f.r, b, int64(s.Reloff)); err != nil {
		return nil, err
	}
	rs := make([]FileReloc, s.Nreloc)
	for i := range rs {
		at := int64(s.Reloff) + int64(i)*relocSize
		addr, info := le.Uint32(b[i*relocSize:]), le.Uint32(b[i*relocSize+4:])
		if addr&0x80000000 != 0 {
			return nil, formatErr(at, goffload.ErrUnsupported, "section %s,%s: relocation %d is scattered", s.Seg, s.Name, i)
		}
		r := FileReloc{Offset: addr, Num: info & 0xffffff, PCRel: info>>24&1 != 0, Length: uint8(info >> 25 & 3),
			Extern: info>>27&1 != 0, Type: uint8(info >> 28)}
		switch {
		case r.Extern && int64(r.Num) >= f.nsyms:
			return nil, ferr.New("mach-o", at+4, fmt.Sprintf("section %s,%s: relocation %d symbol", s.Seg, s.Name, i), r.Num, nil)
		case !r.Extern && !isAddend(f.Cpu, r.Type) && int(r.Num) > len(f.Sections):
			return nil, ferr.New("mach-o", at+4, fmt.Sprintf("section %s,%s: relocation %d section", s.Seg, s.Name, i), r.Num, nil)
		}
		rs[i] = r
	}
	return rs, nil
}

// isAddend reports whether a relocation of type t carries an addend in
// r_symbolnum (ARM64_RELOC_ADDEND).
func isAddend(cpu macho.Cpu, t uint8) bool {
	return cpu == CpuArm64 && t == uint8(macho.ARM64_RELOC_ADDEND)
}

// DataInCode returns the LC_DATA_IN_CODE records: (offset, length, kind),
// offsets as addresses.
func (f *File) DataInCode() ([][3]uint32, error) {
	if f.dice.Cmd == 0 || f.dice.DataSize == 0 {
		return nil, nil
	}
	b := make([]byte, f.dice.DataSize) // checked by Read
	if err := readAt(f.r, b, int64(f.dice.DataOff)); err != nil {
		return nil, err
	}
	var out [][3]uint32
	for i := 0; i < len(b); i += diceSize {
		out = append(out, [3]uint32{le.Uint32(b[i:]), uint32(le.Uint16(b[i+4:])), uint32(le.Uint16(b[i+6:]))})
	}
	return out, nil
}

// HintData returns the bytes of LC_LINKER_OPTIMIZATION_HINT, or nil.
func (f *File) HintData() ([]byte, error) {
	if f.hints.Cmd == 0 || f.hints.DataSize == 0 {
		return nil, nil
	}
	b := make([]byte, f.hints.DataSize) // checked by Read
	if err := readAt(f.r, b, int64(f.hints.DataOff)); err != nil {
		return nil, err
	}
	return b, nil
}

// Indirect returns the indirect symbol table.
func (f *File) Indirect() ([]uint32, error) {
	if f.nind == 0 {
		return nil, nil
	}
	b := make([]byte, f.nind*4) // checked by Read
	if err := readAt(f.r, b, f.indoff); err != nil {
		return nil, err
	}
	out := make([]uint32, f.nind)
	for i := range out {
		out[i] = le.Uint32(b[4*i:])
	}
	return out, nil
}

// LoadBytes returns the bytes of load command l.
func (f *File) LoadBytes(l Load) ([]byte, error) {
	b := make([]byte, l.Size) // inside sizeofcmds, checked by Read
	if err := readAt(f.r, b, l.Offset); err != nil {
		return nil, err
	}
	return b, nil
}

// Referenced returns the bytes of the names this file's readers handed
// out, each reference counted.
func (f *File) Referenced() uint64 { return f.refs.Used() }
