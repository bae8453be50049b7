package link

import (
	"bytes"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/ferr"
	"github.com/goffload/goffload/link/internal/ldsym"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap"
)

// ErrMismatch is the error of inputs that the chosen release cannot link
// together: the problem `goffload check` reports, found before linking.
var ErrMismatch = errors.New("inputs of another LLVM release")

// StepKind names what a step does.
type StepKind string

// The steps of a link, in the order they run.
const (
	StepExtract    StepKind = "extract"     // write a device image of an input to a file
	StepDeviceLTO  StepKind = "device-lto"  // LLVM 17-21, HIP on AMDGPU: the LTO of a target's bitcode (lld --lto-emit-llvm)
	StepCodegen    StepKind = "codegen"     // LLVM 17-21, HIP on AMDGPU: the optimised module to an object (llc)
	StepDeviceLink StepKind = "device-link" // link one target's images (clang, ld)
	StepBundle     StepKind = "bundle"      // HIP: bundle the linked images into a fatbin
	StepFatbinary  StepKind = "fatbinary"   // CUDA: NVIDIA's fatbinary
	StepWrap       StepKind = "wrap"        // write the registration object
	StepHostLink   StepKind = "host-link"   // run the host linker
	StepFinish     StepKind = "finish"      // -r: rename the merged object's entries sections
)

// Step is one step of a link, as data: a command that a build system can
// run as an action of its own, alone, in a folder holding its Inputs (at
// the paths given: relative ones from the folder it runs in), making its
// Outputs and nothing else the link needs.
//
// A step of goffload's own (Goffload) is `goffload step KIND ...`: Tool is
// the goffload program ([Options.Goffload]) and Args its arguments, which
// [RunCommand] runs; [Link.Run] and [Link.RunStep] run it within the
// calling program. The others are the release's tools (clang, llc, the host
// linker).
type Step struct {
	Kind   StepKind `json:"kind"`
	Target string   `json:"target,omitempty"` // triple or triple:arch
	Tool   string   `json:"tool"`             // the program
	Args   []string `json:"args,omitempty"`   // its arguments
	// Inputs are the files the step reads: those its arguments name, and
	// the libraries its -l options find in its -L folders. The files of the
	// tools themselves (clang's own crt files and libraries, found in its
	// installation) are not listed.
	Inputs []string `json:"inputs,omitempty"`
	// Outputs are the files it writes; their folders are made before it
	// runs.
	Outputs []string `json:"outputs,omitempty"`
	// Env are the NAME=VALUE settings the step needs beyond the
	// environment of the program that runs it (none today).
	Env []string `json:"env,omitempty"`
	// Goffload marks a step of goffload's own.
	Goffload bool `json:"goffload,omitempty"`
}

// Link is a planned offload link.
type Link struct {
	Release *release.Release `json:"-"`
	// LLVM is the release's major number.
	LLVM  int    `json:"llvm"`
	Steps []Step `json:"steps"`
	// Wrapper is the registration object the link makes ("" without
	// device code).
	Wrapper string `json:"wrapper,omitempty"`
	// Output is the file the link writes.
	Output string `json:"output"`

	// TempDir is the folder of the intermediate files, "" for the current
	// folder (SaveTemps): Options.TempDir, or a new name of Plan's in
	// os.TempDir, which Run and RunStep make and Close removes.
	TempDir string `json:"temp_dir,omitempty"`

	opt     *Options
	trace   *timeTrace // the steps' times, for Options.TimeTrace
	ownTmp  bool       // Plan named TempDir: it must not exist before Run
	remove  func()     // removes TempDir, once made
	discard func()
}

// Close removes the temporary files (kept with SaveTemps, which writes them
// in the current folder, and in a TempDir of the caller's). Plan holds
// nothing open: Close is needed only after Run or RunStep.
func (l *Link) Close() {
	if l.discard != nil {
		l.discard()
		l.discard = nil
	}
	if l.remove != nil {
		l.remove()
		l.remove = nil
	}
}

// target is one device target's images.
type target struct {
	kind         offload.OffloadKind
	triple, arch string
	images       []*extracted
	linked       string
	nbitcode     int  // how many images are LLVM bitcode
	features     bool // an image has a "feature" that is not of the target ID
	override     bool // linked is a file of --override-image
}

// extracted is a device image to write for the device link.
type extracted struct {
	from string // the input's name
	path string // where it is written
	src  imageRef
	// r reads the image while Plan runs (for an in-process LTO's
	// symbols); lto is what that LTO reads of it, once read.
	r   *io.SectionReader
	lto *ltoSymbols
	// library: a file of --bitcode-library, which the device link reads
	// where it is (nothing extracts it).
	library bool
	feature string // the image's "feature" string
}

// imageRef names an image of an input so that a later process finds it: the
// file (as the link names it), the object in it ([fatobj.File.Objects],
// members of an archive in order) and the image in the object
// ([fatobj.Object.Images]), as the release reads them.
type imageRef struct {
	file     string
	obj, img int
}

func (t *target) key() string { return t.kind.String() + "\x00" + t.triple + "\x00" + t.arch }

func (t *target) name() string {
	if t.arch == "" {
		return t.triple
	}
	return t.triple + ":" + t.arch
}

// cpu reports whether the target is a host CPU (OpenMP offloading to the
// host machine): its device link is a shared object linked with the host's
// libraries.
func (t *target) cpu() bool { return !t.amdgpu() && !t.nvptx() && !t.spirv() }

// nvptx, amdgpu and spirv report whether the target is an NVIDIA, AMD or
// SPIR-V GPU.
func (t *target) nvptx() bool  { return strings.HasPrefix(t.triple, "nvptx") }
func (t *target) amdgpu() bool { return strings.HasPrefix(t.triple, "amdgcn") }
func (t *target) spirv() bool  { return strings.HasPrefix(t.triple, "spirv") }

// mllvmArgs is what the device link of 17 to 22 gets of each -mllvm OPT
// given the wrapper: -mllvm OPT (17 to 21, how="-mllvm"), -Xlinker
// -mllvm=OPT (22, how="-Xlinker").
func (p *planner) mllvmArgs(how string) []string {
	var args []string
	for _, o := range p.opt.LLVMOptions {
		switch {
		case !o.MLLVM:
		case how == "-mllvm":
			args = append(args, "-mllvm", o.Arg)
		default:
			args = append(args, "-Xlinker", "-mllvm="+o.Arg)
		}
	}
	return args
}

// cudaPathArg is what LLVM 16-21's wrapper gives the device link of an
// NVPTX target from its own --cuda-path (22's driver gives the device link
// its --cuda-path through --device-compiler, and the wrapper uses its own
// for fatbinary only).
func (p *planner) cudaPathArg(t *target) []string {
	if !t.nvptx() || p.opt.CUDAPath == "" {
		return nil
	}
	return []string{"--cuda-path=" + p.opt.CUDAPath}
}

