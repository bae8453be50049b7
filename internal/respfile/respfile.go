// Package respfile reads and writes response files (@file) as LLVM's tools
// do on Unix: clang's driver and the tools that parse their arguments with
// llvm::opt::OptTable, such as clang-linker-wrapper, which clang runs as
// `clang-linker-wrapper @/tmp/response-XXXX.txt` once the command line passes
// 64 KiB.
//
// [Expand] replaces every argument that starts with '@' and names a file by
// the arguments the file holds, split as llvm::cl::TokenizeGNUCommandLine
// splits them ([Tokenize]), recursively, as
// llvm::cl::ExpansionContext::expandResponseFiles does; [Fits] is
// llvm::sys::commandLineFitsWithinSystemLimits, the test by which clang
// decides to write one; [Write] writes one as clang's driver does
// (Command::writeResponseFile). The rules, as measured on clang 19 and 22,
// are in docs/commands.md (response files).
//
// # Security
//
// Response files are input, and hostile input too. Only regular files are
// read (a named pipe or a device is refused without blocking); a file that
// names itself, directly or through others, is refused as LLVM refuses it;
// and what the expansion reads and makes is bounded: [MaxDepth] levels of
// nesting, [MaxFileSize] bytes a file, and [Factor] times the bytes of the
// input (the command line and each distinct file read once) plus
// [Allowance], whatever the files name and however often. Past a bound the
// error matches goffload.ErrLimit. LLVM has none of these bounds.
package respfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/budget"
	"github.com/goffload/goffload/internal/infile"
)

// The bounds of an expansion, which LLVM does not have.
const (
	// MaxDepth is how deeply response files may nest: a file named on the
	// command line is at depth 1.
	MaxDepth = 32
	// MaxFileSize is the largest response file read, in bytes.
	MaxFileSize = 1 << 30
	// Factor and Allowance bound the work of an expansion: every argument
	// it goes through (those it keeps and the @file ones it replaces,
	// however many times a file is named) counts its length plus one, and
	// the sum may not pass Factor times the bytes of the input (the
	// arguments given, each plus one, and the bytes of each distinct
	// response file, counted once however often it is named) plus
	// Allowance.
	Factor    = budget.Factor
	Allowance = budget.Slack
)

// Expand returns args with each response file argument expanded, as
// clang's driver and clang-linker-wrapper expand theirs: an argument that
// starts with '@' is the name of a file (relative to the current
// directory), and is replaced by the arguments the file holds, whose own
// @file arguments are expanded in turn, their relative names also relative
// to the current directory (not to the file that names them). An '@'
// elsewhere in an argument is not special, and quotes in a response file do
// not make a leading one less so; "--" is not special either. An @file
// argument whose file does not exist stays as it is; "@" alone names the
// current directory, which is an error.
//
// Its errors name the file (and, for a file named by another, the one named
// on the command line): one that cannot be read (a folder, a named pipe),
// one that starts with a UTF-16 byte order mark but is not UTF-16 or that
// names itself or a file that names it (these match goffload.ErrInvalid),
// or a bound passed (goffload.ErrLimit). args is not changed.
func Expand(args []string) ([]string, error) { return ExpandIn("", args) }

