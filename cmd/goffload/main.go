// Command goffload makes, reads and checks the object files of LLVM's offloading
// toolchain without LLVM.
//
// Usage:
//
//	goffload demo [--libdir D]
//	goffload package -o OUT [--llvm N] [--compress [--compression-format zstd|zlib] [--compression-level N]] --image file=F,triple=T[,arch=A][,kind=K][,key=V]...
//	goffload list [--json] [--llvm N] FILE...
//	goffload entries --spec SPEC.json [--triple T] [--llvm N] -o OUT.o
//	goffload check [--json] [--llvm N] FILE...
//	goffload embed [--into HOST.o] [--triple T] -o OUT BINARY...
//	goffload extract [--triple T] [--arch A] [--kind K] [--member NAME] [--raw] [--max-bytes N] [-o DIR] FILE...
//	goffload strip --keep TRIPLE[:ARCH]... -o OUT IN
//	goffload convert --llvm N [--from M] -o OUT IN
//	goffload device-archive --target ID [--hip-openmp-compatible] [--llvm N] -o OUT.a LIB.a
//	goffload wrap --kind openmp [--triple HOST] [--llvm N] [-r] -o OUT.o BINARY...
//	goffload wrap --llvm 13|14 [--triple HOST] -o OUT.o IMAGE...
//	goffload wrap --kind cuda|hip [--triple HOST] [--llvm N] -o OUT.o FATBIN
//	goffload wrap --kind hip [--triple HOST] [--llvm N] -o OUT.o [BINARY...] [--image TARGETID=FILE...]
//	goffload wrap --kind sycl [--triple HOST] [--llvm N] -o OUT.o BINARY...
//	goffload link [--llvm N] [--clang C] [--host-linker CC] [--libdir D] [-r] [--dry-run] -o OUT INPUT... [-flags]
//
// `package` writes what clang-offload-packager of LLVM release N writes for the
// same arguments, byte for byte. `list` prints the OffloadBinaries of raw
// binaries, objects, archives, executables and shared objects as
// `llvm-objdump --offloading` does, then their offload entries; or JSON.
// `entries` writes an object holding the offload entries of SPEC.json as
// clang of release N emits them for host triple T. `check` reports every
// entry of a linked program or fat object whose name is not a symbol of the
// device images it carries, and the signs of LLVM releases mixed in a file or
// in the objects given (entries no wrapper registers, entry layouts or
// `requires` encodings the runtime does not read, HIP numbered two ways,
// device code of the old driver), and exits 1 if there is one. `wrap` writes the
// registration object of clang-linker-wrapper: for OpenMP from offload
// binaries (LLVM 13, 14: clang-offload-wrapper's, from device images); for CUDA from a fatbinary; for HIP from a fatbin (an offload
// bundle) or from AMDGPU code objects, which it bundles first; for SYCL from the
// binaries clang-sycl-linker writes (22: a descriptor of the images; --llvm 24:
// the one binary whole); `link`
// runs the whole OpenMP link: it extracts the device code of the inputs,
// links it with the release's clang, packages and wraps it, and links the
// host program with CC (or merges it with -r for a static library).
//
// Every subcommand takes --llvm N (13 to 24, default 22; 23 is LLVM 23.1,
// 24 (main) LLVM's main branch after the 23 branch): the release whose format to write and whose numbering to
// read offload kinds by. An argument @FILE, anywhere, is replaced by the
// arguments FILE holds, as LLVM's tools read response files. The exit
// status is 0 on success and 1, with a one-line message, on bad input or
// failure.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/respfile"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

type command struct {
	name, args, help string
	run              func(args []string, stdout io.Writer) error
}

