// Package amdgpu reads AMD GPU code objects: the ELF files (machine
// EM_AMDGPU, OS/ABI AMDGPU_HSA) that clang and ld.lld write for
// amdgcn-amd-amdhsa, which a HIP fat binary bundles and an OpenMP
// OffloadBinary holds, and which the ROCm runtime (and libomptarget's
// AMDGPU plugin) loads. What it reads, as LLVM's AMDGPUUsage documents
// it and llvm-readelf prints it:
//
//   - The code object version, from EI_ABIVERSION: 1 is version 3, 2 is 4,
//     3 is 5 and 4 is 6 (clang's -mcode-object-version=N; by default
//     clang-19 writes 5 and clang-22 writes 6, measured).
//   - The processor (EF_AMDGPU_MACH, e_flags bits 0-7), and its features
//     xnack and sramecc: from version 4, each unsupported, any, off or on
//     (two bits each); in version 3 one bit each (on or not). Version 6
//     writes the version of a generic processor (gfx9-generic...) in bits
//     24-31.
//   - The metadata notes (NT_AMDGPU_METADATA, owner "AMDGPU", type 32) of
//     versions 3 to 6, each a MessagePack map whose amdhsa.version,
//     amdhsa.target and amdhsa.kernels (each kernel's name, descriptor
//     symbol, register counts, segment sizes and wavefront size) are
//     [Metadata]; the whole map is [Metadata.Map].
//
// [Read] reads a code object; [IsCodeObject] tells one from its ELF
// header. Every cost is bounded by the input's size: a MessagePack value
// takes at least one byte, nesting is limited to [MaxDepth], and the notes
// read are those of the file's note sections.
package amdgpu

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/ferr"
)

// OSABIHSA is the OS/ABI of an amdgcn-amd-amdhsa code object.
const OSABIHSA = 64

// NoteMetadata is the type of the metadata note (NT_AMDGPU_METADATA) of
// code objects of version 3 and later, whose owner is "AMDGPU".
const NoteMetadata = 32

// MaxDepth is how deeply the MessagePack values of a metadata note may
// nest: LLVM's is four deep (a map of kernels, each a map of arguments).
const MaxDepth = 64

// Feature is the setting of a target feature (xnack, sramecc) a code object
// was made for.
type Feature uint8

const (
	FeatureUnsupported Feature = iota // the processor has no such feature
	FeatureAny                        // made to run either way
	FeatureOff
	FeatureOn
)

func (f Feature) String() string {
	return [...]string{"unsupported", "any", "off", "on"}[f&3]
}

// CodeObject is what a code object says of itself.
type CodeObject struct {
	// Version is the code object version (3 to 6; 2 for an older HSA code
	// object, 0 where EI_ABIVERSION names none).
	Version int
	// ABIVersion is the EI_ABIVERSION byte it was read from; Flags the
	// ELF header's e_flags.
	ABIVersion uint8
	Flags      uint32
	// Processor is EF_AMDGPU_MACH as LLVM names it (gfx90a), or "" where
	// LLVM 22 names no such processor ([CodeObject.Mach] holds it).
	Processor string
	Mach      uint8
	// XNACK and SRAMECC are the features the code was made for.
	XNACK, SRAMECC Feature
	// GenericVersion is the version of a generic processor's code object
	// (version 6 and later; 0 otherwise).
	GenericVersion int
	// Metadata are the metadata notes in the order of the file's note
	// sections (a code object clang-22 links may hold several), none in an
	// object of version 2.
	Metadata []*Metadata
}

// Kernels returns the kernels of every metadata note, in order.
func (c *CodeObject) Kernels() []Kernel {
	var ks []Kernel
	for _, m := range c.Metadata {
		ks = append(ks, m.Kernels...)
	}
	return ks
}

// TargetID is the object's target ID as clang names offload architectures:
// the processor, then ":sramecc+" or ":sramecc-" and ":xnack+" or
// ":xnack-" where the feature is on or off (gfx90a:sramecc+:xnack-).
func (c *CodeObject) TargetID() string {
	id := c.Processor
	if id == "" {
		id = fmt.Sprintf("mach%#x", c.Mach)
	}
	for _, f := range []struct {
		name string
		set  Feature
	}{{"sramecc", c.SRAMECC}, {"xnack", c.XNACK}} {
		switch f.set {
		case FeatureOn:
			id += ":" + f.name + "+"
		case FeatureOff:
			id += ":" + f.name + "-"
		}
	}
	return id
}

