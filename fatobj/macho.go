package fatobj

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/goffload/goffload/internal/concat"
	"github.com/goffload/goffload/machoobj"
)

// The Mach-O section of device code. LLVM has none: its clang embeds
// OffloadBinaries in .llvm.offloading whatever the host, a name that is
// not a Mach-O section specifier (llc refuses it: "mach-o section
// specifier requires a segment and section separated by a comma"), and
// its extractOffloadBinaries reads no Mach-O object. goffload gives
// .llvm.offloading the Mach-O name LLVM gives its other sections of its
// own data (__LLVM,__bitcode, __LLVM,__cmdline): __LLVM,__offloading, a
// regular section aligned to 8, each binary labelled by the private symbol
// that LLVM's code generator makes of the global holding it
// (l_llvm.embedded.object, then .1, .2, ...). Unlike ELF's SHF_EXCLUDE,
// nothing in Mach-O keeps ld64 from copying the section into the program.
const (
	MachOSegment = "__LLVM"
	MachOSection = "__offloading"
)

// machoEmbeddedSymbol is the name of the private symbol LLVM's Mach-O code
// generator gives the n-th global it embeds (llvm.embedded.object, .1, ...).
func machoEmbeddedSymbol(n int) string {
	if n == 0 {
		return "l_llvm.embedded.object"
	}
	return "l_llvm.embedded.object." + strconv.Itoa(n)
}

// machoModuleEnd reports whether LLVM writes the section seg,name of a
// Mach-O object after the module's globals: debug information, unwind
// tables, address significance and call-graph profile. (The static
// constructor and destructor lists, __mod_init_func and __mod_term_func,
// come where clang's module has llvm.global_ctors and llvm.global_dtors:
// before the global that embedding appends.)
func machoModuleEnd(seg, name string) bool {
	switch seg {
	case "__DWARF":
		return true
	case "__DATA":
		return name == "__llvm_addrsig"
	case "__LD":
		return name == "__compact_unwind"
	case "__TEXT":
		return name == "__eh_frame"
	case "__LLVM":
		return name == "__cg_profile"
	}
	return false
}

// ltmp matches the symbols that LLVM's arm64 Mach-O writer puts at the
// start of each section (ltmp0, ltmp1, ... in section order).
var ltmp = regexp.MustCompile(`^ltmp[0-9]+$`)

// EmbedMachO adds binaries to the Mach-O object o (an Apple host's) as
// clang would with `-fembed-offload-object=FILE` if .llvm.offloading were
// a Mach-O section: in __LLVM,__offloading (see [MachOSection]), one
// private symbol l_llvm.embedded.object[.N] at each reader's binaries,
// after the binaries the section already holds. A new section goes where
// LLVM's code generator puts the section of the module's last global:
// after the sections of its functions and data, before those it writes at
// the module's end (__DWARF, __compact_unwind, __eh_frame, ...), with, in an object whose sections start with ltmpN
// symbols (arm64), its own, the others renumbered; the sections that
// follow move, and the writer corrects what points into them. So
// embedding into what llc made of a module gives the object llc makes of
// the module with the global. Each reader must hold whole OffloadBinaries
// back to back, as for [Embed]; o is left as it was on an error.
func EmbedMachO(o *machoobj.Object, binaries ...*io.SectionReader) error {
	var parts concat.ReaderAt
	sec := o.Section(MachOSegment, MachOSection)
	if sec != nil {
		if sec.ZeroFill() || sec.Flags&machoobj.SECTION_TYPE != machoobj.S_REGULAR {
			return fmt.Errorf("fatobj: %s,%s has flags %#x, not those of device code (S_REGULAR)", MachOSegment, MachOSection, sec.Flags)
		}
		if sec.Data != nil {
			parts.Add(bytes.NewReader(sec.Data), 0, int64(len(sec.Data)))
		} else if sec.Reader != nil {
			parts.Add(sec.Reader, 0, sec.Size)
		}
	}
	start := parts.Size()
	if err := addBinaries(&parts, binaries); err != nil {
		return err
	}
	n := 0 // symbols of binaries the section has
	if sec != nil {
		for _, s := range o.Symbols {
			if s.Section == sec && !ltmp.MatchString(s.Name) {
				n++
			}
		}
	}
	var syms []*machoobj.Symbol
	off := start
	for i, b := range binaries {
		syms = append(syms, &machoobj.Symbol{Name: machoEmbeddedSymbol(n + i), Type: machoobj.N_SECT, Value: uint64(off)})
		off += b.Size()
	}
	if sec == nil {
		sec = &machoobj.Section{Seg: MachOSegment, Name: MachOSection, Align: 8}
		insertMachOSection(o, sec, syms)
	} else {
		insertMachOSymbols(o, sec, syms)
	}
	for _, s := range syms {
		s.Section = sec
	}
	sec.Data, sec.Reader, sec.Size = nil, &parts, parts.Size()
	return nil
}

