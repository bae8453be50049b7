package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/atomicfile"
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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	for _, a := range fs.Args() {
		if strings.HasPrefix(a, "-") {
			l.extra = append(l.extra, a)
		} else {
			l.inputs = append(l.inputs, a)
		}
	}
	if len(l.inputs) == 0 {
		return fmt.Errorf("no input file")
	}
	var err error
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
	if l.tmp, err = os.MkdirTemp("", "goffload-link"); err != nil {
		return err
	}
	defer os.RemoveAll(l.tmp)
	return l.run()
}

func (l *linker) run() error {
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
		f, size, err := openSized(t.linked)
		if err != nil {
			return err
		}
		defer f.Close()
		arch := t.arch
		if arch == "generic" {
			arch = "" // clang-linker-wrapper 22 writes "" for a generic image
		}
		b, err := wrap.FromImage(l.rel, offload.LinkedImage(offload.OffloadOpenMP, t.triple, arch), f, size)
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
	args := append([]string{"-o", l.out}, objs...)
	args = append(args, "-L"+l.libdir, "-Wl,--push-state,--no-as-needed", "-lomp", "-lomptarget", "-Wl,--pop-state", "-Wl,-rpath,"+l.libdir)
	return l.command(l.cc, append(args, l.extra...)...)
}

// extract finds the OpenMP device images of the inputs, grouped by target in
// the order they are first seen, and writes them to files for the device
// link (as clang-linker-wrapper, it takes every member of an archive).
func (l *linker) extract() ([]*target, func(), error) {
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	var targets []*target
	byKey := map[string]*target{}
	opt := &offload.ReadOptions{Release: l.rel, MaxVersion: 1}
	for _, path := range l.inputs {
		ins, done, err := openInputs(path)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		closers = append(closers, done)
		for _, in := range ins {
			if in.elf == nil {
				continue
			}
			bins, err := in.binaries(opt)
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("%s: %w", in.name, err)
			}
			for _, b := range bins {
				for i, im := range b.Images {
					if im.OffloadKind != offload.OffloadOpenMP {
						continue
					}
					r, err := b.Open(i)
					if err != nil {
						closeAll()
						return nil, nil, fmt.Errorf("%s: %w", in.name, err)
					}
					key := im.Triple() + "\x00" + im.Arch()
					t, ok := byKey[key]
					if !ok {
						t = &target{triple: im.Triple(), arch: im.Arch()}
						byKey[key] = t
						targets = append(targets, t)
					}
					name := fmt.Sprintf("%d-%s-%s-%s", len(t.files), strings.TrimSuffix(filepath.Base(in.name), ".o"), im.Triple(), im.Arch())
					if ext := im.Kind.Extension(); ext != "" {
						name += "." + ext
					}
					t.files = append(t.files, filepath.Join(l.tmp, name))
					t.images = append(t.images, r)
				}
			}
		}
	}
	if !l.dryRun {
		for _, t := range targets {
			for i, f := range t.files {
				if err := copyTo(f, t.images[i]); err != nil {
					closeAll()
					return nil, nil, err
				}
			}
		}
	}
	return targets, closeAll, nil
}

func copyTo(path string, r io.Reader) error {
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
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
	t.linked = filepath.Join(l.tmp, fmt.Sprintf("%s.%s.%s.img", filepath.Base(l.out), t.triple, t.arch))
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
	merged := l.out + ".tmp-r.o"
	args := append([]string{"-r", "-nostdlib", "-o", merged}, objs...)
	if err := l.command(l.cc, append(args, l.extra...)...); err != nil {
		return err
	}
	fmt.Fprintf(l.stdout, "# goffload: remove .llvm.offloading, rename %s with the MD5 suffix of %s, write %s\n",
		strings.Join(l.rel.RelocatableRenames, ", "), merged, l.out)
	if l.dryRun {
		return nil
	}
	defer os.Remove(merged)
	mf, size, err := openSized(merged)
	if err != nil {
		return err
	}
	defer mf.Close()
	suffix, err := wrap.RelocatableSuffix(io.NewSectionReader(mf, 0, size))
	if err != nil {
		return err
	}
	f, err := elfobj.Read(mf, size)
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
	if err := cmd.Run(); err != nil {
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
