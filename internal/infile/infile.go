// Package infile opens the input files of a tool that is given paths it must
// not trust: paths on its command line, and paths named by data, such as the
// members of a thin archive.
//
// An input is read only if it is a regular file: a named pipe, a device, a
// socket or a directory is refused without blocking (a FIFO is opened with
// O_NONBLOCK, so opening it never waits for a writer). However many files a
// command opens, at most [Pool]'s limit of descriptors are open at once: a
// [File] whose descriptor was closed to make room is opened again when it is
// next read, and must then still be the same file (same device and inode,
// size and modification time), else reading gives [ErrChanged].
package infile

import (
	"container/list"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
)

var (
	// ErrNotRegular: the path names something other than a regular file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrChanged: a file was replaced or changed between two reads.
	ErrChanged = errors.New("file changed while it was read")
	// ErrTooLarge: a file is larger than the caller's limit.
	ErrTooLarge = errors.New("file too large")
)

// DefaultMaxOpen is the number of descriptors the default pool keeps open:
// far below the usual limit of 1024, so that the rest of the program (and
// the programs it runs) have room.
const DefaultMaxOpen = 128

// Pool bounds the number of descriptors its files hold open at once.
type Pool struct {
	max  int
	mu   sync.Mutex
	idle list.List // of *File with a descriptor and no reader, least recently used first
	open int
}

// NewPool returns a pool that keeps at most max descriptors open, except
// while more than max reads are under way at once.
func NewPool(max int) *Pool { return &Pool{max: max} }

var defaultPool = NewPool(DefaultMaxOpen)

// File is a regular file opened for reading at random.
type File struct {
	pool *Pool
	path string
	info fs.FileInfo // as first opened: what a reopened descriptor must match

	f      *os.File // nil while closed to make room
	users  int      // reads under way
	elem   *list.Element
	closed bool

	// block is the file's bytes at blockOff, read whole to serve the small
	// reads (headers, magic numbers) that follow each other in a file of
	// many small parts: one read instead of one a part.
	blockMu  sync.Mutex
	block    []byte
	blockOff int64
}

// blockSize is the size of File's block of small reads, and smallRead the
// largest read it serves.
const (
	blockSize = 4096
	smallRead = 256
)

// Open opens path with the default pool.
func Open(path string) (*File, error) { return defaultPool.Open(path) }

// Open opens path for reading. It gives a *fs.PathError matching
// [ErrNotRegular] for anything but a regular file (following symbolic links,
// as reading does).
func (p *Pool) Open(path string) (*File, error) {
	f, info, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	file := &File{pool: p, path: path, info: info, f: f}
	p.mu.Lock()
	p.open++
	p.makeRoom()
	file.elem = p.idle.PushBack(file)
	p.mu.Unlock()
	return file, nil
}

func openRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: notRegular(info.Mode())}
	}
	return f, info, nil
}

// notRegularError says what a path is instead of a regular file.
type notRegularError struct{ what string }

func (e notRegularError) Error() string        { return ErrNotRegular.Error() + " (" + e.what + ")" }
func (e notRegularError) Is(target error) bool { return target == ErrNotRegular }

func notRegular(m fs.FileMode) error { return notRegularError{Describe(m)} }

// Describe names the type of file of mode m: "a directory", "a named
// pipe", ...
func Describe(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "an irregular file"
}

// makeRoom closes idle descriptors, least recently used first, until the
// pool is within its limit or nothing idle is left. p.mu is held.
func (p *Pool) makeRoom() {
	for p.open > p.max {
		e := p.idle.Front()
		if e == nil {
			return
		}
		f := p.idle.Remove(e).(*File)
		f.elem = nil
		f.f.Close()
		f.f = nil
		p.open--
	}
}

