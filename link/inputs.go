package link

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// Inputs is everything a plan reads besides its options: the link's input
// files, opened, and what it found of other files and of tools (the
// folders -l searches, the release's clang, llc and linker plugin). [Open]
// fills it by reading the world; [NewInputs] starts an empty one that the
// caller fills with files it holds ([Inputs.AddFile]) and tools it has
// resolved ([Inputs.AddTool]). [PlanInputs] plans from it alone: a path
// it does not hold does not exist, a tool it does not name is not found.
// Close it when the plans made from it are done. An Inputs is for one
// goroutine at a time.
type Inputs struct {
	live    bool // read the world, and keep what was read
	files   map[fileKey]openResult
	data    map[string]dataFile
	stats   map[string]statResult
	looks   map[string]pathResult // exec.LookPath
	links   map[string]pathResult // filepath.EvalSymlinks
	heads   map[string][]byte     // the first bytes of a file (headBytes)
	closers []io.Closer
}

// headBytes is how much of a file planning reads to tell what it is (a
// linker script, an archive, a shared object).
const headBytes = 4096

type fileKey struct {
	path  string
	major int // the release the file is read as; 0: as each binary's maker
}

type openResult struct {
	f   *fatobj.File
	err error
}

type dataFile struct {
	r    io.ReaderAt
	size int64
}

type statResult struct {
	fi  fs.FileInfo
	err error
}

type pathResult struct {
	path string
	err  error
}

// NewInputs returns an empty Inputs, which reads nothing of the world.
func NewInputs() *Inputs {
	return &Inputs{files: map[fileKey]openResult{}, data: map[string]dataFile{}, stats: map[string]statResult{},
		looks: map[string]pathResult{}, links: map[string]pathResult{}, heads: map[string][]byte{}}
}

// Open reads what planning the link of o reads (its inputs, opened, the
// libraries -l finds, the release's tools) into an Inputs, from which
// [PlanInputs] then plans without reading anything. [Plan] does both at
// once.
func Open(o *Options) (*Inputs, error) {
	in := NewInputs()
	in.live = true
	if _, err := plan(o, in); err != nil {
		in.Close()
		return nil, err
	}
	in.live = false
	return in, nil
}

// AddFile gives the file at path, the size bytes of r, to the plans made
// from in: an input of the link, a file of --override-image or
// --bitcode-library, or a library -l finds. It is read, in memory, as the
// release of the plan reads it (fatobj.NewFile): a thin archive, whose
// members are other files, must be opened with Open.
func (in *Inputs) AddFile(path string, r io.ReaderAt, size int64) {
	in.data[path] = dataFile{r, size}
	delete(in.heads, path)
	delete(in.stats, path)
	for k := range in.files {
		if k.path == path {
			delete(in.files, k)
		}
	}
}

// AddTool says that the program name (as $PATH would be searched for it:
// "clang-22", "llc-22") is the file path.
func (in *Inputs) AddTool(name, path string) {
	in.looks[name] = pathResult{path: path}
}

// Close closes the files Open opened.
func (in *Inputs) Close() error {
	var errs []error
	for _, c := range in.closers {
		errs = append(errs, c.Close())
	}
	in.closers = nil
	return errors.Join(errs...)
}

// notExist is the error of a path the Inputs does not hold.
func notExist(op, path string) error {
	return &fs.PathError{Op: op, Path: path, Err: fs.ErrNotExist}
}

// open returns the input at path read as rel reads it (nil: each binary
// as the release that made it).
func (in *Inputs) open(path string, rel *release.Release) (*fatobj.File, error) {
	var opt *offloadbinary.ReadOptions
	key := fileKey{path: path}
	if rel != nil {
		opt, key.major = &offloadbinary.ReadOptions{Release: rel}, rel.Major
	}
	if r, ok := in.files[key]; ok {
		return r.f, r.err
	}
	var r openResult
	switch d, ok := in.data[path]; {
	case ok:
		r.f, r.err = fatobj.NewFile(path, d.r, d.size, opt)
	case in.live:
		r.f, r.err = fatobj.Open(path, opt)
	default:
		r.err = notExist("open", path)
	}
	if r.f != nil {
		in.closers = append(in.closers, r.f)
	}
	in.files[key] = r
	return r.f, r.err
}

