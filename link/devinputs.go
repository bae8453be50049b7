package link

import (
	"debug/elf"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/amdgpu"
	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// This file chooses the device code of a link as the release's
// clang-linker-wrapper chooses it (getDeviceInput in
// clang/tools/clang-linker-wrapper/ClangLinkerWrapper.cpp): which images of
// the objects and of the static libraries' members join the device links,
// and in which order. The wrapper looks at device symbols only, never at
// what the host link pulls; each release has its own rule
// ([release.ArchiveRule], docs/releases.md#archive-members).

// targetID is what the wrapper groups images by: triple and arch (the
// offload kind is not part of it).
type targetID struct{ triple, arch string }

// compatible reports whether an image of target a may join the link of
// target b, another target (object::areTargetsCompatible): the same triple,
// and either arch "generic", or on AMDGPU the same processor with no
// feature on in one and off in the other.
func compatible(a, b targetID) bool {
	if a == b || a.triple != b.triple {
		return false
	}
	if a.arch == "generic" || b.arch == "generic" {
		return true
	}
	if !strings.HasPrefix(a.triple, "amdgcn") {
		return false
	}
	pa, _, _ := strings.Cut(a.arch, ":")
	pb, _, _ := strings.Cut(b.arch, ":")
	if pa != pb {
		return false
	}
	for _, f := range []string{"xnack", "sramecc"} {
		if strings.Contains(a.arch, f+"+") && strings.Contains(b.arch, f+"-") ||
			strings.Contains(a.arch, f+"-") && strings.Contains(b.arch, f+"+") {
			return false
		}
	}
	return true
}

// wrapperArg is one argument of the host link that the wrapper reads for
// device code: an input file, a library (-l), or a --whole-archive switch.
type wrapperArg struct {
	path    string // an input file
	lib     string // -lNAME: NAME
	whole   bool   // a switch: --whole-archive (true) or --no-whole-archive
	isWhole bool   // the argument is a switch
}

// wrapperArgs reads the host link's argv as the wrapper's option table does
// (OPT_INPUT, OPT_library, OPT_whole_archive, OPT_no_whole_archive, and
// every -L, wherever it is). With exeOptions, the table's link.exe options
// too ([release.Link.LinkExeOptions]): every -libpath:DIR is a folder of the
// -L ones, in order, and a /wholearchive anywhere (wholeAll) makes every
// archive before a --no-whole-archive whole; an argument beginning with
// '/' that is none of them is an input, as the table reads it (/Brepro,
// which then names no file).
func wrapperArgs(args []string, exeOptions bool) (list []wrapperArg, dirs []string, sysroot string, wholeAll bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		if exeOptions {
			if n, v, ok := wrapperExeOption(a); ok {
				switch n {
				case "libpath:":
					dirs = append(dirs, v)
				case "wholearchive":
					wholeAll = true
				}
				continue
			}
		}
		switch {
		case a == "-L" || a == "--library-path":
			dirs = append(dirs, next())
		case strings.HasPrefix(a, "--library-path="):
			dirs = append(dirs, a[len("--library-path="):])
		case strings.HasPrefix(a, "-L"):
			dirs = append(dirs, a[2:])
		case a == "-l" || a == "--library":
			list = append(list, wrapperArg{lib: next()})
		case strings.HasPrefix(a, "--library="):
			list = append(list, wrapperArg{lib: a[len("--library="):]})
		case strings.HasPrefix(a, "-l") && !ldValueOptions[a]:
			list = append(list, wrapperArg{lib: a[2:]})
		case a == "--whole-archive" || a == "-whole-archive":
			list = append(list, wrapperArg{isWhole: true, whole: true})
		case a == "--no-whole-archive" || a == "-no-whole-archive":
			list = append(list, wrapperArg{isWhole: true})
		case a == "--sysroot":
			sysroot = next()
		case strings.HasPrefix(a, "--sysroot="):
			sysroot = a[len("--sysroot="):]
		case ldValueOptions[a]:
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			list = append(list, wrapperArg{path: a})
		}
	}
	return list, dirs, sysroot, wholeAll
}

