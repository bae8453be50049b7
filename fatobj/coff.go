package fatobj

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/concat"
	"github.com/goffload/goffload/release"
)

// coffOffloadingFlags are the characteristics of .llvm.offloading in a COFF
// object, as LLVM's COFF writer gives the section (TargetLoweringObjectFile
// kind "exclude": not linked into the image, discardable), and its
// alignment.
const (
	coffOffloadingFlags = coffobj.IMAGE_SCN_LNK_REMOVE | coffobj.IMAGE_SCN_MEM_DISCARDABLE
	coffOffloadingAlign = 8
)

// EmbedCOFF adds binaries to the COFF object o (a Windows host's) as
// `clang -Xclang -fembed-offload-object=FILE` does: in the section
// .llvm.offloading (IMAGE_SCN_LNK_REMOVE, IMAGE_SCN_MEM_DISCARDABLE,
// alignment 8) with its section definition symbol, after the binaries the
// section already holds. A new section goes where clang puts it: after the
// sections of the module's functions and data, before those its compiler
// writes at the end of the module (.drectve, CodeView and DWARF debug
// sections, .pdata, static constructors, .llvm_addrsig), so that embedding
// into what clang compiled gives the object clang makes with the flag.
// Each reader must hold whole OffloadBinaries back to back, as for
// [Embed]; o is left as it was on an error.
func EmbedCOFF(o *coffobj.Object, binaries ...*io.SectionReader) error {
	var parts concat.ReaderAt
	sec := o.Section(Section)
	if sec != nil {
		if sec.Characteristics&coffobj.IMAGE_SCN_LNK_REMOVE == 0 || sec.Uninitialized() {
			return fmt.Errorf("fatobj: %s has characteristics %#x, not those of device code (IMAGE_SCN_LNK_REMOVE)", Section, sec.Characteristics)
		}
		if sec.Data != nil {
			parts.Add(bytes.NewReader(sec.Data), 0, int64(len(sec.Data)))
		} else if sec.Reader != nil {
			parts.Add(sec.Reader, 0, sec.Size)
		}
	}
	if err := addBinaries(&parts, binaries); err != nil {
		return err
	}
	if sec == nil {
		sec = &coffobj.Section{Name: Section, Characteristics: coffOffloadingFlags, Align: coffOffloadingAlign}
		insertCOFFSection(o, sec)
	}
	sec.Data, sec.Reader, sec.Size = nil, &parts, parts.Size()
	return nil
}

// moduleEnd reports whether LLVM writes a section of this name when it
// finishes a module, after the sections of its globals: linker options,
// debug information, unwind tables, static constructor lists, address
// significance and control-flow-guard tables.
func moduleEnd(name string) bool {
	for _, p := range []string{".drectve", ".debug", ".pdata", ".CRT$", ".ctors", ".dtors", ".llvm_addrsig", ".llvm.call-graph-profile", ".gfids$", ".giats$", ".gljmp$", ".gehcont$", ".sxdata"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// insertCOFFSection puts sec and its definition symbol in o where LLVM
// would have emitted a global of its own section last: before the first
// section written at the module's end, its symbol before that section's
// definition symbol (LLVM lists section definitions first, in section
// order); at the end of the sections otherwise.
func insertCOFFSection(o *coffobj.Object, sec *coffobj.Section) {
	at := len(o.Sections)
	for i, s := range o.Sections {
		if moduleEnd(s.Name) {
			at = i
			break
		}
	}
	def := &coffobj.Symbol{Name: sec.Name, Section: sec, StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC, SectionDefinition: true}
	symAt := -1
	if at < len(o.Sections) {
		next := o.Sections[at]
		for i, s := range o.Symbols {
			if s.SectionDefinition && s.Section == next {
				symAt = i
				break
			}
		}
	}
	if symAt < 0 {
		// After the last section definition (and its COMDAT leader).
		symAt = 0
		for i, s := range o.Symbols {
			if s.SectionDefinition {
				symAt = i + 1
				if s.Section.Selection != 0 && i+1 < len(o.Symbols) && !o.Symbols[i+1].SectionDefinition {
					symAt = i + 2
				}
			}
		}
	}
	o.Sections = append(o.Sections[:at], append([]*coffobj.Section{sec}, o.Sections[at:]...)...)
	o.Symbols = append(o.Symbols[:symAt], append([]*coffobj.Symbol{def}, o.Symbols[symAt:]...)...)
}

// NewCOFFHostObject returns an empty host object for a Windows triple
// ([coffobj.ForTriple]) to embed binaries into, as clang makes one of an
// empty source: the empty sections .text, .data and .bss (alignment 4)
// with their definition symbols, and the absolute symbol @feat.00 that
// MSVC's linker reads the object's features from (none). clang's CodeView
// compiler record (.debug$S), its .llvm_addrsig and its .file symbol, which
// name the compiler and the source, are not made.
func NewCOFFHostObject(triple string) (*coffobj.Object, error) {
	o, err := coffobj.ForTriple(triple)
	if err != nil {
		return nil, err
	}
	const rw = coffobj.IMAGE_SCN_MEM_READ | coffobj.IMAGE_SCN_MEM_WRITE
	for _, s := range []*coffobj.Section{
		{Name: ".text", Characteristics: coffobj.IMAGE_SCN_CNT_CODE | coffobj.IMAGE_SCN_MEM_EXECUTE | coffobj.IMAGE_SCN_MEM_READ, Align: 4, Data: []byte{}},
		{Name: ".data", Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | rw, Align: 4, Data: []byte{}},
		{Name: ".bss", Characteristics: coffobj.IMAGE_SCN_CNT_UNINITIALIZED_DATA | rw, Align: 4},
	} {
		o.AddSection(s, nil)
	}
	o.Symbols = append(o.Symbols, &coffobj.Symbol{Name: "@feat.00", Number: coffobj.IMAGE_SYM_ABSOLUTE, StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC})
	return o, nil
}

// StripCOFF keeps in o, a COFF object, only the device code for the
// targets, read with release r, as [Strip] does for ELF: the binaries of
// every section whose name starts with .llvm.offloading (as LLVM reads
// them in COFF) whose image is for one of them, removing a section when
// none is left. A HIP fatbin (.hip_fatbin, HIP without -fgpu-rdc) is left
// as it is: the host code refers to it. An object with no .llvm.offloading
// section gives [ErrNoOffloading].
func StripCOFF(o *coffobj.Object, r *release.Release, keep []Target) (Stripped, error) {
	st := Stripped{Matched: make([]bool, len(keep))}
	found := false
	for _, sec := range slices.Clone(o.Sections) {
		if !strings.HasPrefix(sec.Name, Section) {
			continue
		}
		found = true
		ra, size := io.ReaderAt(bytes.NewReader(sec.Data)), int64(len(sec.Data))
		if sec.Data == nil {
			ra, size = sec.Reader, sec.Size
		}
		if ra == nil {
			ra = bytes.NewReader(nil)
		}
		parts, err := keptBinaries(sec.Name, ra, size, r, keep, &st)
		if err != nil {
			return st, err
		}
		if parts.Size() == 0 {
			if err := o.RemoveSection(sec); err != nil {
				return st, fmt.Errorf("fatobj: %w", err)
			}
			continue
		}
		sec.Data, sec.Reader, sec.Size = nil, parts, parts.Size()
	}
	if !found {
		return st, ErrNoOffloading
	}
	return st, nil
}
