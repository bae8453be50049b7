package link

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/respfile"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// steps plans every step after the inputs are read.
func (p *planner) steps() error {
	l, opt := p.l, p.opt
	hasOpenMP := false
	for _, t := range p.targets {
		hasOpenMP = hasOpenMP || t.kind == offload.OffloadOpenMP
	}
	if opt.Driver && !opt.Relocatable {
		args := slices.Clone(opt.LinkerArgs)
		if p.cxxLink() {
			// The C++ libraries, which clang++ passes to ld, and the
			// wrapper on to a CPU target's device link, before the runtime.
			args = append(args, "-lstdc++", "-lm")
		}
		if hasOpenMP {
			// The OpenMP runtime, as clang -fopenmp adds it.
			args = append(args, p.runtimeArgs(p.runtimeDir())...)
		}
		p.ldArgs, _ = driverToLD(args)
	}
	// Extract, then link, each target.
	p.extractSteps()
	for _, t := range p.targets {
		if t.override {
			continue // linked already
		}
		if p.jitLTO() {
			if err := p.jitSteps(t); err != nil {
				return err
			}
			continue
		}
		out, err := p.linkedName(t)
		if err != nil {
			return err
		}
		t.linked = out
		var ins []string
		for _, x := range t.images {
			ins = append(ins, x.path)
		}
		if p.inProcessLTO(t) {
			if ins, err = p.ltoObjectSteps(t); err != nil {
				return err
			}
		} else if p.deviceLTO(t) {
			obj, err := p.ltoSteps(t)
			if err != nil {
				return err
			}
			ins = []string{obj}
		}
		prog, args, err := p.deviceLink(t, out, ins)
		if err != nil {
			return err
		}
		if t.cpu() {
			// A CPU target's link reads the host link's libraries too.
			ins = appendNew(ins, linkedFiles(args, p.deviceLinkStyle() != release.DeviceLinkLD, p.src.stat)...)
		}
		l.Steps = append(l.Steps, Step{Kind: StepDeviceLink, Target: t.name(), Tool: prog, Args: args, Inputs: ins, Outputs: []string{out}})
	}
	var wrappers []string
	for _, k := range p.kindsOf() {
		var ts []*target
		for _, t := range p.targets {
			if t.kind == k {
				ts = append(ts, t)
			}
		}
		if p.rel.Link.SortImages {
			sortImages(ts)
		}
		w, err := p.wrapSteps(k, ts)
		if err != nil {
			return err
		}
		if w != "" {
			wrappers = append(wrappers, w)
		}
	}
	if opt.EmitFatbinOnly || opt.NoHostLink {
		if len(wrappers) > 0 {
			l.Wrapper = wrappers[0]
		}
		return nil
	}
	if len(wrappers) > 0 {
		l.Wrapper = wrappers[0]
	}
	return p.hostLinkSteps(wrappers)
}

// sortImages orders the linked images of one offload kind as the wrapper
// sorts them before bundling (llvm::sort, that is libstdc++'s std::sort,
// with "triple after, or arch after" as its less-than: arches descending,
// gfx90a before gfx1100). The comparison is not a strict weak order across
// triples, so the result is that of the algorithm: libstdc++'s insertion
// sort, which std::sort is for up to 16 elements.
func sortImages(ts []*target) {
	less := func(a, b *target) bool { return a.triple > b.triple || a.arch > b.arch }
	for i := 1; i < len(ts); i++ {
		v := ts[i]
		if less(v, ts[0]) {
			copy(ts[1:i+1], ts[:i])
			ts[0] = v
			continue
		}
		j := i
		for less(v, ts[j-1]) {
			ts[j] = ts[j-1]
			j--
		}
		ts[j] = v
	}
}

// runtimeArgs are the OpenMP runtime's arguments of a driver link.
func (p *planner) runtimeArgs(dir string) []string {
	return []string{"-L" + dir, "-Wl,--push-state,--no-as-needed", "-lomp", "-lomptarget", "-Wl,--pop-state", "-Wl,-rpath," + dir}
}