// planner holds what Plan gathers.
type planner struct {
	l       *Link
	opt     *Options
	rel     *release.Release
	relFrom string // where the release was taken from
	host    *hostLink
	ldArgs  []string // the host linker's argv (a driver's, as ld sees it)
	linkExe bool     // ldArgs are in link.exe's syntax (an MSVC host's lld-link)
	machO   bool     // the host is an Apple one: ldArgs are ld64's, its objects Mach-O
	targets []*target
	byKey   map[string]*target
	used    []entries.Input
	names   map[string]bool
	// next is, for each base+ext given to tempName, the number after which
	// the next free name lies: every number below it is taken, so that n
	// images of one name cost n probes, not n²/2.
	next     map[string]int
	legacy   bool
	cxx      bool // an input is C++
	lto      bool // an input is LLVM bitcode: the host link needs the LTO plugin
	resolver *ldsym.Resolver
	src      *Inputs // what the plan reads: files and tools
}

// Plan reads the inputs of the link that o describes, chooses the release,
// finds their device code as that release's wrapper does (every object,
// and the members of static libraries by the release's rule:
// docs/releases.md#archive-members; for 13 and 14, the members the host
// link pulls, as ld pulls them) and returns the steps. It only reads: it
// makes no file or folder and holds nothing open when it returns. It is
// [Open] and [PlanInputs] in one, reading the world once.
func Plan(o *Options) (*Link, error) {
	in := NewInputs()
	in.live = true
	defer in.Close()
	return plan(o, in)
}

// PlanInputs plans the link of o as [Plan] does, from in alone: the files
// it holds, opened or given, and the tools it names; it reads nothing
// else, makes no file, and takes time linear in its inputs. A path in
// does not hold does not exist for it, a program it does not name is not
// on $PATH. The files stay in's: close in when its plans are done.
func PlanInputs(o *Options, in *Inputs) (*Link, error) {
	if in == nil {
		return nil, fmt.Errorf("%w: PlanInputs: no Inputs", ErrUsage)
	}
	live := in.live
	in.live = false
	defer func() { in.live = live }()
	return plan(o, in)
}

// plan plans the link of o, reading what it reads through in.
func plan(o *Options, in *Inputs) (*Link, error) {
	opt := *o
	if opt.HostTriple == "" {
		opt.HostTriple = wrap.DefaultTriple
	}
	if opt.OptLevel == "" {
		opt.OptLevel = "O2"
	}
	if opt.Linker == "" && !opt.Driver {
		return nil, fmt.Errorf("%w: no host linker (--linker-path)", ErrUsage)
	}
	if opt.Language != "" && opt.Language != "c" && opt.Language != "c++" {
		return nil, fmt.Errorf("%w: language %q: want c or c++", ErrUsage, opt.Language)
	}
	p := &planner{l: &Link{opt: &opt}, opt: &opt, byKey: map[string]*target{}, names: map[string]bool{}, next: map[string]int{}, src: in}
	p.ldArgs = opt.LinkerArgs
	if opt.Driver {
		p.ldArgs, _ = driverToLD(opt.LinkerArgs)
	}
	p.rel, p.relFrom = opt.Release, "the options"
	if p.rel == nil {
		if p.rel = releaseFromArgs(p.ldArgs); p.rel != nil {
			p.relFrom = "the linker arguments"
		}
	}
	missing := func(lib string) error {
		if opt.Driver {
			return nil // the driver's own folders: no device code there
		}
		return fmt.Errorf("unable to find library -l%s", lib)
	}
	p.linkExe = linkExeStyle(opt.HostTriple) && !opt.Driver
	p.machO = wrap.MachOHost(opt.HostTriple)
	var h *hostLink
	if p.linkExe {
		h = scanLinkExe(p.ldArgs, in.stat)
		if h.output == "" {
			h.output = "a.exe"
		}
	} else {
		var err error
		if h, err = scanLD(p.ldArgs, missing, in.stat); err != nil {
			return nil, err
		}
	}
	if p.machO {
		// ld64's options take their values as the next arguments
		// (-arch arm64, -platform_version macos 11.0 11.0), which the
		// wrapper's table reads as inputs and then skips: there is no such
		// file. A missing input is left to ld64, as the wrapper leaves it.
		h.inputs = slices.DeleteFunc(h.inputs, func(hi hostInput) bool { return !strings.HasPrefix(hi.arg, "-l") && !in.regular(hi.path) })
	}
	p.host = h
	if h.output == "" {
		h.output = "a.out"
	}
	p.l.Output = h.output
	if h.relocatable {
		opt.Relocatable = true
	}
	if opt.Relocatable && wrap.COFFHost(opt.HostTriple) {
		// As clang-linker-wrapper refuses it (relocateOffloadSection).
		return nil, fmt.Errorf("relocatable linking is not supported on COFF targets (host %s): %w", opt.HostTriple, goffload.ErrUnsupported)
	}
	switch {
	case opt.SaveTemps:
	case opt.TempDir != "":
		p.l.TempDir = opt.TempDir
	default:
		// A new name, made only when the link runs (and refused then if
		// it exists).
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		p.l.TempDir, p.l.ownTmp = filepath.Join(os.TempDir(), "goffload-link-"+hex.EncodeToString(b[:])), true
	}
	if err := p.gather(); err != nil {
		return nil, err
	}
	if len(opt.OverrideImages) > 0 {
		if err := p.overrides(); err != nil {
			return nil, err
		}
	}
	if len(opt.BitcodeLibraries) > 0 && p.rel.Wrapper.BitcodeLibrary {
		if err := p.bitcodeLibraries(); err != nil {
			return nil, err
		}
	}
	if opt.EmbedBitcode && p.rel.Link.Device == release.DeviceLinkNone {
		return nil, fmt.Errorf("--embed-bitcode (-fopenmp-target-jit) of LLVM %v: no clang-linker-wrapper of that release: %w", p.rel, goffload.ErrUnsupported)
	}
	if p.linkExe {
		// The wrapper names its files after the output as its option
		// table reads it, which is not always what lld-link writes.
		h.output = wrapperOutput(p.ldArgs, p.rel.Link.LinkExeOptions, true)
	}
	if opt.Driver {
		if err := p.ltoDriver(); err != nil {
			return nil, err
		}
	}
	if err := p.steps(); err != nil {
		return nil, err
	}
	if opt.Linker == "" {
		opt.Linker = "cc"
		if p.cxxLink() {
			opt.Linker = "c++" // the C++ libraries, as clang++ adds them
		}
		for i := range p.l.Steps {
			if p.l.Steps[i].Kind == StepHostLink {
				p.l.Steps[i].Tool = opt.Linker
			}
		}
	}
	p.l.Release, p.l.LLVM = p.rel, p.rel.Major
	return p.l, nil
}

