package elfobj

import (
	"debug/elf"
	"math"
	"math/rand/v2"
	"testing"
)

// linearSectionAt is SectionAt as a scan of every section.
func linearSectionAt(f *File, addr uint64) (*FileSection, uint64, bool) {
	for _, s := range f.Sections[1:] {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || addr < s.Addr {
			continue
		}
		if d := addr - s.Addr; d < s.Size {
			return s, d, true
		}
	}
	return nil, 0, false
}

// TestSectionAtMatchesAScan compares SectionAt with a scan of the sections
// on random layouts: overlapping, nested, empty, NOBITS, not allocated, and
// running to the end of the address space.
func TestSectionAtMatchesAScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		f := &File{Sections: []*FileSection{{}}}
		for i := 1; i <= 1+rng.IntN(12); i++ {
			s := &FileSection{Index: i}
			s.Addr, s.Size = uint64(rng.IntN(64)), uint64(rng.IntN(24))
			if rng.IntN(10) == 0 {
				s.Addr, s.Size = math.MaxUint64-uint64(rng.IntN(8)), uint64(rng.IntN(20))
			}
			s.Flags = elf.SHF_ALLOC
			if rng.IntN(6) == 0 {
				s.Flags = 0
			}
			s.Type = elf.SHT_PROGBITS
			if rng.IntN(6) == 0 {
				s.Type = elf.SHT_NOBITS
			}
			f.Sections = append(f.Sections, s)
		}
		addrs := []uint64{0, 1, math.MaxUint64, math.MaxUint64 - 1}
		for a := uint64(0); a < 96; a++ {
			addrs = append(addrs, a, math.MaxUint64-a)
		}
		for _, a := range addrs {
			gs, goff, gok := f.SectionAt(a)
			ws, woff, wok := linearSectionAt(f, a)
			if gs != ws || goff != woff || gok != wok {
				t.Fatalf("round %d address %#x: got %v %d %v, want %v %d %v", round, a, gs, goff, gok, ws, woff, wok)
			}
		}
	}
}