// acquire returns f's descriptor, opening it again if the pool closed it,
// and keeps it open until release.
func (f *File) acquire() (*os.File, error) {
	p := f.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.closed {
		return nil, &fs.PathError{Op: "read", Path: f.path, Err: os.ErrClosed}
	}
	if f.f == nil {
		nf, info, err := openRegular(f.path)
		if err != nil {
			return nil, err
		}
		if !os.SameFile(info, f.info) || info.Size() != f.info.Size() || !info.ModTime().Equal(f.info.ModTime()) {
			nf.Close()
			return nil, &fs.PathError{Op: "read", Path: f.path, Err: ErrChanged}
		}
		f.f = nf
		p.open++
	}
	if f.elem != nil {
		p.idle.Remove(f.elem)
		f.elem = nil
	}
	f.users++
	p.makeRoom()
	return f.f, nil
}

func (f *File) release() {
	p := f.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	f.users--
	if f.users > 0 || f.f == nil {
		return
	}
	if f.closed {
		f.f.Close()
		f.f = nil
		p.open--
		return
	}
	f.elem = p.idle.PushBack(f)
	p.makeRoom()
}

// ReadAt implements io.ReaderAt. It is safe to call from several goroutines.
func (f *File) ReadAt(b []byte, off int64) (int, error) {
	if off >= 0 && len(b) > 0 && len(b) <= smallRead {
		if n, ok, err := f.readSmall(b, off); ok {
			return n, err
		}
	}
	return f.readAt(b, off)
}

// readSmall reads b at off from the block holding off, read first if it is
// not the one held; ok is false for a read that runs past the block's end
// before the file's, which the caller reads itself.
func (f *File) readSmall(b []byte, off int64) (n int, ok bool, err error) {
	f.blockMu.Lock()
	defer f.blockMu.Unlock()
	if f.isClosed() {
		return 0, true, &fs.PathError{Op: "read", Path: f.path, Err: os.ErrClosed}
	}
	start := off &^ (blockSize - 1)
	if f.block == nil || f.blockOff != start {
		if f.block == nil {
			f.block = make([]byte, 0, blockSize)
		}
		n, err := f.readAt(f.block[:blockSize], start)
		if err != nil && err != io.EOF {
			f.block = f.block[:0]
			f.blockOff = -1
			return 0, true, err
		}
		f.block, f.blockOff = f.block[:n], start
	}
	rel := int(off - start)
	switch {
	case rel+len(b) <= len(f.block):
		return copy(b, f.block[rel:]), true, nil
	case len(f.block) < blockSize:
		// The file ends in this block.
		return copy(b, f.block[min(rel, len(f.block)):]), true, io.EOF
	}
	return 0, false, nil
}

// isClosed reports whether Close was called.
func (f *File) isClosed() bool {
	f.pool.mu.Lock()
	defer f.pool.mu.Unlock()
	return f.closed
}

// readAt reads b at off from the file's descriptor.
func (f *File) readAt(b []byte, off int64) (int, error) {
	fd, err := f.acquire()
	if err != nil {
		return 0, err
	}
	defer f.release()
	return fd.ReadAt(b, off)
}

// Size returns the file's size when it was opened.
func (f *File) Size() int64 { return f.info.Size() }

// Stat returns what the file was when it was opened.
func (f *File) Stat() fs.FileInfo { return f.info }

// Name returns the path the file was opened with.
func (f *File) Name() string { return f.path }

// Section returns a reader of the whole file.
func (f *File) Section() *io.SectionReader { return io.NewSectionReader(f, 0, f.Size()) }

// Close closes the file; reads under way finish first. Closing twice is not
// an error.
func (f *File) Close() error {
	p := f.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	if f.elem != nil {
		p.idle.Remove(f.elem)
		f.elem = nil
	}
	if f.users == 0 && f.f != nil {
		err := f.f.Close()
		f.f = nil
		p.open--
		return err
	}
	return nil
}

// ReadFile reads a whole regular file of at most limit bytes.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, info, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, info.Size(), limit)}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)}
	}
	return data, err
}