// gather reads every input in the host link's order.
func (p *planner) gather() error {
	p.resolver = ldsym.New("main", "_start")
	type opened struct {
		in hostInput
		f  *fatobj.File
	}
	var all []opened
	openAll := func(rel *release.Release) error {
		all = all[:0]
		for _, hi := range p.host.inputs {
			f, err := p.src.open(hi.path, rel)
			if errors.Is(err, goffload.ErrInvalid) && linkerScriptHead(p.src.head(hi.path)) {
				continue // the host linker's: no device code
			}
			if err != nil {
				return err
			}
			all = append(all, opened{hi, f})
		}
		return nil
	}
	if p.rel == nil {
		// The first input of a known release decides (the inputs after it
		// are not read for this); the inputs are then read again as that
		// release reads them.
		for _, hi := range p.host.inputs {
			f, err := p.src.open(hi.path, nil)
			if errors.Is(err, goffload.ErrInvalid) && linkerScriptHead(p.src.head(hi.path)) {
				continue // the host linker's: no device code
			}
			if err != nil {
				return err
			}
			p.rel, p.relFrom = fileRelease(f)
			if p.rel != nil {
				break
			}
		}
		if p.rel == nil {
			p.rel, p.relFrom = release.Default(), "the default"
		}
	}
	p.legacy = p.rel.Wrapper.Form == release.WrapperOffloadWrapper
	if !p.legacy {
		if err := p.gatherWrapper(); err != nil {
			return err
		}
	} else {
		if err := openAll(p.rel); err != nil {
			return err
		}
		for _, a := range all {
			if err := p.input(a.in, a.f); err != nil {
				return err
			}
		}
	}
	for i, fs := range entries.Incompatible(p.used) {
		if len(fs) > 0 {
			return fmt.Errorf("%s: %w: %s", p.used[i].Name, ErrMismatch, fs[0].Message)
		}
	}
	return nil
}

// overrides makes the targets of the link those of --override-image, in
// place of the device code of the inputs, which the link does not use (as
// LLVM's wrapper: no device code is extracted, no device link runs). Each
// file is an image of its own, its target named by its ELF header.
func (p *planner) overrides() error {
	if !p.rel.Wrapper.OverrideImage {
		return fmt.Errorf("%w: --override-image: not an option of %v's clang-linker-wrapper (19 and later)", ErrUsage, p.rel)
	}
	p.targets, p.byKey = nil, map[string]*target{}
	for _, ov := range p.opt.OverrideImages {
		r, err := p.src.openData(ov.File) // a regular file: no FIFO to block on
		if err != nil {
			return fmt.Errorf("--override-image=%v=%s: %w", ov.Kind, ov.File, err)
		}
		h, err := elfobj.ReadHeader(r)
		if err != nil {
			return fmt.Errorf("--override-image=%v=%s: %w", ov.Kind, ov.File, err)
		}
		triple, cpu, err := h.Target()
		if err != nil {
			return fmt.Errorf("--override-image=%v=%s: %w", ov.Kind, ov.File, err)
		}
		p.targets = append(p.targets, &target{kind: ov.Kind, triple: triple, arch: cpu, linked: ov.File, override: true})
	}
	return nil
}

// fileRelease is the release that made the first object of f whose release
// is known, and that object's name; nil if none is.
func fileRelease(f *fatobj.File) (*release.Release, string) {
	for _, in := range f.Objects {
		if in.Format == fatobj.FormatBitcode && len(in.Images) > 0 {
			// An LTO object: the clang that made it names itself in its
			// identification block (LLVM19.1.7).
			if r := producerRelease(in); r != nil {
				return r, in.Name
			}
			continue
		}
		if in.MachO != nil && len(in.Images) > 0 {
			// A Mach-O host's object: the releases its formats say, read
			// as the newest of them (Object.Release).
			if made, err := in.Made(); err == nil && made != release.Known() && made != 0 {
				return in.Release, in.Name
			}
			continue
		}
		if in.ELF == nil || !hasOffload(in.ELF) {
			continue
		}
		r, made, err := in.MadeBy()
		if err != nil || r == nil {
			continue
		}
		// The compiler's own words, where the formats allow it.
		if n := compilerRelease(in.ELF); n != 0 && made.Has(n) {
			if cr, err := release.Lookup(n); err == nil {
				r = cr
			}
		}
		return r, in.Name
	}
	return nil, ""
}

// linkerScript reports whether the file at path, which is no object or
// archive, reads as text, as a linker script does (libc.so is one): the
// host linker reads it. An empty file is an empty script to ld and lld
// (both link with one), and LLVM's wrapper leaves it to them; binary files
// are refused.
func linkerScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, headBytes)
	n, _ := io.ReadFull(f, b)
	return linkerScriptHead(b[:n])
}

// linkerScriptHead is linkerScript of a file that starts with b (its first
// headBytes, or all of it).
func linkerScriptHead(b []byte) bool {
	for _, magic := range []string{"!<arch>\n", "!<thin>\n", "\x7fELF", string(offloadbinary.Magic[:])} {
		if bytes.HasPrefix(b, []byte(magic)) {
			return false // a broken object or archive
		}
	}
	return bytes.IndexByte(b, 0) < 0
}

// safeName replaces the characters of a file name part taken from the
// inputs (a triple, an arch, a member's name) that could lead out of the
// folder or confuse a command line.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-:", r) {
			return r
		}
		return '_'
	}, s)
}

var clangVersion = regexp.MustCompile(`clang version ([0-9]+)\.`)

// ltoDriver prepares a driver link of LLVM bitcode objects (clang -flto):
// the host linker gets the release's linker plugin, LLVMgold.so, as clang
// gives it (-plugin, -plugin-opt=mcpu=), which also reaches a CPU target's
// device link, as through clang. cc (GCC) is the host linker unless asked
// otherwise: clang's -flto and -flto=thin, which tell clang an LTO link, are
// left out of its arguments (the plugin does ThinLTO by the objects).
func (p *planner) ltoDriver() error {
	opt := p.opt
	if opt.Linker == "" {
		opt.LinkerArgs = slices.DeleteFunc(slices.Clone(opt.LinkerArgs), func(a string) bool {
			return a == "-flto" || strings.HasPrefix(a, "-flto=") || a == "-fno-lto"
		})
	}
	if !p.lto {
		return nil
	}
	gold := p.findGold()
	if gold == "" {
		gold = fmt.Sprintf("/usr/lib/llvm-%d/lib/LLVMgold.so", p.rel.Major)
		if !opt.DryRun {
			return fmt.Errorf("%w: LLVM bitcode inputs (clang -flto) need %v's linker plugin, LLVMgold.so, for the host link: none beside %s nor at %s", goffload.ErrUnsupported, p.rel, p.findClang(), gold)
		}
	}
	plugin := "-Wl,-plugin," + gold
	if a, _, _ := strings.Cut(opt.HostTriple, "-"); a == "x86_64" {
		plugin += ",-plugin-opt=mcpu=x86-64"
	}
	opt.LinkerArgs = append([]string{plugin}, opt.LinkerArgs...)
	p.ldArgs, _ = driverToLD(opt.LinkerArgs)
	return nil
}

