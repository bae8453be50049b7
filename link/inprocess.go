package link

import (
	"debug/elf"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
)

// LLVM 15 to 19's clang-linker-wrapper links a target's bitcode images with
// LTO in its own process (linkBitcodeFiles), giving every symbol a
// resolution of its own devising. goffload runs that LTO as the release's
// llvm-lto2, given the same resolutions and configuration, and gets the
// same module (measured byte for byte in 15, 16 and 19): under
// --embed-bitcode the module after the optimisation is the target's image
// ([planner.jitSteps]); otherwise the object it compiles to goes to the
// device link first, before the target's other images
// ([planner.ltoObjectSteps]).

// jitLTO reports whether the release's wrapper runs the device LTO of
// --embed-bitcode in its own process (15 to 19), which goffload runs as
// llvm-lto2 ([planner.jitSteps]). From 20 the device link stops at bitcode
// (-Wl,--lto-emit-llvm, [planner.deviceLink]).
func (p *planner) jitLTO() bool {
	return p.opt.EmbedBitcode && p.rel.Link.InProcessLTO
}

// inProcessLTO reports whether t's bitcode images are linked by the LTO
// the release's wrapper runs in its own process (15 to 19), which goffload
// runs as llvm-lto2 before the device link ([planner.ltoObjectSteps]): a
// target with bitcode, but for HIP's AMDGPU targets that [planner.deviceLTO]
// runs as lld and llc, and NVPTX targets, whose LTO compiles to PTX
// assembly, which goffload hands to the device link as bitcode instead
// (clang-nvlink-wrapper's LTO; the device link runs ptxas on assembly named
// .s, and llvm-lto2 names its output PREFIX.0).
func (p *planner) inProcessLTO(t *target) bool {
	return p.rel.Link.InProcessLTO && !p.opt.EmbedBitcode && t.nbitcode > 0 && !p.deviceLTO(t) && !t.nvptx()
}

// ltoSymbols is what the in-process LTO reads of one device image: the
// symbols of a bitcode image, or the names of an ELF image's symbols.
type ltoSymbols struct {
	bitcode []bitcode.Symbol
	isBC    bool
	names   []string // of an ELF image
	shared  bool     // the ELF image is a shared object
}

// readLTO reads the symbols of x for the in-process LTO, once: of bitcode
// its IR symbol table, of an ELF file the names in its symbol table (the
// wrapper's UsedInRegularObj and UsedInSharedLib); of anything else none,
// as the wrapper skips it.
func (x *extracted) readLTO() (*ltoSymbols, error) {
	if x.lto != nil {
		return x.lto, nil
	}
	var head [4]byte
	n, _ := x.r.ReadAt(head[:], 0)
	out := &ltoSymbols{}
	switch {
	case bitcode.IsBitcode(head[:n]):
		syms, err := bitcode.Symbols(x.r, x.r.Size())
		if err != nil {
			return nil, ferr.Named(x.from, err)
		}
		out.bitcode, out.isBC = syms, true
	case n == 4 && string(head[:]) == "\x7fELF":
		f, err := elfobj.Read(x.r, x.r.Size())
		if err != nil {
			return nil, ferr.Named(x.from, err)
		}
		syms, err := f.Symbols()
		if err != nil {
			return nil, ferr.Named(x.from, err)
		}
		for _, s := range syms {
			if s.Index != 0 {
				out.names = append(out.names, s.Name)
			}
		}
		out.shared = f.Type == elf.ET_DYN
	}
	x.lto = out
	return out, nil
}

// ltoRun returns llvm-lto2's arguments for the LTO of t's bitcode images as
// the release's wrapper configures its own, up to the output's options, and
// the bitcode images: at --opt-level for optimisation and code generation,
// for the processor of t's target ID, with the images' "feature" strings as
// attributes and whole-program visibility where every image is bitcode,
// LLVM's options given to the wrapper, and each symbol resolved as the
// wrapper resolves it (see ltoResolutions).
func (p *planner) ltoRun(t *target) (args, files []string, bc []*extracted, err error) {
	for _, x := range t.images {
		l, err := x.readLTO()
		if err != nil {
			return nil, nil, nil, err
		}
		if l.isBC {
			bc = append(bc, x)
		}
	}
	if !ltoLevel.MatchString(p.opt.OptLevel) {
		return nil, nil, nil, fmt.Errorf("%w: the device LTO of %s at --opt-level=%s: LLVM %v's wrapper reads only O0 to O3 for the LTO it runs", goffload.ErrUnsupported, t.name(), p.opt.OptLevel, p.rel)
	}
	n := strings.TrimPrefix(p.opt.OptLevel, "O")
	args = []string{"run", "-O" + n, "--cg-opt-level=" + n}
	if cpu, _, _ := strings.Cut(t.arch, ":"); cpu != "" {
		args = append(args, "-mcpu="+cpu)
	}
	if f := ltoFeatures(bc); len(f) > 0 {
		args = append(args, "-mattr="+strings.Join(f, ","))
	}
	if len(bc) == len(t.images) {
		args = append(args, "--whole-program-visibility")
	}
	for _, o := range p.opt.LLVMOptions {
		args = append(args, o.Arg)
	}
	for _, x := range bc {
		files = append(files, x.path)
	}
	return args, files, bc, nil
}

