package elfobj

import (
	"container/heap"
	"debug/elf"
	"math"
	"slices"
)

// addrSpan is a run of addresses [lo, hi] whose bytes the section of index
// sec holds in the file.
type addrSpan struct {
	lo, hi uint64
	sec    int
}

// SectionAt returns the section that holds the byte at address addr in the
// file, and addr's offset in it: the first, in section order, of the
// SHF_ALLOC sections with bytes in the file (not SHT_NOBITS) whose
// addresses include addr; ok is false if there is none. The sections are
// indexed by address on the first call, in time n log n for n sections, and
// each call then takes log n, however the sections overlap.
func (f *File) SectionAt(addr uint64) (s *FileSection, off uint64, ok bool) {
	if f.byAddr == nil {
		f.byAddr = addrIndex(f.Sections)
	}
	i, _ := slices.BinarySearchFunc(f.byAddr, addr, func(sp addrSpan, a uint64) int {
		if sp.hi < a {
			return -1
		}
		return 1
	})
	if i == len(f.byAddr) || f.byAddr[i].lo > addr {
		return nil, 0, false
	}
	s = f.Sections[f.byAddr[i].sec]
	return s, addr - s.Addr, true
}

// addrIndex returns the spans of addresses of the sections, sorted, each
// owned by the first section that holds it.
func addrIndex(secs []*FileSection) []addrSpan {
	var ss []addrSpan
	var pts []uint64
	for _, s := range secs {
		if s.Index == 0 || s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || s.Size == 0 {
			continue
		}
		hi := s.Addr + s.Size - 1
		if hi < s.Addr {
			hi = math.MaxUint64
		}
		ss = append(ss, addrSpan{s.Addr, hi, s.Index})
		pts = append(pts, s.Addr)
		if hi < math.MaxUint64 {
			pts = append(pts, hi+1)
		}
	}
	slices.SortFunc(ss, func(a, b addrSpan) int {
		switch {
		case a.lo < b.lo:
			return -1
		case a.lo > b.lo:
			return 1
		}
		return 0
	})
	slices.Sort(pts)
	pts = slices.Compact(pts)
	// Sweep the boundaries, keeping the sections that hold the current
	// address in a heap by index; the first owns the span up to the next
	// boundary, where no section starts or ends.
	out := []addrSpan{}
	var open spanHeap
	j := 0
	for k, p := range pts {
		for ; j < len(ss) && ss[j].lo == p; j++ {
			heap.Push(&open, ss[j])
		}
		for open.Len() > 0 && open[0].hi < p {
			heap.Pop(&open)
		}
		if open.Len() == 0 {
			continue
		}
		end := uint64(math.MaxUint64)
		if k+1 < len(pts) {
			end = pts[k+1] - 1
		}
		sec := open[0].sec
		if n := len(out); n > 0 && out[n-1].sec == sec && out[n-1].hi+1 == p {
			out[n-1].hi = end
			continue
		}
		out = append(out, addrSpan{p, end, sec})
	}
	return out
}

// spanHeap is a heap of sections' spans by section index.
type spanHeap []addrSpan

func (h spanHeap) Len() int           { return len(h) }
func (h spanHeap) Less(i, j int) bool { return h[i].sec < h[j].sec }
func (h spanHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *spanHeap) Push(x any)        { *h = append(*h, x.(addrSpan)) }
func (h *spanHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
