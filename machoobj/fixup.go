package machoobj

import (
	"bytes"
	"debug/macho"
	"fmt"
	"io"
	"sort"

	"github.com/goffload/goffload"
)

// patch adds delta to the little-endian field of size bytes at off.
type patch struct {
	off   uint64
	size  uint8
	delta int64
}

// fixups computes, for each section, the patches that keep its stored
// addresses right once the sections are at their new addresses (see
// [Reloc]).
func (p *plan) fixups() error {
	o := p.o
	p.delta = make([]int64, len(o.Sections))
	moved := false
	for i, s := range o.Sections {
		p.delta[i] = int64(p.addr[i]) - int64(s.Base)
		moved = moved || p.delta[i] != 0
	}
	if !moved {
		return nil
	}
	p.patches = make([][]patch, len(o.Sections))
	for i, s := range o.Sections {
		for j, r := range s.Relocs {
			if r.Symbol != nil || r.Section == nil {
				continue
			}
			d := p.delta[p.number[r.Section]-1]
			switch {
			case o.Cpu == CpuAmd64 && r.Type == uint8(macho.X86_64_RELOC_SUBTRACTOR), o.Cpu == CpuArm64 && r.Type == uint8(macho.ARM64_RELOC_SUBTRACTOR):
				d = -d
			case r.PCRel:
				d -= p.delta[i]
			}
			if o.Cpu == CpuArm64 && r.Type != uint8(macho.ARM64_RELOC_UNSIGNED) && r.Type != uint8(macho.ARM64_RELOC_SUBTRACTOR) {
				if d != 0 {
					return inconsistent("section %s,%s: relocation %d: a section-relative arm64 relocation of type %d against a section that moves", s.Seg, s.Name, j, r.Type)
				}
				continue
			}
			if d != 0 && r.Length >= 2 {
				p.patches[i] = append(p.patches[i], patch{uint64(r.Offset), 1 << r.Length, d})
			} else if d != 0 {
				return inconsistent("section %s,%s: relocation %d of %d bytes against a section that moves", s.Seg, s.Name, j, 1<<r.Length)
			}
		}
		if s.Seg == "__TEXT" && s.Name == "__eh_frame" && !s.ZeroFill() {
			if err := p.ehFrameFixups(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// sectionAt returns the index of the section whose bytes held addr at
// the addresses the stored values were computed for, or -1.
func (p *plan) sectionAt(addr uint64) int {
	best := -1
	for i, s := range p.o.Sections {
		if addr >= s.Base && addr-s.Base < uint64(max(s.ContentSize(), 1)) {
			best = i
			if s.ContentSize() > 0 {
				return i
			}
		}
	}
	return best
}

// ehFrameFixups adds the patches of the pc-relative pointers of section
// i, an __eh_frame, that have no relocation: an FDE's pc_begin and LSDA
// and a CIE's personality, which x86-64 objects leave for the linker to
// read from the addresses of the object's sections.
func (p *plan) ehFrameFixups(i int) error {
	s := p.o.Sections[i]
	data, err := contents(s)
	if err != nil {
		return fmt.Errorf("section %s,%s: %w", s.Seg, s.Name, err)
	}
	relocated := map[uint64]bool{}
	for _, r := range s.Relocs {
		relocated[uint64(r.Offset)] = true
	}
	cies := map[uint64]cieInfo{}
	bad := func(off uint64, what string) error {
		return inconsistent("section %s,%s at %#x: %s: the frame information cannot be moved", s.Seg, s.Name, off, what)
	}
	// pointer adds the patch of a pointer of encoding enc at off, and
	// returns its size.
	pointer := func(off uint64, enc byte) (uint64, error) {
		if enc == 0xff { // DW_EH_PE_omit
			return 0, nil
		}
		var n uint64
		switch enc & 0x0f {
		case 0x00, 0x04, 0x0c:
			n = 8
		case 0x03, 0x0b:
			n = 4
		case 0x02, 0x0a:
			n = 2
		default:
			return 0, bad(off, fmt.Sprintf("pointer encoding %#x", enc))
		}
		if off+n > uint64(len(data)) {
			return 0, bad(off, "a pointer past the section")
		}
		if enc&0x70 != 0x10 || relocated[off] {
			return n, nil
		}
		var v int64
		switch n {
		case 8:
			v = int64(le.Uint64(data[off:]))
		case 4:
			v = int64(int32(le.Uint32(data[off:])))
		case 2:
			v = int64(int16(le.Uint16(data[off:])))
		}
		t := p.sectionAt(uint64(int64(s.Base+off) + v))
		if t < 0 {
			return n, nil
		}
		if d := p.delta[t] - p.delta[i]; d != 0 {
			p.patches[i] = append(p.patches[i], patch{off, uint8(n), d})
		}
		return n, nil
	}
	for off := uint64(0); off+4 <= uint64(len(data)); {
		length := uint64(le.Uint32(data[off:]))
		if length == 0 {
			break
		}
		if length == 0xffffffff || off+4+length > uint64(len(data)) || length < 4 {
			return bad(off, "a record's length")
		}
		rec := data[off+4 : off+4+length]
		id := le.Uint32(rec)
		if id == 0 {
			c, err := parseCIE(rec[4:], off+8, pointer)
			if err != nil {
				return err
			}
			cies[off] = c
		} else {
			c, ok := cies[off+4-uint64(id)]
			if !ok {
				return bad(off, "an FDE of no CIE before it")
			}
			at := off + 8
			n, err := pointer(at, c.fde)
			if err != nil {
				return err
			}
			at += 2 * n // pc_begin, pc_range
			if c.z {
				_, k := uleb(data[at:])
				if k == 0 {
					return bad(at, "augmentation length")
				}
				if c.hasLSDA {
					if _, err := pointer(at+uint64(k), c.lsda); err != nil {
						return err
					}
				}
			}
		}
		off += 4 + length
	}
	return nil
}

// cieInfo is what an FDE needs of its CIE: the encodings of its pointers
// (0xff for an absent LSDA).
type cieInfo struct {
	fde, lsda  byte
	z, hasLSDA bool // augmentation data; an LSDA pointer in it
}

// parseCIE reads a CIE's augmentation (b from its version byte, at off in
// the section) and patches its personality pointer through pointer.
func parseCIE(b []byte, off uint64, pointer func(uint64, byte) (uint64, error)) (cieInfo, error) {
	c := cieInfo{fde: 0, lsda: 0xff}
	if len(b) < 2 {
		return c, inconsistent("__eh_frame at %#x: a CIE of %d bytes", off, len(b))
	}
	version := b[0]
	end := bytes.IndexByte(b[1:], 0)
	if end < 0 {
		return c, inconsistent("__eh_frame at %#x: augmentation", off)
	}
	aug := string(b[1 : 1+end])
	i := uint64(2 + end)
	skip := func() error {
		_, n := uleb(b[i:])
		if n == 0 {
			return inconsistent("__eh_frame at %#x: a CIE field", off+i)
		}
		i += uint64(n)
		return nil
	}
	if err := skip(); err != nil { // code alignment
		return c, err
	}
	if err := skip(); err != nil { // data alignment (SLEB: same length rule)
		return c, err
	}
	if version == 1 {
		i++
	} else if err := skip(); err != nil {
		return c, err
	}
	if len(aug) == 0 || aug[0] != 'z' {
		return c, nil
	}
	c.z = true
	if err := skip(); err != nil {
		return c, err
	}
	for _, a := range aug[1:] {
		if i >= uint64(len(b)) {
			return c, inconsistent("__eh_frame at %#x: augmentation data", off+i)
		}
		switch a {
		case 'R':
			c.fde = b[i]
			i++
		case 'L':
			c.lsda, c.hasLSDA = b[i], true
			i++
		case 'P':
			enc := b[i]
			i++
			n, err := pointer(off+i, enc)
			if err != nil {
				return c, err
			}
			i += n
		case 'S', 'B':
		default:
			return c, inconsistent("__eh_frame at %#x: augmentation %q", off, aug)
		}
	}
	return c, nil
}

// contents returns s's bytes.
func contents(s *Section) ([]byte, error) {
	if s.Data != nil {
		return s.Data, nil
	}
	b := make([]byte, s.Size)
	if s.Size == 0 {
		return b, nil
	}
	if _, err := s.Reader.ReadAt(b, 0); err != nil && !(err == io.EOF) {
		return nil, err
	}
	return b, nil
}

// patched returns s's bytes with the patches applied.
func patched(s *Section, ps []patch) ([]byte, error) {
	src, err := contents(s)
	if err != nil {
		return nil, err
	}
	b := bytes.Clone(src)
	sort.Slice(ps, func(i, j int) bool { return ps[i].off < ps[j].off })
	for _, pt := range ps {
		if pt.off+uint64(pt.size) > uint64(len(b)) {
			return nil, fmt.Errorf("a field at %#x past the section's %d bytes: %w", pt.off, len(b), goffload.ErrInvalid)
		}
		f := b[pt.off:]
		switch pt.size {
		case 8:
			le.PutUint64(f, uint64(int64(le.Uint64(f))+pt.delta))
		case 4:
			le.PutUint32(f, uint32(int64(int32(le.Uint32(f)))+pt.delta))
		case 2:
			le.PutUint16(f, uint16(int64(int16(le.Uint16(f)))+pt.delta))
		}
	}
	return b, nil
}
