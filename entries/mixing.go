package entries

import (
	"debug/elf"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// FindingKind names what a [Finding] found. The strings are stable: scripts
// read them from `goffload check --json`.
type FindingKind string

const (
	// FindMissingSymbol: an entry whose name no device image of its kind
	// defines (a [Missing] of [Check]).
	FindMissingSymbol FindingKind = "missing-symbol"
	// FindUnregistered: entries outside every range a wrapper registers
	// (__start_/__stop_ of another entries section than theirs), or, in a set
	// of objects, entries outside the section that one object's wrapper
	// registers.
	FindUnregistered FindingKind = "unregistered-entries"
	// FindMixedLayouts: 32-byte and 56-byte entries in one file or one set
	// of objects.
	FindMixedLayouts FindingKind = "mixed-entry-layouts"
	// FindRuntimeLayout: the libomptarget the file needs cannot read the
	// entries its wrapper registers.
	FindRuntimeLayout FindingKind = "runtime-entry-layout"
	// FindHIPKind: HIP numbered 3 (LLVM 20 and before) beside HIP numbered
	// 4 or 56-byte entries (LLVM 21 and later).
	FindHIPKind FindingKind = "hip-kind-numbering"
	// FindDeviceCodeForm: bundled device code of the old driver (LLVM 13,
	// 14) beside OffloadBinaries, or OffloadBinaries that no wrapper
	// registers where one registers raw images.
	FindDeviceCodeForm FindingKind = "device-code-form"
	// FindRequires: a `#pragma omp requires` encoding that the runtime does
	// not read.
	FindRequires FindingKind = "requires-encoding"
	// FindIncompatible: facts of a file or a set of objects that no one
	// release links and runs, for another reason than the above.
	FindIncompatible FindingKind = "incompatible-releases"
	// FindRuntimeImage: a device image that the named runtime's plugins
	// refuse to load, for its ELF header (fatobj.CheckOptions.Runtime).
	FindRuntimeImage FindingKind = "runtime-refuses-image"
)

// Finding is one problem that would show only when the program runs: a sign
// of LLVM releases mixed in one file or one set of objects, or a missing
// device symbol.
type Finding struct {
	Kind    FindingKind `json:"kind"`
	Message string      `json:"message"` // one line
	// Section is the entries section concerned, if any; Entries how many of
	// its entries.
	Section string `json:"section,omitempty"`
	Entries int    `json:"entries,omitempty"`
	// Releases are those the finding's evidence points to: the releases
	// that make the entries, or the runtime's.
	Releases release.Set `json:"releases,omitempty"`
	// Other is the earlier input that an object cannot be linked with
	// (findings of [Incompatible]).
	Other string `json:"other,omitempty"`
}

func (f Finding) String() string { return string(f.Kind) + ": " + f.Message }

// Topic is what a [Fact] is about.
type Topic string

const (
	TopicEntries      Topic = "entries"       // an entries section: its name and layout
	TopicRequires     Topic = "requires"      // how `#pragma omp requires` is encoded
	TopicDeviceCode   Topic = "device-code"   // OffloadBinaries, bundles, clang 14's image sections
	TopicHIPKind      Topic = "hip-kind"      // the number of OFK_HIP in binaries and 56-byte entries
	TopicSymbols      Topic = "entry-symbols" // the names of the entries' symbols
	TopicRegistration Topic = "registration"  // a wrapper in an object, registering a section
)

// Fact is one thing a file shows that ties it to LLVM releases.
type Fact struct {
	Topic Topic  `json:"topic"`
	What  string `json:"what"`
	// Made are the releases whose compiler (or wrapper) makes it; Links
	// those whose link and libomptarget read it: for entries still to be
	// registered, the releases whose wrapper registers their section; for
	// entries a wrapper of the file registers already, the releases whose
	// runtime reads their layout.
	Made  release.Set `json:"made_by"`
	Links release.Set `json:"read_by"`
}

// Registration is a registration of entries found in a file: a wrapper's
// __tgt_bin_desc (OpenMP), or the __start_/__stop_ symbols of an entries
// section that a CUDA or HIP wrapper's loop reads.
type Registration struct {
	// Kind is OffloadOpenMP for a __tgt_bin_desc, OffloadNone for a
	// __start_/__stop_ range of another user.
	Kind offload.OffloadKind `json:"kind"`
	// Section is the entries section registered, "" when a stripped file
	// does not tell (an empty range).
	Section string `json:"section"`
	// Entries counts the entries in the range (linked files).
	Entries int `json:"entries"`
	// Images is the descriptor's NumDeviceImages; RawImages is set when
	// they are raw device images (clang-offload-wrapper, LLVM 13 and 14),
	// not OffloadBinaries.
	Images    int  `json:"images,omitempty"`
	RawImages bool `json:"raw_images,omitempty"`
	// Releases are those whose wrapper makes such a registration: it
	// registers Section and points to its images as they do, in an object
	// its constructor has their priority.
	Releases release.Set `json:"releases"`

	begin, end uint64 // linked files: the range
	ranged     bool   // begin and end are known
}

// Origin is what a file shows of the LLVM releases that made it and of the
// releases that can link and run it, with the problems found.
type Origin struct {
	Facts         []Fact         `json:"facts"`
	Registrations []Registration `json:"registrations"`
	// Runtime is the libomptarget the file needs (DT_NEEDED), "" if none;
	// RuntimeReleases are the releases it belongs to.
	Runtime         string      `json:"runtime,omitempty"`
	RuntimeReleases release.Set `json:"runtime_releases,omitempty"`
	Findings        []Finding   `json:"findings"`
	// RawImages are the raw device images (no OffloadBinary) that the
	// wrappers of LLVM 13 and 14 in a linked file register.
	RawImages []RawImage `json:"-"`
}

// RawImage is a raw device image a registration points to: Size bytes at
// Offset of section Section (an index into the file's sections).
type RawImage struct {
	Section      int
	Offset, Size int64
	// Triple is the architecture of the image's machine when it is an ELF
	// file ("x86_64", "aarch64", ...), else "".
	Triple string
}

// Made returns the releases that make everything the file holds: all of
// them when nothing tells, none when the file mixes releases.
func (o *Origin) Made() release.Set {
	s := release.Known()
	for _, f := range o.Facts {
		s &= f.Made
	}
	return s
}

// Links returns the releases whose link and runtime read everything the
// file holds.
func (o *Origin) Links() release.Set {
	s := release.Known()
	for _, f := range o.Facts {
		s &= f.Links
	}
	return s
}

// Wrapper returns the releases whose wrapper can have made each
// registration of the file (none if it has none).
func (o *Origin) Wrapper() release.Set {
	var s release.Set
	for i, g := range o.Registrations {
		if i == 0 {
			s = g.Releases
		}
		s &= g.Releases
	}
	return s
}

// Mixing reads f (an object, a linked program or a shared object) for signs
// of LLVM releases mixed in it, numbering 56-byte entries' kinds by release
// r as [Read] does.
//
// In a linked file it finds the registrations (each __tgt_bin_desc of an
// OpenMP wrapper, by its symbol or, in a stripped file, by its shape; the
// __start_/__stop_ symbols of the entries sections that wrappers
// reference) and the libomptarget the file needs (DT_NEEDED), and reports:
// entries outside every registered range; 32- and 56-byte entries in one
// program; registered entries or a `requires` encoding that the runtime
// does not read; HIP numbered 3 beside HIP numbered 4 or 56-byte entries;
// device code in a form no wrapper of the file registers. The releases of
// each wrapper come from the release table: the section it registers, where
// its __tgt_device_image points into the embedded OffloadBinary (or to a raw
// image), and in an object the priority of its constructor.
//
// In an object it reports the facts (entries sections, requires encodings,
// device code, HIP numbering, a wrapper's registration) that no one
// release links and runs together; [Incompatible] does the same across the
// objects of one link or archive.
func Mixing(f *elfobj.File, r *release.Release) (*Origin, error) {
	m, err := newMixer(f)
	if err != nil {
		return nil, err
	}
	if m.ents, err = Read(f, r); err != nil {
		return nil, err
	}
	m.entryFacts()
	if !m.linked {
		m.retainFacts()
	}
	m.requiresFacts()
	m.symbolFacts()
	if err := m.deviceCodeFacts(); err != nil {
		return nil, fmt.Errorf("entries: %w", err)
	}
	for _, im := range m.raw {
		ri := RawImage{Section: im.sec.Index, Offset: int64(im.off), Size: int64(im.end - im.off)}
		sr := io.NewSectionReader(im.sec.Open(), ri.Offset, ri.Size)
		if ef, err := elfobj.Read(sr, sr.Size()); err == nil {
			ri.Triple = machineTriples[ef.Machine]
		}
		m.o.RawImages = append(m.o.RawImages, ri)
	}
	if m.linked {
		needed, err := f.Needed()
		if err != nil {
			return nil, err
		}
		for _, n := range needed {
			if rs := release.ByRuntimeLibrary(n); rs != nil {
				m.o.Runtime, m.o.RuntimeReleases = n, release.SetOf(rs...)
				break
			}
		}
		m.linkedFindings()
	} else {
		m.o.Findings = append(m.o.Findings, conflicts(m.o.Facts)...)
	}
	return m.o, nil
}

// newMixer reads the symbols and the registrations of f.
func newMixer(f *elfobj.File) (*mixer, error) {
	m := &mixer{f: f, o: &Origin{}, linked: f.Type != elf.ET_REL, relocs: map[int]map[uint64]elfobj.FileReloc{}, bins: map[int][]*offloadbinary.Binary{}}
	var err error
	if m.syms, err = f.Symbols(); err != nil {
		return nil, err
	}
	if m.dynsyms, err = f.DynamicSymbols(); err != nil {
		return nil, err
	}
	if _, err := machineOf(f.Machine); err == nil {
		if m.rs, err = newResolver(f); err != nil {
			return nil, err
		}
		m.registrations()
	}
	return m, nil
}

// machineTriples names the machines of raw device images as a triple's
// architecture.
var machineTriples = map[elf.Machine]string{
	elf.EM_X86_64: "x86_64", elf.EM_AARCH64: "aarch64", elf.EM_PPC64: "ppc64", elf.EM_RISCV: "riscv64",
	elf.EM_AMDGPU: "amdgcn", elf.EM_CUDA: "nvptx64",
}

// mixer holds what Mixing has read of a file.
type mixer struct {
	f       *elfobj.File
	o       *Origin
	linked  bool
	ents    []FileEntry
	syms    []elfobj.FileSymbol
	dynsyms []elfobj.FileSymbol
	rs      *resolver // nil for a machine Read does not decode
	relocs  map[int]map[uint64]elfobj.FileReloc
	bins    map[int][]*offloadbinary.Binary

	// The OpenMP registration calls the file makes or defines, and the
	// CUDA and HIP ones.
	callsOpenMP, callsGPU bool
	// descriptors counts the __tgt_bin_desc found; boundImages the binaries
	// their images point into, by section index and offset.
	descriptors int
	boundImages map[[2]uint64]bool
	// raw are the raw device images the descriptors point to.
	raw []rawImage
	// sections: per entries section with entries, in file order.
	sections []*sectionUse
}

// rawImage is a raw device image: the bytes [off, end) of sec.
type rawImage struct {
	sec      *elfobj.FileSection
	off, end uint64
}

// sectionUse is what Mixing knows of one entries section of the file.
type sectionUse struct {
	name, base string
	layout     offload.EntryLayout
	index      int
	ents       []FileEntry
	registered int // entries in a registered range (linked), or all when a wrapper of the object registers the section
	unknown    int // entries whose registration cannot be told (a stripped file)
	requires   []FileEntry
}

// hasSymbol reports whether the symbol or dynamic symbol table names sym.
func (m *mixer) hasSymbol(pred func(s *elfobj.FileSymbol) bool) bool {
	for _, tab := range [][]elfobj.FileSymbol{m.syms, m.dynsyms} {
		for i := range tab {
			if pred(&tab[i]) {
				return true
			}
		}
	}
	return false
}

func named(name string) func(*elfobj.FileSymbol) bool {
	return func(s *elfobj.FileSymbol) bool { return s.Name == name }
}

// baseSection returns the entries section of the release table that name
// is, or is with a relocatable link's suffix; "" if none.
func baseSection(name string) string {
	if _, ok := offload.DetectEntryLayout(name); !ok {
		return ""
	}
	best := ""
	for _, r := range release.All() {
		for _, k := range []offload.OffloadKind{offload.OffloadOpenMP, offload.OffloadCUDA, offload.OffloadHIP} {
			if sec := offload.EntriesSection(r, k); sec != "" && strings.HasPrefix(name, sec) && len(sec) > len(best) {
				best = sec
			}
		}
	}
	return best
}

// registeringSection returns the releases whose wrappers register the
// entries section base (of some kind).
func registeringSection(base string) release.Set {
	return release.Where(func(r *release.Release) bool {
		for _, k := range []offload.OffloadKind{offload.OffloadOpenMP, offload.OffloadCUDA, offload.OffloadHIP} {
			if offload.EntriesSection(r, k) == base && base != "" {
				return true
			}
		}
		return false
	})
}

// place is a byte of a section.
type place struct {
	sec *elfobj.FileSection
	off uint64
}

// placeOf returns the section byte loc points to.
func (m *mixer) placeOf(loc location) (place, bool) {
	if !loc.linked {
		if loc.section > 0 && loc.section < len(m.f.Sections) {
			return place{m.f.Sections[loc.section], loc.offset}, true
		}
		return place{}, false
	}
	if s, d, ok := m.f.SectionAt(loc.addr); ok {
		return place{s, d}, true
	}
	return place{}, false
}

// word reads the size-byte integer at p+off.
func (m *mixer) word(p place, off uint64, size int) (uint64, bool) {
	if p.off+off < p.off || p.off+off > p.sec.FileSize || p.sec.FileSize-(p.off+off) < uint64(size) || p.sec.Type == elf.SHT_NOBITS {
		return 0, false
	}
	var b [8]byte
	if _, err := p.sec.Open().ReadAt(b[:size], int64(p.off+off)); err != nil {
		return 0, false
	}
	if size == 4 {
		return uint64(m.rs.order.Uint32(b[:4])), true
	}
	return m.rs.order.Uint64(b[:]), true
}

// sectionRelocs returns the relocations that apply to s (objects only).
func (m *mixer) sectionRelocs(s *elfobj.FileSection) (map[uint64]elfobj.FileReloc, error) {
	if m.linked {
		return nil, nil
	}
	if r, ok := m.relocs[s.Index]; ok {
		return r, nil
	}
	r, err := m.rs.relocsOf(s)
	m.relocs[s.Index] = r
	return r, err
}

// pointer resolves the pointer at p+off.
func (m *mixer) pointer(p place, off uint64) (offload.SymbolRef, location, bool) {
	stored, ok := m.word(p, off, 8)
	if !ok {
		return offload.SymbolRef{}, location{}, false
	}
	relocs, err := m.sectionRelocs(p.sec)
	if err != nil {
		return offload.SymbolRef{}, location{}, false
	}
	ref, loc := m.rs.pointer(p.sec, relocs, p.off+off, stored)
	return ref, loc, true
}

// maxImages bounds the NumDeviceImages of a descriptor read, maxScanImages
// that of one found by its shape: a wrapper has one image per device
// target. maxDescriptors bounds the descriptors read in one file.
const (
	maxImages      = 1024
	maxScanImages  = 64
	maxDescriptors = 256
)

// registrations finds the registrations of the file.
func (m *mixer) registrations() {
	m.callsOpenMP = m.hasSymbol(named("__tgt_register_lib"))
	m.callsGPU = m.hasSymbol(named("__hipRegisterFatBinary")) || m.hasSymbol(named("__cudaRegisterFatBinary"))
	m.boundImages = map[[2]uint64]bool{}
	var descs []place
	for i := range m.syms {
		s := &m.syms[i]
		if strings.HasPrefix(s.Name, ".omp_offloading.descriptor") && s.Type() == elf.STT_OBJECT && s.Section != elf.SHN_UNDEF && int(s.Section) < len(m.f.Sections) {
			sec := m.f.Sections[s.Section]
			off := s.Value
			if m.linked {
				off -= sec.Addr
			}
			descs = append(descs, place{sec, off})
		}
	}
	if len(descs) == 0 && m.linked && m.callsOpenMP {
		descs = m.scanDescriptors()
	}
	if len(descs) > maxDescriptors {
		descs = descs[:maxDescriptors]
	}
	for _, d := range descs {
		if g, ok := m.descriptor(d, false); ok {
			m.o.Registrations = append(m.o.Registrations, g)
			m.descriptors++
		}
	}
	if m.descriptors == 1 {
		m.o.Registrations[0].Releases &= m.arrayFacts()
	}
	m.symbolRanges()
}

// descriptor reads the __tgt_bin_desc at d: {int32 NumDeviceImages,
// DeviceImages, HostEntriesBegin, HostEntriesEnd}
// (docs/registration.md#runtime-structs). With strict (a candidate found by its
// shape) every image must point to the same entries as the descriptor.
func (m *mixer) descriptor(d place, strict bool) (Registration, bool) {
	n, ok1 := m.word(d, 0, 4)
	pad, ok2 := m.word(d, 4, 4)
	if !ok1 || !ok2 || n == 0 || n > maxImages || (strict && (pad != 0 || n > maxScanImages)) {
		return Registration{}, false
	}
	_, imgLoc, ok1 := m.pointer(d, 8)
	beginRef, beginLoc, ok2 := m.pointer(d, 16)
	endRef, endLoc, ok3 := m.pointer(d, 24)
	if !ok1 || !ok2 || !ok3 {
		return Registration{}, false
	}
	g := Registration{Kind: offload.OffloadOpenMP, Images: int(n), Releases: release.Where(func(*release.Release) bool { return true })}
	if m.linked {
		if !beginLoc.linked || !endLoc.linked || beginLoc.addr > endLoc.addr {
			return Registration{}, false
		}
		g.begin, g.end, g.ranged = beginLoc.addr, endLoc.addr, true
		g.Section = m.rangeSection(g.begin, g.end)
	} else if sec, ok := strings.CutPrefix(beginRef.Symbol, "__start_"); ok && endRef.Symbol == "__stop_"+sec {
		g.Section = sec
	}
	imgs, ok := m.placeOf(imgLoc)
	if !ok || imgs.off+32*n > imgs.sec.FileSize {
		return Registration{}, false
	}
	for i := range n {
		rec := place{imgs.sec, imgs.off + 32*i}
		if strict {
			b, bl, ok1 := m.pointer(rec, 16)
			e, el, ok2 := m.pointer(rec, 24)
			if !ok1 || !ok2 || b != beginRef || e != endRef || bl != beginLoc || el != endLoc {
				return Registration{}, false
			}
		} else {
			g.Releases &= m.imageReleases(rec, &g)
		}
	}
	if g.Section != "" {
		base := baseSection(g.Section)
		g.Releases &= release.Where(func(r *release.Release) bool { return r.Entries.OpenMP == base })
	}
	return g, true
}

// imageReleases returns the releases whose wrapper points the
// __tgt_device_image at rec into its image as it does
// (docs/registration.md#image-bounds, docs/releases.md#release-table): raw
// images (13, 14), or the OffloadBinary's start or ImageOffset, and its end
// or ImageOffset+ImageSize. A pointer that cannot be followed tells nothing.
func (m *mixer) imageReleases(rec place, g *Registration) release.Set {
	all := release.Known()
	_, startLoc, ok1 := m.pointer(rec, 0)
	_, endLoc, ok2 := m.pointer(rec, 8)
	if !ok1 || !ok2 {
		return all
	}
	start, ok := m.placeOf(startLoc)
	if !ok {
		return all
	}
	if start.sec.Type != elfobj.SHT_LLVM_OFFLOADING {
		g.RawImages = true
		endOff := endLoc.offset
		if m.linked {
			endOff = endLoc.addr - start.sec.Addr
		}
		if endOff > start.off && endOff <= start.sec.FileSize && (!m.linked || endLoc.linked) && (m.linked || endLoc.section == start.sec.Index) {
			m.raw = append(m.raw, rawImage{start.sec, start.off, endOff})
		}
		return release.Where(func(r *release.Release) bool { return r.Wrapper.Form == release.WrapperOffloadWrapper })
	}
	bins, err := m.binaries(start.sec)
	if err != nil {
		return all
	}
	endOff := endLoc.offset
	if m.linked {
		endOff = endLoc.addr - start.sec.Addr
	}
	for _, b := range bins {
		off := uint64(b.Offset)
		if start.off < off || start.off-off >= b.Size {
			continue
		}
		m.boundImages[[2]uint64{uint64(start.sec.Index), off}] = true
		rel, relEnd := start.off-off, endOff-off
		starts, ends := map[release.ImageBound]bool{}, map[release.ImageBound]bool{}
		if rel == 0 {
			starts[release.BoundBinaryStart] = true
		}
		if relEnd == b.Size || relEnd == (b.Size+7)&^7 {
			ends[release.BoundBinaryEnd] = true
		}
		for _, im := range b.Images {
			if rel == im.ImageOffset {
				starts[release.BoundImageStart] = true
			}
			if relEnd == im.ImageOffset+im.ImageSize {
				ends[release.BoundImageEnd] = true
			}
		}
		return release.Where(func(r *release.Release) bool {
			return r.Wrapper.Form == release.WrapperLinkerWrapper && starts[r.Wrapper.ImageStart] && ends[r.Wrapper.ImageEnd]
		})
	}
	return all
}

// binaries returns the OffloadBinaries of section s, read once.
func (m *mixer) binaries(s *elfobj.FileSection) ([]*offloadbinary.Binary, error) {
	if b, ok := m.bins[s.Index]; ok {
		return b, nil
	}
	sr := s.Open()
	// Every version any release writes: the version says who made it.
	b, err := offloadbinary.ReadAll(sr, sr.Size(), nil)
	if err != nil {
		b = nil
	}
	m.bins[s.Index] = b
	return b, err
}

// rangeSection names the entries section whose __start_ and __stop_
// symbols are begin and end, or holds the range; "" if none does.
func (m *mixer) rangeSection(begin, end uint64) string {
	starts, stops := m.boundSymbols()
	var names []string
	for name, v := range starts {
		if v == begin {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		if stop, ok := stops[n]; ok && stop == end {
			return n
		}
	}
	if begin < end {
		if p, ok := m.placeOf(location{addr: begin, linked: true}); ok && baseSection(p.sec.Name) != "" {
			return p.sec.Name
		}
	}
	return ""
}

// boundSymbols returns the values of the defined __start_<sec> and
// __stop_<sec> symbols of entries sections, by section name.
func (m *mixer) boundSymbols() (starts, stops map[string]uint64) {
	starts, stops = map[string]uint64{}, map[string]uint64{}
	for i := range m.syms {
		s := &m.syms[i]
		if s.Section == elf.SHN_UNDEF {
			continue
		}
		if sec, ok := strings.CutPrefix(s.Name, "__start_"); ok && baseSection(sec) != "" {
			starts[sec] = s.Value
		} else if sec, ok := strings.CutPrefix(s.Name, "__stop_"); ok && baseSection(sec) != "" {
			stops[sec] = s.Value
		}
	}
	return starts, stops
}

// symbolRanges adds the registrations that only __start_/__stop_ symbols
// show: in a linked file the defined pairs that no descriptor's range is, in
// an object the undefined __start_ references no descriptor makes.
func (m *mixer) symbolRanges() {
	known := map[string]bool{}
	for _, g := range m.o.Registrations {
		known[g.Section] = true
	}
	if m.linked {
		starts, stops := m.boundSymbols()
		var names []string
		for n := range starts {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			stop, ok := stops[n]
			if !ok || known[n] || stop < starts[n] {
				continue
			}
			m.o.Registrations = append(m.o.Registrations, Registration{Section: n, Releases: registeringSection(baseSection(n)), begin: starts[n], end: stop, ranged: true})
		}
		return
	}
	for i := range m.syms {
		s := &m.syms[i]
		n, ok := strings.CutPrefix(s.Name, "__start_")
		if !ok || s.Section != elf.SHN_UNDEF || known[n] || baseSection(n) == "" {
			continue
		}
		known[n] = true
		m.o.Registrations = append(m.o.Registrations, Registration{Section: n, Releases: registeringSection(baseSection(n))})
	}
}

// arrayFacts returns the releases whose OpenMP wrapper has the constructor
// and destructor the file shows: the priority of the .init_array.<N> that
// calls the registration function (objects), and whether a .fini_array
// calls the unregistration function (LLVM 18 and before) or the symbol
// table shows that function and none calls it (atexit, LLVM 19 and later).
func (m *mixer) arrayFacts() release.Set {
	s := release.Known()
	type at struct {
		sec  int
		addr uint64
	}
	fns := map[string]map[at]bool{".omp_offloading.descriptor_reg": {}, ".omp_offloading.descriptor_unreg": {}}
	for i := range m.syms {
		sym := &m.syms[i]
		for prefix, set := range fns {
			if strings.HasPrefix(sym.Name, prefix) && sym.Type() == elf.STT_FUNC && sym.Section != elf.SHN_UNDEF {
				if m.linked {
					set[at{0, sym.Value}] = true
				} else {
					set[at{int(sym.Section), sym.Value}] = true
				}
			}
		}
	}
	unregs := len(fns[".omp_offloading.descriptor_unreg"])
	dtor := false
	for _, sec := range m.f.Sections[1:] {
		prio, isInit := strings.CutPrefix(sec.Name, ".init_array")
		_, isFini := strings.CutPrefix(sec.Name, ".fini_array")
		if !isInit && !isFini || sec.Type == elf.SHT_NOBITS {
			continue
		}
		want := fns[".omp_offloading.descriptor_reg"]
		if isFini {
			want = fns[".omp_offloading.descriptor_unreg"]
		}
		for off := uint64(0); off+8 <= sec.FileSize && off < 8*maxImages; off += 8 {
			_, loc, ok := m.pointer(place{sec, off}, 0)
			if !ok || !want[at{loc.section, loc.offset}] && !want[at{0, loc.addr}] || loc == (location{}) {
				continue
			}
			if isFini {
				dtor = true
			} else if n, err := strconv.Atoi(strings.TrimPrefix(prio, ".")); err == nil && !m.linked {
				s &= release.Where(func(r *release.Release) bool { return r.Wrapper.CtorPriority == n })
			}
		}
	}
	switch {
	case dtor:
		s &= release.Where(func(r *release.Release) bool { return !r.Wrapper.UnregisterAtexit })
	case unregs > 0:
		s &= release.Where(func(r *release.Release) bool { return r.Wrapper.UnregisterAtexit })
	}
	return s
}

// maxScanned bounds the candidates that scanDescriptors follows in one
// file, whatever its size.
const maxScanned = 4096

// scanDescriptors looks for the __tgt_bin_desc of a linked file without its
// symbols: at an 8-aligned address of a data section, a small image count
// then three pointers whose images all point to the descriptor's entries.
func (m *mixer) scanDescriptors() []place {
	var out []place
	followed := 0
	var buf []byte // as large as the largest section read, up to 1 MiB
	for _, s := range m.f.Sections[1:] {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Flags&elf.SHF_EXECINSTR != 0 || s.Type != elf.SHT_PROGBITS || s.Size < 32 || baseSection(s.Name) != "" {
			continue
		}
		if want := max(min(s.Size, 1<<20), 64); uint64(len(buf)) < want {
			buf = make([]byte, want) // over 32 bytes: each chunk moves on
		}
		sr := s.Open()
		start := (8 - s.Addr%8) % 8
		for chunk := start; chunk+32 <= uint64(sr.Size()); chunk += uint64(len(buf)) - 32 {
			n, _ := sr.ReadAt(buf, int64(chunk))
			for i := 0; i+32 <= n; i += 8 {
				cnt, pad := m.rs.order.Uint32(buf[i:]), m.rs.order.Uint32(buf[i+4:])
				if cnt == 0 || cnt > maxImages || pad != 0 {
					continue
				}
				if followed++; followed > maxScanned {
					return out
				}
				p := place{s, chunk + uint64(i)}
				if _, ok := m.descriptor(p, true); ok {
					out = append(out, p)
				}
			}
			if n < len(buf) {
				break
			}
		}
	}
	return out
}

// entryFacts groups the entries by section, tells which are registered, and
// adds a fact per section.
func (m *mixer) entryFacts() {
	// Counted first, so that each section's list is made once at its size.
	count := map[string]int{}
	for i := range m.ents {
		count[m.ents[i].Section]++
	}
	bySec := map[string]*sectionUse{}
	for _, e := range m.ents {
		u := bySec[e.Section]
		if u == nil {
			u = &sectionUse{name: e.Section, base: baseSection(e.Section), layout: e.Layout}
			for _, s := range m.f.Sections[1:] {
				if s.Name == e.Section {
					u.index = s.Index
					break
				}
			}
			u.ents = make([]FileEntry, 0, count[e.Section])
			bySec[e.Section] = u
			m.sections = append(m.sections, u)
		}
		u.ents = append(u.ents, e)
		if e.Kind == offload.OffloadOpenMP && e.Flags&uint32(offload.OMPEntryRequires) != 0 {
			u.requires = append(u.requires, e)
		}
	}
	for _, u := range m.sections {
		m.classify(u)
		size := u.layout.Size()
		f := Fact{Topic: TopicEntries, What: fmt.Sprintf("%d %d-byte entries in %s", len(u.ents), size, u.name), Made: registeringSection(u.base)}
		f.Links = f.Made
		if u.registered == len(u.ents) && u.registered > 0 {
			l := u.layout
			f.Links = release.Where(func(r *release.Release) bool { return offload.RuntimeReadsEntries(r, l) })
		}
		m.o.Facts = append(m.o.Facts, f)
		for _, e := range u.ents {
			if u.layout == offload.EntryV1 && (e.Raw.Kind == 3 || e.Raw.Kind == 4) && e.Kind != offload.OffloadOpenMP {
				code := e.Raw.Kind
				m.addFact(Fact{Topic: TopicHIPKind, What: fmt.Sprintf("56-byte HIP entries numbered %d in %s", code, u.name),
					Made: release.Where(func(r *release.Release) bool { return r.Kinds.HIP == code })})
			}
		}
	}
}

// retainFacts adds what the entries sections of an object say by their
// SHF_GNU_RETAIN flag, which main after 23 sets and earlier releases do not
// (a linker need not keep it in a program), and narrows the releases of the
// object's registrations with it.
func (m *mixer) retainFacts() {
	mask := release.Known()
	for _, s := range m.f.Sections[1:] {
		if baseSection(s.Name) == "" || s.Type == elfobj.SHT_LLVM_OFFLOADING {
			continue
		}
		retain := s.Flags&elfobj.SHF_GNU_RETAIN != 0
		what := s.Name + " without SHF_GNU_RETAIN"
		if retain {
			what = "SHF_GNU_RETAIN on " + s.Name
		}
		made := release.Where(func(r *release.Release) bool { return r.Entries.Retain == retain })
		m.addFact(Fact{Topic: TopicEntries, What: what, Made: made, Links: release.Known()})
		mask &= made
	}
	for i := range m.o.Registrations {
		if g := &m.o.Registrations[i]; g.Releases&mask != 0 {
			g.Releases &= mask
		}
	}
}

// addFact adds f once (facts of one What are one fact), Links defaulting to
// Made.
func (m *mixer) addFact(f Fact) {
	if f.Links == 0 {
		f.Links = f.Made
	}
	for _, g := range m.o.Facts {
		if g.What == f.What {
			return
		}
	}
	m.o.Facts = append(m.o.Facts, f)
}

// classify counts the entries of u that a registration covers.
func (m *mixer) classify(u *sectionUse) {
	if !m.linked {
		for _, g := range m.o.Registrations {
			if g.Section == u.name && u.name != u.base { // a relocatable link's own section
				u.registered = len(u.ents)
			}
		}
		return
	}
	s := m.f.Sections[u.index]
	size := uint64(u.layout.Size())
	for _, e := range u.ents {
		addr := s.Addr + uint64(e.Index)*size
		in := false
		for j := range m.o.Registrations {
			g := &m.o.Registrations[j]
			if g.ranged && addr >= g.begin && addr+size <= g.end {
				in = true
				g.Entries++
			}
		}
		switch {
		case in:
			u.registered++
		case m.unknownRegistration(e):
			u.unknown++
		}
	}
}

// unknownRegistration reports whether the file registers entries of e's
// kind in a way Mixing cannot see: OpenMP registration without a
// descriptor found, CUDA or HIP registration without a symbol table.
func (m *mixer) unknownRegistration(e FileEntry) bool {
	if e.Kind == offload.OffloadOpenMP || e.Kind == offload.OffloadNone {
		return m.callsOpenMP && m.descriptors == 0
	}
	return m.callsGPU && len(m.syms) == 0
}

// requiresFacts adds the requires encodings the file holds.
func (m *mixer) requiresFacts() {
	add := func(e release.RequiresEncoding, what string) {
		m.addFact(Fact{Topic: TopicRequires, What: what,
			Made:  release.Where(func(r *release.Release) bool { return r.Entries.Requires == e }),
			Links: release.Where(func(r *release.Release) bool { return r.ReadsRequires(e) })})
	}
	if m.requiresCtor() && !m.requiresNone() {
		// A constructor that registers OMP_REQ_NONE (clang 14 to 18 emit
		// one in every object without requirements, and `convert` leaves
		// it) registers nothing any runtime needs: no fact of release.
		add(release.RequiresCtor, "`#pragma omp requires` registered by a constructor calling __tgt_register_requires")
	}
	for _, u := range m.sections {
		if len(u.requires) == 0 {
			continue
		}
		e, what := requiresOf(u.layout)
		add(e, what+" in "+u.name)
	}
}

// requiresNone reports whether the file's requires constructor is known to
// register no requirement: on x86-64, .omp_offloading.requires_reg is
// `mov $FLAGS, %edi` then a call or jump (clang 15 to 18 emit one for
// every object, with OMP_REQ_NONE, 1, when there is no `#pragma omp
// requires`). Other machines, and code of another shape, are not read:
// false.
func (m *mixer) requiresNone() bool {
	if m.f.Machine != elf.EM_X86_64 {
		return false
	}
	found, none := false, true
	for i := range m.syms {
		s := &m.syms[i]
		if !strings.HasPrefix(s.Name, ".omp_offloading.requires_reg") || s.Type() != elf.STT_FUNC {
			continue
		}
		if int(s.Section) <= 0 || int(s.Section) >= len(m.f.Sections) {
			return false
		}
		sec := m.f.Sections[s.Section]
		off := s.Value
		if m.f.Type != elf.ET_REL {
			off -= sec.Addr
		}
		code := make([]byte, 32)
		n, _ := sec.Open().ReadAt(code, int64(off))
		code = code[:n]
		flags, ok := x86RequiresFlags(code)
		if !ok {
			return false
		}
		found, none = true, none && flags == ompReqNone
	}
	return found && none
}

// ompReqNone is OMP_REQ_NONE, the flags of no `#pragma omp requires`.
const ompReqNone = 1

// x86RequiresFlags reads the flags that the code of a requires constructor
// passes: the immediate of the first `mov $imm32, %edi` (bf imm32),
// followed by a call or a jump (e8, e9).
func x86RequiresFlags(code []byte) (uint32, bool) {
	for i := 0; i+5 < len(code); i++ {
		if code[i] == 0xbf && (code[i+5] == 0xe8 || code[i+5] == 0xe9) {
			return uint32(code[i+1]) | uint32(code[i+2])<<8 | uint32(code[i+3])<<16 | uint32(code[i+4])<<24, true
		}
	}
	return 0, false
}

// requiresCtor reports whether the file calls __tgt_register_requires.
func (m *mixer) requiresCtor() bool {
	return m.hasSymbol(func(s *elfobj.FileSymbol) bool {
		return s.Name == "__tgt_register_requires" || strings.HasPrefix(s.Name, ".omp_offloading.requires_reg")
	})
}

// requiresOf returns the requires encoding of an entry of layout l.
func requiresOf(l offload.EntryLayout) (release.RequiresEncoding, string) {
	if l == offload.EntryV1 {
		return release.RequiresEntryData, "a requires entry with its flags in Data"
	}
	return release.RequiresEntryReserved, "a requires entry with its flags in `reserved`"
}

// symbolFacts adds the prefixes of the entries' symbols.
func (m *mixer) symbolFacts() {
	entrySec := map[int]bool{}
	for _, u := range m.sections {
		entrySec[u.index] = true
	}
	prefixes := map[string]bool{}
	for _, r := range release.All() {
		prefixes[r.Entries.SymbolPrefix] = true
	}
	seen := map[string]bool{}
	for i := range m.syms {
		s := &m.syms[i]
		if !entrySec[int(s.Section)] || s.Type() == elf.STT_SECTION {
			continue
		}
		for p := range prefixes {
			if strings.HasPrefix(s.Name, p) && !seen[p] {
				seen[p] = true
			}
		}
	}
	var ps []string
	for p := range seen {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	for _, p := range ps {
		m.addFact(Fact{Topic: TopicSymbols, What: "entry symbols " + p + "*",
			Made: release.Where(func(r *release.Release) bool { return r.Entries.SymbolPrefix == p }), Links: release.Known()})
	}
}

// deviceCodeFacts adds the forms of device code of the file and the HIP
// numbering of its OffloadBinaries.
func (m *mixer) deviceCodeFacts() error {
	linkerWrapper := func(v uint32) release.Set {
		return release.Where(func(r *release.Release) bool {
			return r.Wrapper.Form == release.WrapperLinkerWrapper && r.BinaryVersion >= v
		})
	}
	oldDriver := release.Where(func(r *release.Release) bool { return r.Wrapper.Form == release.WrapperOffloadWrapper })
	for _, s := range m.f.SectionsByType(elfobj.SHT_LLVM_OFFLOADING) {
		bins, err := m.binaries(s)
		if err != nil {
			return fmt.Errorf("section %q: %w", s.Name, err)
		}
		for _, b := range bins {
			v := b.Version
			f := Fact{Topic: TopicDeviceCode, What: fmt.Sprintf("OffloadBinaries (version %d) in %s", v, s.Name),
				Made: release.Where(func(r *release.Release) bool { return r.BinaryVersion == v })}
			if s.Flags&elfobj.SHF_EXCLUDE != 0 || !m.linked && s.Flags&elf.SHF_ALLOC == 0 {
				f.Links = linkerWrapper(v) // device code still to be linked
			} else {
				f.Links = release.Known() // a wrapper's copy
			}
			m.addFact(f)
			for _, im := range b.Images {
				code := im.OffloadKindCode
				if code != 3 && code != 4 {
					continue
				}
				m.addFact(Fact{Topic: TopicHIPKind, What: fmt.Sprintf("HIP images numbered %d in the OffloadBinaries of %s", code, s.Name),
					Made: release.Where(func(r *release.Release) bool { return r.Kinds.HIP == code })})
			}
		}
	}
	bundled, err := bundle.ObjectEntries(m.f)
	if err != nil {
		return err
	}
	for _, e := range bundled {
		if strings.HasPrefix(e.ID, "openmp-") {
			m.addFact(Fact{Topic: TopicDeviceCode, What: "bundled OpenMP device code (" + bundle.SectionPrefix + "openmp-...)", Made: oldDriver})
		}
	}
	if !m.linked {
		for _, s := range m.f.Sections[1:] {
			if _, _, _, ok := offloadbinary.ParseImageSection(s.Name); ok && s.Type != elfobj.SHT_LLVM_OFFLOADING {
				m.addFact(Fact{Topic: TopicDeviceCode, What: "clang 14's device image sections (" + offloadbinary.ImageSectionPrefix + "<triple>...)", Made: oldDriver})
			}
		}
	}
	if !m.linked {
		for _, g := range m.o.Registrations {
			if g.Section != "" && g.Section == baseSection(g.Section) {
				m.addFact(Fact{Topic: TopicRegistration, What: "a wrapper registering " + g.Section, Made: g.Releases, Links: registeringSection(g.Section)})
			}
		}
	}
	return nil
}

// linkedFindings applies the rules of a linked file.
func (m *mixer) linkedFindings() {
	o := m.o
	var unreg, layouts = 0, map[offload.EntryLayout]bool{}
	for _, u := range m.sections {
		layouts[u.layout] = true
		n := len(u.ents) - u.registered - u.unknown
		if n == 0 {
			continue
		}
		unreg += n
		o.Findings = append(o.Findings, Finding{Kind: FindUnregistered, Section: u.name, Entries: n, Releases: registeringSection(u.base),
			Message: fmt.Sprintf("%d of the %d entries in %s (%d-byte, as %s emit them) lie outside every range a wrapper registers: %s",
				n, len(u.ents), u.name, u.layout.Size(), registeringSection(u.base), m.describeRegistrations())})
	}
	if layouts[offload.EntryLegacy] && layouts[offload.EntryV1] && unreg > 0 {
		o.Findings = append(o.Findings, Finding{Kind: FindMixedLayouts,
			Message: fmt.Sprintf("32-byte entries (%s) and 56-byte entries (%s) in one program: objects of LLVM 20 or before and of 21 or later linked together, and a wrapper registers one of the sections only",
				m.sectionsOf(offload.EntryLegacy), m.sectionsOf(offload.EntryV1))})
	}
	runtime, what := o.RuntimeReleases, o.Runtime+" ("+o.RuntimeReleases.String()+")"
	if runtime == 0 {
		runtime, what = o.Wrapper(), "the runtime of the wrapper's release ("+o.Wrapper().String()+")"
	}
	unreadable := map[offload.EntryLayout]bool{}
	if o.RuntimeReleases != 0 {
		for _, u := range m.sections {
			l := u.layout
			if u.registered == 0 || release.Where(func(r *release.Release) bool { return offload.RuntimeReadsEntries(r, l) })&runtime != 0 {
				continue
			}
			unreadable[l] = true
			o.Findings = append(o.Findings, Finding{Kind: FindRuntimeLayout, Section: u.name, Entries: u.registered, Releases: runtime,
				Message: fmt.Sprintf("the file needs %s, which cannot read the %d %d-byte entries of %s that its wrapper registers (%s reads them)",
					what, u.registered, l.Size(), u.name, release.Where(func(r *release.Release) bool { return offload.RuntimeReadsEntries(r, l) }))})
		}
	}
	if runtime != 0 {
		reads := func(e release.RequiresEncoding) release.Set {
			return release.Where(func(r *release.Release) bool { return r.ReadsRequires(e) })
		}
		if m.requiresCtor() && reads(release.RequiresCtor)&runtime == 0 && !m.requiresNone() {
			o.Findings = append(o.Findings, Finding{Kind: FindRequires, Releases: runtime,
				Message: fmt.Sprintf("`#pragma omp requires` is registered by a constructor calling __tgt_register_requires (LLVM 18 and before), which %s does not read (%s does): the requirements are ignored", what, reads(release.RequiresCtor))})
		}
		for _, u := range m.sections {
			if len(u.requires) == 0 || unreadable[u.layout] || u.registered+u.unknown == 0 {
				continue
			}
			e, desc := requiresOf(u.layout)
			if reads(e)&runtime == 0 {
				o.Findings = append(o.Findings, Finding{Kind: FindRequires, Section: u.name, Entries: len(u.requires), Releases: runtime,
					Message: fmt.Sprintf("%s in %s (%s), which %s does not read (%s does)", desc, u.name,
						release.Where(func(r *release.Release) bool { return r.Entries.Requires == e }), what, reads(e))})
			}
		}
	}
	for _, f := range conflicts(o.Facts) {
		if f.Kind == FindHIPKind {
			o.Findings = append(o.Findings, f)
		}
	}
	m.deviceCodeFindings()
}

// deviceCodeFindings reports device code in a form that no wrapper of a
// linked file registers.
func (m *mixer) deviceCodeFindings() {
	o := m.o
	raw, binaries := false, false
	for _, g := range o.Registrations {
		if g.Kind == offload.OffloadOpenMP {
			raw = raw || g.RawImages
			binaries = binaries || !g.RawImages
		}
	}
	for _, f := range o.Facts {
		if f.Topic == TopicDeviceCode && strings.HasPrefix(f.What, "bundled") && !raw {
			o.Findings = append(o.Findings, Finding{Kind: FindDeviceCodeForm, Releases: f.Made,
				Message: fmt.Sprintf("%s (%s), which no wrapper of the file registers: %s", f.What, f.Made, m.describeRegistrations())})
		}
	}
	if m.descriptors == 0 {
		return
	}
	unbound := 0
	for _, s := range m.f.SectionsByType(elfobj.SHT_LLVM_OFFLOADING) {
		if s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		bins, _ := m.binaries(s)
		for _, b := range bins {
			if !m.boundImages[[2]uint64{uint64(s.Index), uint64(b.Offset)}] {
				unbound++
			}
		}
	}
	if unbound > 0 {
		why := "no wrapper's __tgt_device_image points to them"
		if raw && !binaries {
			why = "the wrapper (LLVM 13-14) registers raw device images only"
		}
		o.Findings = append(o.Findings, Finding{Kind: FindDeviceCodeForm, Entries: 0,
			Message: fmt.Sprintf("%d OffloadBinaries in the program that no wrapper registers: %s", unbound, why)})
	}
}

// sectionsOf lists the entries sections of layout l with their entries.
func (m *mixer) sectionsOf(l offload.EntryLayout) string {
	var parts []string
	for _, u := range m.sections {
		if u.layout == l {
			parts = append(parts, fmt.Sprintf("%s: %d", u.name, len(u.ents)))
		}
	}
	return strings.Join(parts, ", ")
}

// describeRegistrations says what the file registers.
func (m *mixer) describeRegistrations() string {
	var parts []string
	for _, g := range m.o.Registrations {
		who := "a wrapper"
		if g.Kind == offload.OffloadOpenMP {
			who = "the OpenMP wrapper"
		}
		sec := g.Section
		if sec == "" {
			sec = "an unnamed range"
		}
		what := fmt.Sprintf("%d entries", g.Entries)
		if g.Entries == 1 {
			what = "1 entry"
		}
		if g.Entries == 0 {
			what = "no entry"
		}
		parts = append(parts, fmt.Sprintf("%s (%s) registers %s, which holds %s", who, g.Releases, sec, what))
	}
	if len(parts) == 0 {
		if m.linked {
			return "no wrapper registers any (nothing calls __tgt_register_lib): the device code was not linked, as when clang 15 or later links the bundled device code of clang 13 or 14"
		}
		return "the object has no wrapper"
	}
	return strings.Join(parts, "; ")
}

// kindOrder ranks the kinds of finding by how much they explain, first
// first: a pair of facts that no release reads together is reported as the
// first kind its topics give.
var kindOrder = []FindingKind{FindDeviceCodeForm, FindHIPKind, FindMixedLayouts, FindUnregistered, FindRequires, FindIncompatible}

// topicKind maps the topics of two facts that no release reads together to
// the kind of finding.
func topicKind(a, b Topic) FindingKind {
	has := func(t Topic) bool { return a == t || b == t }
	switch {
	case has(TopicDeviceCode):
		return FindDeviceCodeForm
	case has(TopicHIPKind):
		return FindHIPKind
	case a == TopicEntries && b == TopicEntries:
		return FindMixedLayouts
	case has(TopicRegistration):
		return FindUnregistered
	case has(TopicRequires):
		return FindRequires
	}
	return FindIncompatible
}

// disjoint returns, for each kind of finding, the first pair of facts of
// as and bs (of as alone when bs is nil) that no release links and runs
// together.
func disjoint(as, bs []Fact) map[FindingKind][2]Fact {
	out := map[FindingKind][2]Fact{}
	for i, a := range as {
		others := bs
		if bs == nil {
			others = as[i+1:]
		}
		for _, b := range others {
			if a.Links&b.Links != 0 {
				continue
			}
			if k := topicKind(a.Topic, b.Topic); out[k] == [2]Fact{} {
				out[k] = [2]Fact{a, b}
			}
		}
	}
	return out
}

// conflicts returns a finding for each kind of pair of facts that no
// release links and runs together, in the order of kindOrder.
func conflicts(facts []Fact) []Finding {
	var out []Finding
	pairs := disjoint(facts, nil)
	for _, k := range kindOrder {
		if p, ok := pairs[k]; ok {
			a, b := p[0], p[1]
			out = append(out, Finding{Kind: k, Releases: a.Made | b.Made,
				Message: fmt.Sprintf("%s (%s) beside %s (%s): no LLVM release links and runs both", a.What, a.Made, b.What, b.Made)})
		}
	}
	if len(out) == 0 && len(facts) > 0 {
		all := release.Known()
		for _, f := range facts {
			all &= f.Links
		}
		if all == 0 {
			var whats []string
			for _, f := range facts {
				whats = append(whats, f.What+" ("+f.Made.String()+")")
			}
			out = append(out, Finding{Kind: FindIncompatible, Message: "no LLVM release links and runs all of: " + strings.Join(whats, "; ")})
		}
	}
	return out
}

// Input is one object of a set that is linked together (the inputs of one
// link, the members of one archive), with the origin [Mixing] found.
type Input struct {
	Name   string
	Origin *Origin
}

// Incompatible returns, for each input of ins in order, the findings of its
// facts that no release links and runs with those of an earlier input: the
// first earlier input it conflicts with is named in each finding's Other.
// An input that conflicts within itself (its own findings say so) and
// inputs of no release-bound facts are left out of the comparison.
func Incompatible(ins []Input) [][]Finding {
	out := make([][]Finding, len(ins))
	// Whether two inputs conflict depends on their sets of releases only:
	// the first earlier input a conflicts with is the earliest first input
	// of a set disjoint from a's. Time is inputs times distinct sets, not
	// inputs squared (an archive of many members).
	var sets []release.Set
	var first []int
	for i, a := range ins {
		if a.Origin == nil || a.Origin.Links() == 0 {
			continue
		}
		links := a.Origin.Links()
		other, seen := -1, false
		for j, set := range sets {
			seen = seen || set == links
			if set&links == 0 && (other < 0 || first[j] < other) {
				other = first[j]
			}
		}
		if !seen {
			sets, first = append(sets, links), append(first, i)
		}
		if other >= 0 {
			b := ins[other]
			pairs := disjoint(a.Origin.Facts, b.Origin.Facts)
			for _, k := range kindOrder {
				if p, ok := pairs[k]; ok && len(out[i]) == 0 {
					fa, fb := p[0], p[1]
					out[i] = append(out[i], Finding{Kind: k, Other: b.Name, Releases: fa.Made,
						Message: fmt.Sprintf("%s (%s) cannot be linked with %s of %s (%s): no LLVM release links and runs both",
							fa.What, fa.Made, fb.What, b.Name, fb.Made)})
				}
			}
			if len(out[i]) == 0 {
				out[i] = append(out[i], Finding{Kind: FindIncompatible, Other: b.Name, Releases: a.Origin.Made(),
					Message: fmt.Sprintf("its facts (%s) cannot be linked with those of %s (%s)", a.Origin.Links(), b.Name, b.Origin.Links())})
			}
		}
	}
	return out
}