// own returns a step of goffload's own: `goffload step KIND ARGS...`.
func (p *planner) own(kind StepKind, target string, args []string, inputs, outputs []string) Step {
	tool := p.opt.Goffload
	if tool == "" {
		tool = "goffload"
	}
	args = append([]string{"step", string(kind), "--llvm", strconv.Itoa(p.rel.Major)}, args...)
	return Step{Kind: kind, Target: target, Tool: tool, Args: args, Inputs: inputs, Outputs: outputs, Goffload: true}
}

// extractSteps plans the extraction of the targets' images: a step for
// each input file that gives images, in the order of the files.
func (p *planner) extractSteps() {
	var order []string
	byFile := map[string]*Step{}
	for _, t := range p.targets {
		for _, x := range t.images {
			if x.library {
				continue // read where it is
			}
			s := byFile[x.src.file]
			if s == nil {
				st := p.own(StepExtract, "", []string{"--input", x.src.file}, thinFiles(x.src.file), nil)
				s = &st
				byFile[x.src.file] = s
				order = append(order, x.src.file)
			}
			s.Args = append(s.Args, fmt.Sprintf("%d:%d=%s", x.src.obj, x.src.img, x.path))
			s.Outputs = append(s.Outputs, x.path)
		}
	}
	for _, f := range order {
		p.l.Steps = append(p.l.Steps, *byFile[f])
	}
}

// wrapSteps plans the steps from the linked images of one offload kind to
// its registration object, and returns the object's name.
func (p *planner) wrapSteps(k offload.OffloadKind, ts []*target) (string, error) {
	l, opt := p.l, p.opt
	var flags []string
	if p.relocatable() {
		flags = append(flags, "--relocatable")
	}
	var linked []string
	for _, t := range ts {
		linked = append(linked, t.linked)
	}
	switch k {
	case offload.OffloadOpenMP:
		name, err := p.wrapperName(k)
		if err != nil {
			return "", err
		}
		args := append([]string{"--kind", "openmp", "--triple", opt.HostTriple}, flags...)
		args = append(args, "-o", name)
		for _, t := range ts {
			arch := t.arch
			if arch == "generic" {
				arch = "" // clang-linker-wrapper 22 writes "" for a generic image
			}
			if t.override && arch == "" {
				// No processor in the file's header: no arch at all.
				args = append(args, "--image", t.triple+"="+t.linked)
				continue
			}
			args = append(args, "--image", t.triple+"/"+arch+"="+t.linked)
		}
		l.Steps = append(l.Steps, p.own(StepWrap, k.String(), args, linked, []string{name}))
		return name, nil
	case offload.OffloadHIP:
		if err := bundle.CheckRelease(p.rel); err != nil {
			return "", err
		}
		fb, err := p.tempName(filepath.Base(p.host.output), ".hipfb")
		if err != nil {
			return "", err
		}
		if opt.EmitFatbinOnly {
			fb = p.host.output
		}
		var args []string
		if opt.Compress {
			// The wrapper passes -compress and -compression-level on;
			// the bundler's defaults do the rest.
			level := 0
			args = append(args, "--compress")
			if opt.CompressionLevel != nil {
				level = *opt.CompressionLevel
				args = append(args, fmt.Sprintf("--compression-level=%d", level))
			}
			if _, err := bundle.ReleaseCompressOptions(p.rel, bundle.MethodZstd, level); err != nil {
				return "", fmt.Errorf("--compress: %w", err)
			}
		}
		args = append(args, "-o", fb)
		for _, t := range ts {
			args = append(args, "--image", t.arch+"="+t.linked)
		}
		l.Steps = append(l.Steps, p.own(StepBundle, k.String(), args, linked, []string{fb}))
		if opt.EmitFatbinOnly {
			return "", nil
		}
		return p.gpuWrap(k, flags, fb)
	case offload.OffloadCUDA:
		fb, err := p.tempName(filepath.Base(p.host.output), ".fatbin")
		if err != nil {
			return "", err
		}
		if opt.EmitFatbinOnly {
			fb = p.host.output
		}
		// As the wrapper: fatbinary of the CUDA folder where it is there,
		// else the one PATH gives.
		tool := "fatbinary"
		if opt.CUDAPath != "" {
			if f := filepath.Join(opt.CUDAPath, "bin", "fatbinary"); p.src.regular(f) {
				tool = f
			}
		}
		image3 := p.rel.Link.FatbinImage3
		args := []string{"-64", "--create", fb}
		for _, t := range ts {
			if image3 {
				args = append(args, fmt.Sprintf("--image3=kind=elf,sm=%s,file=%s", strings.TrimPrefix(t.arch, "sm_"), t.linked))
			} else {
				args = append(args, fmt.Sprintf("--image=profile=%s,file=%s", t.arch, t.linked))
			}
		}
		l.Steps = append(l.Steps, Step{Kind: StepFatbinary, Target: k.String(), Tool: tool, Args: args, Inputs: linked, Outputs: []string{fb}})
		if opt.EmitFatbinOnly {
			return "", nil
		}
		return p.gpuWrap(k, flags, fb)
	}
	return "", fmt.Errorf("%w: offload kind %v", goffload.ErrUnsupported, k)
}