var commands = []command{
	{"demo", "[--libdir D]", "run the OpenMP link flow on the built-in example, and the program where libomptarget 19 is installed", runDemo},
	{"package", "-o OUT [--llvm N] [--compress [--compression-format F] [--compression-level N]] --image file=F,triple=T[,key=V]...", "write OffloadBinaries as clang-offload-packager does (compressed: llvm-offload-binary of main, --llvm 24)", runPackage},
	{"list", "[--json] [--llvm N] FILE...", "list the OffloadBinaries in files as llvm-objdump --offloading does, then the offload entries", runList},
	{"entries", "--spec SPEC.json [--triple T] [--llvm N] -o OUT.o", "write an object holding offload entries as clang emits them", runEntries},
	{"check", "[--json] [--llvm N] FILE...", "report entries whose name no device image of the file defines, and LLVM releases mixed in files or objects", runCheck},
	{"embed", "[--into HOST.o] [--triple T] -o OUT BINARY...", "make a fat object, as clang -fembed-offload-object does", runEmbed},
	{"extract", "[--triple T] [--arch A] [--kind K] [--member NAME] [--raw] [--max-bytes N] [-o DIR] FILE...", "write out device images, as clang-offload-packager does (--llvm 23 and 24: nested binaries' images, as llvm-offload-binary of 23 and main)", runExtract},
	{"strip", "--keep TRIPLE[:ARCH]... -o OUT IN", "keep only the chosen targets' device code in an object or archive", runStrip},
	{"convert", "--llvm N [--from M] -o OUT IN", "rewrite an object, or each object of an archive, made by one LLVM release into another's formats", runConvert},
	{"device-archive", "--target ID [--hip-openmp-compatible] [--llvm N] -o OUT.a LIB.a", "write the device archive of a library of bundled objects, as clang-offload-bundler -unbundle -type=a does", runDeviceArchive},
	{"wrap", "[--kind openmp|cuda|hip|sycl] [--triple HOST] [--llvm N] [-r] -o OUT.o INPUT...", "write the registration object that clang-linker-wrapper makes", runWrap},
	{"link", "[--llvm N] [--lang c|c++] [--clang C] [--host-linker CC] [--libdir D] [--jobs N] [--temp-dir D] [--no-cache] [--dry-run] [--plan[=json|ninja]] [--save-temps] [--verbose] -o OUT INPUT... [-L DIR] [-lNAME] [-r] [-flags]", "link an offloading program with cc or c++, as clang's driver and clang-linker-wrapper do", runLink},
	{"version", "", "print the module version and the LLVM releases goffload speaks (also --version)", runVersion},
	{"linker-wrapper", "[--plan[=json|ninja]] [--temp-dir D] [--no-cache] CLANG-LINKER-WRAPPER-ARGS...", "be clang-linker-wrapper (also when run under that name, as clang -B DIR runs DIR/clang-linker-wrapper)", runLinkerWrapper},
	{"cache", "stats [--json] | clear | trim [--max N]", "show, clear or trim the cache of device links that link and linker-wrapper use ($GOFFLOAD_CACHE, off to turn it off)", runCache},
	{"step", "extract|bundle|wrap|finish --llvm N ARGS...", "run one of goffload's own steps of a link plan (--plan), as a build system does; its command lines are made by the plan", runStep},
}