// openData returns the bytes of the file at path.
func (in *Inputs) openData(path string) (*io.SectionReader, error) {
	if d, ok := in.data[path]; ok {
		return io.NewSectionReader(d.r, 0, d.size), nil
	}
	if !in.live {
		return nil, notExist("open", path)
	}
	f, err := infile.Open(path)
	if err != nil {
		return nil, err
	}
	in.closers = append(in.closers, f)
	in.data[path] = dataFile{f, f.Size()}
	return io.NewSectionReader(f, 0, f.Size()), nil
}

// stat is os.Stat of the world the Inputs holds.
func (in *Inputs) stat(path string) (fs.FileInfo, error) {
	if r, ok := in.stats[path]; ok {
		return r.fi, r.err
	}
	var r statResult
	switch d, ok := in.data[path]; {
	case ok:
		r.fi = dataInfo{name: filepath.Base(path), size: d.size}
	case in.live:
		r.fi, r.err = os.Stat(path)
	default:
		r.err = notExist("stat", path)
	}
	in.stats[path] = r
	return r.fi, r.err
}

// regular reports whether path names a regular file.
func (in *Inputs) regular(path string) bool {
	fi, err := in.stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// lookPath is exec.LookPath of the world the Inputs holds.
func (in *Inputs) lookPath(name string) (string, error) {
	if r, ok := in.looks[name]; ok {
		return r.path, r.err
	}
	var r pathResult
	if in.live {
		r.path, r.err = exec.LookPath(name)
	} else {
		r.err = &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
	in.looks[name] = r
	return r.path, r.err
}

// evalSymlinks is filepath.EvalSymlinks of the world the Inputs holds: a
// path it was given is no link.
func (in *Inputs) evalSymlinks(path string) (string, error) {
	if r, ok := in.links[path]; ok {
		return r.path, r.err
	}
	var r pathResult
	switch {
	case in.live:
		r.path, r.err = filepath.EvalSymlinks(path)
	case in.given(path):
		r.path = path
	default:
		r.err = notExist("lstat", path)
	}
	in.links[path] = r
	return r.path, r.err
}

// given reports whether path is a file or a tool the caller gave.
func (in *Inputs) given(path string) bool {
	if _, ok := in.data[path]; ok {
		return true
	}
	for _, r := range in.looks {
		if r.err == nil && r.path == path {
			return true
		}
	}
	return false
}

// head returns the first bytes of the file at path (up to headBytes), or
// nil where it cannot be read.
func (in *Inputs) head(path string) []byte {
	if b, ok := in.heads[path]; ok {
		return b
	}
	var b []byte
	switch d, ok := in.data[path]; {
	case ok:
		b = make([]byte, min(d.size, headBytes))
		n, _ := d.r.ReadAt(b, 0)
		b = b[:n]
	case in.live:
		if f, err := os.Open(path); err == nil {
			b = make([]byte, headBytes)
			n, _ := io.ReadFull(f, b)
			b = b[:n]
			f.Close()
		}
	}
	in.heads[path] = b
	return b
}

// dataInfo is the fs.FileInfo of a file given with AddFile: a regular file
// of its size.
type dataInfo struct {
	name string
	size int64
}

func (d dataInfo) Name() string       { return d.name }
func (d dataInfo) Size() int64        { return d.size }
func (d dataInfo) Mode() fs.FileMode  { return 0o644 }
func (d dataInfo) ModTime() time.Time { return time.Time{} }
func (d dataInfo) IsDir() bool        { return false }
func (d dataInfo) Sys() any           { return nil }