// searchLibrary finds -lNAME as the wrapper does: in each -L folder in
// turn, libNAME.so then libNAME.a (-l:FILE: FILE); a folder prefixed with
// "=" is under the sysroot. Release 15 gives up at a folder holding
// libNAME.so. It returns "" when nothing is found.
func searchLibrary(name, sysroot string, dirs []string, rule release.ArchiveRule, stat func(string) (fs.FileInfo, error)) string {
	find := func(dir, file string) (string, bool) {
		if d, ok := strings.CutPrefix(dir, "="); ok {
			dir = filepath.Join(sysroot, d)
		}
		p := filepath.Join(dir, file)
		_, err := stat(p)
		return p, err == nil
	}
	if exact, ok := strings.CutPrefix(name, ":"); ok {
		for _, d := range dirs {
			if p, ok := find(d, exact); ok {
				return p
			}
		}
		return ""
	}
	for _, d := range dirs {
		if p, ok := find(d, "lib"+name+".so"); ok {
			if rule == release.ArchiveUsedTargets {
				return ""
			}
			return p
		}
		if p, ok := find(d, "lib"+name+".a"); ok {
			return p
		}
	}
	return ""
}

// offloadFile is one device image of an input as the wrapper sees it (its
// OffloadFile): the image of an object or of an archive member.
type offloadFile struct {
	obj     *fatobj.Object
	img     devImage
	id      targetID
	kind    offload.OffloadKind
	input   int  // the index of its input on the command line
	archive bool // from an archive
	lazy    bool // from an archive, outside --whole-archive
	moved   bool // taken for its last compatible target (the wrapper's moved-from OffloadFile)

	syms    []devSym
	symsErr error
	read    bool
}

// devSym is a device symbol as the wrapper's symbol scan reads it.
type devSym struct {
	name                     string
	undefined, weak, visible bool
	omittable                bool // bitcode: may be left out of the symbol table
}

// Symbol flags of the wrapper's table (its enum Symbol).
const (
	symUndefined = 1 << 1
	symWeak      = 1 << 2
)

// symTable is the wrapper's table of the symbols of one target. Its entries
// are never updated once made: the wrapper merges a file's symbols with
// DenseMap::insert, which keeps what is there.
type symTable map[string]uint8

// symbols returns the global symbols of f's image that the wrapper reads:
// those of an ELF relocatable object or of bitcode, without the
// format-specific ones; nil for any other image.
func (f *offloadFile) symbols() ([]devSym, error) {
	if f.read {
		return f.syms, f.symsErr
	}
	f.read = true
	r := f.img.r
	var head [18]byte
	n, _ := r.ReadAt(head[:], 0)
	switch {
	case bitcode.IsBitcode(head[:n]):
		syms, err := bitcode.Symbols(r, r.Size())
		if err != nil {
			f.symsErr = err
			return nil, err
		}
		for _, s := range syms {
			if !s.Global() || s.FormatSpecific() {
				continue
			}
			f.syms = append(f.syms, devSym{name: s.Name, undefined: s.Undefined(), weak: s.Weak(),
				visible: !s.Hidden(), omittable: s.MayOmit()})
		}
	case n == len(head) && string(head[:4]) == "\x7fELF":
		ef, err := elfobj.Read(r, r.Size())
		if err != nil {
			f.symsErr = err
			return nil, err
		}
		if ef.Type != elf.ET_REL {
			return nil, nil
		}
		syms, err := ef.Symbols()
		if err != nil {
			f.symsErr = err
			return nil, err
		}
		for i, s := range syms {
			bind, typ := s.Bind(), s.Type()
			if i == 0 || bind == elf.STB_LOCAL || typ == elf.STT_FILE || typ == elf.STT_SECTION {
				continue
			}
			f.syms = append(f.syms, devSym{name: s.Name, undefined: s.Section == elf.SHN_UNDEF, weak: bind == elf.STB_WEAK,
				visible: elf.ST_VISIBILITY(s.Other) != elf.STV_HIDDEN})
		}
	}
	return f.syms, nil
}

