package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/link"
)

// wrapperName is the program name under which goffload acts as
// clang-linker-wrapper: a link or copy of it so named, in a folder given to
// clang -B.
const wrapperName = "clang-linker-wrapper"

// releaseEnv names the release of a link when neither the arguments nor the
// inputs tell it.
const releaseEnv = "GOFFLOAD_LLVM"

// linkFlags are goffload link's own flags; every other argument, in order,
// is the host link driver's.
var linkFlags = map[string]bool{ // name -> takes a value
	"llvm": true, "clang": true, "host-linker": true, "libdir": true, "triple": true, "jobs": true, "lang": true,
	"temp-dir": true, "no-cache": false, "dry-run": false, "save-temps": false, "verbose": false,
}

// driverValues are the driver's options whose value is the next argument:
// that argument is never read as one of goffload's flags.
var driverValues = map[string]bool{"-o": true, "-L": true, "-l": true, "-Xlinker": true, "-x": true, "-u": true, "-T": true, "-z": true}

func runLink(args []string, stdout io.Writer) error {
	opt := &link.Options{Driver: true, Stdout: stdout, Stderr: os.Stderr}
	var llvm, plan string
	var noCache bool
	for i := 0; i < len(args); i++ {
		a := args[i]
		if p, ok := planFlag(a); ok {
			plan = p
			continue
		}
		if a == "--" {
			opt.LinkerArgs = append(opt.LinkerArgs, args[i:]...)
			break
		}
		if driverValues[a] && i+1 < len(args) {
			opt.LinkerArgs = append(opt.LinkerArgs, a, args[i+1])
			i++
			continue
		}
		if a == "-h" || a == "--help" {
			fmt.Fprintln(os.Stderr, "usage: goffload link [--llvm N] [--lang c|c++] [--clang C] [--host-linker CC] [--libdir D] [--triple T] [--jobs N] [--temp-dir D] [--no-cache] [--dry-run] [--plan[=json|ninja]] [--save-temps] [--verbose] -o OUT INPUT... [-L DIR] [-lNAME] [-r] [-flags]")
			return nil
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takes, ok := linkFlags[name]
		if !strings.HasPrefix(a, "--") || !ok {
			opt.LinkerArgs = append(opt.LinkerArgs, a)
			continue
		}
		if takes && !hasVal {
			if i+1 >= len(args) {
				return fmt.Errorf("flag %s needs a value", a)
			}
			i++
			val = args[i]
		} else if !takes && hasVal {
			return fmt.Errorf("flag %s takes no value", a)
		}
		switch name {
		case "llvm":
			llvm = val
		case "clang":
			opt.DeviceClang = val
		case "host-linker":
			opt.Linker = val
		case "libdir":
			opt.RuntimeDir = val
		case "lang":
			opt.Language = val
		case "triple":
			opt.HostTriple = val
		case "jobs":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return fmt.Errorf("--jobs %q: want a number", val)
			}
			opt.Jobs = n
		case "temp-dir":
			opt.TempDir = val
		case "no-cache":
			noCache = true
		case "dry-run":
			opt.DryRun = true
		case "save-temps":
			opt.SaveTemps = true
		case "verbose":
			opt.Verbose = true
		}
	}
	// Flags anywhere: the libraries after the objects, as the linker needs.
	opt.LinkerArgs = link.LibrariesLast(opt.LinkerArgs)
	if err := chooseRelease(opt, llvm); err != nil {
		return err
	}
	useCache(opt, noCache || plan != "")
	return runPlan(opt, plan, stdout)
}

// planFlag reads --plan, --plan=json or --plan=ninja: what to print
// instead of linking ("" for an argument that is not --plan).
func planFlag(a string) (string, bool) {
	switch a {
	case "--plan", "--plan=json":
		return "json", true
	case "--plan=ninja":
		return "ninja", true
	}
	if strings.HasPrefix(a, "--plan=") {
		return a[len("--plan="):], true // refused by runPlan
	}
	return "", false
}

