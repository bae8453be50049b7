package infile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestOpenRefusesAnythingButARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "loop")
	if err := os.Symlink(sock, sock); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
		what string
	}{
		{fifo, ErrNotRegular, "a named pipe"},
		{dir, ErrNotRegular, "a directory"},
		{"/dev/zero", ErrNotRegular, "a character device"},
		{filepath.Join(dir, "missing"), os.ErrNotExist, ""},
		{sock, syscall.ELOOP, ""},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Open(c.path)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, c.want) {
				t.Errorf("%s: got %v, want %v", c.path, err, c.want)
			}
			var pe *os.PathError
			if !errors.As(err, &pe) || pe.Path != c.path {
				t.Errorf("%s: error %v does not name the path", c.path, err)
			}
			if c.what != "" && err != nil && !strings.Contains(err.Error(), c.what) {
				t.Errorf("%s: %v does not say %q", c.path, err, c.what)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Open blocked", c.path)
		}
	}
	if _, err := ReadFile(fifo, 100); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadFile of a FIFO: %v", err)
	}
}

// TestPoolKeepsDescriptorsBounded opens far more files than the pool's limit
// and reads them all, in turn and from several goroutines at once.
func TestPoolKeepsDescriptorsBounded(t *testing.T) {
	dir := t.TempDir()
	p := NewPool(4)
	var files []*File
	for i := range 100 {
		path := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(path, []byte(fmt.Sprintf("file %03d", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := p.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if p.open > 4 {
		t.Fatalf("%d descriptors open", p.open)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range files {
				f := files[(i+g*13)%len(files)]
				data, err := io.ReadAll(f.Section())
				if err != nil || string(data) != fmt.Sprintf("file %03d", (i+g*13)%len(files)) {
					t.Errorf("%s: %q, %v", f.Name(), data, err)
				}
			}
		}()
	}
	wg.Wait()
	if p.open > 4 {
		t.Errorf("%d descriptors open after the reads", p.open)
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if p.open != 0 {
		t.Errorf("%d descriptors open after Close", p.open)
	}
	if _, err := files[0].ReadAt(make([]byte, 1), 0); !errors.Is(err, os.ErrClosed) {
		t.Errorf("read after Close: %v", err)
	}
}

// TestReopenedFileMustBeTheSame replaces a file whose descriptor the pool
// closed: the next read refuses it.
func TestReopenedFileMustBeTheSame(t *testing.T) {
	dir := t.TempDir()
	p := NewPool(1)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("aaaa"), 0o644)
	os.WriteFile(b, []byte("bbbb"), 0o644)
	fa, err := p.Open(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Open(b); err != nil { // closes a's descriptor
		t.Fatal(err)
	}
	os.Remove(a)
	os.WriteFile(a, []byte("evil"), 0o644)
	if _, err := fa.ReadAt(make([]byte, 4), 0); !errors.Is(err, ErrChanged) {
		t.Errorf("got %v, want ErrChanged", err)
	}
}

func TestReadFileLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, make([]byte, 101), 0o644)
	if _, err := ReadFile(path, 100); !errors.Is(err, ErrTooLarge) {
		t.Errorf("got %v", err)
	}
	if data, err := ReadFile(path, 101); err != nil || len(data) != 101 {
		t.Errorf("got %d bytes, %v", len(data), err)
	}
}

// TestSmallReadsAsTheFile: reads of every size up to past smallRead, at
// offsets across block boundaries and the file's end, give what os.File's
// give, bytes, counts and io.EOF alike.
func TestSmallReadsAsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	data := make([]byte, 3*blockSize+123)
	rng := rand.New(rand.NewSource(1))
	rng.Read(data)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for i := 0; i < 20000; i++ {
		size := 1 + rng.Intn(smallRead+16)
		off := int64(rng.Intn(len(data) + 64))
		if i%7 == 0 { // just before a block's end
			off = int64(blockSize*(1+rng.Intn(3)) - rng.Intn(8))
		}
		got, want := make([]byte, size), make([]byte, size)
		n, err := f.ReadAt(got, off)
		wn, werr := ref.ReadAt(want, off)
		if n != wn || (err == nil) != (werr == nil) || !bytes.Equal(got[:n], want[:wn]) {
			t.Fatalf("ReadAt(%d bytes, %d) = %d, %v; os.File: %d, %v", size, off, n, err, wn, werr)
		}
	}
}