// scan is the wrapper's getSymbols: whether f is to be taken (always, for
// a file outside archives), merging its symbols into the target's table if
// it is.
func (f *offloadFile) scan(table symTable, archive bool) (bool, error) {
	syms, err := f.symbols()
	if err != nil {
		return false, fmt.Errorf("%s: %w", f.obj.Name, err)
	}
	extract := !archive
	tmp := map[string]uint8{}
	var order []string
	set := func(name string, v uint8) {
		if _, ok := tmp[name]; !ok {
			order = append(order, name)
		}
		tmp[name] = v
	}
	for _, s := range syms {
		old, seen := table[s.name]
		resolves := old&symUndefined != 0 && old&symWeak == 0 && !s.undefined
		newGlobal := (!seen || old&symUndefined != 0) && !s.undefined && !s.omittable && f.kind != offload.OffloadNone && s.visible
		extract = extract || resolves || newGlobal
		if old&symUndefined != 0 && !s.undefined {
			set(s.name, old&^symUndefined)
		}
		if s.undefined && !seen {
			set(s.name, old|symUndefined)
		}
		if s.weak {
			set(s.name, old|symWeak)
		}
	}
	if extract {
		for _, name := range order {
			if _, ok := table[name]; !ok {
				table[name] = tmp[name]
			}
		}
	}
	return extract, nil
}

// equivalent is main's object::areTargetsEquivalent: on AMDGPU the same
// processor and settings (amdgpu.TargetID.Equivalent), elsewhere the same
// triple and arch.
func equivalent(a, b targetID) bool {
	ta := amdgpu.ParseTargetID(a.triple, a.arch)
	if ta.IsAMDGPU() {
		return ta.Equivalent(amdgpu.ParseTargetID(b.triple, b.arch))
	}
	return a == b
}

// providesFor is main's object::areTargetsCompatible(Provided, Requested):
// on AMDGPU amdgpu.TargetID.ProvidesFor, elsewhere the same triple and
// either arch "generic" or the same arch.
func providesFor(p, r targetID) bool {
	tp := amdgpu.ParseTargetID(p.triple, p.arch)
	if tp.IsAMDGPU() {
		return tp.ProvidesFor(amdgpu.ParseTargetID(r.triple, r.arch))
	}
	return p.triple == r.triple && (p.arch == "generic" || r.arch == "generic" || p.arch == r.arch)
}

// chooseByTargetID is chooseDevice for main's wrapper
// (release.TargetMatchTargetID, docs/releases.md#target-matching): the
// objects' images, the most specific target IDs first, each in the links
// of the targets equivalent to its own (else in a link of its own); then
// each archive member's in every link it provides for, and in its own
// target's where that link is there or --should-extract names its arch.
func chooseByTargetID(files []*offloadFile, shouldExtract []string) ([]targetID, map[targetID][]*offloadFile) {
	var ids []targetID
	inputs := map[targetID][]*offloadFile{}
	add := func(id targetID, f *offloadFile) {
		if _, ok := inputs[id]; !ok {
			ids = append(ids, id)
		}
		inputs[id] = append(inputs[id], f)
	}
	var objects, members []*offloadFile
	for _, f := range files {
		if f.lazy {
			members = append(members, f)
		} else {
			objects = append(objects, f)
		}
	}
	slices.SortStableFunc(objects, func(a, b *offloadFile) int {
		return strings.Count(b.id.arch, ":") - strings.Count(a.id.arch, ":")
	})
	for _, f := range objects {
		var into []targetID
		for _, id := range ids {
			if equivalent(f.id, id) {
				into = append(into, id)
			}
		}
		if len(into) == 0 {
			into = []targetID{f.id}
		}
		for _, id := range into {
			add(id, f)
		}
		f.moved = true
	}
	for _, f := range members {
		cands := []targetID{f.id}
		for _, id := range ids {
			if id != f.id && providesFor(f.id, id) {
				cands = append(cands, id)
			}
		}
		for _, id := range cands {
			if _, ok := inputs[id]; !ok && !containsString(shouldExtract, id.arch) {
				continue
			}
			add(id, f)
		}
	}
	return ids, inputs
}