// runLinkerWrapper is clang-linker-wrapper: the arguments clang 15 to 24
// pass it (see link.ParseWrapperArgs), and --plan, --temp-dir and
// --no-cache.
func runLinkerWrapper(args []string, stdout io.Writer) error {
	var plan, tempDir string
	var noCache bool
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if p, ok := planFlag(a); ok {
			plan = p
			continue
		}
		if v, ok := strings.CutPrefix(a, "--temp-dir="); ok {
			tempDir = v
			continue
		}
		if a == "--no-cache" {
			noCache = true
			continue
		}
		if a == "--version" {
			// As clang-linker-wrapper --version: the version, and no link.
			return runVersion(nil, stdout)
		}
		if a == "--help" || a == "-help" || a == "--help-hidden" || a == "-help-hidden" {
			// As clang-linker-wrapper --help: the options, and no link.
			return wrapperHelp(stdout)
		}
		if a == "--temp-dir" && i+1 < len(args) {
			tempDir = args[i+1]
			i++
			continue
		}
		rest = append(rest, a)
	}
	opt, err := link.ParseWrapperArgs(rest)
	if err != nil {
		return err
	}
	opt.TempDir = tempDir
	// As LLVM's wrapper, commands go to the standard error.
	opt.Stdout, opt.Stderr = os.Stderr, os.Stderr
	if err := chooseRelease(opt, ""); err != nil {
		return err
	}
	useCache(opt, noCache || plan != "")
	return runPlan(opt, plan, stdout)
}

// chooseRelease sets the release from --llvm, else from $GOFFLOAD_LLVM; left
// unset, the link takes it from its arguments and inputs.
func chooseRelease(opt *link.Options, llvm string) error {
	from := "--llvm"
	if llvm == "" {
		llvm, from = os.Getenv(releaseEnv), "$"+releaseEnv
	}
	if llvm == "" {
		return nil
	}
	r, err := parseRelease(llvm)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	opt.Release = r
	return nil
}

// runPlan plans the link, then runs it, or prints the plan as JSON or as a
// ninja file (plan). A printed plan's own steps run this goffload program,
// and its intermediate files go to --temp-dir, by default OUT.offload
// beside the output: a plan is for later, Plan's own temporary folder would
// be gone.
func runPlan(opt *link.Options, plan string, stdout io.Writer) error {
	if plan != "" && plan != "json" && plan != "ninja" {
		return fmt.Errorf("--plan=%s: want json or ninja", plan)
	}
	if plan != "" {
		opt.DryRun = true
		if exe, err := os.Executable(); err == nil {
			opt.Goffload = exe
		}
	}
	l, err := link.Plan(opt)
	if err != nil {
		return err
	}
	if plan != "" && opt.TempDir == "" && !opt.SaveTemps {
		// Plan again with the folder beside the output.
		opt.TempDir = l.Output + ".offload"
		if l, err = link.Plan(opt); err != nil {
			return err
		}
	}
	defer l.Close()
	// -o replaces only a regular file (checked again when it is written).
	if err := atomicfile.Check(l.Output); err != nil {
		return err
	}
	switch plan {
	case "json":
		e := json.NewEncoder(stdout)
		e.SetIndent("", "  ")
		return e.Encode(l)
	case "ninja":
		return l.WriteNinja(stdout)
	}
	return l.Run(context.Background())
}

// wrapperHelp prints the options goffload's linker-wrapper takes.
func wrapperHelp(w io.Writer) error {
	var b strings.Builder
	b.WriteString("USAGE: goffload linker-wrapper [options] [--] <the host linker's arguments>\n" +
		"(also as DIR/clang-linker-wrapper, for clang -B DIR)\n\n" +
		"The options of clang-linker-wrapper it takes (docs/commands.md):\n")
	for _, o := range link.WrapperOptions() {
		b.WriteString("  " + o + "\n")
	}
	b.WriteString("\ngoffload's own:\n" +
		"  --plan=json|ninja   print the link's steps instead of running them\n" +
		"  --temp-dir=DIR      the folder of the intermediate files\n" +
		"  --no-cache          link without the device-link cache\n" +
		"  --version           print the version and the LLVM releases\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// runStep runs one of goffload's own steps of a link plan.
func runStep(args []string, _ io.Writer) error {
	return link.RunCommand(context.Background(), args)
}

// isWrapperName reports whether goffload runs as clang-linker-wrapper.
func isWrapperName(argv0 string) bool {
	base := filepath.Base(argv0)
	return base == wrapperName || strings.HasPrefix(base, wrapperName+"-")
}
