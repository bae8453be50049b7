package link

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goffload/goffload/internal/respfile"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// ErrUsage is the error of an argument list the wrapper does not accept: an
// unknown wrapper option, or an option without its value.
var ErrUsage = errors.New("bad arguments")

// LLVMOption is an option of LLVM's own given to the wrapper: Arg, from
// -mllvm ARG (MLLVM) or --offload-opt=ARG.
type LLVMOption struct {
	Arg   string `json:"arg"`
	MLLVM bool   `json:"mllvm,omitempty"`
}

// TargetArg is an argument for the device tools of one target triple, or of
// every target when Triple is "" (`--device-linker=ARG`,
// `--device-linker=TRIPLE=ARG`).
type TargetArg struct {
	Triple string `json:"triple,omitempty"`
	Arg    string `json:"arg"`
}

// value returns the argument as the option gave it: TRIPLE=ARG, or ARG.
func (a TargetArg) value() string {
	if a.Triple == "" {
		return a.Arg
	}
	return a.Triple + "=" + a.Arg
}

// wrapperFlags are the options of clang-linker-wrapper 15 to 24 that
// goffload implements, with whether each takes a value.
var wrapperFlags = map[string]bool{
	"host-triple": true, "linker-path": true, "opt-level": true, "device-linker": true,
	"device-compiler": true, "device-debug": false, "save-temps": false, "wrapper-verbose": false,
	"verbose": false, "dry-run": false, "should-extract": true, "cuda-path": true, "rocm-path": true,
	"wrapper-jobs": true, "relocatable": false, "emit-fatbin-only": false, "sysroot": true,
	"output": true, "compress": false, "compression-level": true, "offload-opt": true,
	"wrapper-time-trace": true, "wrapper-time-trace-granularity": true, "embed-bitcode": false,
	"override-image": true, "print-wrapped-module": false,
}

// WrapperOptions returns the options of clang-linker-wrapper that
// ParseWrapperArgs reads, sorted, each as --NAME or --NAME=VALUE, and then
// -mllvm OPT; the rest of the arguments are the host linker's.
func WrapperOptions() []string {
	var out []string
	for name, takes := range wrapperFlags {
		if takes {
			name += "=VALUE"
		}
		out = append(out, "--"+name)
	}
	slices.Sort(out)
	return append(out, "--bitcode-library=KIND-TRIPLE-ARCH=FILE", "-mllvm OPT")
}

// unsupportedFlags are options of clang-linker-wrapper that goffload does
// not implement: each is an error naming it, never ignored.
var unsupportedFlags = map[string]bool{
	"builtin-bitcode": true, "clang-backend": true, "ptxas-arg": true,
	"pass-remarks": true, "pass-remarks-missed": true, "pass-remarks-analysis": true, "whole-program": true,
	"linker-arg": true, "compiler-arg": true, "arch": true, "triple": true,
	"library-path": true, "library": true, "help": true, "help-hidden": true, "version": true,
}

// wrapperLike reports whether a long option that is not in the wrapper's
// table is still meant for the wrapper, not the host linker: the wrapper's
// own option families. Such an option is an error, not a linker argument.
func wrapperLike(name string) bool {
	for _, p := range []string{"wrapper-", "device-", "offload-", "host-triple", "linker-path", "should-extract"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ParseWrapperArgs reads the arguments clang passes to clang-linker-wrapper
// (argv without the program name), as releases 15 to 24 pass them (23 and
// 24 as LLVM's sources say, LinkerWrapperOpts.td): the wrapper's options,
// then (15, 16) `--` and the host linker's argv, or (19+) the wrapper's
// options mixed with the host linker's argv, which are kept in order. As
// 15 and 16's wrappers read them (measured with their --dry-run), a
// wrapper option after `--` is still the wrapper's (clang -Wl,--save-temps
// or -Wl,--embed-bitcode), and `--` itself reaches no linker; only -r
// after it is the linker's alone (those wrappers have no -r of their own).
// The release is not chosen here: see [Plan].
//
// Response files are expanded first, as the wrapper's option parser
// (llvm::opt::OptTable) expands them: an argument @FILE anywhere is replaced
// by the arguments FILE holds, split as LLVM splits them, and so on for
// those FILE names; relative names are relative to the current directory, a
// FILE that does not exist leaves @FILE as it is. A file that cannot be
// read, one that names itself (matching goffload.ErrInvalid) and an
// expansion past goffload's bounds (goffload.ErrLimit; see
// docs/commands.md, response files) are ErrUsage errors naming the file;
// LLVM's wrapper prints these and links with what it has expanded so far.
func ParseWrapperArgs(argv []string) (*Options, error) {
	argv, err := respfile.Expand(argv)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	o := &Options{OptLevel: "O2", TimeTraceGranularity: DefaultTimeTraceGranularity}
	sep := false // 15, 16: after --, -r is the linker's alone
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			sep = true
			continue
		}
		if a == "-r" {
			o.Relocatable = o.Relocatable || !sep
			o.LinkerArgs = append(o.LinkerArgs, a)
			continue
		}
		if a == "-mllvm" {
			// LLVM's own option, for the device code: -mllvm OPT, as the
			// wrapper's option table has it (-mllvm=OPT and --mllvm are
			// the host linker's there).
			if i+1 >= len(argv) {
				return nil, fmt.Errorf("%w: %s needs a value", ErrUsage, a)
			}
			i++
			o.LLVMOptions = append(o.LLVMOptions, LLVMOption{Arg: argv[i], MLLVM: true})
			continue
		}
		if v, ok := strings.CutPrefix(a, "-offload-opt="); ok {
			o.LLVMOptions = append(o.LLVMOptions, LLVMOption{Arg: v}) // the table's one-dash spelling
			continue
		}
		if a == "-o" {
			// -o is the linker's too: the wrapper reads it and passes it on.
			o.LinkerArgs = append(o.LinkerArgs, a)
			continue
		}
		if !strings.HasPrefix(a, "--") || len(a) == 2 {
			o.LinkerArgs = append(o.LinkerArgs, a)
			continue
		}
		name, val, hasVal := strings.Cut(a[2:], "=")
		takes, known := wrapperFlags[name]
		if name == "bitcode-library" && hasVal {
			// The option of 15 to 19's wrapper, whose Plan refuses it; a
			// linker argument to 20's and later, which pass it on there.
			o.BitcodeLibraries = append(o.BitcodeLibraries, val)
			o.LinkerArgs = append(o.LinkerArgs, a)
			continue
		}
		switch {
		case unsupportedFlags[name]:
			return nil, fmt.Errorf("%w: %s: an option of clang-linker-wrapper that goffload does not implement", ErrUsage, a)
		case !known && wrapperLike(name):
			return nil, fmt.Errorf("%w: %s: unknown clang-linker-wrapper option", ErrUsage, a)
		case !known:
			o.LinkerArgs = append(o.LinkerArgs, a) // the host linker's
			continue
		case takes && !hasVal:
			if i+1 >= len(argv) || name != "output" && name != "sysroot" {
				return nil, fmt.Errorf("%w: %s needs a value (%s=VALUE)", ErrUsage, a, a)
			}
			i++
			val = argv[i]
		case !takes && hasVal:
			return nil, fmt.Errorf("%w: %s takes no value", ErrUsage, a)
		}
		if err := o.set(name, val); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUsage, a, err)
		}
	}
	return o, nil
}