// Metadata is what the metadata note says of the code object and its
// kernels.
type Metadata struct {
	// Version is amdhsa.version: the metadata's major and minor version
	// (1.2 for code object version 5).
	Version []int64
	// Target is amdhsa.target, the target ID as a triple
	// (amdgcn-amd-amdhsa--gfx90a:xnack-).
	Target  string
	Kernels []Kernel
	// Map is the whole note as decoded: a [Map] of its keys in order.
	Map Map
}

// Kernel is one entry of amdhsa.kernels. A count the note leaves out is 0.
type Kernel struct {
	Name   string // .name: the kernel's source name, mangled
	Symbol string // .symbol: its kernel descriptor, NAME.kd
	// The register counts (.sgpr_count, .vgpr_count, .agpr_count) and
	// those spilled (.sgpr_spill_count, .vgpr_spill_count).
	SGPRCount, VGPRCount, AGPRCount int64
	SGPRSpillCount, VGPRSpillCount  int64
	GroupSegmentFixedSize           int64 // .group_segment_fixed_size: LDS (shared memory) bytes
	PrivateSegmentFixedSize         int64 // .private_segment_fixed_size: scratch bytes per work-item
	KernargSegmentSize              int64 // .kernarg_segment_size
	KernargSegmentAlign             int64 // .kernarg_segment_align
	WavefrontSize                   int64 // .wavefront_size: 32 or 64
	MaxFlatWorkgroupSize            int64 // .max_flat_workgroup_size
	UsesDynamicStack                bool  // .uses_dynamic_stack
	Args                            int   // how many entries .args has
}

// Map is a MessagePack map in the order its keys were written.
type Map []KeyValue

// KeyValue is one entry of a Map. Values are nil, bool, int64, uint64,
// float64, string, []byte, []any and Map.
type KeyValue struct {
	Key   any
	Value any
}

// Get returns the value of the string key k, and whether the map has it.
func (m Map) Get(k string) (any, bool) {
	for _, kv := range m {
		if s, ok := kv.Key.(string); ok && s == k {
			return kv.Value, true
		}
	}
	return nil, false
}

// IsCodeObject reports whether h is the header of an AMDGPU code object
// for amdgcn-amd-amdhsa: 64-bit, machine EM_AMDGPU, OS/ABI AMDGPU_HSA.
func IsCodeObject(h elfobj.Header) bool {
	return h.Class == elf.ELFCLASS64 && h.Machine == elf.EM_AMDGPU && h.OSABI == OSABIHSA
}