// insertMachOSection puts sec before the first section LLVM writes at the
// module's end, with its symbols syms (and an ltmp symbol where the
// object's sections have them) among the local symbols where LLVM lists
// them: after those of the sections before it.
func insertMachOSection(o *machoobj.Object, sec *machoobj.Section, syms []*machoobj.Symbol) {
	at := len(o.Sections)
	for i, s := range o.Sections {
		if machoModuleEnd(s.Seg, s.Name) {
			at = i
			break
		}
	}
	o.Sections = append(o.Sections[:at], append([]*machoobj.Section{sec}, o.Sections[at:]...)...)
	hasLtmp := false
	for _, s := range o.Symbols {
		if !s.External() && s.Section != nil && s.Value == 0 && ltmp.MatchString(s.Name) {
			hasLtmp = true
			break
		}
	}
	if hasLtmp {
		syms = append([]*machoobj.Symbol{{Name: "ltmp", Type: machoobj.N_SECT, Section: sec}}, syms...)
	}
	insertMachOSymbols(o, sec, syms)
	if hasLtmp {
		// Renumber them in section order.
		order := map[*machoobj.Section]int{}
		for i, s := range o.Sections {
			order[s] = i
		}
		var starts []*machoobj.Symbol
		for _, s := range o.Symbols {
			if !s.External() && s.Section != nil && s.Value == 0 && (s.Name == "ltmp" || ltmp.MatchString(s.Name)) {
				starts = append(starts, s)
			}
		}
		// Already in section order: LLVM lists each where its section
		// begins, and the new one was put where its section is.
		for i, s := range starts {
			s.Name = "ltmp" + strconv.Itoa(i)
		}
	}
}

// insertMachOSymbols puts syms, of section sec, before the first local
// symbol of a section after sec, else after the last local symbol.
func insertMachOSymbols(o *machoobj.Object, sec *machoobj.Section, syms []*machoobj.Symbol) {
	index := map[*machoobj.Section]int{}
	for i, s := range o.Sections {
		index[s] = i
	}
	mine := index[sec]
	at, last := -1, -1
	for i, s := range o.Symbols {
		if s.External() {
			continue
		}
		last = i
		if s.Section != nil && s.Section != sec && index[s.Section] > mine {
			at = i
			break
		}
	}
	if at < 0 {
		at = last + 1
	}
	for _, s := range syms {
		s.Section = sec
	}
	o.Symbols = append(o.Symbols[:at], append(syms, o.Symbols[at:]...)...)
}

// NewMachOHostObject returns an empty host object for an Apple triple
// ([machoobj.ForTriple]) to embed binaries into, as llc makes one of an
// empty module: an empty __TEXT,__text (with an ltmp0 symbol on arm64).
func NewMachOHostObject(triple string) (*machoobj.Object, error) {
	o, err := machoobj.ForTriple(triple)
	if err != nil {
		return nil, err
	}
	text := &machoobj.Section{Seg: "__TEXT", Name: "__text", Align: 1, Data: []byte{},
		Flags: machoobj.S_ATTR_PURE_INSTRUCTIONS}
	o.Sections = append(o.Sections, text)
	if o.Cpu == machoobj.CpuArm64 {
		o.Symbols = append(o.Symbols, &machoobj.Symbol{Name: "ltmp0", Type: machoobj.N_SECT, Section: text})
	}
	return o, nil
}