// gpuWrap plans the registration object of a CUDA or HIP fatbin.
func (p *planner) gpuWrap(k offload.OffloadKind, flags []string, fb string) (string, error) {
	name, err := p.wrapperName(k)
	if err != nil {
		return "", err
	}
	args := append([]string{"--kind", k.String(), "--triple", p.opt.HostTriple}, flags...)
	args = append(args, "-o", name, "--fatbin", fb)
	p.l.Steps = append(p.l.Steps, p.own(StepWrap, k.String(), args, []string{fb}, []string{name}))
	return name, nil
}

// relocatable reports whether the link is a relocatable offloading link
// (-r, 19 and later): the registration object made for it, and the merged
// object's entries sections renamed after it. 15 and 16's wrappers take -r
// as any linker option: the object they link registers its images as a
// program would.
func (p *planner) relocatable() bool {
	return p.opt.Relocatable && p.rel.Wrapper.RelocatableSection != ""
}

// hostLinkSteps plans the host link (and, for -r, the renaming after it).
func (p *planner) hostLinkSteps(wrappers []string) error {
	opt := p.opt
	if p.linkExe {
		return p.linkExeStep(wrappers)
	}
	out := p.host.output
	final := out
	if p.relocatable() && len(wrappers) > 0 {
		merged, err := p.tempName(filepath.Base(out)+".merged", ".o")
		if err != nil {
			return err
		}
		out = merged
	}
	var args []string
	if opt.Driver {
		args = insertDriver(opt.LinkerArgs, wrappers)
		if p.hasKind(offload.OffloadOpenMP) && !opt.Relocatable {
			args = append(args, p.runtimeArgs(p.runtimeDir())...)
		}
		if opt.Relocatable {
			args = append(args, "-nostdlib")
		}
		step := Step{Kind: StepHostLink, Tool: opt.Linker, Args: withOutput(args, out, true), Outputs: []string{out}}
		return p.addHostLink(step, wrappers, final)
	}
	// As LLVM's wrapper (15 to 24, measured) renders the linker's
	// arguments: -LDIR and -lNAME as two arguments, -r by its option's own
	// name where the wrapper reads it (19 and later: --relocatable), and the
	// output as -o OUT (-oOUT, --output=OUT and --output OUT alike), each
	// followed by the registration objects. Without -o, goffload adds
	// -o OUT and the objects at the end (LLVM's links none).
	last := -1 // the index of the last output's value: ld's output
	output := func(value string) {
		last = len(args) + 1
		args = append(append(args, "-o", value), wrappers...)
	}
	for i := 0; i < len(p.ldArgs); i++ {
		a := p.ldArgs[i]
		if v, span, ok := outputArg(p.ldArgs, i); ok && (span == 2 || v != "") {
			output(v)
			i += span - 1
			continue
		}
		switch {
		case len(a) > 2 && (strings.HasPrefix(a, "-L") || strings.HasPrefix(a, "-l")):
			args = append(args, a[:2], a[2:])
			continue
		case (a == "-r" || a == "-relocatable") && p.rel.Wrapper.RelocatableSection != "":
			a = "--relocatable"
		case ldValueOptions[a] && i+1 < len(p.ldArgs):
			args = append(args, a, p.ldArgs[i+1])
			i++
			continue
		}
		args = append(args, a)
	}
	if last < 0 {
		output(out)
	}
	args[last] = out // the temporary object for -r

	return p.addHostLink(Step{Kind: StepHostLink, Tool: opt.Linker, Args: args, Outputs: []string{out}}, wrappers, final)
}

