// Package atomicfile writes the output files of a tool that must not be
// turned against its user:
//
//   - whole or not at all: the data goes to a temporary file beside the
//     target, which replaces the target only when everything was written;
//   - only over regular files: a target that is a directory, a symbolic
//     link, a named pipe, a device or a socket is refused before anything is
//     written; a regular file that is replaced keeps its permission bits, and
//     a new file gets 0666 less the umask, as a shell redirection gives it;
//   - inside its folder: [WriteIn] writes a name made from data inside an
//     [os.Root], and [CheckName] refuses names that are not one plain path
//     element;
//   - nothing left behind by a signal: the temporary files and folders made
//     here are registered, and the handler that [RemoveOnSignal] installs
//     removes them (and kills the programs started with [Run]) when SIGINT
//     or SIGTERM arrives.
//
// Errors name the target, never the temporary file.
package atomicfile

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode"

	"github.com/goffload/goffload/internal/infile"
)

var (
	// ErrNotRegular: the target exists and is not a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrBadName: a file name made from data is not one plain path element.
	ErrBadName = errors.New("not a safe file name")
	// ErrInterrupted: a signal arrived; nothing more is written.
	ErrInterrupted = errors.New("interrupted")
)

// MaxNameLen is the longest file name most file systems accept (NAME_MAX).
const MaxNameLen = 255

// CheckName reports whether name can be used as the name of a file inside a
// folder: not empty, not "." or "..", without '/', NUL or any other control
// character (newline, CR, ESC, DEL, U+0080 to U+009F: a name made from
// data must not break the lines of a listing, nor reach a terminal as a
// control sequence when it is listed), at most [MaxNameLen] bytes.
func CheckName(name string) error {
	var why string
	switch {
	case name == "":
		why = "empty"
	case name == "." || name == "..":
		why = "a folder's name"
	case strings.ContainsRune(name, '/'):
		why = "holds '/'"
	case strings.ContainsRune(name, 0):
		why = "holds a NUL byte"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		why = "holds a control character"
	case len(name) > MaxNameLen:
		why = fmt.Sprintf("%d bytes, more than %d", len(name), MaxNameLen)
	default:
		return nil
	}
	return fmt.Errorf("file name %q: %w: %s", name, ErrBadName, why)
}

// Check reports whether path may be written: it does not exist, or it is a
// regular file. Commands call it before work that takes long, so that a bad
// -o fails at once.
func Check(path string) error {
	dir, name, err := split(path)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return pathErr("create", path, err)
	}
	defer root.Close()
	_, err = target(root, name, path)
	return err
}

// split returns the folder and the name of path; a path that ends in '/'
// names a folder, not a file.
func split(path string) (dir, name string, err error) {
	dir, name = filepath.Split(path)
	if name == "" || name == "." || name == ".." {
		return "", "", pathErr("create", path, notRegular(fs.ModeDir))
	}
	if dir == "" {
		dir = "."
	}
	return dir, name, nil
}

// target returns the permission bits a new file at name must get: those of
// the regular file there, or 0 for none (then the umask decides).
func target(root *os.Root, name, path string) (fs.FileMode, error) {
	st, err := root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case err != nil:
		return 0, pathErr("create", path, err)
	case !st.Mode().IsRegular():
		return 0, pathErr("create", path, notRegular(st.Mode()))
	}
	return st.Mode().Perm(), nil
}

type notRegularError struct{ what string }

func (e notRegularError) Error() string        { return ErrNotRegular.Error() + " (" + e.what + ")" }
func (e notRegularError) Is(target error) bool { return target == ErrNotRegular }

func notRegular(m fs.FileMode) error { return notRegularError{infile.Describe(m)} }

// pathErr reports err of operation op on the user's path, whatever file
// (a temporary one, a name inside a root) the error named.
func pathErr(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// Write calls fill with a buffered writer and, if fill and every write
// succeed, puts the result at path.
func Write(path string, fill func(w io.Writer) error) error {
	dir, name, err := split(path)
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return pathErr("create", path, err)
	}
	defer root.Close()
	return write(root, name, path, fill)
}