// producerRelease returns the release of the LLVM that wrote a bitcode
// object, as its producer string says ("LLVM19.1.7"), or nil.
func producerRelease(in *fatobj.Object) *release.Release {
	r := in.Open()
	prod, err := bitcode.Producer(r, r.Size())
	if err != nil {
		return nil
	}
	v, ok := strings.CutPrefix(prod, "LLVM")
	if !ok {
		return nil
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return nil
	}
	rel, err := release.Lookup(n)
	if err != nil {
		return nil
	}
	return rel
}

// compilerRelease returns the release of the clang that made f, as its
// .comment section says (clang writes "clang version 19.1.7" there), or 0.
func compilerRelease(f *elfobj.File) int {
	for _, s := range f.Sections {
		if s.Name != ".comment" {
			continue
		}
		sr := s.Open()
		b := make([]byte, min(sr.Size(), 4096))
		n, _ := sr.ReadAt(b, 0)
		if m := clangVersion.FindSubmatch(b[:n]); m != nil {
			v, _ := strconv.Atoi(string(m[1]))
			return v
		}
	}
	return 0
}

func hasOffload(f *elfobj.File) bool {
	for _, s := range f.Sections {
		if s.Type == elfobj.SHT_LLVM_OFFLOADING || strings.HasPrefix(s.Name, "omp_offloading_entries") ||
			s.Name == "llvm_offload_entries" || strings.HasPrefix(s.Name, "__CLANG_OFFLOAD_BUNDLE__") ||
			strings.HasPrefix(s.Name, ".llvm.offloading") {
			return true
		}
	}
	return false
}

// devImage is one device image of an input.
type devImage struct {
	im  *offloadbinary.Image
	r   *io.SectionReader
	ref imageRef
}

// images returns the device images of in that the link uses: of its
// OffloadBinaries (not those of the -r link of a release's wrapper), or
// for LLVM 13 and 14 the OpenMP device code of a bundled object and of
// clang 14's image sections.
func (p *planner) images(in *fatobj.Object, file string, obj int) ([]devImage, error) {
	var out []devImage
	for i, im := range in.Images {
		switch {
		case p.legacy && (im.Source == fatobj.SourceBundled || im.Source == fatobj.SourceImageSection) && im.OffloadKind == offload.OffloadOpenMP:
		case p.legacy || im.Source != fatobj.SourceBinary && im.Source != fatobj.SourceBitcode:
			continue
		case im.Section != "" && im.Section == p.rel.Wrapper.RelocatableSection:
			// The image of a -r link, linked already: the object's own
			// registration code registers it. (LLVM's wrappers take it into
			// the device link, whose image then needs the temporary file.)
			continue
		case im.OffloadKind != offload.OffloadOpenMP && im.OffloadKind != offload.OffloadHIP && im.OffloadKind != offload.OffloadCUDA:
			continue
		}
		r, err := im.Open()
		if err != nil {
			return nil, err
		}
		out = append(out, devImage{&im.Image, r, imageRef{file, obj, i}})
	}
	return out, nil
}

// deviceSymbols returns the symbols of a device image, named in the
// image's target's name space.
func deviceSymbols(t string, d devImage) ([]ldsym.Symbol, error) {
	var head [4]byte
	n, _ := d.r.ReadAt(head[:], 0)
	var out []ldsym.Symbol
	switch {
	case bitcode.IsBitcode(head[:n]):
		syms, err := bitcode.Symbols(d.r, d.r.Size())
		if err != nil {
			return nil, err
		}
		for _, s := range syms {
			if s.Global() && !s.FormatSpecific() {
				out = append(out, ldsym.Symbol{Name: t + s.Name, Undefined: s.Undefined()})
			}
		}
	case n == 4 && string(head[:]) == "\x7fELF":
		f, err := elfobj.Read(d.r, d.r.Size())
		if err != nil {
			return nil, err
		}
		return ldsym.FileSymbols(f, t)
	}
	return out, nil
}

func imageSpace(im *offloadbinary.Image) string {
	return "\x00" + im.OffloadKind.String() + "\x00" + im.Triple() + "\x00" + im.Arch() + "\x00"
}

// deviceSymbolsOf returns the device symbols of an input's images, each in
// its target's name space, and whether one image is of an architecture
// that --should-extract names. The old driver's images give none.
func (p *planner) deviceSymbolsOf(ims []devImage) ([]ldsym.Symbol, bool, error) {
	var syms []ldsym.Symbol
	forced := false
	if p.legacy {
		return nil, false, nil
	}
	for _, d := range ims {
		s, err := deviceSymbols(imageSpace(d.im), d)
		if err != nil {
			return nil, false, err
		}
		syms = append(syms, s...)
		forced = forced || slices.Contains(p.opt.ShouldExtract, d.im.Arch())
	}
	return syms, forced, nil
}

// input takes one input of the host link: an object, or an archive's
// members as the link pulls them.
func (p *planner) input(hi hostInput, f *fatobj.File) error {
	ins := f.Objects
	if f.Format != fatobj.FormatArchive && f.Format != fatobj.FormatThinArchive {
		for oi, in := range ins {
			ims, err := p.images(in, hi.path, oi)
			if err != nil {
				return ferr.Named(in.Name, err)
			}
			if in.ELF == nil {
				if err := p.use(in, ims); err != nil {
					return err
				}
				continue
			}
			syms, _, err := p.deviceSymbolsOf(ims)
			if err != nil {
				return ferr.Named(in.Name, err)
			}
			p.cxx = p.cxx || IsCPlusPlus(in.ELF)
			if _, err := p.resolver.Add(ldsym.Input{Object: in.ELF, Symbols: syms}); err != nil {
				return ferr.Named(in.Name, err)
			}
			if err := p.use(in, ims); err != nil {
				return err
			}
		}
		return nil
	}
	members := make([]ldsym.Member, len(ins))
	imgs := make([][]devImage, len(ins))
	forced := make([]bool, len(ins))
	for i, in := range ins {
		if in.ELF == nil {
			continue
		}
		host, err := ldsym.FileSymbols(in.ELF, "")
		if err != nil {
			return ferr.Named(in.Name, err)
		}
		ims, err := p.images(in, hi.path, i)
		if err != nil {
			return ferr.Named(in.Name, err)
		}
		imgs[i] = ims
		dev, force, err := p.deviceSymbolsOf(ims)
		if err != nil {
			return ferr.Named(in.Name, err)
		}
		forced[i] = force
		for _, s := range append(host, dev...) {
			if !s.Undefined {
				members[i].Defines = append(members[i].Defines, s.Name)
			}
		}
		f := in.ELF
		members[i].Load = func() (*elfobj.File, error) { return f, nil }
		members[i].Symbols = func() ([]ldsym.Symbol, error) { return dev, nil }
	}
	pulled, err := p.resolver.Add(ldsym.Input{Members: members, WholeArchive: hi.whole})
	if err != nil {
		return ferr.Named(hi.path, err)
	}
	got := map[int]bool{}
	for _, i := range pulled {
		got[i] = true
	}
	for i := range ins {
		if forced[i] && !got[i] {
			pulled = append(pulled, i)
		}
	}
	for _, i := range pulled {
		if ins[i].ELF == nil {
			continue
		}
		p.cxx = p.cxx || IsCPlusPlus(ins[i].ELF)
		if err := p.use(ins[i], imgs[i]); err != nil {
			return err
		}
	}
	return nil
}

