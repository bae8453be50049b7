package link

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/facts"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/wrap"
)

// steps plans every step after the inputs are read.
func (p *planner) steps() error {
	l, opt := p.l, p.opt
	if opt.Relocatable && facts.Of(p.rel).Wrapper.RelocatableSection == "" && len(p.targets) > 0 {
		return fmt.Errorf("%w: -r: %v has no relocatable offloading link", goffload.ErrUnsupported, p.rel)
	}
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
	for _, t := range p.targets {
		var ins, outs []string
		for _, x := range t.images {
			ins, outs = append(ins, x.from), append(outs, x.path)
		}
		images := t.images
		l.Steps = append(l.Steps, Step{Kind: StepExtract, Target: t.name(), Tool: "goffload", Inputs: ins, Outputs: outs,
			run: func() error {
				for _, x := range images {
					if err := copyTo(x.path, x.r); err != nil {
						return err
					}
				}
				return nil
			}})
	}
	for _, t := range p.targets {
		out, err := p.linkedName(t)
		if err != nil {
			return err
		}
		t.linked = out
		if opt.OverrideImage != "" {
			t.linked = opt.OverrideImage
			continue
		}
		var ins []string
		for _, x := range t.images {
			ins = append(ins, x.path)
		}
		if p.deviceLTO(t) {
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
		if facts.Of(p.rel).Link.SortImages {
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

// wrapSteps plans the steps from the linked images of one offload kind to
// its registration object, and returns the object's name.
func (p *planner) wrapSteps(k offload.OffloadKind, ts []*target) (string, error) {
	l, opt := p.l, p.opt
	wopt := wrap.Options{Release: p.rel, Triple: opt.HostTriple, Relocatable: opt.Relocatable}
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
		l.Steps = append(l.Steps, Step{Kind: StepWrap, Target: k.String(), Tool: "goffload", Inputs: linked, Outputs: []string{name},
			run: func() error {
				var bins []wrap.Binary
				for _, t := range ts {
					f, err := infile.Open(t.linked)
					if err != nil {
						return err
					}
					defer f.Close()
					arch := t.arch
					if arch == "generic" {
						arch = "" // clang-linker-wrapper 22 writes "" for a generic image
					}
					b, err := wrap.FromImage(p.rel, offload.LinkedImage(k, t.triple, arch), f.Section())
					if err != nil {
						return err
					}
					bins = append(bins, b)
				}
				o, err := wrap.OpenMP(wopt, bins)
				if err != nil {
					return err
				}
				return writeObject(name, o)
			}})
		return name, nil
	case offload.OffloadHIP:
		br, err := bundle.LookupRelease(p.rel.Major)
		if err != nil {
			return "", err
		}
		fb, err := p.tempName(filepath.Base(p.host.output), ".hipfb")
		if err != nil {
			return "", err
		}
		if opt.EmitFatbinOnly {
			fb = p.host.output
		}
		var ids []string
		for _, t := range ts {
			ids = append(ids, br.DeviceID(t.arch))
		}
		args := []string{"-type=o", fmt.Sprintf("-bundle-align=%d", bundle.HIPAlign)}
		var comp *bundle.CompressOptions
		if opt.Compress {
			// The wrapper passes -compress and -compression-level on;
			// the bundler's defaults do the rest.
			level := 0
			args = append(args, "-compress")
			if opt.CompressionLevel != nil {
				level = *opt.CompressionLevel
				args = append(args, fmt.Sprintf("-compression-level=%d", level))
			}
			c, err := br.CompressOptions(bundle.MethodZstd, level)
			if err != nil {
				return "", fmt.Errorf("--compress: %w", err)
			}
			comp = &c
		}
		l.Steps = append(l.Steps, Step{Kind: StepBundle, Target: k.String(), Tool: "goffload",
			Args: append(args, "-targets="+br.HostID+","+strings.Join(ids, ","),
				"-input=/dev/null", "-input="+strings.Join(linked, " -input="), "-output="+fb),
			Inputs: linked, Outputs: []string{fb},
			run: func() error {
				var devs []bundle.CodeObject
				for _, t := range ts {
					f, err := infile.Open(t.linked)
					if err != nil {
						return err
					}
					defer f.Close()
					devs = append(devs, bundle.CodeObject{TargetID: t.arch, Data: io.NewSectionReader(f, 0, f.Size())})
				}
				if comp != nil {
					return atomicfile.Write(fb, func(w io.Writer) error {
						_, err := br.WriteCompressedHIPFatbin(w, devs, *comp)
						return err
					})
				}
				r, err := br.HIPFatbin(devs)
				if err != nil {
					return err
				}
				return copyTo(fb, r)
			}})
		if opt.EmitFatbinOnly {
			return "", nil
		}
		return p.gpuWrap(k, wopt, fb)
	case offload.OffloadCUDA:
		fb, err := p.tempName(filepath.Base(p.host.output), ".fatbin")
		if err != nil {
			return "", err
		}
		if opt.EmitFatbinOnly {
			fb = p.host.output
		}
		tool := "fatbinary"
		if opt.CUDAPath != "" {
			tool = filepath.Join(opt.CUDAPath, "bin", "fatbinary")
		}
		args := []string{"-64", "--create", fb}
		for _, t := range ts {
			sm := strings.TrimPrefix(t.arch, "sm_")
			args = append(args, fmt.Sprintf("--image3=kind=elf,sm=%s,file=%s", sm, t.linked))
		}
		l.Steps = append(l.Steps, Step{Kind: StepFatbinary, Target: k.String(), Tool: tool, Args: args, Inputs: linked, Outputs: []string{fb}})
		if opt.EmitFatbinOnly {
			return "", nil
		}
		return p.gpuWrap(k, wopt, fb)
	}
	return "", fmt.Errorf("%w: offload kind %v", goffload.ErrUnsupported, k)
}

// gpuWrap plans the registration object of a CUDA or HIP fatbin.
func (p *planner) gpuWrap(k offload.OffloadKind, wopt wrap.Options, fb string) (string, error) {
	name, err := p.wrapperName(k)
	if err != nil {
		return "", err
	}
	p.l.Steps = append(p.l.Steps, Step{Kind: StepWrap, Target: k.String(), Tool: "goffload", Inputs: []string{fb}, Outputs: []string{name},
		run: func() error {
			f, err := infile.Open(fb)
			if err != nil {
				return err
			}
			defer f.Close()
			o, err := wrap.GPU(wopt, k, io.NewSectionReader(f, 0, f.Size()))
			if err != nil {
				return err
			}
			return writeObject(name, o)
		}})
	return name, nil
}

// hostLinkSteps plans the host link (and, for -r, the renaming after it).
func (p *planner) hostLinkSteps(wrappers []string) error {
	l, opt := p.l, p.opt
	out := p.host.output
	final := out
	if opt.Relocatable && len(wrappers) > 0 {
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
	} else {
		// As LLVM's wrapper runs it: -LDIR and -lNAME as two arguments.
		for _, a := range p.ldArgs {
			if len(a) > 2 && (strings.HasPrefix(a, "-L") || strings.HasPrefix(a, "-l")) {
				args = append(args, a[:2], a[2:])
				continue
			}
			args = append(args, a)
		}
		at := len(args)
		if h, err := scanLD(args, nil); err == nil && h.firstInput >= 0 {
			at = h.firstInput
		}
		args = append(args[:at:at], append(slices.Clone(wrappers), args[at:]...)...)
	}
	step := Step{Kind: StepHostLink, Tool: opt.Linker, Args: args, Inputs: wrappers, Outputs: []string{out}}
	step.Args = withOutput(step.Args, out, opt.Driver)
	l.Steps = append(l.Steps, step)
	if opt.Relocatable && len(wrappers) > 0 {
		rel := p.rel
		l.Steps = append(l.Steps, Step{Kind: StepFinish, Tool: "goffload", Inputs: []string{out}, Outputs: []string{final},
			run: func() error {
				mf, err := infile.Open(out)
				if err != nil {
					return err
				}
				defer mf.Close()
				suffix, err := wrap.RelocatableSuffix(mf.Section())
				if err != nil {
					return err
				}
				f, err := elfobj.Read(mf, mf.Size())
				if err != nil {
					return err
				}
				o, err := f.Object()
				if err != nil {
					return err
				}
				if err := wrap.FinishRelocatable(o, rel, suffix); err != nil {
					return err
				}
				o.KeepLayout = true // as llvm-objcopy writes it for LLVM's wrapper
				return writeObject(final, o)
			}})
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
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-o" && i+1 < len(args):
			args[i+1] = out
			return args
		case strings.HasPrefix(a, "--output="):
			args[i] = "--output=" + out
			return args
		case a == "--output" && i+1 < len(args):
			args[i+1] = out
			return args
		case driver && strings.HasPrefix(a, "-o") && len(a) > 2:
			args[i] = "-o" + out
			return args
		case !driver && ldValueOptions[a]:
			i++
		case driver && driverValueOptions[a]:
			i++
		}
	}
	return append(args, "-o", out)
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
// Options.Jobs targets. With DryRun it prints the commands, in order, and
// runs none.
// The output is written whole or not at all.
func (l *Link) Run(ctx context.Context) (err error) {
	opt := l.opt
	jobs := opt.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	// The host link writes beside the output, which replaces it only when
	// the link succeeds.
	if !opt.DryRun {
		for i := range l.Steps {
			s := &l.Steps[i]
			if s.Kind == StepHostLink && len(s.Outputs) == 1 && s.Outputs[0] == l.Output {
				pending, err := atomicfile.Reserve(l.Output)
				if err != nil {
					return err
				}
				l.discard = pending.Discard
				defer pending.Discard()
				s.Args = withOutput(s.Args, pending.Name, opt.Driver)
				defer func() {
					if err == nil {
						err = pending.Commit()
					}
				}()
			}
		}
	}
	if opt.DryRun {
		jobs = 1 // the commands printed in the plan's order
	}
	for i := 0; i < len(l.Steps); {
		j := i + 1
		if deviceStep(l.Steps[i].Kind) {
			for j < len(l.Steps) && deviceStep(l.Steps[j].Kind) {
				j++
			}
		}
		if err := l.runGroup(ctx, l.Steps[i:j], jobs); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// deviceStep reports whether steps of kind k make a target's linked image:
// a target's run in order, those of different targets at once.
func deviceStep(k StepKind) bool {
	return k == StepDeviceLTO || k == StepCodegen || k == StepDeviceLink
}

// runGroup runs the device steps of several targets, jobs targets at a
// time, each target's steps in their order.
func (l *Link) runGroup(ctx context.Context, steps []Step, jobs int) error {
	if len(steps) == 1 || jobs == 1 {
		for i := range steps {
			if err := l.runStep(ctx, &steps[i]); err != nil {
				return err
			}
		}
		return nil
	}
	var chains [][]*Step
	at := map[string]int{}
	for i := range steps {
		k, ok := at[steps[i].Target]
		if !ok {
			k = len(chains)
			at[steps[i].Target] = k
			chains = append(chains, nil)
		}
		chains[k] = append(chains[k], &steps[i])
	}
	sem := make(chan struct{}, jobs)
	errs := make([]error, len(chains))
	var wg sync.WaitGroup
	for i, chain := range chains {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			for _, s := range chain {
				if errs[i] = l.runStep(ctx, s); errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

var printMu sync.Mutex

func (l *Link) runStep(ctx context.Context, s *Step) error {
	opt := l.opt
	if s.run == nil || s.Kind == StepBundle {
		if opt.Verbose || opt.Print || opt.DryRun {
			printMu.Lock()
			fmt.Fprintln(writer(opt.Stdout), FormatCommand(s))
			printMu.Unlock()
		}
	}
	if opt.DryRun {
		return nil
	}
	if s.run != nil {
		if err := s.run(); err != nil {
			return fmt.Errorf("%s: %w", s.Kind, err)
		}
		return nil
	}
	cmd := exec.CommandContext(ctx, s.Tool, s.Args...)
	cmd.Stdout, cmd.Stderr = writer(opt.Stderr), writer(opt.Stderr)
	if err := atomicfile.Run(cmd); err != nil {
		return fmt.Errorf("'%s' failed: %w", filepath.Base(s.Tool), err)
	}
	return nil
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
// own prints as `# goffload: KIND ARGS`.
func FormatCommand(s *Step) string {
	var b strings.Builder
	if s.run != nil || s.Tool == "goffload" {
		b.WriteString("# goffload: " + string(s.Kind))
	} else {
		b.WriteString(` "` + s.Tool + `"`)
	}
	for _, a := range s.Args {
		b.WriteByte(' ')
		b.WriteString(quoteArg(a))
	}
	return b.String()
}

func quoteArg(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\n\"\\$'") {
		return a
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`)
	return `"` + r.Replace(a) + `"`
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