var optLevel = regexp.MustCompile(`^O[0-3sz]$`)

// set applies the wrapper option name with value val.
func (o *Options) set(name, val string) error {
	switch name {
	case "host-triple":
		o.HostTriple = val
	case "linker-path":
		o.Linker = val
	case "opt-level":
		if !optLevel.MatchString(val) {
			return fmt.Errorf("want O0, O1, O2, O3, Os or Oz")
		}
		o.OptLevel = val
	case "device-linker":
		o.DeviceLinkerArgs = append(o.DeviceLinkerArgs, targetArg(val))
	case "device-compiler":
		o.DeviceCompilerArgs = append(o.DeviceCompilerArgs, targetArg(val))
	case "device-debug":
		o.DeviceDebug = true
	case "save-temps":
		o.SaveTemps = true
	case "embed-bitcode":
		o.EmbedBitcode = true
	case "print-wrapped-module":
		o.PrintWrappedModule = true
	case "wrapper-verbose", "verbose":
		o.Verbose = true
	case "dry-run":
		o.DryRun = true
	case "should-extract":
		o.ShouldExtract = append(o.ShouldExtract, val)
	case "wrapper-time-trace":
		if val == "" {
			return fmt.Errorf("want a file")
		}
		o.TimeTrace = val
	case "wrapper-time-trace-granularity":
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return fmt.Errorf("want a number of microseconds")
		}
		o.TimeTraceGranularity = n
	case "override-image":
		kind, file, ok := strings.Cut(val, "=")
		if !ok || file == "" {
			return fmt.Errorf("want KIND=FILE")
		}
		k, err := offload.ParseOffloadKind(kind)
		if err != nil || k == offload.OffloadNone {
			return fmt.Errorf("offload kind %q: want openmp, cuda, hip or sycl", kind)
		}
		o.OverrideImages = append(o.OverrideImages, OverrideImage{Kind: k, File: file})
	case "offload-opt":
		o.LLVMOptions = append(o.LLVMOptions, LLVMOption{Arg: val})
	case "cuda-path":
		o.CUDAPath = val
	case "rocm-path":
		o.ROCmPath = val
	case "wrapper-jobs":
		n, err := strconv.Atoi(val)
		if val == "jobserver" {
			n, err = 0, nil
		}
		if err != nil || n < 0 {
			return fmt.Errorf("want a number of jobs")
		}
		o.Jobs = n
	case "relocatable":
		o.Relocatable = true
		o.LinkerArgs = append(o.LinkerArgs, "-r")
	case "emit-fatbin-only":
		o.EmitFatbinOnly = true
	case "compress":
		o.Compress = true
	case "compression-level":
		n, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("want an integer")
		}
		o.CompressionLevel = &n
	case "sysroot":
		o.LinkerArgs = append(o.LinkerArgs, "--sysroot="+val)
	case "output":
		o.LinkerArgs = append(o.LinkerArgs, "-o", val)
	}
	return nil
}

// targetArg reads `ARG` or `TRIPLE=ARG`: a triple is a word of at least
// two dashes before the first '=' (an argument such as -O2 or -Wl,x=y is not).
func targetArg(v string) TargetArg {
	if t, arg, ok := strings.Cut(v, "="); ok && !strings.HasPrefix(t, "-") && strings.Count(t, "-") >= 2 {
		return TargetArg{Triple: t, Arg: arg}
	}
	return TargetArg{Arg: v}
}

// releaseFromArgs returns the release whose library folder
// (/usr/lib/llvm-N/lib, as clang adds it for libomp and libomptarget) the
// host linker's arguments name, or nil.
func releaseFromArgs(args []string) *release.Release {
	for _, a := range args {
		i := strings.Index(a, "/llvm-")
		if i < 0 {
			continue
		}
		rest := a[i+len("/llvm-"):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 || !strings.HasPrefix(rest[j:], "/lib") {
			continue
		}
		n, _ := strconv.Atoi(rest[:j])
		if r, err := release.Lookup(n); err == nil {
			return r
		}
	}
	return nil
}