// use records the device images of an input the link takes, and checks the
// input against the release.
func (p *planner) use(in *fatobj.Object, ims []devImage) error {
	if in.ELF != nil && hasOffload(in.ELF) {
		var origin *entries.Origin
		var err error
		if p.rel == release.Default() {
			// What the object read once (fatobj reads as the default).
			if origin, err = in.Origin(); err != nil {
				return ferr.Named(in.Name, err)
			}
		} else if origin, err = entries.Mixing(in.ELF, p.rel); err != nil {
			return ferr.Named(in.Name, err)
		}
		if links := origin.Links(); links != 0 && !links.Has(p.rel.Major) {
			return fmt.Errorf("%s: %w: made by %s, which the wrapper of %v (from %s) does not link; `goffload check` tells why, `goffload convert --llvm %d` converts it",
				in.Name, ErrMismatch, origin.Made(), p.rel, p.relFrom, p.rel.Major)
		}
		p.used = append(p.used, entries.Input{Name: in.Name, Origin: origin})
	}
	for _, d := range ims {
		if err := p.add(in, d); err != nil {
			return err
		}
	}
	return nil
}

// add plans the extraction of one device image for its target.
func (p *planner) add(in *fatobj.Object, d devImage) error {
	return p.addTo(targetID{d.im.Triple(), d.im.Arch()}, d.im.OffloadKind, in, d)
}

// addTo plans the extraction of one device image for the device link of
// target id (its own, or another it is compatible with).
func (p *planner) addTo(id targetID, kind offload.OffloadKind, in *fatobj.Object, d devImage) error {
	t := &target{kind: kind, triple: id.triple, arch: id.arch}
	if old, ok := p.byKey[t.key()]; ok {
		t = old
	} else {
		p.byKey[t.key()] = t
		p.targets = append(p.targets, t)
	}
	stem := in.Name
	if i := strings.LastIndexByte(stem, '('); i >= 0 && strings.HasSuffix(stem, ")") {
		stem = stem[i+1 : len(stem)-1]
	}
	stem = filepath.Base(stem)
	stem = strings.TrimSuffix(stem, filepath.Ext(stem))
	// LLVM's wrapper names every extracted image .o, bitcode too; 16's,
	// and the old driver's, by the image's kind (.cubin).
	ext := "o"
	if p.legacy || p.deviceLinkStyle() == release.DeviceLinkClang16 {
		if ext = d.im.Kind.Extension(); ext == "" {
			ext = "o"
		}
	}
	var head [4]byte
	if n, _ := d.r.ReadAt(head[:], 0); bitcode.IsBitcode(head[:n]) {
		t.nbitcode++
	}
	if f, _ := d.im.Lookup("feature"); !idFeatures(t.arch, f) {
		t.features = true
	}
	name, err := p.tempName(safeName(fmt.Sprintf("%s-%s-%s", stem, d.im.Triple(), d.im.Arch())), "."+safeName(ext))
	if err != nil {
		return &ferr.InFile{Name: in.Name, Err: err}
	}
	t.images = append(t.images, &extracted{from: in.Name, path: name, src: d.ref, r: d.r, feature: feature(d.im)})
	return nil
}

// idFeatures reports whether the features of an image's "feature" string
// (clang's "+xnack,+xnack" for gfx90a:xnack+: each of the target ID's
// features, twice) are all features of its target ID arch.
func idFeatures(arch, feature string) bool {
	if feature == "" {
		return true
	}
	_, id, _ := strings.Cut(arch, ":")
	var have []string
	for _, f := range strings.Split(id, ":") {
		if n := len(f); n > 1 && (f[n-1] == '+' || f[n-1] == '-') {
			have = append(have, f[n-1:]+f[:n-1])
		}
	}
	for _, f := range strings.Split(feature, ",") {
		if !slices.Contains(have, f) {
			return false
		}
	}
	return true
}

// tempName returns a new temporary file name base+ext: in the current
// folder with SaveTemps, as the release's wrapper names it, else in the
// temporary folder. The parts come from the inputs: the name must stay in
// its folder, and a name that begins with '-' (an archive member "-T.o")
// is given as "./-T...", so that no command it is passed to reads it as
// an option.
func (p *planner) tempName(base, ext string) (string, error) {
	base = safeName(base)
	if len(base) > 160 {
		base = base[:160] // a name from the inputs: within NAME_MAX
	}
	name := base + ext
	key := base + "\x00" + ext
	for i := p.next[key] + 1; p.names[name]; i++ {
		name = base + "." + strconv.Itoa(i) + ext
		p.next[key] = i
	}
	if err := atomicfile.CheckName(name); err != nil {
		return "", err
	}
	p.names[name] = true
	if p.l.TempDir != "" {
		name = filepath.Join(p.l.TempDir, name)
	}
	return notOption(name), nil
}

// notOption returns path so that no command reads it as an option: with
// "./" before it if it begins with '-'.
func notOption(path string) string {
	if strings.HasPrefix(path, "-") {
		return "./" + path
	}
	return path
}

// findClang returns the release's clang: beside the wrapper's release in
// /usr/lib/llvm-N/bin, or clang-N on $PATH.
func (p *planner) findClang() string {
	if p.opt.DeviceClang != "" {
		return p.opt.DeviceClang
	}
	n := strconv.Itoa(p.rel.Major)
	for _, c := range []string{"/usr/lib/llvm-" + n + "/bin/clang"} {
		if p.src.regular(c) {
			return c
		}
	}
	if c, err := p.src.lookPath("clang-" + n); err == nil {
		return c
	}
	return "clang-" + n
}

// findGold returns the release's LLVMgold.so, the linker plugin of LTO:
// in the lib folder beside the release's clang (links followed), else in
// /usr/lib/llvm-N/lib; "" if there is none.
func (p *planner) findGold() string {
	var cands []string
	if c, err := p.src.lookPath(p.findClang()); err == nil {
		if real, err := p.src.evalSymlinks(c); err == nil {
			cands = append(cands, filepath.Join(filepath.Dir(filepath.Dir(real)), "lib", "LLVMgold.so"))
		}
	}
	cands = append(cands, fmt.Sprintf("/usr/lib/llvm-%d/lib/LLVMgold.so", p.rel.Major))
	for _, c := range cands {
		if p.src.regular(c) {
			return c
		}
	}
	return ""
}

