package bundle

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/release"
)

// ArchiveOptions are the options of [NewDeviceArchive].
type ArchiveOptions struct {
	// Release is the release whose clang-offload-bundler to follow: how it
	// reads IDs (see [ParseID]). Nil means release.Default().
	Release *release.Release
	// HIPOpenMPCompatible is -hip-openmp-compatible: HIP code objects serve
	// OpenMP targets and the other way.
	HIPOpenMPCompatible bool
}

// DeviceMember is one member of a device archive.
type DeviceMember struct {
	// Name is "<stem>-<bundle entry ID><stem><ext>", ':' replaced by '_',
	// where the stem is that of the input member's name and ext ".bc" for a
	// target ID naming a gfx processor, ".cubin" for an sm_ one, else the
	// input member's extension.
	Name string
	// From is the input member's name, ID the bundle entry's.
	From, ID string
	Size     int64
	Symbols  []string
	r        io.ReaderAt
}

// Open returns a reader of the member's data.
func (m *DeviceMember) Open() *io.SectionReader { return io.NewSectionReader(m.r, 0, m.Size) }

// DeviceArchive is the device archive of one target (see
// [NewDeviceArchive]).
type DeviceArchive struct {
	Members []DeviceMember

	want      ID
	rel       *release.Release
	hipOpenMP bool
}

// Write writes the archive as clang-offload-bundler writes it: a GNU archive,
// deterministic (dates, owners 0, mode 644), with a symbol index of the
// members' global defined symbols (of ELF members from their symbol table,
// of bitcode members from their IR symbol table), or only the magic when
// there is no member.
func (d *DeviceArchive) Write(w io.Writer) error {
	ms := make([]ar.NewMember, len(d.Members))
	for i := range d.Members {
		m := &d.Members[i]
		ms[i] = ar.NewMember{Name: m.Name, Mode: 0o644, Data: io.NewSectionReader(m.Open(), 0, m.Size), Symbols: m.Symbols}
	}
	return ar.WriteGNU(w, ms)
}

// NewDeviceArchive returns an empty device archive for target, to which
// [DeviceArchive.AddObject] and [DeviceArchive.AddBundle] add the members of
// a static library as `clang-offload-bundler -unbundle -type=a
// -targets=<target> -allow-missing-bundles` does: every bundle entry whose
// ID is compatible with target ([Compatible], with the release's [ParseID]),
// in member and entry order. fatobj.DeviceArchive does it for a library.
// A host target is refused: a device archive holds device code.
func NewDeviceArchive(target string, opt ArchiveOptions) (*DeviceArchive, error) {
	rel := opt.Release
	if rel == nil {
		rel = release.Default()
	}
	want, err := ParseTarget(target, rel)
	if err != nil {
		return nil, err
	}
	if want.IsHost() {
		return nil, fmt.Errorf("offload bundle: target %q: a device archive holds device code: %w", target, goffload.ErrUnsupported)
	}
	return &DeviceArchive{want: want, rel: rel, hipOpenMP: opt.HIPOpenMPCompatible}, nil
}

// AddObject adds the compatible entries of the bundled object member: its
// sections __CLANG_OFFLOAD_BUNDLE__<ID> (an [Input] each: the ID and the
// section's bytes), in section order.
func (d *DeviceArchive) AddObject(member string, sections []Input) error {
	for _, e := range sections {
		if err := d.add(member, e); err != nil {
			return err
		}
	}
	return nil
}

// AddBundle adds the compatible entries of the bundle file member, b read
// from data (the uncompressed bundle): as the bundler keeps them in an
// llvm::StringMap, the last entry of each ID, in the map's order.
func (d *DeviceArchive) AddBundle(member string, b *Bundle, data io.ReaderAt) error {
	byID := map[string]int{}
	var ids []string
	for i, e := range b.Entries {
		if _, ok := byID[e.ID]; !ok {
			ids = append(ids, e.ID)
		}
		byID[e.ID] = i
	}
	for _, id := range release.OrderStringMap.Order(ids) {
		e := b.Entries[byID[id]]
		if err := d.add(member, Input{ID: id, Data: io.NewSectionReader(data, int64(e.Offset), int64(e.Size))}); err != nil {
			return err
		}
	}
	return nil
}

// add adds entry e of member when it is compatible with the target.
func (d *DeviceArchive) add(member string, e Input) error {
	have, err := ParseID(e.ID, d.rel)
	if err != nil {
		return fmt.Errorf("offload bundle: member %q: %w", member, err)
	}
	if !Compatible(have, d.want, d.hipOpenMP) {
		return nil
	}
	data := e.Data
	if data == nil {
		data = io.NewSectionReader(bytes.NewReader(nil), 0, 0)
	}
	m := DeviceMember{Name: DeviceMemberName(member, e.ID, have.TargetID), From: member, ID: e.ID, Size: data.Size(), r: data}
	if m.Symbols, err = archiveSymbols(data, data.Size()); err != nil {
		return fmt.Errorf("offload bundle: member %q: entry %q: %w", member, e.ID, err)
	}
	d.Members = append(d.Members, m)
	return nil
}

// DeviceMemberName is the name clang-offload-bundler gives, in a device
// archive, the code object of entry id (whose target ID is targetID) of the
// input member named member.
func DeviceMemberName(member, id, targetID string) string {
	base := path.Base(member)
	stem, ext := llvmStem(base), llvmExtension(base)
	switch {
	case strings.Contains(targetID, "gfx"):
		ext = ".bc"
	case strings.Contains(targetID, "sm_"):
		ext = ".cubin"
	}
	return strings.ReplaceAll(stem+"-"+id+stem+ext, ":", "_")
}

// llvmStem and llvmExtension split a file name as llvm::sys::path::stem and
// extension do: at the last '.', except for "." and "..".
func llvmStem(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || name == "." || name == ".." {
		return name
	}
	return name[:i]
}

func llvmExtension(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || name == "." || name == ".." {
		return ""
	}
	return name[i:]
}

// archiveSymbols returns the symbols an archive index lists for a member:
// global defined symbols of an ELF file's symbol table, or of a bitcode
// file's IR symbol table; none for other data.
func archiveSymbols(r io.ReaderAt, size int64) ([]string, error) {
	switch Classify(r, size) {
	case ContentsBitcode:
		syms, err := bitcode.Symbols(r, size)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, s := range syms {
			if s.ArchiveSymbol() {
				out = append(out, s.Name)
			}
		}
		return out, nil
	case ContentsELF:
		f, err := elfobj.Read(r, size)
		if err != nil {
			return nil, err
		}
		syms, err := f.Symbols()
		if err != nil {
			return nil, err
		}
		var out []string
		for _, s := range syms {
			bind, typ := s.Bind(), s.Type()
			if s.Index == 0 || s.Section == elf.SHN_UNDEF || typ == elf.STT_SECTION || typ == elf.STT_FILE ||
				bind != elf.STB_GLOBAL && bind != elf.STB_WEAK && bind != stbGNUUnique {
				continue
			}
			out = append(out, s.Name)
		}
		return out, nil
	}
	return nil, nil
}

// stbGNUUnique is STB_GNU_UNIQUE, which debug/elf does not name.
const stbGNUUnique elf.SymBind = 10
