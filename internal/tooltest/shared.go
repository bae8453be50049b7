package tooltest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Shared is the files that the tests of a package build once and share (a
// compiler's objects, say), each in a folder made on first use. A package
// holds one in a variable, and its TestMain calls Remove after m.Run.
type Shared struct {
	mu    sync.Mutex
	dir   string
	err   error
	files map[string]*sharedFile
}

type sharedFile struct {
	once sync.Once
	path string
	err  error
}

// File returns the file that build writes at the path it is given, built
// once for key (the tool, its flags and its input, say): the first caller
// builds it, the others wait for it and get its path or its error. The
// file is shared: a test that changes it must copy it first.
func (s *Shared) File(key string, build func(path string) error) (string, error) {
	s.mu.Lock()
	if s.dir == "" && s.err == nil {
		s.dir, s.err = os.MkdirTemp("", "goffload-test-shared-")
	}
	if s.files == nil {
		s.files = map[string]*sharedFile{}
	}
	f := s.files[key]
	if f == nil {
		f = &sharedFile{}
		s.files[key] = f
	}
	dir, err := s.dir, s.err
	s.mu.Unlock()
	if err != nil {
		return "", err
	}
	f.once.Do(func() {
		sum := sha256.Sum256([]byte(key))
		path := filepath.Join(dir, hex.EncodeToString(sum[:12]))
		if f.err = build(path); f.err == nil {
			f.path = path
		}
	})
	return f.path, f.err
}

// Remove removes the files built; TestMain calls it after the tests.
func (s *Shared) Remove() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Program returns the program that `go build` makes of package pkg, named
// name, built once into s for the tests that run it as a process.
func (s *Shared) Program(t testing.TB, pkg, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds " + name)
	}
	dir, err := s.File("go build "+pkg, func(dir string) error {
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}
