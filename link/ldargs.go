package link

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goffload/goffload/wrap"
)

// ldValueOptions are the options of GNU ld (and lld, gold) written with
// their value as the next argument. Any other argument starting with '-' is
// taken as an option standing alone; any argument not starting with '-', as
// an input file.
var ldValueOptions = map[string]bool{
	"-m": true, "-o": true, "-dynamic-linker": true, "--dynamic-linker": true, "-rpath": true, "--rpath": true,
	"-rpath-link": true, "-L": true, "-l": true, "-z": true, "-T": true, "-e": true, "-u": true, "-y": true,
	"-soname": true, "-h": true, "-F": true, "-f": true, "-Map": true, "-a": true, "-A": true, "-b": true,
	"-c": true, "-G": true, "-I": true, "-R": true, "-Y": true, "-Ttext": true, "-Tdata": true, "-Tbss": true,
	"-Ttext-segment": true, "-plugin": true, "-plugin-opt": true, "--plugin-opt": true, "--plugin": true,
	"--version-script": true, "--dynamic-list": true, "--wrap": true, "--defsym": true, "--entry": true,
	"--library-path": true, "--library": true, "--output": true, "--script": true, "--undefined": true,
	"--trace-symbol": true, "--exclude-libs": true, "--retain-symbols-file": true, "--just-symbols": true,
	"--dependency-file": true, "--require-defined": true, "--audit": true, "--depaudit": true, "-P": true,
	"--auxiliary": true, "--filter": true, "--out-implib": true, "--soname": true, "-mllvm": true,
	"--sysroot": true, "--image-base": true, "--section-start": true, "--format": true, "--architecture": true,
	"--mri-script": true, "--task-link": true, "--Map": true,
}

// hostInput is an input of the host link that may carry device code: a
// file named on the command line or a library found by -l.
type hostInput struct {
	path  string // the file
	arg   string // the argument that named it (-lNAME for a library)
	whole bool   // within --whole-archive
}

// hostLink is what the wrapper reads of the host linker's argv.
type hostLink struct {
	inputs      []hostInput
	output      string // -o
	outputIndex int    // where -o's value is in the argv; -1 without -o
	firstInput  int    // where the first input file is in the argv; -1 without
	dirs        []string
	relocatable bool
	shared      bool
	dynLinker   string
	emulation   string
}

// ldState is the state --push-state saves.
type ldState struct{ whole, static bool }