// findLLC returns the release's llc: Options.LLC, else beside
// Options.DeviceClang when that names a folder, else in /usr/lib/llvm-N/bin,
// else llc-N on $PATH.
func (p *planner) findLLC() string {
	if p.opt.LLC != "" {
		return p.opt.LLC
	}
	return p.findLLVMTool("llc")
}

// findLLVMTool returns the release's LLVM tool name: beside DeviceClang,
// else in /usr/lib/llvm-N/bin, else NAME-N on $PATH.
func (p *planner) findLLVMTool(name string) string {
	var dirs []string
	if c := p.opt.DeviceClang; c != "" && strings.ContainsRune(c, filepath.Separator) {
		dirs = append(dirs, filepath.Dir(c))
	}
	n := strconv.Itoa(p.rel.Major)
	for _, d := range append(dirs, "/usr/lib/llvm-"+n+"/bin") {
		c := filepath.Join(d, name)
		if p.src.regular(c) {
			return c
		}
	}
	if c, err := p.src.lookPath(name + "-" + n); err == nil {
		return c
	}
	return name + "-" + n
}

// runtimeDir is the folder of libomp and libomptarget of a driver link.
func (p *planner) runtimeDir() string {
	if p.opt.RuntimeDir != "" {
		return p.opt.RuntimeDir
	}
	return fmt.Sprintf("/usr/lib/llvm-%d/lib", p.rel.Major)
}

// IsCPlusPlus reports whether an object's host code is C++'s, for a driver
// link that must link as clang++ does (the C++ library and libm, on the host
// and the device): it has a symbol of C++'s (a mangled name, _Z..., the C++
// ABI's __cxa_... and __gxx_personality_v0, or a global constructor
// _GLOBAL__sub_I_...). A C++ file with none (main, calling C functions
// only) cannot be told from C's: name the language ([Options.Language],
// goffload link --lang c++), or link with -lstdc++.
func IsCPlusPlus(f *elfobj.File) bool {
	syms, err := f.Symbols()
	if err != nil {
		return false
	}
	for _, s := range syms {
		if cxxSymbol(s.Name) {
			return true
		}
	}
	return false
}

func cxxSymbol(name string) bool {
	return strings.HasPrefix(name, "_Z") || strings.HasPrefix(name, "__cxa_") || name == "__gxx_personality_v0" ||
		strings.HasPrefix(name, "_GLOBAL__sub_I_")
}

// cxxLink reports whether a driver link links as clang++ does: the
// language asked for, else an input of C++'s, or the C++ library named.
func (p *planner) cxxLink() bool {
	switch p.opt.Language {
	case "c++":
		return true
	case "c":
		return false
	}
	return p.cxx || cxxLibraries(p.opt.LinkerArgs)
}

// cxxLibraries reports whether a driver's link arguments name the C++
// library (-lstdc++, -lc++): a C++ program's link.
func cxxLibraries(args []string) bool {
	for i, a := range args {
		if a == "-lstdc++" || a == "-lc++" || a == "-l" && i+1 < len(args) && (args[i+1] == "stdc++" || args[i+1] == "c++") {
			return true
		}
	}
	return false
}

// libArgs returns the host linker's library arguments that a wrapper of
// style d passes to a CPU target's device link, in order (see
// release.DeviceLink). From 17 they are what the wrapper's own option table
// reads of the host link's argv (see wrapperLibArgs).
func (p *planner) libArgs(d release.DeviceLink) []string {
	if d >= release.DeviceLinkClang17 {
		return wrapperLibArgs(p.ldArgs, p.src.head)
	}
	var out []string
	ld := d == release.DeviceLinkLD
	args := p.ldArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() (string, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case a == "-L" || a == "-l" || a == "-rpath" || a == "--rpath":
			if v, ok := next(); ok {
				out = append(out, strings.Replace(a, "--rpath", "-rpath", 1), v)
			}
		case strings.HasPrefix(a, "-L") || strings.HasPrefix(a, "-l") && !ldValueOptions[a]:
			out = append(out, a[:2], a[2:])
		case (a == "-dynamic-linker" || a == "--dynamic-linker") && ld:
			if v, ok := next(); ok {
				out = append(out, "-dynamic-linker", v)
			}
		case (a == "--as-needed" || a == "--no-as-needed") && ld:
			out = append(out, a)
		case ldValueOptions[a]:
			i++
		}
	}
	return out
}

// wrapperLibArgs returns what the wrapper of 17 and later passes from the
// host link's argv to a CPU target's device link, as its option table
// (LinkerWrapperOpts.td) reads the argv: -L, -l and -rpath, the
// --whole-archive switches (as -Wl,), and every input file that is an
// archive or a shared object, in their order. The table knows no other
// option taking a value, so the value of one (the dynamic linker of
// -dynamic-linker, the LLVMgold.so of an LTO link's -plugin) is an input
// to it, and goes to the device link when it is a shared object, as
// LLVM's wrapper passes it.
func wrapperLibArgs(args []string, head func(path string) []byte) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() (string, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		switch {
		case a == "-o" || a == "--output" || a == "-mllvm":
			next()
		case a == "-L" || a == "--library-path" || a == "-library-path":
			if v, ok := next(); ok {
				out = append(out, "-L", v)
			}
		case a == "-l":
			if v, ok := next(); ok {
				out = append(out, "-l", v)
			}
		case a == "--library" || a == "-library":
			// An alias of -L in the wrapper's table.
			if v, ok := next(); ok {
				out = append(out, "-L", v)
			}
		case a == "-rpath" || a == "--rpath":
			if v, ok := next(); ok {
				out = append(out, "-rpath", v)
			}
		case strings.HasPrefix(a, "--rpath=") || strings.HasPrefix(a, "-rpath="):
			_, v, _ := strings.Cut(a, "=")
			out = append(out, "-rpath", v)
		case strings.HasPrefix(a, "--library-path=") || strings.HasPrefix(a, "-library-path="):
			_, v, _ := strings.Cut(a, "=")
			out = append(out, "-L", v)
		case strings.HasPrefix(a, "-o"):
		case strings.HasPrefix(a, "-L"):
			out = append(out, "-L", a[2:])
		case strings.HasPrefix(a, "-l"):
			out = append(out, "-l", a[2:])
		case a == "--whole-archive" || a == "-whole-archive":
			out = append(out, "-Wl,--whole-archive")
		case a == "--no-whole-archive" || a == "-no-whole-archive":
			out = append(out, "-Wl,--no-whole-archive")
		case strings.HasPrefix(a, "-") && a != "-":
			// An option the table does not know: its value, if any, is
			// read as an input.
		case libraryHead(head(a)):
			out = append(out, a)
		}
	}
	return out
}

// libraryHead reports whether an input file of the host link that starts
// with head (its first bytes) is an archive or an ELF shared object, by its
// contents (identify_magic).
func libraryHead(head []byte) bool {
	n := len(head)
	if n >= 8 && (string(head[:8]) == "!<arch>\n" || string(head[:8]) == "!<thin>\n") {
		return true
	}
	if n < 18 || string(head[:4]) != "\x7fELF" {
		return false
	}
	var typ uint16
	if head[5] == 2 { // ELFDATA2MSB
		typ = uint16(head[16])<<8 | uint16(head[17])
	} else {
		typ = uint16(head[17])<<8 | uint16(head[16])
	}
	return elf.Type(typ) == elf.ET_DYN
}