// WriteIn is Write for the file name inside root, the folder the user named
// dir: name must pass [CheckName], and no symbolic link or ".." takes the
// file out of root.
func WriteIn(root *os.Root, dir, name string, fill func(w io.Writer) error) error {
	path := filepath.Join(dir, name)
	if err := CheckName(name); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return write(root, name, path, fill)
}

// CheckIn is [Check] for the file name inside root, the folder the user
// named dir, as [WriteIn] would write it: a caller that writes many files
// checks every name first, so that a bad one writes none.
func CheckIn(root *os.Root, dir, name string) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	_, err := target(root, name, filepath.Join(dir, name))
	return err
}

// writers holds the 1 MiB buffers of finished writes for the next ones: a
// link writes a file for each of thousands of device images, most of them
// small, and a fresh buffer each (zeroed, then collected) cost more than
// writing them.
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 1<<20) }}

func write(root *os.Root, name, path string, fill func(w io.Writer) error) (err error) {
	perm, err := target(root, name, path)
	if err != nil {
		return err
	}
	tmp, err := createTemp(root, name)
	if err != nil {
		return pathErr("create", path, err)
	}
	defer func() {
		if err != nil {
			tmp.discard()
		}
	}()
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(tmp.f)
	defer func() {
		bw.Reset(nil)
		writers.Put(bw)
	}()
	if err = fill(bw); err != nil {
		return wrapWriteErr(path, err)
	}
	if err = bw.Flush(); err != nil {
		return pathErr("write", path, err)
	}
	if perm != 0 {
		if err = tmp.f.Chmod(perm); err != nil {
			return pathErr("write", path, err)
		}
	}
	return tmp.commit(path)
}

// wrapWriteErr names path in an error of fill that came from writing the
// temporary file; other errors (reading an input) are kept as they are.
func wrapWriteErr(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Path, tempMark) {
		return pathErr(pe.Op, path, err)
	}
	return err
}

// tempMark is in the name of every temporary file made here.
const tempMark = ".goffload-tmp-"

// temp is a temporary file being written beside its target in root.
type temp struct {
	root       *os.Root
	name, dest string
	f          *os.File
	id         int // in the registry
}

// tempName returns a new name for a temporary file beside name.
func tempName(name string) string {
	var b [6]byte
	rand.Read(b[:])
	if len(name) > 200 {
		name = name[:200]
	}
	return "." + name + tempMark + hex.EncodeToString(b[:])
}