// scanLD reads a host linker's argv (ld's options). missing is called for
// a library -lNAME found in none of the -L folders; it returns the error to
// stop with, or nil to go on without it.
func scanLD(args []string, missing func(lib string) error, stat func(string) (fs.FileInfo, error)) (*hostLink, error) {
	h := &hostLink{outputIndex: -1, firstInput: -1}
	// Every -L applies to every -l, wherever they are.
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-L" || a == "--library-path":
			if i+1 < len(args) {
				h.dirs = append(h.dirs, args[i+1])
			}
		case strings.HasPrefix(a, "--library-path="):
			h.dirs = append(h.dirs, a[len("--library-path="):])
		case strings.HasPrefix(a, "-L"):
			h.dirs = append(h.dirs, a[2:])
		}
		if ldValueOptions[a] {
			i++
		}
	}
	var st ldState
	var stack []ldState
	for i := 0; i < len(args); i++ {
		a := args[i]
		val := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%w: host linker option %s needs a value", ErrUsage, a)
			}
			i++
			return args[i], nil
		}
		if v, span, ok := outputArg(args, i); ok {
			if span == 1 && (a == "-o" || a == "--output") {
				return nil, fmt.Errorf("%w: host linker option %s needs a value", ErrUsage, a)
			}
			i += span - 1
			h.output, h.outputIndex = v, i
			continue
		}
		switch {
		case a == "-l" || a == "--library":
			v, err := val()
			if err != nil {
				return nil, err
			}
			if err := h.library(v, st, missing, stat); err != nil {
				return nil, err
			}
		case strings.HasPrefix(a, "--library="):
			if err := h.library(a[len("--library="):], st, missing, stat); err != nil {
				return nil, err
			}
		case strings.HasPrefix(a, "-l") && !ldValueOptions[a]:
			if err := h.library(a[2:], st, missing, stat); err != nil {
				return nil, err
			}
		case a == "-dynamic-linker" || a == "--dynamic-linker" || a == "-I":
			v, err := val()
			if err != nil {
				return nil, err
			}
			h.dynLinker = v
		case strings.HasPrefix(a, "--dynamic-linker="):
			h.dynLinker = a[len("--dynamic-linker="):]
		case a == "-m":
			v, err := val()
			if err != nil {
				return nil, err
			}
			h.emulation = v
		case ldValueOptions[a]:
			if _, err := val(); err != nil {
				return nil, err
			}
		case a == "--whole-archive":
			st.whole = true
		case a == "--no-whole-archive":
			st.whole = false
		case a == "-Bstatic" || a == "-static" || a == "-dn" || a == "-non_shared":
			st.static = true
		case a == "-Bdynamic" || a == "-dy" || a == "-call_shared":
			st.static = false
		case a == "--push-state":
			stack = append(stack, st)
		case a == "--pop-state":
			if len(stack) == 0 {
				return nil, fmt.Errorf("%w: host linker: --pop-state without --push-state", ErrUsage)
			}
			st, stack = stack[len(stack)-1], stack[:len(stack)-1]
		case a == "-r" || a == "--relocatable" || a == "-i":
			h.relocatable = true
		case a == "-shared" || a == "-Bshareable" || a == "--shared":
			h.shared = true
		case strings.HasPrefix(a, "-") && a != "-":
			// An option standing alone.
		default:
			if h.firstInput < 0 {
				h.firstInput = i
			}
			h.inputs = append(h.inputs, hostInput{path: a, arg: a, whole: st.whole})
		}
	}
	return h, nil
}

// library finds -lNAME in the -L folders as ld does: libNAME.so, then
// libNAME.a, in each folder in turn (only .a after -Bstatic); -l:FILE names
// the file. A shared library carries no device code to link: it is found,
// and left out.
func (h *hostLink) library(name string, st ldState, missing func(string) error, stat func(string) (fs.FileInfo, error)) error {
	candidates := []string{"lib" + name + ".so", "lib" + name + ".a"}
	if st.static {
		candidates = candidates[1:]
	}
	if exact, ok := strings.CutPrefix(name, ":"); ok {
		candidates = []string{exact}
	}
	for _, d := range h.dirs {
		for _, c := range candidates {
			p := filepath.Join(d, c)
			if fi, err := stat(p); err == nil && fi.Mode().IsRegular() {
				if strings.HasSuffix(c, ".a") {
					h.inputs = append(h.inputs, hostInput{path: p, arg: "-l" + name, whole: st.whole})
				}
				return nil
			}
		}
	}
	if missing != nil {
		return missing(name)
	}
	return nil
}

// driverValueOptions are the options of a compiler driver (cc, c++, clang)
// written with their value as the next argument, in a link command.
var driverValueOptions = map[string]bool{
	"-o": true, "-L": true, "-l": true, "-Xlinker": true, "-x": true, "-u": true, "-T": true, "-z": true,
	"-target": true, "-B": true, "--sysroot": true, "-isysroot": true, "-include": true, "-I": true,
	"-MF": true, "-MT": true, "-MQ": true, "-e": true, "-specs": true, "--param": true, "-Xassembler": true,
	"-Xpreprocessor": true, "-Xclang": true, "-mllvm": true, "-arch": true, "-rpath": true, "-dumpdir": true,
	"-Xcuda-ptxas": true, "-Xoffload-linker": true,
}

