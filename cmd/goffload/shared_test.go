package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// sharedDir holds what the tests of the package build once and share
// (builtOnce); TestMain makes it and removes it.
var sharedDir string

// built is one file of sharedDir: built once, by the first test asking.
type built struct {
	once sync.Once
	path string
	err  error
}

var (
	builtMu sync.Mutex
	builts  = map[string]*built{}
)

// builtOnce returns the file that build writes at the path it is given,
// built once per test binary for key (a compile's tool, flags and source,
// say): the tests that compile the same source with the same clang share
// one object. The file is shared: a test that changes it must copy it
// (copyTo) first.
func builtOnce(t testing.TB, key string, build func(out string) error) string {
	t.Helper()
	builtMu.Lock()
	b, ok := builts[key]
	if !ok {
		b = &built{}
		builts[key] = b
	}
	builtMu.Unlock()
	b.once.Do(func() {
		sum := sha256.Sum256([]byte(key))
		dir := filepath.Join(sharedDir, hex.EncodeToString(sum[:8]))
		if b.err = os.MkdirAll(dir, 0o755); b.err != nil {
			return
		}
		b.path = filepath.Join(dir, "out")
		if err := build(b.path); err != nil {
			b.err = fmt.Errorf("%s: %w", key, err)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// copyTo copies the file src to dst (a test's own copy of a shared file).
func copyTo(t testing.TB, src, dst string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}