// Read reads the code object in the size bytes of r. An ELF file that is no
// AMDGPU code object for amdgcn-amd-amdhsa is goffload.ErrUnsupported;
// malformed input matches goffload.ErrInvalid.
func Read(r io.ReaderAt, size int64) (*CodeObject, error) {
	if err := ferr.CheckInput("amdgpu", r, size); err != nil {
		return nil, err
	}
	if size < 64 {
		return nil, ferr.New("amdgpu", 0, "ELF header cut", size, goffload.ErrTruncated)
	}
	h, err := elfobj.ReadHeader(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, err
	}
	if !IsCodeObject(h) {
		return nil, fmt.Errorf("%w: not an AMDGPU code object for amdgcn-amd-amdhsa (%v, %v, OS/ABI %#x)", goffload.ErrUnsupported, h.Class, h.Machine, uint8(h.OSABI))
	}
	f, err := elfobj.Read(r, size)
	if err != nil {
		return nil, err
	}
	c := &CodeObject{ABIVersion: h.ABIVersion, Flags: h.Flags, Mach: uint8(h.Flags)}
	if h.ABIVersion <= 4 {
		c.Version = int(h.ABIVersion) + 2
	}
	if _, cpu, err := h.Target(); err == nil {
		c.Processor = cpu
	}
	switch {
	case c.Version >= 4:
		c.XNACK = Feature(h.Flags >> 8 & 3)
		c.SRAMECC = Feature(h.Flags >> 10 & 3)
		if c.Version >= 6 {
			c.GenericVersion = int(h.Flags >> 24)
		}
	case c.Version == 3:
		// One bit each: on, or not asked for.
		if h.Flags&0x100 != 0 {
			c.XNACK = FeatureOn
		}
		if h.Flags&0x200 != 0 {
			c.SRAMECC = FeatureOn
		}
	}
	for _, s := range f.SectionsByType(elf.SHT_NOTE) {
		if err := c.readNotes(s, h.Data == elf.ELFDATA2MSB); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// readNotes reads the notes of a note section, keeping its metadata
// notes.
func (c *CodeObject) readNotes(s *elfobj.FileSection, big bool) error {
	data, err := s.Data()
	if err != nil {
		return err
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if big {
		bo = binary.BigEndian
	}
	at := int64(s.Offset)
	for off := 0; off < len(data); {
		if len(data)-off < 12 {
			return ferr.New("amdgpu", at+int64(off), "note header past the end of its section", len(data)-off, goffload.ErrTruncated)
		}
		namesz, descsz, typ := uint64(bo.Uint32(data[off:])), uint64(bo.Uint32(data[off+4:])), bo.Uint32(data[off+8:])
		nameAt := uint64(off) + 12
		descAt := nameAt + (namesz+3)&^3
		end := descAt + (descsz+3)&^3
		if descAt+descsz > uint64(len(data)) || namesz > uint64(len(data)) || descsz > uint64(len(data)) {
			return ferr.New("amdgpu", at+int64(off), "note name and description sizes past the end of its section", [2]uint64{namesz, descsz}, goffload.ErrTruncated)
		}
		name := strings.TrimRight(string(data[nameAt:nameAt+namesz]), "\x00")
		if name == "AMDGPU" && typ == NoteMetadata {
			m, err := decodeMetadata(data[descAt:descAt+descsz], at+int64(descAt))
			if err != nil {
				return err
			}
			c.Metadata = append(c.Metadata, m)
		}
		off = int(min(end, uint64(len(data))))
	}
	return nil
}

// decodeMetadata decodes a metadata note's MessagePack map, whose bytes
// start at byte at of the file.
func decodeMetadata(b []byte, at int64) (*Metadata, error) {
	d := &decoder{b: b, at: at}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.off != len(b) {
		return nil, ferr.New("amdgpu", at+int64(d.off), "bytes after the metadata map", len(b)-d.off, goffload.ErrInvalid)
	}
	m, ok := v.(Map)
	if !ok {
		return nil, ferr.New("amdgpu", at, "metadata that is not a map", fmt.Sprintf("%T", v), goffload.ErrInvalid)
	}
	md := &Metadata{Map: m}
	if v, ok := m.Get("amdhsa.version"); ok {
		if a, ok := v.([]any); ok {
			for _, x := range a {
				if n, ok := asInt(x); ok {
					md.Version = append(md.Version, n)
				}
			}
		}
	}
	if v, ok := m.Get("amdhsa.target"); ok {
		md.Target, _ = v.(string)
	}
	if v, ok := m.Get("amdhsa.kernels"); ok {
		ks, _ := v.([]any)
		for _, kv := range ks {
			km, ok := kv.(Map)
			if !ok {
				continue
			}
			var k Kernel
			str := func(key string) string { v, _ := km.Get(key); s, _ := v.(string); return s }
			num := func(key string) int64 { v, _ := km.Get(key); n, _ := asInt(v); return n }
			k.Name, k.Symbol = str(".name"), str(".symbol")
			k.SGPRCount, k.VGPRCount, k.AGPRCount = num(".sgpr_count"), num(".vgpr_count"), num(".agpr_count")
			k.SGPRSpillCount, k.VGPRSpillCount = num(".sgpr_spill_count"), num(".vgpr_spill_count")
			k.GroupSegmentFixedSize, k.PrivateSegmentFixedSize = num(".group_segment_fixed_size"), num(".private_segment_fixed_size")
			k.KernargSegmentSize, k.KernargSegmentAlign = num(".kernarg_segment_size"), num(".kernarg_segment_align")
			k.WavefrontSize, k.MaxFlatWorkgroupSize = num(".wavefront_size"), num(".max_flat_workgroup_size")
			if v, ok := km.Get(".uses_dynamic_stack"); ok {
				k.UsesDynamicStack, _ = v.(bool)
			}
			if v, ok := km.Get(".args"); ok {
				a, _ := v.([]any)
				k.Args = len(a)
			}
			md.Kernels = append(md.Kernels, k)
		}
	}
	return md, nil
}

// asInt returns a MessagePack integer as an int64.
func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case uint64:
		if n <= math.MaxInt64 {
			return int64(n), true
		}
	}
	return 0, false
}

// decoder decodes MessagePack (the subset LLVM's msgpack::Document writes
// and reads: nil, booleans, integers, floats, strings, binary, arrays and
// maps; no extension types).
type decoder struct {
	b   []byte
	off int
	at  int64 // where b starts in the file
}

var errNesting = errors.New("nesting deeper than amdgpu.MaxDepth")

func (d *decoder) fail(what string, val any, err error) error {
	return ferr.New("amdgpu", d.at+int64(d.off), what, val, err)
}

func (d *decoder) take(n uint64, what string) ([]byte, error) {
	if n > uint64(len(d.b)-d.off) {
		return nil, d.fail("metadata "+what+" past the end of the note", n, goffload.ErrTruncated)
	}
	b := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return b, nil
}

func (d *decoder) uint(n int, what string) (uint64, error) {
	b, err := d.take(uint64(n), what)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// value decodes one value at nesting depth.
func (d *decoder) value(depth int) (any, error) {
	if depth > MaxDepth {
		return nil, d.fail("metadata", errNesting.Error(), goffload.ErrLimit)
	}
	tb, err := d.take(1, "value")
	if err != nil {
		return nil, err
	}
	t := tb[0]
	switch {
	case t <= 0x7f:
		return int64(t), nil
	case t >= 0xe0:
		return int64(int8(t)), nil
	case t&0xf0 == 0x80:
		return d.mapOf(uint64(t&0x0f), depth)
	case t&0xf0 == 0x90:
		return d.arrayOf(uint64(t&0x0f), depth)
	case t&0xe0 == 0xa0:
		b, err := d.take(uint64(t&0x1f), "string")
		return string(b), err
	}
	lenOf := func(n int, what string) (uint64, error) { return d.uint(n, what+" length") }
	switch t {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xc5, 0xc6, 0xd9, 0xda, 0xdb:
		first := byte(0xc4) // bin8, bin16, bin32; then str8, str16, str32
		if t >= 0xd9 {
			first = 0xd9
		}
		n, err := lenOf(1<<(t-first), "string")
		if err != nil {
			return nil, err
		}
		b, err := d.take(n, "string")
		if err != nil {
			return nil, err
		}
		if t <= 0xc6 {
			return append([]byte(nil), b...), nil
		}
		return string(b), nil
	case 0xca:
		v, err := d.uint(4, "float")
		return float64(math.Float32frombits(uint32(v))), err
	case 0xcb:
		v, err := d.uint(8, "float")
		return math.Float64frombits(v), err
	case 0xcc, 0xcd, 0xce, 0xcf:
		return d.uint(1<<(t-0xcc), "integer")
	case 0xd0, 0xd1, 0xd2, 0xd3:
		n := 1 << (t - 0xd0)
		v, err := d.uint(n, "integer")
		if err != nil {
			return nil, err
		}
		shift := 64 - 8*n
		return int64(v<<shift) >> shift, nil
	case 0xdc, 0xdd:
		n, err := lenOf(2<<(t-0xdc), "array")
		if err != nil {
			return nil, err
		}
		return d.arrayOf(n, depth)
	case 0xde, 0xdf:
		n, err := lenOf(2<<(t-0xde), "map")
		if err != nil {
			return nil, err
		}
		return d.mapOf(n, depth)
	}
	d.off--
	return nil, d.fail("MessagePack type byte (an extension, or unused)", t, goffload.ErrUnsupported)
}

// arrayOf decodes n values; each takes a byte at least, so n is bounded
// by what is left.
func (d *decoder) arrayOf(n uint64, depth int) ([]any, error) {
	if n > uint64(len(d.b)-d.off) {
		return nil, d.fail("metadata array of more values than bytes left", n, goffload.ErrTruncated)
	}
	a := make([]any, 0, n)
	for range n {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	return a, nil
}

func (d *decoder) mapOf(n uint64, depth int) (Map, error) {
	if n > uint64(len(d.b)-d.off)/2 {
		return nil, d.fail("metadata map of more entries than bytes left", n, goffload.ErrTruncated)
	}
	m := make(Map, 0, n)
	for range n {
		k, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m = append(m, KeyValue{k, v})
	}
	return m, nil
}