// driverToLD turns a compiler driver's link arguments into the host
// linker's as the driver passes them on: -Wl,A,B and -Xlinker A become A B;
// -L, -l, -o, -r, -shared, -static, inputs stay; other options, which the
// driver keeps for itself, are left out. index maps each produced argument
// to the driver argument it came from.
func driverToLD(args []string) (ld []string, index []int) {
	add := func(i int, a ...string) {
		for _, x := range a {
			ld = append(ld, x)
			index = append(index, i)
		}
	}
	files := false // after --
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case files || !strings.HasPrefix(a, "-") || a == "-":
			add(i, a)
		case a == "--":
			files = true
		case strings.HasPrefix(a, "-Wl,"):
			add(i, strings.Split(a[4:], ",")...)
		case a == "-Xlinker" && i+1 < len(args):
			i++
			add(i, args[i])
		case a == "-o" || a == "-L" || a == "-l":
			if i+1 < len(args) {
				add(i, a, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "-o") || strings.HasPrefix(a, "-L") || strings.HasPrefix(a, "-l"):
			if strings.HasPrefix(a, "-o") {
				add(i, "-o", a[2:])
			} else {
				add(i, a)
			}
		case a == "-r" || a == "-shared" || a == "-static":
			add(i, a)
		case driverValueOptions[a]:
			i++
		}
	}
	return ld, index
}

// LibrariesLast returns a driver's link arguments (cc, c++, clang) in the
// order a linker wants them whatever order they were given in: the options
// first, then the input objects in their order, then the libraries (-lNAME,
// -l NAME, archives and shared libraries named as files) with the options
// that act on the libraries after them (-Wl,..., -Xlinker X, such as
// --whole-archive, --as-needed, -Bstatic) in their own order among them.
// So `-lm -Wl,--whole-archive -lx -Wl,--no-whole-archive main.o -o p` links
// as `-o p main.o -lm -Wl,--whole-archive -lx -Wl,--no-whole-archive`. Files
// after `--` stay after it, at the end. goffload link takes its arguments
// in any order through it.
func LibrariesLast(args []string) []string {
	var opts, objs, libs, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i:]...)
			i = len(args)
		case a == "-l" || a == "-Xlinker":
			libs = append(libs, a)
			if i+1 < len(args) {
				libs = append(libs, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "-l") || strings.HasPrefix(a, "-Wl,"):
			libs = append(libs, a)
		case driverValueOptions[a]:
			opts = append(opts, a)
			if i+1 < len(args) {
				opts = append(opts, args[i+1])
				i++
			}
		case strings.HasPrefix(a, "-") && a != "-":
			opts = append(opts, a)
		case isLibraryFile(a):
			libs = append(libs, a)
		default:
			objs = append(objs, a)
		}
	}
	out := make([]string, 0, len(args))
	out = append(append(append(out, opts...), objs...), libs...)
	return append(out, rest...)
}

// isLibraryFile reports whether a link input's name is a library's: an
// archive (.a) or a shared library (.so, .so.N...).
func isLibraryFile(name string) bool {
	base := filepath.Base(name)
	return strings.HasSuffix(base, ".a") || strings.HasSuffix(base, ".so") || strings.Contains(base, ".so.")
}

// linkExeStyle reports whether the host link for triple is written in
// link.exe's syntax (lld-link, link.exe: -out:FILE, -libpath:DIR,
// NAME.lib, -defaultlib:NAME), as clang's MSVC toolchain writes it: a
// Windows host of the MSVC environment (x86_64-pc-windows-msvc, or no
// environment). MinGW's (x86_64-w64-windows-gnu) is GNU ld's.
func linkExeStyle(triple string) bool {
	if !wrap.COFFHost(triple) {
		return false
	}
	parts := strings.Split(triple, "-")
	env := parts[len(parts)-1]
	return env == "windows" || strings.HasPrefix(env, "msvc")
}