func main() {
	// A signal removes the temporary files of the writes under way.
	atomicfile.RemoveOnSignal()
	if isWrapperName(os.Args[0]) {
		os.Exit(run(append([]string{"linker-wrapper"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	// Response files, as LLVM's tools expand theirs: an @file argument
	// anywhere, for every command (clang runs the wrapper with one).
	args, err := respfile.Expand(args)
	if err != nil {
		fmt.Fprintf(stderr, "goffload: %s\n", oneLine(err))
		return 1
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 1
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(args[1:], stdout)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		}
		fmt.Fprintf(stderr, "goffload %s: %s\n", c.name, oneLine(err))
		return 1
	}
	fmt.Fprintf(stderr, "goffload: unknown command %q\n", args[0])
	usage(stderr)
	return 1
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: goffload COMMAND [ARGS]")
	for _, c := range commands {
		fmt.Fprintf(w, "  goffload %s %s\n      %s\n", c.name, c.args, c.help)
	}
}

// oneLine is the message of err in one line, with what does not print
// escaped: it may hold names from the input.
func oneLine(err error) string { return escaped(strings.ReplaceAll(err.Error(), "\n", "; ")) }

// newFlags returns a flag set for command name with the shared --llvm flag.
func newFlags(name string, llvm *string) *flag.FlagSet {
	fs := flag.NewFlagSet("goffload "+name, flag.ContinueOnError)
	fs.StringVar(llvm, "llvm", "", fmt.Sprintf("LLVM release `N` whose formats to write (default %d) and to read as (default: the release that made each file): %v, 24 (main) being LLVM's main branch after the 23 branch", release.DefaultMajor, release.Known()))
	return fs
}

// parseRelease returns the release of --llvm N, the default release when
// it is not given.
func parseRelease(llvm string) (*release.Release, error) {
	if llvm == "" {
		return release.Default(), nil
	}
	return release.Parse(llvm)
}

// readOptions returns the options that read as the release of --llvm N, or
// without it each file as the release that made it; every file the command
// reads is read within one budget (offloadbinary.Budget).
func readOptions(llvm string) (*offloadbinary.ReadOptions, error) {
	opt := &offloadbinary.ReadOptions{Budget: &offloadbinary.Budget{}}
	if llvm == "" {
		return opt, nil
	}
	r, err := release.Parse(llvm)
	if err != nil {
		return nil, err
	}
	opt.Release = r
	return opt, nil
}

// parseFlags parses args with fs as LLVM's tools parse their command lines:
// flags may come before, between and after the operands, "-x=v" and "-x v"
// alike, with one dash or two; "--" ends the flags and "-" alone is an
// operand. Afterwards fs.Args() holds the operands.
func parseFlags(fs *flag.FlagSet, args []string) error {
	_, err := parseArgs(fs, args, false)
	return err
}

// parseArgs is parseFlags that, with passUnknown, returns the flags fs does
// not define instead of refusing them (for the host link).
func parseArgs(fs *flag.FlagSet, args []string, passUnknown bool) (unknown []string, err error) {
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			operands = append(operands, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f := fs.Lookup(name)
		switch {
		case f == nil && (name == "h" || name == "help"):
			fs.Usage()
			return nil, flag.ErrHelp
		case f == nil && passUnknown:
			unknown = append(unknown, a)
			continue
		case f == nil:
			return nil, fmt.Errorf("unknown flag %s (see %s -h)", a, fs.Name())
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			if !hasValue {
				value = "true"
			}
		} else if !hasValue {
			if i+1 == len(args) {
				return nil, fmt.Errorf("flag %s needs a value", a)
			}
			i++
			value = args[i]
		}
		if err := fs.Set(name, value); err != nil {
			return nil, fmt.Errorf("flag %s: bad value %q: %v", a, value, err)
		}
	}
	// Parse sets what fs.Args() returns: the operands, after "--".
	return unknown, fs.Parse(append([]string{"--"}, operands...))
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// runVersion prints the module's version and the releases of the table:
// "goffload v1.2.3 (module github.com/goffload/goffload); LLVM 13-24 (24:
// main after the 23 branch; 20, 23, 24 inferred; default 22)".
func runVersion(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return fmt.Errorf("version takes no argument")
	}
	var inferred []string
	for _, r := range release.All() {
		if r.Inferred {
			inferred = append(inferred, strconv.Itoa(r.Major))
		}
	}
	_, err := fmt.Fprintf(stdout, "goffload %s (module %s)\nLLVM releases: %v (default %d; inferred from LLVM's sources, not measured: %s; main checked against its sources on %s)\n",
		goffload.Version(), goffload.Path, release.Known(), release.DefaultMajor, strings.Join(inferred, ", "), release.MainCheckedOn)
	return err
}
