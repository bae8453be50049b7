package main

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/ldsym"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/wrap"
)

// linker runs the OpenMP link flow of clang-linker-wrapper: extract the device
// images of the inputs, link them per target with clang, package and wrap
// them, and link the host program (or merge it with -r).
type linker struct {
	rel         *offload.Release
	clang       string // the device linker
	cc          string // the host linker driver
	libdir      string // where libomp and libomptarget are
	hostTriple  string
	out         string
	inputs      []string
	extra       []string // for the host link
	relocatable bool
	dryRun      bool
	stdout      io.Writer
	tmp         string
	prelinked   string // a device image linked in advance, instead of the device link (demo)
	wrapOnly    bool   // stop after the registration object (demo without libomptarget)
	wrapper     string // the registration object made
}

// target is one device target's images.
type target struct {
	triple, arch string
	files        []string // extracted images, in input order
	images       []*io.SectionReader
	linked       string // the linked image
}

func runLink(args []string, stdout io.Writer) error {
	l := &linker{stdout: stdout}
	var llvm string
	fs := newFlags("link", &llvm)
	fs.StringVar(&l.out, "o", "a.out", "write the program to `OUT`")
	fs.StringVar(&l.clang, "clang", "", "the `clang` that links device code (default clang-N of the release)")
	fs.StringVar(&l.cc, "host-linker", "cc", "the `driver` that links the host program")
	fs.StringVar(&l.libdir, "libdir", "", "the `dir` of libomp and libomptarget (default /usr/lib/llvm-N/lib)")
	fs.StringVar(&l.hostTriple, "triple", "x86_64-unknown-linux-gnu", "the host `triple`")
	fs.BoolVar(&l.relocatable, "r", false, "relocatable link: merge the inputs and the wrapper for a later link (LLVM 19+)")
	fs.BoolVar(&l.dryRun, "dry-run", false, "print every command, run none")
	// Flags goffload does not know go to the host link.
	extra, err := parseArgs(fs, args, true)
	if err != nil {
		return err
	}
	l.extra, l.inputs = extra, fs.Args()
	if len(l.inputs) == 0 {
		return fmt.Errorf("no input file")
	}
	if err := atomicfile.Check(l.out); err != nil {
		return err
	}
	if l.rel, err = offload.ParseRelease(llvm); err != nil {
		return err
	}
	if l.relocatable && l.rel.RelocatableSection == "" {
		return fmt.Errorf("-r: %v has no relocatable offloading link", l.rel)
	}
	if l.clang == "" {
		l.clang = "clang-" + strconv.Itoa(l.rel.Major)
	}
	if l.libdir == "" {
		l.libdir = fmt.Sprintf("/usr/lib/llvm-%d/lib", l.rel.Major)
	}
	tmp, remove, err := atomicfile.TempDir("", "goffload-link")
	if err != nil {
		return err
	}
	defer remove()
	l.tmp = tmp
	return l.run()
}

func (l *linker) run() (err error) {
	targets, closeAll, err := l.extract()
	if err != nil {
		return err
	}
	defer closeAll()
	var bins []wrap.Binary
	for _, t := range targets {
		if err := l.deviceLink(t); err != nil {
			return err
		}
		if l.dryRun {
			continue
		}
		f, err := openSized(t.linked)
		if err != nil {
			return err
		}
		defer f.Close()
		arch := t.arch
		if arch == "generic" {
			arch = "" // clang-linker-wrapper 22 writes "" for a generic image
		}
		b, err := wrap.FromImage(l.rel, offload.LinkedImage(offload.OffloadOpenMP, t.triple, arch), f, f.Size())
		if err != nil {
			return err
		}
		bins = append(bins, b)
	}
	wrapper := filepath.Join(l.tmp, filepath.Base(l.out)+".openmp.image.wrapper.o")
	l.wrapper = wrapper
	fmt.Fprintf(l.stdout, "# goffload: wrap %d device image(s) for %s (%v) into %s\n", len(targets), l.hostTriple, l.rel, wrapper)
	if !l.dryRun && len(targets) > 0 {
		if err := writeWrapper(wrapper, wrap.Options{Release: l.rel, Triple: l.hostTriple, Relocatable: l.relocatable}, bins); err != nil {
			return err
		}
	}
	if l.wrapOnly {
		return nil
	}
	objs := l.inputs
	if len(targets) > 0 {
		objs = append([]string{wrapper}, l.inputs...)
	}
	if l.relocatable {
		return l.relocatableLink(objs)
	}
	// The host linker writes beside the output, which replaces it only
	// when the link succeeds.
	out := l.out
	if !l.dryRun {
		pending, err := atomicfile.Reserve(l.out)
		if err != nil {
			return err
		}
		defer pending.Discard()
		out = pending.Name
		defer func() {
			if err == nil {
				err = pending.Commit()
			}
		}()
	}
	args := append([]string{"-o", out}, objs...)
	args = append(args, "-L"+l.libdir, "-Wl,--push-state,--no-as-needed", "-lomp", "-lomptarget", "-Wl,--pop-state", "-Wl,-rpath,"+l.libdir)
	return l.command(l.cc, append(args, l.extra...)...)
}