// wrapperExeOption reads a as the wrapper's option table reads the three
// link.exe options it knows ([release.Link.LinkExeOptions];
// LinkerWrapperOpts.td): out:, libpath: and wholearchive, after the
// prefix "/", "-", "/?" or "-?", spelled as written (the table is
// case-sensitive). The table matches the longest name first, so
// -libpath:DIR is not -l nor -out:FILE -o. wholearchive is a joined
// option: /wholearchive:FOO.lib is it too.
func wrapperExeOption(a string) (name, value string, ok bool) {
	for _, prefix := range []string{"/?", "-?", "/", "-"} {
		rest, found := strings.CutPrefix(a, prefix)
		if !found {
			continue
		}
		for _, n := range []string{"out:", "libpath:", "wholearchive"} {
			if v, found := strings.CutPrefix(rest, n); found {
				return n, v, true
			}
		}
		return "", "", false
	}
	return "", "", false
}

// wrapperOutput returns the name the wrapper gives the link's output, from
// which it names its temporary files (ExecutableName in
// ClangLinkerWrapper.cpp): the value of the last -o if there is one, else
// of the last out:, else a.exe for a Windows host (a.out otherwise). Its
// table reads every argument that begins with -o and is not -out: as -o
// (-opt:ref is -o pt:ref to it).
func wrapperOutput(args []string, exeOptions, windows bool) string {
	var o, out string
	hasO, hasOut := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if exeOptions {
			if n, v, ok := wrapperExeOption(a); ok {
				if n == "out:" {
					out, hasOut = v, true
				}
				continue
			}
		}
		switch {
		case a == "-o" || a == "--output":
			if i+1 < len(args) {
				i++
				o, hasO = args[i], true
			}
		case strings.HasPrefix(a, "--output="):
			o, hasO = a[len("--output="):], true
		case strings.HasPrefix(a, "-o"):
			o, hasO = a[2:], true
		}
	}
	switch {
	case hasO:
		return o
	case hasOut:
		return out
	case windows:
		return "a.exe"
	}
	return "a.out"
}

// wrapperLinkExeArgs returns the host linker's argv as the wrapper
// (LLVM 18 and later) renders a link.exe-style one for the host link
// (runLinker): the options of its table that take a value joined or
// separate (-L, -l, -o) given joined are passed separate (-opt:ref becomes
// -o pt:ref), the others as given; and the files after every -o and every
// out: option.
func wrapperLinkExeArgs(args, files []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if n, _, ok := wrapperExeOption(a); ok {
			out = append(out, a)
			if n == "out:" {
				out = append(out, files...)
			}
			continue
		}
		switch {
		case (a == "-o" || a == "--output") && i+1 < len(args):
			out = append(out, "-o", args[i+1])
			i++
			out = append(out, files...)
		case strings.HasPrefix(a, "--output="):
			out = append(out, "-o", a[len("--output="):])
			out = append(out, files...)
		case len(a) > 2 && strings.HasPrefix(a, "-o"):
			out = append(out, "-o", a[2:])
			out = append(out, files...)
		case len(a) > 2 && (strings.HasPrefix(a, "-L") || strings.HasPrefix(a, "-l")):
			out = append(out, a[:2], a[2:])
		default:
			out = append(out, a)
		}
	}
	return out
}

