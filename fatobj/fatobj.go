// Package fatobj is the way into the files a user holds: fat objects (host
// objects that carry device code, the way `clang -fembed-offload-object`
// makes them), executables and shared objects, static libraries, raw
// OffloadBinaries, offload bundle files, and LLVM bitcode host objects
// (`clang -flto`, whose module embeds the device code; see
// [bitcode.EmbeddedObjects]). Objects and archives of Windows hosts (COFF,
// [FormatCOFF]) are read for their OffloadBinaries and HIP fatbins;
// [EmbedCOFF] embeds into them and [StripCOFF] strips them; convert and
// the entries are ELF's only so far. It reads any of them into one
// inventory of device code and offload entries, and does what the command
// line does with them: extract, embed, strip, convert between LLVM
// releases and check.
//
// [Open] (a path) and [NewFile] (an io.ReaderAt) read a [File]: its
// [Object]s (the file itself, or each member of an archive, nested and thin
// archives included), each with its [Image]s (every device image, wherever
// the toolchain put it: see [Source]), its offload entries, and the
// containers they are in ([Binary], [Bundle], [BundledSection]). Without
// options each object is read as the LLVM releases that made it
// ([Object.Made], [Object.Release]); with offloadbinary.ReadOptions.Release, as
// that release's tools read it, strictly.
//
//	f, err := fatobj.Open("libk.a", nil)
//	if err != nil {
//		return err
//	}
//	defer f.Close()
//	for _, im := range f.Images() {
//		fmt.Println(im.Object.Name, im.OffloadKind, im.Triple(), im.Arch())
//	}
//
// The verbs: [PlanExtract] and [Extraction.Write] write images out as
// clang-offload-packager names them; [Embed] adds binaries to any host
// object; [Strip] and [StripFile] keep only some targets' device code (LLVM
// has no tool for it); [Convert] and [ConvertFile] rewrite objects made by
// one release into another's formats ([MadeBy] tells which releases made an
// object); [Check] finds what the runtime would fail on (entries without
// their device symbol, releases mixed). The formats are described in the
// repository's docs/ folder.
//
// # Security
//
// Every file is read as untrusted: sizes and offsets are checked before use,
// malformed input gives a *goffload.FormatError (with its offset in the file
// opened), never a panic. Archives nest at most [MaxArchiveDepth] deep and
// hold at most [MaxMembers] members; binaries nest at most [MaxNesting]
// deep; a thin archive that names itself is refused; at most 128 files are
// open at once however many a thin archive names. Names of extracted files
// come from the data: each must be one plain file name, and is written inside
// the output folder ([os.Root]), whole or not at all. An extraction writes at
// most 16 times its inputs' size plus 1 MiB, plus the bytes inflated from
// compressed streams that its files are made of, each byte once (see
// [ExtractOptions.MaxBytes]).
package fatobj

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/concat"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// Section is the name of the section of device code in a host object.
const Section = ".llvm.offloading"

// Embed adds binaries to o as `clang -fembed-offload-object` does: in the
// section `.llvm.offloading` of type SHT_LLVM_OFFLOADING with flag
// SHF_EXCLUDE and alignment 8, after the binaries the section already holds.
// Each reader must hold one OffloadBinary or several back to back, of any
// version the release table knows (so a whole number of 8-byte units); one
// that does not gives an error wrapping goffload.ErrInvalid, and o is left
// as it was. The bytes are read again when o is written.
func Embed(o *elfobj.Object, binaries ...*io.SectionReader) error {
	var parts concat.ReaderAt
	sec := o.Section(Section)
	if sec != nil {
		if sec.Type != elfobj.SHT_LLVM_OFFLOADING {
			return fmt.Errorf("fatobj: %s is of type %v, not SHT_LLVM_OFFLOADING", Section, sec.Type)
		}
		ra, size, err := readerAt(sec)
		if err != nil {
			return err
		}
		parts.Add(ra, 0, size)
	}
	if err := addBinaries(&parts, binaries); err != nil {
		return err
	}
	if sec == nil {
		sec = &elfobj.Section{Name: Section, Type: elfobj.SHT_LLVM_OFFLOADING, Flags: elfobj.SHF_EXCLUDE, Addralign: 8}
		o.AddSection(sec, false)
	}
	sec.Data, sec.Reader, sec.Size = nil, &parts, parts.Size()
	return nil
}