// chooseDevice returns the images that join the device links, in the
// order the release's wrapper gives them to each target's link: targets in
// the order they first appear, each with its images. files are the images of
// the inputs in command-line order; shouldExtract are the arches of
// --should-extract.
func chooseDevice(rule release.ArchiveRule, files []*offloadFile, shouldExtract []string) ([]targetID, map[targetID][]*offloadFile, error) {
	var ids []targetID
	inputs := map[targetID][]*offloadFile{}
	add := func(id targetID, f *offloadFile) {
		if _, ok := inputs[id]; !ok {
			ids = append(ids, id)
		}
		inputs[id] = append(inputs[id], f)
	}
	// compatibles lists f's own target, then every target already there
	// that f's image may join, as the wrapper does.
	compatibles := func(f *offloadFile) []targetID {
		out := []targetID{f.id}
		for _, id := range ids {
			if compatible(f.id, id) {
				out = append(out, id)
			}
		}
		return out
	}
	switch rule {
	case release.ArchiveUsedTargets:
		used := map[targetID]bool{}
		for _, f := range files {
			if !f.lazy {
				add(f.id, f)
				used[f.id] = true
			}
		}
		for _, f := range files {
			if f.lazy && used[f.id] {
				add(f.id, f)
			}
		}
	case release.ArchiveOrdered:
		tables := map[targetID]symTable{}
		// files of one input are contiguous: group them.
		for i := 0; i < len(files); {
			j := i + 1
			for j < len(files) && files[j].input == files[i].input {
				j++
			}
			group := files[i:j]
			i = j
			for extracted := true; extracted; {
				extracted = false
				for _, f := range group {
					if f.moved {
						continue
					}
					if f.lazy && tables[f.id] == nil {
						continue
					}
					if tables[f.id] == nil {
						tables[f.id] = symTable{}
					}
					// A member of an archive is scanned as one even
					// under --whole-archive (and taken all the same).
					ok, err := f.scan(tables[f.id], f.archive)
					if err != nil {
						return nil, nil, err
					}
					extracted = f.lazy && ok
					if !f.lazy || extracted {
						f.moved = true
						add(f.id, f)
					}
					if extracted {
						break
					}
				}
			}
		}
	case release.ArchiveResolve, release.ArchiveAllMembers:
		tables := map[targetID]symTable{}
		table := func(id targetID) symTable {
			if tables[id] == nil {
				tables[id] = symTable{}
			}
			return tables[id]
		}
		for _, f := range files {
			if f.lazy {
				continue
			}
			for _, id := range compatibles(f) {
				if rule == release.ArchiveResolve {
					if _, err := f.scan(table(id), false); err != nil {
						return nil, nil, err
					}
				}
				add(id, f)
			}
			f.moved = true
		}
		if rule == release.ArchiveAllMembers {
			for _, f := range files {
				if !f.lazy {
					continue
				}
				for _, id := range compatibles(f) {
					if _, ok := inputs[id]; !ok && !containsString(shouldExtract, id.arch) {
						continue
					}
					add(id, f)
				}
			}
			break
		}
		for extracted := true; extracted; {
			extracted = false
			for _, f := range files {
				if !f.lazy || f.moved {
					continue
				}
				cs := compatibles(f)
				for k, id := range cs {
					if _, ok := inputs[id]; !ok {
						continue
					}
					ok, err := f.scan(table(id), true)
					if err != nil {
						return nil, nil, err
					}
					extracted = ok
					if !ok {
						continue
					}
					add(id, f)
					if k == len(cs)-1 {
						f.moved = true
					}
				}
				if extracted {
					break
				}
			}
		}
	default:
		return nil, nil, fmt.Errorf("%w: no archive rule for this release", goffload.ErrUnsupported)
	}
	return ids, inputs, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// errNoLibrary is the wrapper's error for a -lNAME found nowhere.
var errNoLibrary = errors.New("unable to find library")

// gatherWrapper reads the inputs as the release's clang-linker-wrapper
// reads them (files named on the command line and libraries found by -l,
// in order), chooses their device images by the release's rule, and plans
// their extraction, target by target.
func (p *planner) gatherWrapper() error {
	rule := p.rel.Link.Archives
	link := p.rel.Link
	list, dirs, sysroot, wholeAll := wrapperArgs(p.ldArgs, link.LinkExeOptions)
	if rule == release.ArchiveUsedTargets {
		// 15 reads the files first, then the libraries.
		var files, libs []wrapperArg
		for _, a := range list {
			switch {
			case a.lib != "":
				libs = append(libs, a)
			case !a.isWhole:
				files = append(files, a)
			}
		}
		list = append(files, libs...)
	}
	var files []*offloadFile
	var objects []*fatobj.Object // in order: the objects, and every member
	whole := wholeAll && link.WholeArchive
	for idx, a := range list {
		if a.isWhole {
			whole = a.whole && link.WholeArchive
			continue
		}
		path := a.path
		if a.lib != "" {
			if path = searchLibrary(a.lib, sysroot, dirs, rule, p.src.stat); path == "" {
				if rule == release.ArchiveUsedTargets || p.opt.Driver {
					continue // 15 goes on; a driver's own folders hold no device code
				}
				return fmt.Errorf("%w -l%s", errNoLibrary, a.lib)
			}
		}
		if p.linkExe && strings.HasPrefix(path, "/") && !p.src.regular(path) {
			// An option of lld-link's (/Brepro), which the wrapper's table
			// reads as an input and then skips: there is no such file.
			continue
		}
		if p.machO && a.lib == "" && !p.src.regular(path) {
			// A value of one of ld64's options (-arch arm64), which the
			// wrapper's table reads as an input and then skips.
			continue
		}
		// A file that is missing or no file is an error here (the wrapper
		// leaves it to the host linker).
		f, err := p.src.open(path, p.rel)
		if errors.Is(err, goffload.ErrInvalid) && linkerScriptHead(p.src.head(path)) {
			continue // the host linker's: no device code
		}
		if err != nil {
			return err
		}
		archive := f.Format == fatobj.FormatArchive || f.Format == fatobj.FormatThinArchive
		if !archive && len(f.Objects) == 1 && f.Objects[0].ELF != nil && f.Objects[0].ELF.Type == elf.ET_DYN {
			// A shared library (or a PIE program): the wrapper takes no
			// device code from it; it is checked against the release all
			// the same.
			objects = append(objects, f.Objects[0])
			continue
		}
		for oi, in := range f.Objects {
			p.lto = p.lto || in.Format == fatobj.FormatBitcode
			ims, err := p.images(in, path, oi)
			if err != nil {
				return ferr.Named(in.Name, err)
			}
			for _, d := range ims {
				files = append(files, &offloadFile{obj: in, img: d, id: targetID{d.im.Triple(), d.im.Arch()}, kind: d.im.OffloadKind,
					input: idx, archive: archive, lazy: archive && (!whole || rule == release.ArchiveUsedTargets)})
			}
			if !archive {
				objects = append(objects, in)
			}
		}
	}
	var ids []targetID
	var inputs map[targetID][]*offloadFile
	if link.TargetMatch == release.TargetMatchTargetID {
		ids, inputs = chooseByTargetID(files, p.opt.ShouldExtract)
	} else {
		var err error
		if ids, inputs, err = chooseDevice(rule, files, p.opt.ShouldExtract); err != nil {
			return err
		}
	}
	taken := map[*fatobj.Object]bool{}
	for _, id := range ids {
		for _, f := range inputs[id] {
			taken[f.obj] = true
		}
	}
	// The objects, then the members that give device code, as the link
	// uses them: checked against the release, and C++ or not.
	listed := make(map[*fatobj.Object]bool, len(objects))
	for _, in := range objects {
		listed[in] = true
	}
	for _, f := range files {
		if f.archive && taken[f.obj] && !listed[f.obj] {
			listed[f.obj] = true
			objects = append(objects, f.obj)
		}
	}
	for _, in := range objects {
		if err := p.use(in, nil); err != nil {
			return err
		}
		switch {
		case in.ELF != nil:
			p.cxx = p.cxx || IsCPlusPlus(in.ELF)
		case in.Format == fatobj.FormatBitcode:
			// Bitcode without an IR symbol table (LLVM before 5) says
			// nothing of its language: the link takes it as C.
			syms, err := in.BitcodeSymbols()
			if err != nil && !errors.Is(err, bitcode.ErrNoSymtab) {
				return err
			}
			for _, s := range syms {
				p.cxx = p.cxx || cxxSymbol(s.Name)
			}
		}
	}
	for _, id := range ids {
		for _, f := range inputs[id] {
			if err := p.addTo(id, f.kind, f.obj, f.img); err != nil {
				return err
			}
		}
	}
	return nil
}