// jitSteps plans the device LTO of t under --embed-bitcode as LLVM 15 to
// 19's wrapper runs it in its own process: llvm-lto2 as ltoRun configures
// it, whose module after the optimisation (PREFIX.0.4.opt.bc, which is the
// bitcode the wrapper's hook writes, byte for byte) is t's image, of kind
// LLVM IR. The ELF images of t are read only for the symbols they use, and
// not linked, as the wrapper does.
func (p *planner) jitSteps(t *target) error {
	args, files, bc, err := p.ltoRun(t)
	if err != nil {
		return err
	}
	if len(bc) == 0 {
		return fmt.Errorf("%w: --embed-bitcode for %s with LLVM %v: no device image is LLVM bitcode (that wrapper registers its first object as LLVM IR, which no runtime loads; compile with -fopenmp-target-jit or -foffload-lto)", goffload.ErrUnsupported, t.name(), p.rel)
	}
	prefix, err := p.tempName(fmt.Sprintf("%s-jit-%s", filepath.Base(p.host.output), t.triple), ".lto")
	if err != nil {
		return err
	}
	outs := []string{prefix + ".0.4.opt.bc", prefix + ".0"}
	if p.rel.Link.LTO2SelectSaveTemps {
		args = append(args, "--select-save-temps=opt")
	} else {
		// 15's llvm-lto2 keeps every stage or none.
		args = append(args, "--save-temps")
		outs = append(outs, prefix+".resolution.txt", prefix+".0.0.preopt.bc", prefix+".0.2.internalize.bc", prefix+".0.5.precodegen.bc")
	}
	// The code generation after the hook is not the wrapper's: it writes
	// nothing.
	args = append(args, "--filetype=null", "-o", prefix)
	args = append(args, files...)
	res, err := ltoResolutions(t.images, p.rel.Wrapper.LTOStrongOverWeak)
	if err != nil {
		return fmt.Errorf("--embed-bitcode for %s: %w", t.name(), err)
	}
	args = append(args, res...)
	p.l.Steps = append(p.l.Steps, Step{Kind: StepDeviceLTO, Target: t.name(), Tool: p.findLLVMTool("llvm-lto2"), Args: args, Inputs: files, Outputs: outs})
	t.linked = outs[0]
	return nil
}

// ltoObjectSteps plans the LTO of t's bitcode images as LLVM 15 to 19's
// wrapper runs it in its own process before the device link: llvm-lto2 as
// ltoRun configures it, compiling to an object (position-independent, as
// the wrapper's LTO does); it returns the device link's inputs: that object,
// then t's other images in order, as the wrapper gives them.
func (p *planner) ltoObjectSteps(t *target) ([]string, error) {
	args, files, _, err := p.ltoRun(t)
	if err != nil {
		return nil, err
	}
	arch := t.arch
	prefix, err := p.tempName(fmt.Sprintf("%s.%s.%s", filepath.Base(p.host.output), t.triple, arch), ".lto")
	if err != nil {
		return nil, err
	}
	obj := prefix + ".0"
	args = append(args, "--relocation-model=pic", "--filetype=obj", "-o", prefix)
	args = append(args, files...)
	res, err := ltoResolutions(t.images, p.rel.Wrapper.LTOStrongOverWeak)
	if err != nil {
		return nil, fmt.Errorf("the device LTO of %s: %w", t.name(), err)
	}
	args = append(args, res...)
	p.l.Steps = append(p.l.Steps, Step{Kind: StepDeviceLTO, Target: t.name(), Tool: p.findLLVMTool("llvm-lto2"), Args: args, Inputs: files, Outputs: []string{obj}})
	ins := []string{obj}
	for _, x := range t.images {
		if !x.lto.isBC {
			ins = append(ins, x.path)
		}
	}
	return ins, nil
}

// ltoFeatures returns the target features of the bitcode images as the
// wrapper gives them to its LTO: every image's "feature" string split at
// ',', the last of each feature's name kept, from the last.
func ltoFeatures(bc []*extracted) []string {
	var all []string
	for _, x := range bc {
		all = append(all, strings.Split(x.feature, ",")...)
	}
	seen := map[string]bool{}
	var out []string
	for i := len(all) - 1; i >= 0; i-- {
		f := all[i]
		key := ""
		if f != "" {
			key = f[1:]
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, f)
	}
	if len(out) == 1 && out[0] == "" {
		return nil
	}
	return out
}