// addHostLink adds the host link step (its inputs the files it names) and,
// for -r with registration objects, the finish step that writes final.
func (p *planner) addHostLink(step Step, wrappers []string, final string) error {
	l, opt := p.l, p.opt
	out := step.Outputs[0]
	ld := step.Args
	if opt.Driver {
		ld, _ = driverToLD(step.Args)
	}
	step.Inputs = appendNew(slices.Clone(wrappers), linkedFiles(ld, false, p.src.stat)...)
	l.Steps = append(l.Steps, step)
	if p.relocatable() && len(wrappers) > 0 {
		l.Steps = append(l.Steps, p.own(StepFinish, "", []string{"-o", final, out}, []string{out}, []string{final}))
	}
	return nil
}

func (p *planner) hasKind(k offload.OffloadKind) bool {
	for _, t := range p.targets {
		if t.kind == k {
			return true
		}
	}
	return false
}

// withOutput sets the -o of a linker's (or driver's) argv to out, adding it
// if there is none.
func withOutput(args []string, out string, driver bool) []string {
	args = slices.Clone(args)
	found := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if _, span, ok := outputArg(args, i); ok {
			switch {
			case span == 2:
				args[i+1] = out
			case strings.HasPrefix(a, "--output="):
				args[i] = "--output=" + out
			case a != "-o" && a != "--output":
				args[i] = "-o" + out
			}
			found = found || span == 2 || a != "-o" && a != "--output"
			i += span - 1
			continue
		}
		switch {
		case !driver && ldValueOptions[a]:
			i++
		case driver && driverValueOptions[a]:
			i++
		}
	}
	if !found {
		args = append(args, "-o", out)
	}
	return args
}

// insertDriver puts the registration objects before a driver's first input.
func insertDriver(args, objs []string) []string {
	at := len(args)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			at = i
			break
		}
		if driverValueOptions[a] {
			i++
		}
	}
	return append(slices.Clone(args[:at]), append(slices.Clone(objs), args[at:]...)...)
}

// Run runs the steps in order; the device links of the targets (each
// target's LTO, code generation and link in turn) at once, up to
// Options.Jobs targets. It makes TempDir first (a folder of Plan's naming
// must not exist yet); [Link.Close] removes it. With DryRun it prints the
// commands, in order, and runs none. The output is written whole or not
// at all.
func (l *Link) Run(ctx context.Context) (err error) {
	opt := l.opt
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	steps := slices.Clone(l.Steps)
	if opt.DryRun {
		jobs = 1 // the commands printed in the plan's order
	} else {
		if opt.TimeTrace != "" {
			l.trace = &timeTrace{start: time.Now()}
			defer func() {
				if werr := l.trace.write(opt.TimeTrace, opt.TimeTraceGranularity); err == nil {
					err = werr
				}
			}()
		}
		if err := l.makeTempDir(); err != nil {
			return err
		}
		// The host link writes beside the output, which replaces it only
		// when the link succeeds.
		for i := range steps {
			s := &steps[i]
			if s.Kind == StepHostLink && len(s.Outputs) == 1 && s.Outputs[0] == l.Output {
				pending, err := atomicfile.Reserve(l.Output)
				if err != nil {
					return err
				}
				l.discard = pending.Discard
				defer pending.Discard()
				s.Args = hostOutput(opt, s.Args, pending.Name)
				s.Outputs = []string{pending.Name}
				defer func() {
					if err == nil {
						err = pending.Commit()
					}
				}()
			}
		}
	}
	return l.runSteps(ctx, steps, jobs)
}