// addBinaries adds binaries to parts, each checked to be what LLVM reads
// in .llvm.offloading: whole OffloadBinaries back to back.
func addBinaries(parts *concat.ReaderAt, binaries []*io.SectionReader) error {
	for i, b := range binaries {
		if b == nil {
			return fmt.Errorf("fatobj: binary %d: nil reader: %w", i, fs.ErrInvalid)
		}
		bins, err := offloadbinary.ReadAll(b, b.Size(), nil)
		if err == nil && len(bins) == 0 {
			err = fmt.Errorf("holds no offload binary: %w", goffload.ErrInvalid)
		}
		if err == nil && b.Size()%offloadbinary.Alignment != 0 {
			err = fmt.Errorf("%d bytes is not a multiple of %d: %w", b.Size(), offloadbinary.Alignment, goffload.ErrInvalid)
		}
		if err != nil {
			return fmt.Errorf("fatobj: binary %d: %w", i, err)
		}
		parts.Add(b, 0, b.Size())
	}
	return nil
}

// NewHostObject returns an empty host object for triple to embed binaries
// into, as clang makes one: with an empty .note.GNU-stack, so that linkers
// do not take it to need an executable stack.
func NewHostObject(triple string) (*elfobj.Object, error) {
	o, err := elfobj.ForTriple(triple)
	if err != nil {
		return nil, err
	}
	o.AddSection(&elfobj.Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS, Addralign: 1}, false)
	return o, nil
}

// Filter selects images as clang-offload-packager's --image does: every
// key given must equal the image's string of that key (a key given with
// an empty value selects images whose string is empty or missing); an
// empty Kind matches any kind. The zero Filter selects every image.
type Filter struct {
	Strings map[string]string // "triple", "arch", ...
	Kind    string            // an offload kind name, as release r names kinds
}

// Match reports whether f selects im, as release r's packager does.
func (f Filter) Match(r *release.Release, im *offloadbinary.Image) bool {
	if f.Kind != "" && im.OffloadKind != offload.OffloadKindByName(r, f.Kind) {
		return false
	}
	for k, v := range f.Strings {
		if got, _ := im.Lookup(k); got != v {
			return false
		}
	}
	return true
}

// PackagerName is the name clang-offload-packager gives the index-th image
// it extracts from input stem: "<stem>-<triple>-<arch>.<index>.<ext>", the
// extension that of the image kind ("" for an unknown kind, which leaves a
// trailing dot). The triple and the arch come from the image, that is from
// whoever made the file: a name that is not one plain file name (holding
// '/' or NUL, "." or "..", longer than 255 bytes) gives an error matching
// [ErrUnsafeName], where clang-offload-packager would write wherever the
// name leads.
func PackagerName(stem string, im *offloadbinary.Image, index int) (string, error) {
	name := stem + "-" + im.Triple() + "-" + im.Arch() + "." + strconv.Itoa(index) + "." + im.Kind.Extension()
	if err := atomicfile.CheckName(name); err != nil {
		return "", fmt.Errorf("fatobj: image %d (triple %q, arch %q): %w", index, im.Triple(), im.Arch(), ErrUnsafeName)
	}
	return name, nil
}

// ErrUnsafeName: a file name made from an image's strings would not be one
// plain file name inside the output folder.
var ErrUnsafeName = errors.New("not a safe file name")

// Target names a device target to keep: a triple and, if not empty, an arch.
type Target struct{ Triple, Arch string }

// ParseTarget parses "TRIPLE[:ARCH]" (an AMD arch may itself hold colons:
// "amdgcn-amd-amdhsa:gfx90a:xnack+").
func ParseTarget(s string) (Target, error) {
	triple, arch, _ := strings.Cut(s, ":")
	if triple == "" {
		return Target{}, fmt.Errorf("fatobj: target %q: no triple", s)
	}
	return Target{triple, arch}, nil
}

func (t Target) keeps(im *offloadbinary.Image) bool {
	return im.Triple() == t.Triple && (t.Arch == "" || im.Arch() == t.Arch)
}

// ErrNoOffloading: the object carries no device code.
var ErrNoOffloading = errors.New("no device code")

// Stripped is what [Strip] did to an object.
type Stripped struct {
	// Kept and Dropped count binaries.
	Kept, Dropped int
	// Matched[i] is true when the object holds an image for keep[i]: a
	// target that matches nothing in any object is most likely a typing
	// error, which would drop all device code.
	Matched []bool
}

