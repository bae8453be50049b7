package bundle

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/facts"
	"github.com/goffload/goffload/offload"
)

// ArchiveOptions are the options of [UnbundleArchive].
type ArchiveOptions struct {
	// Release is the release whose clang-offload-bundler to follow: how it
	// reads IDs (see [ParseID]). Nil means offload.Default().
	Release *offload.Release
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

// DeviceArchive is what [UnbundleArchive] finds for a target.
type DeviceArchive struct {
	Members []DeviceMember
	closers []io.Closer
}

// Close releases the scratch files of decompressed members.
func (d *DeviceArchive) Close() error {
	for _, c := range d.closers {
		c.Close()
	}
	d.closers = nil
	return nil
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

// UnbundleArchive finds in the archive held in the size bytes of r the code
// objects for target, as `clang-offload-bundler -unbundle -type=a
// -targets=<target> -allow-missing-bundles` does: every bundle entry of
// every member (a bundled object's sections, or a bundle file, compressed or
// not) whose ID is compatible with target ([Compatible], with the release's
// [ParseID]), in member and entry order (a bundle file's entries in the
// order of the bundler's hash map). Members that hold no bundle are left
// out. A thin archive is refused: the bundler reads only regular ones.
func UnbundleArchive(r io.ReaderAt, size int64, target string, opt ArchiveOptions) (*DeviceArchive, error) {
	rel := opt.Release
	if rel == nil {
		rel = offload.Default()
	}
	want, err := ParseTarget(target, rel)
	if err != nil {
		return nil, err
	}
	if want.IsHost() {
		return nil, fmt.Errorf("offload bundle: target %q: a device archive holds device code: %w", target, goffload.ErrUnsupported)
	}
	a, err := ar.Open(r, size)
	if err != nil {
		return nil, err
	}
	if a.Kind() == ar.Thin {
		return nil, fmt.Errorf("offload bundle: a thin archive: %w", goffload.ErrUnsupported)
	}
	d := &DeviceArchive{}
	for _, m := range a.Members() {
		sr, err := a.Open(m)
		if err != nil {
			d.Close()
			return nil, err
		}
		if err := d.member(m.Name, sr, want, rel, opt.HIPOpenMPCompatible); err != nil {
			d.Close()
			return nil, fmt.Errorf("offload bundle: member %q: %w", m.Name, err)
		}
	}
	return d, nil
}

// member adds the compatible entries of one archive member.
func (d *DeviceArchive) member(name string, sr *io.SectionReader, want ID, rel *offload.Release, hipOpenMP bool) error {
	type found struct {
		id   string
		r    io.ReaderAt
		size int64
	}
	var entries []found
	switch Classify(sr, sr.Size()) {
	case ContentsELF:
		f, err := elfobj.Read(sr, sr.Size())
		if err != nil {
			return err
		}
		es, err := ObjectEntries(f)
		if err != nil {
			return err
		}
		for i := range es {
			entries = append(entries, found{es[i].ID, es[i].Open(), int64(es[i].Size)})
		}
	case ContentsBundle:
		b, data, err := d.openBundle(sr)
		if err != nil {
			return err
		}
		// The bundler keeps the entries in an llvm::StringMap: the last of
		// one ID, in the map's order.
		byID := map[string]int{}
		var ids []string
		for i, e := range b.Entries {
			if _, ok := byID[e.ID]; !ok {
				ids = append(ids, e.ID)
			}
			byID[e.ID] = i
		}
		for _, id := range facts.OrderStringMap.Order(ids) {
			e := b.Entries[byID[id]]
			entries = append(entries, found{id, io.NewSectionReader(data, int64(e.Offset), int64(e.Size)), int64(e.Size)})
		}
	default:
		return nil
	}
	for _, e := range entries {
		have, err := ParseID(e.id, rel)
		if err != nil {
			return err
		}
		if !Compatible(have, want, hipOpenMP) {
			continue
		}
		m := DeviceMember{Name: DeviceMemberName(name, e.id, have.TargetID), From: name, ID: e.id, Size: e.size, r: e.r}
		if m.Symbols, err = archiveSymbols(e.r, e.size); err != nil {
			return fmt.Errorf("entry %q: %w", e.id, err)
		}
		d.Members = append(d.Members, m)
	}
	return nil
}

// openBundle reads a bundle file member; a compressed one is decompressed
// into a scratch file, so that memory stays bounded.
func (d *DeviceArchive) openBundle(sr *io.SectionReader) (*Bundle, io.ReaderAt, error) {
	b, err := Read(sr, sr.Size())
	if !errors.Is(err, ErrCompressed) {
		return b, sr, err
	}
	c, err := ReadCompressed(sr, sr.Size())
	if err != nil {
		return nil, nil, err
	}
	f, err := atomicfile.Scratch()
	if err != nil {
		return nil, nil, err
	}
	d.closers = append(d.closers, f)
	n, err := io.Copy(f, c.Open())
	if err != nil {
		return nil, nil, err
	}
	b, err = Read(f, n)
	return b, f, err
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