// RunStep runs step i alone, as a build system runs it: it makes the
// folders of the step's outputs, then runs its command (goffload's own
// steps within this program, through [RunCommand]). The step's inputs must
// be there: RunStep runs no other step.
func (l *Link) RunStep(ctx context.Context, i int) error {
	if i < 0 || i >= len(l.Steps) {
		return fmt.Errorf("%w: no step %d of %d", ErrUsage, i, len(l.Steps))
	}
	if l.opt.DryRun {
		return l.runStep(ctx, &l.Steps[i])
	}
	if err := l.makeTempDir(); err != nil {
		return err
	}
	return l.runStep(ctx, &l.Steps[i])
}

// makeTempDir makes TempDir, once: a folder of Plan's naming must not exist
// yet, and is removed by Close (and on a signal).
func (l *Link) makeTempDir() error {
	switch {
	case l.TempDir == "" || l.remove != nil:
		return nil
	case l.ownTmp:
		remove, err := atomicfile.MakeDir(l.TempDir)
		if err != nil {
			return err
		}
		l.remove = remove
		return nil
	}
	return os.MkdirAll(l.TempDir, 0o755)
}

// after lists, for each step, the earlier steps it must wait for: those
// that write a file it reads or writes, those that read a file it writes,
// the step before it in its target's device chain (LTO, codegen, device
// link), and a step that declares no files at all, which runs alone after
// every step before it. The steps' declared Inputs and Outputs are complete
// (each runs alone from them), so this is every order that matters.
func after(steps []Step) [][]int {
	writer := map[string]int{}
	readers := map[string][]int{}
	chain := map[string]int{}
	barrier, since := -1, 0
	deps := make([][]int, len(steps))
	for j := range steps {
		s := &steps[j]
		seen := map[int]bool{}
		add := func(i int) {
			if !seen[i] {
				seen[i] = true
				deps[j] = append(deps[j], i)
			}
		}
		if barrier >= 0 {
			add(barrier)
		}
		if !deviceStep(s.Kind) && len(s.Inputs) == 0 && len(s.Outputs) == 0 {
			for i := since; i < j; i++ {
				add(i)
			}
			barrier, since = j, j+1
		}
		if deviceStep(s.Kind) {
			if i, ok := chain[s.Target]; ok {
				add(i)
			}
			chain[s.Target] = j
		}
		for _, in := range s.Inputs {
			if i, ok := writer[in]; ok {
				add(i)
			}
		}
		for _, out := range s.Outputs {
			if i, ok := writer[out]; ok {
				add(i)
			}
			for _, i := range readers[out] {
				add(i)
			}
		}
		for _, in := range s.Inputs {
			readers[in] = append(readers[in], j)
		}
		for _, out := range s.Outputs {
			writer[out] = j
			delete(readers, out)
		}
		slices.Sort(deps[j])
	}
	return deps
}

// deviceStep reports whether steps of kind k make a target's linked image:
// a target's run in order, those of different targets at once.
func deviceStep(k StepKind) bool {
	return k == StepDeviceLTO || k == StepCodegen || k == StepDeviceLink
}