// deviceLink returns the device link command of t that links files (t's
// images, or the object of its device LTO) into out, as the release's
// wrapper runs it.
func (p *planner) deviceLink(t *target, out string, files []string) (string, []string, error) {
	d := p.deviceLinkStyle()
	archFlag := func() []string {
		a := t.arch
		switch {
		case t.amdgpu():
			return []string{"-mcpu=" + a}
		case a == "" && d < release.DeviceLinkClang22:
			return []string{"-march=native"}
		case a == "" || a == "generic":
			return nil
		}
		return []string{"-march=" + a}
	}
	devLinker := p.targetArgs(p.opt.DeviceLinkerArgs, t.triple)
	var flags []string
	if p.opt.DeviceDebug {
		flags = append(flags, "-g")
	}
	if p.opt.SaveTemps && d < release.DeviceLinkClang22 {
		flags = append(flags, "-save-temps")
	}
	if p.opt.EmbedBitcode && d == release.DeviceLinkClang17 {
		// 20 and 21 (15 to 19 run the LTO themselves: jitSteps).
		flags = append(flags, "-Wl,--lto-emit-llvm")
	}
	if p.opt.Verbose && d < release.DeviceLinkClang22 {
		flags = append(flags, "-v")
	}
	switch d {
	case release.DeviceLinkNone:
		args := []string{"--target=" + t.triple}
		if t.arch != "" && t.arch != "generic" {
			args = append(args, "-march="+t.arch)
		}
		args = append(args, "-O2", "-fopenmp", "-shared", "-Wl,-Bsymbolic", "-o", out)
		args = append(args, files...)
		return p.findClang(), append(args, "-L"+p.runtimeDir()), nil
	case release.DeviceLinkLD:
		if !t.cpu() {
			return "", nil, fmt.Errorf("%w: the device link of %s for %v (LLVM 15 links it with lld and the vendor's tools)", goffload.ErrUnsupported, t.name(), p.rel)
		}
		var args []string
		if emu := p.host.emulation; emu != "" {
			args = append(args, "-m", emu)
		}
		args = append(args, "-shared")
		args = append(args, p.libArgs(d)...)
		args = append(args, "-Bsymbolic", "-o", out)
		args = append(args, files...)
		return p.opt.Linker, append(args, devLinker...), nil
	case release.DeviceLinkClang16:
		args := []string{"-o", out, "--target=" + t.triple}
		args = append(args, archFlag()...)
		args = append(args, "-"+p.opt.OptLevel, "-Wl,--no-undefined")
		if t.cpu() {
			args = append(args, "-Bsymbolic", "-shared")
			args = append(args, p.libArgs(d)...)
		}
		args = append(args, flags...)
		args = append(args, p.cudaPathArg(t)...)
		for _, a := range devLinker {
			args = append(args, "-Wl,"+a)
		}
		return p.findClang(), append(args, files...), nil
	case release.DeviceLinkClang17:
		args := []string{"--no-default-config", "-o", out, "--target=" + t.triple}
		args = append(args, archFlag()...)
		args = append(args, "-"+p.opt.OptLevel)
		if !t.nvptx() {
			args = append(args, "-Wl,--no-undefined")
		}
		args = append(args, files...)
		if t.cpu() {
			args = append(args, "-Wl,-Bsymbolic", "-shared")
			args = append(args, p.libArgs(d)...)
		}
		args = append(args, p.mllvmArgs("-mllvm")...)
		args = append(args, flags...)
		args = append(args, p.cudaPathArg(t)...)
		return p.findClang(), append(args, devLinker...), nil
	}
	// -dumpdir: the image's name beside the program, as the wrapper names
	// it from -o as given (/tmp/sub/prog.x86_64..img.).
	dumpdir := filepath.Join(filepath.Dir(p.host.output), filepath.Base(out)) + "."
	args := []string{"--no-default-config", "-o", out, "-dumpdir", dumpdir, "--target=" + t.triple}
	args = append(args, archFlag()...)
	if t.amdgpu() {
		args = append(args, "-flto") // whatever the inputs
	}
	for _, o := range p.opt.LLVMOptions {
		args = append(args, "-Xlinker", "--plugin-opt="+o.Arg)
	}
	if !t.nvptx() && !t.spirv() {
		args = append(args, "-Wl,--no-undefined")
	}
	args = append(args, files...)
	if t.cpu() {
		args = append(args, "-Wl,-Bsymbolic", "-shared")
		args = append(args, p.libArgs(d)...)
	}
	args = append(args, p.mllvmArgs("-Xlinker")...)
	if p.opt.SaveTemps && (t.nvptx() || t.amdgpu() || t.cpu() && strings.HasSuffix(p.opt.Linker, "lld")) {
		// The device linker keeps its LTO's files too, where it is one
		// that does LTO (clang-nvlink-wrapper, ld.lld).
		args = append(args, "-Wl,--save-temps")
	}
	if p.opt.EmbedBitcode {
		args = append(args, "-Wl,--lto-emit-llvm")
	}
	for _, a := range devLinker {
		args = append(args, "-Xlinker", a)
	}
	args = append(args, p.targetArgs(p.opt.DeviceCompilerArgs, t.triple)...)
	if p.opt.DeviceDebug {
		args = append(args, "-g")
	}
	return p.findClang(), args, nil
}

// ltoLevel matches the --opt-level values whose device LTO goffload runs
// as LLVM 17-21's wrapper does (Os and Oz are not digits to it).
var ltoLevel = regexp.MustCompile(`^O[0-3]$`)

// deviceLTO reports whether LLVM 17-21's wrapper runs the LTO of t's
// images itself, and goffload does it as that wrapper does (see
// [planner.ltoSteps]): a HIP AMDGPU target whose images are all bitcode.
// The wrapper does so too in the cases below, which goffload has not
// compared with it and still hands to clang as bitcode (lld's LTO then lays
// the code object out otherwise, always optimises at O2 and refuses target
// IDs with features): bitcode mixed with device objects; a "feature" string
// beyond the target ID's features (which the wrapper gives its LTO as
// -mattr, and the module's functions hold already); --device-linker or
// --device-compiler arguments for the target; --device-debug;
// --opt-level=Os or Oz; OpenMP's AMDGPU targets; NVPTX targets (CUDA,
// OpenMP).
func (p *planner) deviceLTO(t *target) bool {
	if p.deviceLinkStyle() != release.DeviceLinkClang17 || !t.amdgpu() ||
		t.kind != offload.OffloadHIP || t.arch == "" || len(t.images) == 0 || t.nbitcode != len(t.images) || t.features ||
		p.opt.DeviceDebug || !ltoLevel.MatchString(p.opt.OptLevel) {
		return false
	}
	return len(p.targetArgs(p.opt.DeviceLinkerArgs, t.triple)) == 0 && len(p.targetArgs(p.opt.DeviceCompilerArgs, t.triple)) == 0
}

