package link

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/facts"
)

// jitLTO reports whether the release's wrapper runs the device LTO of
// --embed-bitcode in its own process (15 to 19: clang-linker-wrapper's
// linkBitcodeFiles, stopped by a hook after the optimisation), which
// goffload runs as llvm-lto2 given the same symbol resolutions
// ([planner.jitSteps]). From 20 the device link stops at bitcode
// (-Wl,--lto-emit-llvm, [planner.deviceLink]).
func (p *planner) jitLTO() bool {
	return p.opt.EmbedBitcode && facts.Of(p.rel).Link.InProcessLTO
}

// ltoSymbols is what the in-process LTO reads of one device image: the
// symbols of a bitcode image, or the names of an ELF image's symbols.
type ltoSymbols struct {
	bitcode []bitcode.Symbol
	isBC    bool
	names   []string // of an ELF image
	shared  bool     // the ELF image is a shared object
	feature string   // the image's "feature" string
}

// readLTOSymbols reads the symbols of a device image for jitSteps: of
// bitcode its IR symbol table, of an ELF file the names in its symbol
// table (the wrapper's UsedInRegularObj and UsedInSharedLib); of anything
// else none, as the wrapper skips it.
func readLTOSymbols(d devImage) (*ltoSymbols, error) {
	var head [4]byte
	n, _ := d.r.ReadAt(head[:], 0)
	feature, _ := d.im.Lookup("feature")
	out := &ltoSymbols{feature: feature}
	switch {
	case bitcode.IsBitcode(head[:n]):
		syms, err := bitcode.Symbols(d.r, d.r.Size())
		if err != nil {
			return nil, err
		}
		out.bitcode, out.isBC = syms, true
	case n == 4 && string(head[:]) == "\x7fELF":
		f, err := elfobj.Read(d.r, d.r.Size())
		if err != nil {
			return nil, err
		}
		syms, err := f.Symbols()
		if err != nil {
			return nil, err
		}
		for _, s := range syms {
			if s.Index != 0 {
				out.names = append(out.names, s.Name)
			}
		}
		out.shared = f.Type == 3 // ET_DYN
	}
	return out, nil
}

// jitSteps plans the device LTO of t under --embed-bitcode as LLVM 15 to
// 19's wrapper runs it in its own process: one llvm-lto2 run of t's bitcode
// images, at --opt-level for optimisation and code generation, for the
// processor of t's target ID, with the images' "feature" strings as its
// attributes and whole-program visibility where every image is bitcode,
// each symbol resolved as the wrapper resolves it (see jitResolutions); the
// module after the optimisation (llvm-lto2's PREFIX.0.4.opt.bc, which is
// the bitcode the wrapper's hook writes, byte for byte) is t's image, of
// kind LLVM IR. The ELF images of t are read only for the symbols they use,
// and not linked, as the wrapper does.
func (p *planner) jitSteps(t *target) error {
	var bc []*extracted
	for _, x := range t.images {
		if x.lto.isBC {
			bc = append(bc, x)
		}
	}
	if len(bc) == 0 {
		return fmt.Errorf("%w: --embed-bitcode for %s with LLVM %v: no device image is LLVM bitcode (that wrapper registers its first object as LLVM IR, which no runtime loads; compile with -fopenmp-target-jit or -foffload-lto)", goffload.ErrUnsupported, t.name(), p.rel)
	}
	if !ltoLevel.MatchString(p.opt.OptLevel) {
		return fmt.Errorf("%w: --embed-bitcode with --opt-level=%s: LLVM %v's wrapper reads only O0 to O3 for the LTO it runs", goffload.ErrUnsupported, p.opt.OptLevel, p.rel)
	}
	n := strings.TrimPrefix(p.opt.OptLevel, "O")
	args := []string{"run", "-O" + n, "--cg-opt-level=" + n}
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
	prefix, err := p.tempName(fmt.Sprintf("%s-jit-%s", filepath.Base(p.host.output), t.triple), ".lto")
	if err != nil {
		return err
	}
	outs := []string{prefix + ".0.4.opt.bc", prefix + ".0"}
	if p.rel.Major >= 16 {
		args = append(args, "--select-save-temps=opt")
	} else {
		// 15's llvm-lto2 keeps every stage or none.
		args = append(args, "--save-temps")
		outs = append(outs, prefix+".resolution.txt", prefix+".0.0.preopt.bc", prefix+".0.2.internalize.bc", prefix+".0.5.precodegen.bc")
	}
	// The code generation after the hook is not the wrapper's: it writes
	// nothing.
	args = append(args, "--filetype=null", "-o", prefix)
	var files []string
	for _, x := range bc {
		files = append(files, x.path)
	}
	args = append(args, files...)
	res, err := jitResolutions(t.images, facts.Of(p.rel).Wrapper.LTOStrongOverWeak)
	if err != nil {
		return fmt.Errorf("--embed-bitcode for %s: %w", t.name(), err)
	}
	args = append(args, res...)
	p.l.Steps = append(p.l.Steps, Step{Kind: StepDeviceLTO, Target: t.name(), Tool: p.findLLVMTool("llvm-lto2"), Args: args, Inputs: files, Outputs: outs})
	t.linked = outs[0]
	return nil
}

// ltoFeatures returns the target features of the bitcode images as the
// wrapper gives them to its LTO: every image's "feature" string split at
// ',', the last of each feature's name kept, from the last.
func ltoFeatures(bc []*extracted) []string {
	var all []string
	for _, x := range bc {
		all = append(all, strings.Split(x.lto.feature, ",")...)
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

// jitResolutions returns llvm-lto2's -r arguments (FILE,SYMBOL,FLAGS) for
// every symbol of the bitcode images that LTO reads (global, not
// format-specific), as LLVM 15 to 19's wrapper resolves
// them for its LTO: prevailing (p) the first definition of a name, or from
// 18 (strongOverWeak) the first that is not weak where a strong one exists;
// visible to regular objects (x) a name an ELF image's symbol table holds, a
// symbol in a section whose name is a C identifier (given __start_ and
// __stop_ symbols), and a prevailing symbol that is not hidden and may not
// be left out of a symbol table; final in the linkage unit (l) a definition
// that is neither of default visibility nor common.
func jitResolutions(images []*extracted, strongOverWeak bool) ([]string, error) {
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
			return nil, fmt.Errorf("%w: the temporary file %q holds a ',', which llvm-lto2's -r cannot name", goffload.ErrUnsupported, x.path)
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