// Strip keeps in o only the device code for the targets, read with release
// r: the binaries of .llvm.offloading whose image is for one of them (for a
// multi-image binary, when any image is), removing the section when none is
// left; the device entries of a bundled object (sections
// __CLANG_OFFLOAD_BUNDLE__<ID>, the host's entry always kept) and clang 14's
// image sections whose triple and arch (target ID, or its processor) are a
// target's. Everything else of the object stays as it was. An object with
// none of these gives [ErrNoOffloading].
func Strip(o *elfobj.Object, r *release.Release, keep []Target) (Stripped, error) {
	st := Stripped{Matched: make([]bool, len(keep))}
	found := false
	if sec := o.Section(Section); sec != nil && sec.Type == elfobj.SHT_LLVM_OFFLOADING {
		found = true
		if err := stripBinaries(o, sec, r, keep, &st); err != nil {
			return st, err
		}
	}
	for _, s := range append([]*elfobj.Section(nil), o.Sections...) {
		var triple, arch string
		if raw, ok := strings.CutPrefix(s.Name, bundle.SectionPrefix); ok {
			id, err := bundle.ParseID(raw, r)
			if err != nil {
				return st, fmt.Errorf("fatobj: section %q: %w", s.Name, err)
			}
			found = true
			if id.IsHost() {
				continue
			}
			triple, arch = strings.TrimRight(id.Triple, "-"), id.TargetID
		} else if t, a, _, ok := offloadbinary.ParseImageSection(s.Name); ok && s.Type != elfobj.SHT_LLVM_OFFLOADING {
			found = true
			triple, arch = t, a
		} else {
			continue
		}
		kept := false
		for j, t := range keep {
			proc, _, _ := strings.Cut(arch, ":")
			if t.Triple == triple && (t.Arch == "" || t.Arch == arch || t.Arch == proc) {
				st.Matched[j], kept = true, true
			}
		}
		if kept {
			st.Kept++
			continue
		}
		if err := o.RemoveSection(s); err != nil {
			return st, fmt.Errorf("fatobj: %w", err)
		}
		st.Dropped++
	}
	if !found {
		return st, ErrNoOffloading
	}
	return st, nil
}

// stripBinaries strips the binaries of sec, o's .llvm.offloading.
func stripBinaries(o *elfobj.Object, sec *elfobj.Section, r *release.Release, keep []Target, st *Stripped) error {
	ra, size, err := readerAt(sec)
	if err != nil {
		return err
	}
	parts, err := keptBinaries(sec.Name, ra, size, r, keep, st)
	if err != nil {
		return err
	}
	if parts.Size() == 0 {
		return o.RemoveSection(sec)
	}
	sec.Data, sec.Reader, sec.Size = nil, parts, parts.Size()
	return nil
}

// keptBinaries returns the binaries of the size bytes of ra, section name's
// contents, that Strip keeps, counting them in st.
func keptBinaries(name string, ra io.ReaderAt, size int64, r *release.Release, keep []Target, st *Stripped) (*concat.ReaderAt, error) {
	bins, err := offloadbinary.ReadAll(ra, size, &offloadbinary.ReadOptions{Release: r})
	if err != nil {
		return nil, fmt.Errorf("fatobj: %s: %w", name, err)
	}
	var parts concat.ReaderAt
	for _, b := range bins {
		if keepsAny(b, keep, st.Matched) {
			parts.Add(ra, b.Offset, int64(b.Size))
			st.Kept++
		} else {
			st.Dropped++
		}
	}
	return &parts, nil
}

// keepsAny reports whether any image of b is for one of the targets, and
// marks in matched the targets that are.
func keepsAny(b *offloadbinary.Binary, keep []Target, matched []bool) bool {
	any := false
	for i := range b.Images {
		for j, t := range keep {
			if t.keeps(&b.Images[i].Image) {
				matched[j], any = true, true
			}
		}
	}
	return any
}

// readerAt returns the section's contents as an io.ReaderAt.
func readerAt(s *elfobj.Section) (io.ReaderAt, int64, error) {
	switch {
	case s.Data != nil:
		return bytes.NewReader(s.Data), int64(len(s.Data)), nil
	case s.Type == elf.SHT_NOBITS:
		return bytes.NewReader(nil), 0, nil
	case s.Reader == nil || s.Size < 0:
		return nil, 0, fmt.Errorf("fatobj: section %q: %d bytes from %T", s.Name, s.Size, s.Reader)
	}
	return s.Reader, s.Size, nil
}