// extract finds the OpenMP device images of the inputs, grouped by target in
// the order they are first seen, and writes them to files for the device
// link. Images are OffloadBinaries' for a release whose driver runs
// clang-linker-wrapper, taken from every member of an archive; for LLVM 13
// and 14 they are the bundled objects' device entries (and clang 14's image
// sections), taken from the archive members that the host link uses, as ld
// chooses them: clang 14 itself takes none, and a program whose fat objects
// come from a static library fails at run time.
func (l *linker) extract() ([]*target, func(), error) {
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	x := &deviceImages{l: l, byKey: map[string]*target{}}
	legacy := l.rel.Wrapper == offload.WrapperOffloadWrapper
	resolver := ldsym.New()
	for _, path := range append(append([]string{}, l.inputs...), l.libraries()...) {
		ins, done, err := openInputs(path)
		if err != nil {
			closeAll()
			return nil, nil, inFile(path, err)
		}
		closers = append(closers, done)
		if legacy {
			ins, err = hostUsed(resolver, ins)
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		for _, in := range ins {
			if in.ELF == nil {
				continue
			}
			if legacy {
				err = x.legacy(in)
			} else {
				err = x.binaries(in)
			}
			if err != nil {
				closeAll()
				return nil, nil, err
			}
		}
	}
	if !l.dryRun {
		for _, t := range x.targets {
			for i, f := range t.files {
				if err := copyTo(f, t.images[i]); err != nil {
					closeAll()
					return nil, nil, err
				}
			}
		}
	}
	return x.targets, closeAll, nil
}

// libraries returns the static libraries that the host link's -lNAME
// flags name, found in the -LDIR folders as ld finds them (a shared library
// found first carries no device code to link: none is returned for it).
// The host link comes after the inputs in the command line.
func (l *linker) libraries() []string {
	var dirs, libs []string
	for _, a := range l.extra {
		if d, ok := strings.CutPrefix(a, "-L"); ok && d != "" {
			dirs = append(dirs, d)
		}
	}
	for _, a := range l.extra {
		name, ok := strings.CutPrefix(a, "-l")
		if !ok || name == "" {
			continue
		}
		candidates := []string{"lib" + name + ".so", "lib" + name + ".a"}
		if exact, ok := strings.CutPrefix(name, ":"); ok {
			candidates = []string{exact}
		}
	search:
		for _, d := range dirs {
			for _, c := range candidates {
				p := filepath.Join(d, c)
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
					if strings.HasSuffix(c, ".a") {
						libs = append(libs, p)
					}
					break search
				}
			}
		}
	}
	return libs
}

// hostUsed returns the inputs of one command-line input that the host link
// uses: an object, or the members of an archive that ld pulls.
func hostUsed(r *ldsym.Resolver, ins []input) ([]input, error) {
	if len(ins) == 0 || !ins[0].Member {
		for _, in := range ins {
			if in.ELF != nil {
				if _, err := r.Add(ldsym.Input{Object: in.ELF}); err != nil {
					return nil, fmt.Errorf("%s: %w", in.Name, err)
				}
			}
		}
		return ins, nil
	}
	members := make([]ldsym.Member, len(ins))
	for i, in := range ins {
		if in.ELF == nil {
			continue
		}
		syms, err := in.ELF.Symbols()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in.Name, err)
		}
		for _, s := range syms {
			if s.Section != elf.SHN_UNDEF && s.Index != 0 && (s.Bind() == elf.STB_GLOBAL || s.Bind() == elf.STB_WEAK) {
				members[i].Defines = append(members[i].Defines, s.Name)
			}
		}
		f := in.ELF
		members[i].Load = func() (*elfobj.File, error) { return f, nil }
	}
	pulled, err := r.Add(ldsym.Input{Members: members})
	if err != nil {
		return nil, err
	}
	var out []input
	for _, i := range pulled {
		out = append(out, ins[i])
	}
	return out, nil
}