// targetArgs returns the arguments of list that go to the device tools of
// triple, as the release's wrapper reads TRIPLE=ARG: 15 to 19 take the text
// before the first '=' as the triple whatever it is (an option A=B given
// to every target goes to none), 20 and later only where it is one.
func (p *planner) targetArgs(list []TargetArg, triple string) []string {
	var out []string
	for _, a := range list {
		if p.rel.Wrapper.TripleBeforeFirstEquals {
			before, after, ok := strings.Cut(a.value(), "=")
			switch {
			case !ok:
				out = append(out, before)
			case before == triple:
				out = append(out, after)
			}
			continue
		}
		if a.Triple == "" || a.Triple == triple {
			out = append(out, a.Arg)
		}
	}
	return out
}

// ltoSteps plans the device LTO of t as LLVM 17-21's wrapper runs it in
// its own process, and returns the file that t's device link takes instead
// of the images (one object, as the wrapper gives clang). The wrapper's
// LTO optimises the images together at --opt-level and generates code
// without function or data sections; goffload has lld optimise them
// (--lto-emit-llvm: the optimised module, which is the wrapper's
// OUT.TRIPLE.ID.postopt.bc byte for byte) and llc generate the object for
// the processor alone (the target ID's features come from the module's
// functions). With SaveTemps, as the wrapper does, llc writes assembly
// (OUT.TRIPLE.ID.s), which the device link's clang -save-temps assembles
// into OUT.TRIPLE.ID.o; the code object is the same.
func (p *planner) ltoSteps(t *target) (string, error) {
	n := strings.TrimPrefix(p.opt.OptLevel, "O")
	cpu, _, _ := strings.Cut(t.arch, ":")
	base := fmt.Sprintf("%s.%s.%s", filepath.Base(p.host.output), t.triple, t.arch)
	bc, err := p.tempName(base, ".postopt.bc")
	if err != nil {
		return "", err
	}
	ext := ".o"
	if p.opt.SaveTemps {
		ext = ".s"
		if _, err := p.tempName(base, ".o"); err != nil { // clang -save-temps writes it
			return "", err
		}
	}
	obj, err := p.tempName(base, ext)
	if err != nil {
		return "", err
	}
	var files []string
	for _, x := range t.images {
		files = append(files, x.path)
	}
	args := []string{"--no-default-config", "-o", bc, "--target=" + t.triple, "-mcpu=" + cpu, "-Wl,--no-undefined"}
	args = append(args, files...)
	args = append(args, "-Wl,--lto-emit-llvm", "-Wl,--lto-O"+n)
	for _, o := range p.opt.LLVMOptions {
		args = append(args, "-Xlinker", "-mllvm="+o.Arg)
	}
	p.l.Steps = append(p.l.Steps, Step{Kind: StepDeviceLTO, Target: t.name(), Tool: p.findClang(), Args: args, Inputs: files, Outputs: []string{bc}})
	args = []string{"-O" + n, "-mtriple=" + t.triple, "-mcpu=" + cpu}
	if p.opt.SaveTemps {
		args = append(args, "-filetype=asm", "--asm-verbose=false")
	} else {
		args = append(args, "-filetype=obj")
	}
	for _, o := range p.opt.LLVMOptions {
		args = append(args, o.Arg)
	}
	args = append(args, bc, "-o", obj)
	p.l.Steps = append(p.l.Steps, Step{Kind: StepCodegen, Target: t.name(), Tool: p.findLLC(), Args: args, Inputs: []string{bc}, Outputs: []string{obj}})
	return obj, nil
}

// deviceLinkStyle is the release's device link; a driver link of LLVM 15
// links with clang, as 16 does (its host linker is a driver, not ld).
func (p *planner) deviceLinkStyle() release.DeviceLink {
	if d := p.rel.Link.Device; d != release.DeviceLinkLD || !p.opt.Driver {
		return d
	}
	return release.DeviceLinkClang16
}

// linkedName is the release's name of a target's linked image.
func (p *planner) linkedName(t *target) (string, error) {
	out := filepath.Base(p.host.output)
	archName, _, _ := strings.Cut(t.triple, "-")
	arch := t.arch
	switch p.rel.Link.Device {
	case release.DeviceLinkNone:
		return p.tempName(fmt.Sprintf("%s.%s.%s", out, t.triple, arch), ".img")
	case release.DeviceLinkLD:
		return p.tempName(fmt.Sprintf("%s-%s-%s", out, archName, arch), ".out")
	case release.DeviceLinkClang16, release.DeviceLinkClang17:
		if arch == "" && t.cpu() {
			arch = "native"
		}
	default:
		if arch == "generic" {
			arch = ""
		}
	}
	return p.tempName(fmt.Sprintf("%s.%s.%s", out, archName, arch), ".img")
}

// wrapperName is the release's name of the registration object.
func (p *planner) wrapperName(kind offload.OffloadKind) (string, error) {
	out := filepath.Base(p.host.output)
	switch p.rel.Link.Device {
	case release.DeviceLinkLD:
		return p.tempName(out+"-wrapper", ".o")
	case release.DeviceLinkClang16:
		return p.tempName(out+".image.wrapper", ".o")
	}
	return p.tempName(out+"."+kind.String()+".image.wrapper", ".o")
}

// kindsOf returns the offload kinds of the targets, OpenMP first, as the
// wrapper wraps them.
func (p *planner) kindsOf() []offload.OffloadKind {
	var ks []offload.OffloadKind
	for _, k := range []offload.OffloadKind{offload.OffloadOpenMP, offload.OffloadCUDA, offload.OffloadHIP} {
		for _, t := range p.targets {
			if t.kind == k {
				ks = append(ks, k)
				break
			}
		}
	}
	return ks
}

// linkExeStep plans the host link of an MSVC host (lld-link's argv) as the
// release's wrapper runs it: its argv as the wrapper renders it, with the
// registration objects after the output option (there is no -r on COFF).
func (p *planner) linkExeStep(wrappers []string) error {
	if !p.rel.Link.LinkExeOptions {
		return fmt.Errorf("%w: the wrapper of %v does not read link.exe's command line (-out:, -libpath:) of an MSVC host", goffload.ErrUnsupported, p.rel)
	}
	args := wrapperLinkExeArgs(p.ldArgs, wrappers)
	var ins []string
	for _, in := range scanLinkExe(args, p.src.stat).inputs {
		ins = append(ins, in.path)
	}
	p.l.Steps = append(p.l.Steps, Step{Kind: StepHostLink, Tool: p.opt.Linker, Args: args,
		Inputs: appendNew(slices.Clone(wrappers), ins...), Outputs: []string{p.l.Output}})
	return nil
}