// ExpandIn is [Expand] with relative names relative to dir ("" is the
// current directory).
func ExpandIn(dir string, args []string) ([]string, error) {
	var err error
	if dir == "" {
		dir, err = os.Getwd()
	} else {
		dir, err = filepath.Abs(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("response files: %w", err)
	}
	e := &expansion{dir: dir, paths: map[string]*source{}, files: map[fileKey]*source{}}
	for _, a := range args {
		e.input += int64(len(a)) + 1
	}
	if err := e.expand(args); err != nil {
		return nil, err
	}
	return e.out, nil
}

// expansion is the state of one Expand.
type expansion struct {
	dir   string // absolute: where relative names are
	out   []string
	work  int64 // len+1 of every argument gone through
	input int64 // len+1 of every argument given, and the bytes of each distinct file
	paths map[string]*source
	files map[fileKey]*source
	stack []*source // the files being expanded, outermost first
	last  string    // the path of the last file named on the command line
}

// source is a response file, read once however often it is named.
type source struct {
	path string // as first named, made absolute
	info fs.FileInfo
	args []string
}

func (e *expansion) expand(args []string) error {
	for _, a := range args {
		e.work += int64(len(a)) + 1
		if e.work > budget.LinearInt(e.input) {
			return e.overLimit()
		}
		if a == "" || a[0] != '@' {
			e.out = append(e.out, a)
			continue
		}
		src, err := e.source(a[1:])
		if err != nil {
			return e.errorf(err)
		}
		if src == nil { // no such file: LLVM keeps the argument
			e.out = append(e.out, a)
			continue
		}
		for _, s := range e.stack {
			if os.SameFile(s.info, src.info) {
				return e.errorf(&fileError{e.stack[len(e.stack)-1].path, fmt.Errorf("recursive expansion of %s: %w", s.path, goffload.ErrInvalid)})
			}
		}
		if len(e.stack) == MaxDepth {
			return e.errorf(&fileError{src.path, fmt.Errorf("response files nested more than %d deep: %w", MaxDepth, goffload.ErrLimit)})
		}
		if len(e.stack) == 0 {
			e.last = src.path
		}
		e.stack = append(e.stack, src)
		err = e.expand(src.args)
		e.stack = e.stack[:len(e.stack)-1]
		if err != nil {
			return err // already through errorf
		}
	}
	return nil
}

// overLimit is the error of an expansion past its bound: it names the file
// being expanded, or the last one expanded.
func (e *expansion) overLimit() error {
	where := e.last
	if n := len(e.stack); n > 0 {
		where = e.stack[n-1].path
	}
	return e.errorf(&fileError{where, fmt.Errorf("expansion past %d bytes (%d times the %d bytes of the command line and its response files, plus %d): %w",
		budget.LinearInt(e.input), Factor, e.input, Allowance, goffload.ErrLimit)})
}

// errorf names, before err (which names the file at fault), the response
// file of the command line being expanded when the fault is in a file it
// names: "response file ROOT: response file LEAF: ...".
func (e *expansion) errorf(err error) error {
	if fe, ok := err.(*fileError); len(e.stack) == 0 || ok && fe.path == e.stack[0].path {
		return err
	}
	return &fileError{e.stack[0].path, err}
}

// source returns the response file name, read, or nil if there is no such
// file. name is relative to e.dir unless absolute; it is not cleaned (as
// LLVM does not: "link/.." is the link's parent).
func (e *expansion) source(name string) (*source, error) {
	path := name
	if !filepath.IsAbs(name) {
		path = e.dir
		if !strings.HasSuffix(path, string(filepath.Separator)) {
			path += string(filepath.Separator)
		}
		path += name
	}
	if s, ok := e.paths[path]; ok {
		return s, nil
	}
	f, err := infile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		e.paths[path] = nil
		return nil, nil
	}
	if err != nil {
		return nil, &fileError{path, pathErr(err)}
	}
	defer f.Close()
	key := keyOf(path, f.Stat())
	if s, ok := e.files[key]; ok { // named again, or by another path
		e.paths[path] = s
		return s, nil
	}
	if f.Size() > MaxFileSize {
		return nil, &fileError{path, fmt.Errorf("%d bytes, more than %d: %w", f.Size(), MaxFileSize, goffload.ErrLimit)}
	}
	data := make([]byte, f.Size())
	if _, err := io.ReadFull(f.Section(), data); err != nil {
		return nil, &fileError{path, pathErr(err)}
	}
	text, err := decode(data)
	if err != nil {
		return nil, &fileError{path, err}
	}
	s := &source{path: path, info: f.Stat(), args: Tokenize(text)}
	e.input += int64(len(data))
	e.paths[path], e.files[key] = s, s
	return s, nil
}

// pathErr drops the path from err when it is a *fs.PathError: the message
// names the file already.
// fileError is an error of the response file path: "response file PATH:
// ERR".
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string { return "response file " + e.path + ": " + e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
