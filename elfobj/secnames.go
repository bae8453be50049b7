package elfobj

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"io"
	"slices"

	"github.com/goffload/goffload"
)

// sectionNamesSize returns the bytes of the section names debug/elf will
// copy, one copy for each section that names one: many sections naming one
// long string would cost their number times its length. It reads the
// section headers and the section-name table once, and finds the end of
// every name in one pass over the table, whatever the names' offsets. It
// returns 0 where debug/elf refuses the file before copying names (no or a
// bad name table), and refuses a name table past the end of the input
// before debug/elf allocates for it; checkHeader has checked the section
// header table lies in the input.
func sectionNamesSize(r io.ReaderAt, size int64) (uint64, error) {
	var h [64]byte
	if err := readAtFull(r, h[:], 0); err != nil {
		return 0, err
	}
	var order binary.ByteOrder = binary.LittleEndian
	if elf.Data(h[5]) == elf.ELFDATA2MSB {
		order = binary.BigEndian
	}
	shoff, num, strndx := order.Uint64(h[ehdrShoff:]), uint64(order.Uint16(h[60:])), uint64(order.Uint16(h[62:]))
	if shoff == 0 || shoff > uint64(size) || uint64(size)-shoff < shdrSize {
		return 0, nil
	}
	if num == 0 || strndx == uint64(elf.SHN_XINDEX) {
		// Extended numbering: the count and the index in section 0.
		var s0 [shdrSize]byte
		if err := readAtFull(r, s0[:], int64(shoff)); err != nil {
			return 0, err
		}
		if num == 0 {
			num = order.Uint64(s0[32:])
		}
		if strndx == uint64(elf.SHN_XINDEX) {
			strndx = uint64(order.Uint32(s0[40:]))
		}
	}
	if strndx == 0 || strndx >= num || num > (uint64(size)-shoff)/shdrSize {
		return 0, nil
	}
	hdrs := make([]byte, num*shdrSize)
	if err := readAtFull(r, hdrs, int64(shoff)); err != nil {
		return 0, err
	}
	sh := hdrs[strndx*shdrSize:]
	off, n := order.Uint64(sh[shdrOffset:]), order.Uint64(sh[32:])
	if elf.SectionType(order.Uint32(sh[4:])) != elf.SHT_STRTAB {
		return 0, nil
	}
	if elf.SectionFlag(order.Uint64(sh[8:]))&elf.SHF_COMPRESSED != 0 {
		// debug/elf would inflate it to the size its compression header
		// claims (allocating 10 MB at a time) before finding it bad; LLVM
		// reads a name table as it is, never inflated.
		return 0, elfErr(int64(shoff+strndx*shdrSize+8), goffload.ErrInvalid, "section-name table (section %d) is compressed", strndx)
	}
	if off > uint64(size) || n > uint64(size)-off {
		// debug/elf would allocate for it (10 MB at a time) before
		// finding it cut.
		return 0, elfErr(int64(shoff+strndx*shdrSize+shdrOffset), goffload.ErrTruncated, "section-name table (section %d): %d bytes at %#x past the end of the file (%d bytes)", strndx, n, off, size)
	}
	tab := make([]byte, n)
	if err := readAtFull(r, tab, int64(off)); err != nil {
		return 0, err
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
	for _, o := range offs {
		total += length[o]
	}
	return total, nil
}