// runSteps runs the steps, jobs at a time, each once the steps it must
// follow ([after]) have finished: the device images of a thousand objects
// are written in parallel, and each target's device link starts when its
// images are there. With one job they run in the plan's order. A step that
// fails stops the steps that follow it, not those beside it (as LLVM's
// wrapper finishes the device links of the other targets); the error is
// that of the first step, in the plan's order, that failed.
func (l *Link) runSteps(ctx context.Context, steps []Step, jobs int) error {
	if jobs <= 1 || len(steps) <= 1 {
		for i := range steps {
			if err := l.runStep(ctx, &steps[i]); err != nil {
				return err
			}
		}
		return nil
	}
	deps := after(steps)
	done := make([]chan struct{}, len(steps))
	for i := range done {
		done[i] = make(chan struct{})
	}
	errs := make([]error, len(steps))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i := range steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[i])
			for _, d := range deps[i] {
				<-done[d]
				if errs[d] != nil {
					errs[i] = errSkipped
					return
				}
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = context.Cause(ctx)
				return
			}
			defer func() { <-sem }()
			errs[i] = l.runStep(ctx, &steps[i])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && err != errSkipped {
			return err
		}
	}
	return nil
}

// errSkipped marks a step not run because another failed.
var errSkipped = errors.New("step skipped")

var printMu sync.Mutex

// runStep prints the step (LLVM's wrapper prints its commands: the
// programs, and the bundling), then runs it.
func (l *Link) runStep(ctx context.Context, s *Step) error {
	opt := l.opt
	if opt.DryRun {
		l.printCommand(s)
		if l.cached(s) {
			l.wouldHit(ctx, s)
		}
		return nil
	}
	start := time.Now()
	defer l.trace.add(string(s.Kind), s.Target, start)
	var err error
	if l.cached(s) {
		err = l.runCached(ctx, s, func() error { return l.runCommand(ctx, s) })
	} else {
		err = l.runCommand(ctx, s)
	}
	if err == nil && s.Kind == StepWrap && opt.PrintWrappedModule {
		err = l.printWrapped(s.Outputs[0])
	}
	return err
}

// runCommand runs a step's command, after making the folders of its
// outputs.
func (l *Link) runCommand(ctx context.Context, s *Step) error {
	opt := l.opt
	l.printCommand(s)
	for _, out := range s.Outputs {
		if dir := filepath.Dir(out); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
	}
	if s.Goffload {
		if len(s.Args) == 0 || s.Args[0] != "step" {
			return fmt.Errorf("%w: %s: not a goffload step command", ErrUsage, s.Kind)
		}
		if err := RunCommand(ctx, s.Args[1:]); err != nil {
			return fmt.Errorf("%s: %w", s.Kind, err)
		}
		return nil
	}
	args := s.Args
	if !respfile.Fits(s.Tool, args) && s.Kind != StepFatbinary {
		// Too long for a command line: in a response file, as clang's
		// driver passes one (clang, ld and llc read them).
		dir := l.TempDir
		if dir == "" && len(s.Outputs) > 0 {
			dir = filepath.Dir(s.Outputs[0])
		}
		rsp, remove, err := atomicfile.TempFile(dir, "."+filepath.Base(s.Tool)+"-*.rsp", func(w io.Writer) error { return respfile.Write(w, args) })
		if err != nil {
			return err
		}
		defer remove()
		args = []string{"@" + rsp}
	}
	cmd := exec.CommandContext(ctx, s.Tool, args...)
	cmd.Stdout, cmd.Stderr = writer(opt.Stderr), writer(opt.Stderr)
	var tail *tailWriter
	if opt.Stderr == nil {
		// Nowhere to print what the tool says: its last words go into
		// the error, or the reason of a failure would be lost.
		tail = &tailWriter{max: maxToolTail}
		cmd.Stdout, cmd.Stderr = tail, tail
	}
	if len(s.Env) > 0 {
		cmd.Env = append(os.Environ(), s.Env...)
	}
	if err := atomicfile.Run(cmd); err != nil {
		if said := tail.String(); said != "" {
			return fmt.Errorf("'%s' %w: %w; it printed:\n%s", filepath.Base(s.Tool), errStepFailed, err, said)
		}
		return fmt.Errorf("'%s' %w: %w", filepath.Base(s.Tool), errStepFailed, err)
	}
	return nil
}