func createTemp(root *os.Root, dest string) (*temp, error) {
	t := &temp{root: root, dest: dest}
	err := register(func() (func(), error) {
		for range 10 {
			t.name = tempName(dest)
			f, err := root.OpenFile(t.name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			t.f = f
			return func() { root.Remove(t.name) }, nil
		}
		return nil, fs.ErrExist
	}, &t.id)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// commit closes the file and renames it over its target, unless a signal
// has come (the registry's lock orders the two).
func (t *temp) commit(path string) error {
	if err := t.f.Close(); err != nil {
		return pathErr("write", path, err)
	}
	return finish(t.id, func() error {
		// Checked again: the target may have changed while we wrote.
		if _, err := target(t.root, t.dest, path); err != nil {
			return err
		}
		if err := t.root.Rename(t.name, t.dest); err != nil {
			return pathErr("rename", path, err)
		}
		return nil
	})
}

func (t *temp) discard() {
	t.f.Close()
	t.root.Remove(t.name)
	unregister(t.id)
}

// Pending is a temporary file name beside a target, for another program
// (a linker) to write; [Pending.Commit] puts it at the target.
type Pending struct {
	// Name is the temporary file's path, to give the program.
	Name string
	path string
	id   int
}

// Reserve returns a pending file for path, after checking that path may be
// written.
func Reserve(path string) (*Pending, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	dir, name, _ := split(path)
	p := &Pending{path: path}
	err := register(func() (func(), error) {
		p.Name = filepath.Join(dir, tempName(name))
		return func() { os.Remove(p.Name) }, nil
	}, &p.id)
	return p, err
}

// Commit puts what the program wrote at the target. A regular file it
// replaces keeps its permission bits, with the execute bits of what the
// program wrote added, as GNU ld does when it writes over a file: after
// `touch prog`, a linked prog is executable, and a 0700 one becomes 0711.
func (p *Pending) Commit() error {
	return finish(p.id, func() error {
		dir, name, err := split(p.path)
		if err != nil {
			return err
		}
		root, err := os.OpenRoot(dir)
		if err != nil {
			return pathErr("create", p.path, err)
		}
		defer root.Close()
		perm, err := target(root, name, p.path)
		if err != nil {
			return err
		}
		tmp := filepath.Base(p.Name)
		st, err := root.Lstat(tmp)
		if err != nil {
			return pathErr("write", p.path, err)
		}
		if !st.Mode().IsRegular() {
			return pathErr("write", p.path, notRegular(st.Mode()))
		}
		if perm != 0 {
			// As GNU ld writes over a file: its permission bits, and the
			// execute bits the program gave its own output (a program is
			// executable however the file was made; a relocatable
			// object keeps the file's bits).
			if err := root.Chmod(tmp, perm|st.Mode().Perm()&0o111); err != nil {
				return pathErr("write", p.path, err)
			}
		}
		if err := root.Rename(tmp, name); err != nil {
			return pathErr("rename", p.path, err)
		}
		return nil
	})
}

// Discard removes whatever the program wrote.
func (p *Pending) Discard() {
	os.Remove(p.Name)
	unregister(p.id)
}

// TempDir makes a new folder in dir (os.TempDir() if empty) that the signal
// handler removes; remove removes it.
func TempDir(dir, pattern string) (path string, remove func(), err error) {
	var id int
	err = register(func() (func(), error) {
		p, err := os.MkdirTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		path = p
		return func() { os.RemoveAll(p) }, nil
	}, &id)
	if err != nil {
		return "", nil, err
	}
	return path, func() {
		os.RemoveAll(path)
		unregister(id)
	}, nil
}

// MakeDir makes the folder path, which must not exist yet (a name chosen
// beforehand, as a link plan chooses its own), for the signal handler to
// remove; remove removes it.
func MakeDir(path string) (remove func(), err error) {
	var id int
	err = register(func() (func(), error) {
		if err := os.Mkdir(path, 0o700); err != nil {
			return nil, err
		}
		return func() { os.RemoveAll(path) }, nil
	}, &id)
	if err != nil {
		return nil, err
	}
	return func() {
		os.RemoveAll(path)
		unregister(id)
	}, nil
}

// TempFile writes a new temporary file in dir (os.TempDir() if empty),
// named by pattern as os.CreateTemp names it, that the signal handler
// removes; remove removes it.
func TempFile(dir, pattern string, fill func(w io.Writer) error) (path string, remove func(), err error) {
	var id int
	var f *os.File
	err = register(func() (func(), error) {
		var err error
		if f, err = os.CreateTemp(dir, pattern); err != nil {
			return nil, err
		}
		path = f.Name()
		return func() { os.Remove(path) }, nil
	}, &id)
	if err != nil {
		return "", nil, err
	}
	remove = func() {
		os.Remove(path)
		unregister(id)
	}
	err = fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		remove()
		return "", nil, err
	}
	return path, remove, nil
}

// Scratch returns a new temporary file in os.TempDir() that has no name (it
// is removed at once), so that nothing is left whatever happens.
func Scratch() (*os.File, error) {
	var f *os.File
	err := locked(func() error {
		var err error
		if f, err = os.CreateTemp("", "goffload-scratch-"); err != nil {
			return err
		}
		return os.Remove(f.Name())
	})
	if err != nil && f != nil {
		f.Close()
	}
	return f, err
}

// Spool copies r into a [Scratch] file and returns it, with its size.
func Spool(r io.Reader) (*os.File, int64, error) {
	f, err := Scratch()
	if err != nil {
		return nil, 0, err
	}
	n, err := io.Copy(f, r)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, n, nil
}