// scanLinkExe reads a host linker's argv in link.exe's syntax as lld-link
// reads it: options begin with '/' or '-' and are named in any case;
// -out:FILE is the output (without one, lld-link names it after the first
// input: its name with .exe, or .dll with -dll); every -libpath:DIR is a
// search folder, wherever it is; any other argument is an input file,
// found as named or else, when relative, in the -libpath folders in turn
// (lld-link's doFindFile: a name holding a folder is taken as given, one
// without a '.' may also be NAME.obj; lld-link also searches %LIB%, which
// goffload does not read); -defaultlib:NAME (NAME.lib without a '.') is
// searched the same way and left out when not found, as
// lld-link leaves it. An argument beginning with '/' that names an
// existing file is an input (lld-link's rule for what matches none of its
// options; goffload knows lld-link's options by that test only). Inputs
// that are not found are left out: lld-link reports them.
func scanLinkExe(args []string, stat func(string) (fs.FileInfo, error)) *hostLink {
	h := &hostLink{outputIndex: -1, firstInput: -1}
	option := func(a string) (name, value string, ok bool) {
		if len(a) < 2 || a[0] != '/' && a[0] != '-' {
			return "", "", false
		}
		if a[0] == '/' {
			if fi, err := stat(a); err == nil && fi.Mode().IsRegular() {
				return "", "", false
			}
		}
		name, value, _ = strings.Cut(a[1:], ":")
		return strings.ToLower(name), value, true
	}
	dll := false
	for _, a := range args {
		if n, v, ok := option(a); ok && n == "libpath" {
			h.dirs = append(h.dirs, v)
		}
	}
	// lld-link's doFindFile: a name with a folder as given; another in the
	// current folder, then each -libpath folder, as given and, without a
	// '.', with .obj.
	find := func(name string) (string, bool) {
		exists := func(p string) bool {
			fi, err := stat(p)
			return err == nil && fi.Mode().IsRegular()
		}
		if strings.ContainsAny(name, `/\`) {
			return name, exists(name)
		}
		for _, d := range append([]string{""}, h.dirs...) {
			p := filepath.Join(d, name)
			if exists(p) {
				return p, true
			}
			if !strings.Contains(name, ".") && exists(p+".obj") {
				return p + ".obj", true
			}
		}
		return "", false
	}
	first := ""
	for i, a := range args {
		n, v, ok := option(a)
		switch {
		case ok && n == "out":
			h.output, h.outputIndex = v, i
		case ok && n == "dll":
			dll = true
		case ok && n == "defaultlib":
			if !strings.Contains(v, ".") {
				v += ".lib"
			}
			if p, found := find(v); found {
				h.inputs = append(h.inputs, hostInput{path: p, arg: a})
			}
		case ok:
		default:
			if first == "" {
				first = a
			}
			if h.firstInput < 0 {
				h.firstInput = i
			}
			if p, found := find(a); found {
				h.inputs = append(h.inputs, hostInput{path: p, arg: a})
			}
		}
	}
	if h.output == "" && first != "" {
		ext := ".exe"
		if dll {
			ext = ".dll"
		}
		h.output = strings.TrimSuffix(first, filepath.Ext(first)) + ext
	}
	return h
}

// hostOutput returns the host link's argv args (a driver's with
// o.Driver) with out as its output: withOutput's, or for lld-link's argv
// of an MSVC host its last -out: set to out (-out:out added without one).
func hostOutput(o *Options, args []string, out string) []string {
	if !linkExeStyle(o.HostTriple) || o.Driver {
		return withOutput(args, out, o.Driver)
	}
	args = slices.Clone(args)
	for i := len(args) - 1; i >= 0; i-- {
		a := args[i]
		if len(a) > 5 && (a[0] == '-' || a[0] == '/') && strings.EqualFold(a[1:5], "out:") {
			args[i] = a[:5] + out
			return args
		}
	}
	return append(args, "-out:"+out)
}

// outputArg reports whether args[i] names the output, as ld and LLVM's
// wrapper read it: -o OUT, -oOUT, --output OUT or --output=OUT. It returns
// OUT and how many arguments the option spans; a separate one without its
// value spans one and has no OUT (ok is true, value "").
func outputArg(args []string, i int) (value string, span int, ok bool) {
	a := args[i]
	switch {
	case a == "-o" || a == "--output":
		if i+1 < len(args) {
			return args[i+1], 2, true
		}
		return "", 1, true
	case strings.HasPrefix(a, "--output="):
		return a[len("--output="):], 1, true
	case strings.HasPrefix(a, "-o") && !strings.HasPrefix(a, "--"):
		return a[2:], 1, true
	}
	return "", 0, false
}