// deviceImages gathers the images to link, by target.
type deviceImages struct {
	l       *linker
	targets []*target
	byKey   map[string]*target
}

// add plans the image r of input in for its target.
func (x *deviceImages) add(in input, im *offload.Image, r *io.SectionReader) error {
	key := im.Triple() + "\x00" + im.Arch()
	t, ok := x.byKey[key]
	if !ok {
		t = &target{triple: im.Triple(), arch: im.Arch()}
		x.byKey[key] = t
		x.targets = append(x.targets, t)
	}
	name := fmt.Sprintf("%d-%s-%s-%s", len(t.files), strings.TrimSuffix(filepath.Base(in.Name), ".o"), im.Triple(), im.Arch())
	if ext := im.Kind.Extension(); ext != "" {
		name += "." + ext
	}
	// The triple and the arch are the input's: the name must stay in the
	// temporary folder.
	if err := atomicfile.CheckName(name); err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	t.files = append(t.files, filepath.Join(x.l.tmp, name))
	t.images = append(t.images, r)
	return nil
}

// binaries adds the OpenMP images of the OffloadBinaries of in.
func (x *deviceImages) binaries(in input) error {
	bins, err := in.Binaries(&offload.ReadOptions{Release: x.l.rel, MaxVersion: 1})
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	for _, b := range bins {
		for i := range b.Images {
			im := &b.Images[i].Image
			if im.OffloadKind != offload.OffloadOpenMP {
				continue
			}
			r, err := b.Open(i)
			if err != nil {
				return fmt.Errorf("%s: %w", in.Name, err)
			}
			if err := x.add(in, im, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// legacy adds the OpenMP device entries of a bundled object and clang 14's
// image sections.
func (x *deviceImages) legacy(in input) error {
	ims, err := fatobj.LegacyImages(in.ELF, x.l.rel)
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	for i := range ims {
		if ims[i].OffloadKind != offload.OffloadOpenMP {
			continue
		}
		if err := x.add(in, &ims[i].Image, ims[i].Open()); err != nil {
			return err
		}
	}
	return nil
}

func copyTo(path string, r io.Reader) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, r)
		return err
	})
}

// deviceLink links the images of one target into the shared object that the
// runtime loads, as clang-linker-wrapper does for a CPU target.
func (l *linker) deviceLink(t *target) error {
	if l.prelinked != "" {
		t.linked = l.prelinked
		return nil
	}
	name := fmt.Sprintf("%s.%s.%s.img", filepath.Base(l.out), t.triple, t.arch)
	if err := atomicfile.CheckName(name); err != nil {
		return err
	}
	t.linked = filepath.Join(l.tmp, name)
	args := []string{"--target=" + t.triple}
	if t.arch != "" && t.arch != "generic" {
		args = append(args, "-march="+t.arch)
	}
	args = append(args, "-O2", "-fopenmp", "-shared", "-Wl,-Bsymbolic", "-o", t.linked)
	args = append(args, t.files...)
	args = append(args, "-L"+l.libdir)
	return l.command(l.clang, args...)
}

// relocatableLink merges objs with the host linker's -r, then, as LLVM 19+
// does with llvm-objcopy (spec §3.5), removes the inputs' .llvm.offloading
// and renames the entries sections and their __start_/__stop_ symbols with a
// suffix made of the merged object's MD5, so that this object's constructor
// registers only its own entries.
func (l *linker) relocatableLink(objs []string) error {
	merged := filepath.Join(l.tmp, "merged-r.o")
	args := append([]string{"-r", "-nostdlib", "-o", merged}, objs...)
	if err := l.command(l.cc, append(args, l.extra...)...); err != nil {
		return err
	}
	fmt.Fprintf(l.stdout, "# goffload: remove .llvm.offloading, rename %s with the MD5 suffix of %s, write %s\n",
		strings.Join(l.rel.RelocatableRenames, ", "), merged, l.out)
	if l.dryRun {
		return nil
	}
	mf, err := openSized(merged)
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
	if err := wrap.FinishRelocatable(o, l.rel, suffix); err != nil {
		return err
	}
	return writeObject(l.out, o)
}

// command prints a command and, unless this is a dry run, runs it.
func (l *linker) command(name string, args ...string) error {
	fmt.Fprintln(l.stdout, shellQuote(append([]string{name}, args...)))
	if l.dryRun {
		return nil
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := atomicfile.Run(cmd); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func shellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?[]{}()<>|&;") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
