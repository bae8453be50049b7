package elfobj

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"slices"

	"github.com/goffload/goffload"
)

// checkTables checks, field by field, every rule by which debug/elf's
// NewFile refuses a file, so that a malformed file is refused here with
// the offset of the field at fault (debug/elf keeps its offsets
// unexported). It returns the bytes of the section names debug/elf will
// copy, one copy for each section that names one: many sections naming
// one long string would cost their number times its length. It reads the
// program and section headers and the section-name table once, and finds
// the end of every name in one pass over the table, whatever the names'
// offsets. It returns the index of the section-name table too (e_shstrndx,
// or section 0's sh_link under extended numbering), which debug/elf does
// not keep. h is the ELF header, which checkHeader has checked, with the
// header tables lying in the input.
func checkTables(r io.ReaderAt, size int64, h [64]byte) (names uint64, strndx int, err error) {
	var order binary.ByteOrder = binary.LittleEndian
	if elf.Data(h[5]) == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	if v := elf.Version(h[6]); v != elf.EV_CURRENT {
		return 0, 0, formatErr(6, "ELF version %d", v)
	}
	if v := order.Uint32(h[20:]); v != uint32(elf.EV_CURRENT) {
		return 0, 0, formatErr(20, "e_version %d, where the identification says %d", v, elf.EV_CURRENT)
	}
	phoff, phnum := order.Uint64(h[32:]), uint64(order.Uint16(h[56:]))
	if phnum > 0 {
		ph := make([]byte, phnum*56)
		if err := readAtFull(r, ph, int64(phoff)); err != nil {
			return 0, 0, err
		}
		for i := range phnum {
			p := ph[i*56:]
			if v := order.Uint64(p[8:]); int64(v) < 0 {
				return 0, 0, formatErr(int64(phoff+i*56+8), "program header %d: p_offset %#x", i, v)
			}
			if v := order.Uint64(p[32:]); int64(v) < 0 {
				return 0, 0, formatErr(int64(phoff+i*56+32), "program header %d: p_filesz %#x", i, v)
			}
		}
	}
	shoff, num, shstr := order.Uint64(h[ehdrShoff:]), uint64(order.Uint16(h[60:])), uint64(order.Uint16(h[62:]))
	if shoff == 0 {
		if num != 0 {
			return 0, 0, formatErr(60, "%d section headers at offset 0", num)
		}
		if shstr != 0 && shstr != uint64(elf.SHN_XINDEX) {
			// No sections but the null one Read keeps.
			return 0, 0, formatErr(62, "section-name table index %d of %d sections", shstr, 1)
		}
		return 0, 0, nil
	}
	strndxAt := int64(62)
	if num == 0 || shstr == uint64(elf.SHN_XINDEX) {
		// Extended numbering: the count and the index in section 0, whose
		// type must be SHT_NULL.
		var s0 [shdrSize]byte
		if err := readAtFull(r, s0[:], int64(shoff)); err != nil {
			return 0, 0, err
		}
		if t := elf.SectionType(order.Uint32(s0[shdrType:])); t != elf.SHT_NULL {
			return 0, 0, formatErr(int64(shoff)+shdrType, "section 0 of type %v", t)
		}
		if num == 0 {
			num = order.Uint64(s0[32:])
			if num < uint64(elf.SHN_LORESERVE) {
				return 0, 0, formatErr(int64(shoff)+32, "section count %d in section 0, which holds counts from %d", num, elf.SHN_LORESERVE)
			}
		}
		if shstr == uint64(elf.SHN_XINDEX) {
			shstr, strndxAt = uint64(order.Uint32(s0[shdrLink:])), int64(shoff)+shdrLink
			if shstr < uint64(elf.SHN_LORESERVE) {
				return 0, 0, formatErr(strndxAt, "section-name table index %d in section 0, which holds indices from %d", shstr, elf.SHN_LORESERVE)
			}
		}
	}
	if shstr >= num {
		return 0, 0, formatErr(strndxAt, "section-name table index %d of %d sections", shstr, num)
	}
	hdrs := make([]byte, num*shdrSize)
	if err := readAtFull(r, hdrs, int64(shoff)); err != nil {
		return 0, 0, err
	}
	for i := range num {
		sh := hdrs[i*shdrSize:]
		at := int64(shoff + i*shdrSize)
		off, n := order.Uint64(sh[shdrOffset:]), order.Uint64(sh[32:])
		if int64(off) < 0 {
			return 0, 0, formatErr(at+shdrOffset, "section %d: sh_offset %#x", i, off)
		}
		if int64(n) < 0 {
			return 0, 0, formatErr(at+32, "section %d: sh_size %#x", i, n)
		}
		// debug/elf reads the compression header of a compressed section.
		if elf.SectionFlag(order.Uint64(sh[8:]))&elf.SHF_COMPRESSED != 0 && (n < 24 || off > uint64(size) || uint64(size)-off < 24) {
			return 0, 0, elfErr(at+shdrOffset, goffload.ErrTruncated, "compressed section %d: no 24-byte compression header in its %d bytes at %#x (file of %d bytes)", i, n, off, size)
		}
	}
	if shstr == 0 {
		return 0, 0, nil // no section names
	}
	sh := hdrs[shstr*shdrSize:]
	shAt := int64(shoff + shstr*shdrSize)
	off, n := order.Uint64(sh[shdrOffset:]), order.Uint64(sh[32:])
	if t := elf.SectionType(order.Uint32(sh[shdrType:])); t != elf.SHT_STRTAB {
		return 0, 0, formatErr(shAt+shdrType, "section-name table (section %d) of type %v", shstr, t)
	}
	if elf.SectionFlag(order.Uint64(sh[8:]))&elf.SHF_COMPRESSED != 0 {
		// debug/elf would inflate it to the size its compression header
		// claims (allocating 10 MB at a time) before finding it bad; LLVM
		// reads a name table as it is, never inflated.
		return 0, 0, elfErr(shAt+8, goffload.ErrInvalid, "section-name table (section %d) is compressed", shstr)
	}
	if off > uint64(size) || n > uint64(size)-off {
		// debug/elf would allocate for it (10 MB at a time) before
		// finding it cut.
		return 0, 0, elfErr(shAt+shdrOffset, goffload.ErrTruncated, "section-name table (section %d): %d bytes at %#x past the end of the file (%d bytes)", shstr, n, off, size)
	}
	tab := make([]byte, n)
	if err := readAtFull(r, tab, int64(off)); err != nil {
		return 0, 0, err
	}
	offs := make([]uint32, num)
	for i := range offs {
		offs[i] = order.Uint32(hdrs[uint64(i)*shdrSize:])
	}
	sorted := slices.Clone(offs)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	// The length of the name at each offset, from the NUL after it: the
	// scan only moves forward.
	length := make(map[uint32]uint64, len(sorted))
	nul := -1 // the first NUL at or after the offset in hand, or -1
	for _, o := range sorted {
		if uint64(o) >= n {
			break
		}
		if nul < int(o) {
			i := bytes.IndexByte(tab[o:], 0)
			if i < 0 {
				break // debug/elf refuses an unterminated name
			}
			nul = int(o) + i
		}
		length[o] = uint64(nul) - uint64(o)
	}
	var total uint64
	for i, o := range offs {
		l, ok := length[o]
		if !ok {
			return 0, 0, formatErr(int64(shoff+uint64(i)*shdrSize), "section %d: name at %d of a %d-byte section-name table, or not ended by a NUL", i, o, n)
		}
		total += l
	}
	return total, int(shstr), nil
}