// ltoResolutions returns llvm-lto2's -r arguments (FILE,SYMBOL,FLAGS) for
// every symbol of the bitcode images that LTO reads (global, not
// format-specific), as LLVM 15 to 19's wrapper resolves them for its LTO:
// prevailing (p) the first definition of a name, or from 18
// (strongOverWeak) the first that is not weak where a strong one exists;
// visible to regular objects (x) a name an ELF image's symbol table holds, a
// symbol in a section whose name is a C identifier (given __start_ and
// __stop_ symbols), and a prevailing symbol that is not hidden and may not
// be left out of a symbol table; final in the linkage unit (l) a definition
// that is neither of default visibility nor common.
func ltoResolutions(images []*extracted, strongOverWeak bool) ([]string, error) {
	usedInObj := map[string]bool{}
	strong := map[string]bool{}
	for _, x := range images {
		if !x.lto.isBC {
			if !x.lto.shared {
				for _, n := range x.lto.names {
					usedInObj[n] = true
				}
			}
			continue
		}
		for _, s := range x.lto.bitcode {
			if strongOverWeak && !s.FormatSpecific() && s.Global() && !s.Weak() && !s.Undefined() {
				strong[s.Name] = true
			}
		}
	}
	prevailing := map[string]bool{}
	var out []string
	for _, x := range images {
		if !x.lto.isBC {
			continue
		}
		if strings.ContainsRune(x.path, ',') {
			return nil, fmt.Errorf("%w: the file %q holds a ',', which llvm-lto2's -r cannot name", goffload.ErrUnsupported, x.path)
		}
		for _, s := range x.lto.bitcode {
			if !s.Global() || s.FormatSpecific() {
				continue // not a symbol of LTO's (lto::InputFile skips it)
			}
			if strings.ContainsRune(s.Name, ',') {
				return nil, fmt.Errorf("%w: %s: the symbol %q holds a ',', which llvm-lto2's -r cannot name", goffload.ErrUnsupported, x.from, s.Name)
			}
			p := !s.Undefined() && !(s.Weak() && strong[s.Name]) && !prevailing[s.Name]
			if p {
				prevailing[s.Name] = true
			}
			flags := ""
			if p {
				flags += "p"
			}
			if (s.Hidden() || s.Protected()) && !s.Undefined() && !s.Common() {
				flags += "l"
			}
			if usedInObj[s.Name] || cIdentifier(s.Section) || p && !s.Hidden() && !s.MayOmit() {
				flags += "x"
			}
			out = append(out, "-r", x.path+","+s.Name+","+flags)
		}
	}
	return out, nil
}

// cIdentifier reports whether s is a C identifier, which a linker gives
// __start_ and __stop_ symbols as a section name.
func cIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c != '_' && !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// feature is an image's "feature" string.
func feature(im *offloadbinary.Image) string {
	f, _ := im.Lookup("feature")
	return f
}

// bitcodeLibraries adds the files of --bitcode-library=KIND-TRIPLE-ARCH=FILE
// (15 to 19) to the device code as LLVM's wrapper does: each an image of
// LLVM bitcode of that kind, for the target whose triple and arch are
// TRIPLE and ARCH as written (a target of its own when the inputs have
// none: its own device link and image), linked by the in-process LTO; the
// option reaches no host link.
func (p *planner) bitcodeLibraries() error {
	for _, lib := range p.opt.BitcodeLibraries {
		device, path, ok := strings.Cut(lib, "=")
		rest, arch, ok2 := cutLast(device, "-")
		kindName, triple, ok3 := strings.Cut(rest, "-")
		kind := offload.OffloadKindByName(p.rel, kindName)
		if !ok || !ok2 || !ok3 || path == "" || triple == "" || kind == offload.OffloadNone {
			return fmt.Errorf("%w: --bitcode-library=%s: not KIND-TRIPLE-ARCH=FILE", ErrUsage, lib)
		}
		r, err := p.src.openData(path)
		if err != nil {
			return fmt.Errorf("--bitcode-library: %w", err)
		}
		var head [4]byte
		if n, _ := r.ReadAt(head[:], 0); !bitcode.IsBitcode(head[:n]) {
			return fmt.Errorf("%w: --bitcode-library=%s: %s is no LLVM bitcode", goffload.ErrInvalid, lib, path)
		}
		var t *target
		for _, c := range p.targets {
			if c.triple == triple && c.arch == arch {
				t = c
				break
			}
		}
		if t == nil {
			t = &target{kind: kind, triple: triple, arch: arch}
			p.byKey[t.key()] = t
			p.targets = append(p.targets, t)
		}
		t.nbitcode++
		t.images = append(t.images, &extracted{from: path, path: notOption(path), r: r, library: true})
	}
	var args []string
	for _, a := range p.ldArgs {
		if !strings.HasPrefix(a, "--bitcode-library=") {
			args = append(args, a)
		}
	}
	p.ldArgs = args
	return nil
}

// cutLast slices s around the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}