// maxToolTail bounds what of a failed tool's output an error keeps.
const maxToolTail = 4096

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
	cut bool
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > t.max {
		p, t.cut = p[len(p)-t.max:], true
	}
	if over := len(t.b) + len(p) - t.max; over > 0 {
		t.b, t.cut = append(t.b[:0], t.b[over:]...), true
	}
	t.b = append(t.b, p...)
	return n, nil
}

// String is the text kept, from the start of a line, "" for none (or a
// nil tailWriter).
func (t *tailWriter) String() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.b
	if t.cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
		b = append([]byte("[...]\n"), b...)
	}
	return strings.TrimRight(string(b), "\n")
}

// printCommand prints the step's command with Verbose, Print or DryRun, as
// LLVM's wrapper prints its commands (the programs, the bundling, and for
// -r the renaming of the merged object's sections, llvm-objcopy's there).
func (l *Link) printCommand(s *Step) {
	opt := l.opt
	if (!s.Goffload || s.Kind == StepBundle || s.Kind == StepFinish) && (opt.Verbose || opt.Print || opt.DryRun) {
		printMu.Lock()
		fmt.Fprintln(writer(opt.Stdout), FormatCommand(s))
		printMu.Unlock()
	}
}

func writer(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// FormatCommand prints a step as clang-linker-wrapper prints its commands
// (--dry-run, --wrapper-verbose): a space, the program in double quotes,
// then the arguments, quoted only where they must be. A step of goffload's
// own prints as `# goffload: KIND ARGS`. Where clang-linker-wrapper would
// print an argument's control characters as they are (a triple or an arch
// from an input may hold ESC, CR, newlines), it is printed in the shell's
// ANSI-C quotes ($'-march=a\x1b[2J\n'), so that nothing from the inputs
// reaches the terminal as control nor forges a line.
func FormatCommand(s *Step) string {
	var b strings.Builder
	args := s.Args
	if s.Goffload {
		b.WriteString("# goffload: " + string(s.Kind))
		if len(args) >= 2 && args[0] == "step" {
			args = args[2:]
		}
	} else {
		b.WriteString(` "` + s.Tool + `"`)
	}
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(quoteArg(a))
	}
	return b.String()
}

func quoteArg(a string) string {
	if !printable(a) {
		return ansiQuote(a)
	}
	if a != "" && !strings.ContainsAny(a, " \t\n\"\\$'") {
		return a
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`)
	return `"` + r.Replace(a) + `"`
}

// printable reports whether s prints as itself: valid UTF-8 of runes that
// strconv.IsPrint accepts (no control character, no format character such
// as U+202E); a space or a tab prints as itself in quotes.
func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !strconv.IsPrint(r) && r != '\t' {
			return false
		}
	}
	return true
}

// ansiQuote returns a in the shell's ANSI-C quotes ($'...', bash, zsh,
// ksh and POSIX sh of 2024): what does not print as itself written as \xHH
// (a byte, or a control character of ASCII) or \uHHHH / \UHHHHHHHH.
func ansiQuote(a string) string {
	b := []byte("$'")
	for i := 0; i < len(a); {
		r, n := utf8.DecodeRuneInString(a[i:])
		switch {
		case r == utf8.RuneError && n == 1 || r < utf8.RuneSelf && !strconv.IsPrint(r):
			b = fmt.Appendf(b, `\x%02x`, a[i])
		case r == '\'' || r == '\\':
			b = append(b, '\\', byte(r))
		case !strconv.IsPrint(r) || r == utf8.RuneError:
			if r > 0xffff {
				b = fmt.Appendf(b, `\U%08x`, r)
			} else {
				b = fmt.Appendf(b, `\u%04x`, r)
			}
		default:
			b = append(b, a[i:i+n]...)
		}
		i += n
	}
	return string(append(b, '\''))
}

func copyTo(path string, r io.Reader) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, r)
		return err
	})
}

// writeObject writes o to out whole or not at all.
func writeObject(out string, o *elfobj.Object) error {
	return atomicfile.Write(out, func(w io.Writer) error {
		_, err := elfobj.Write(w, o)
		return err
	})
}
