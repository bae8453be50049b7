package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// shared holds what the tests of the package build once and share
// (builtOnce); TestMain removes it.
var shared tooltest.Shared

// compileStore holds what clang compiled for the package's tests, which
// the default run takes instead of compiling (tooltest.Store).
var compileStore = tooltest.Store{Dir: filepath.Join("testdata", "compiled")}

// TestStoredCompilesAreCurrent: every compile in the store was made of the
// sources as they are.
func TestStoredCompilesAreCurrent(t *testing.T) {
	compileStore.CheckCurrent(t)
}

// compiled runs clang (driver "clang" or "clang++") of release major in
// dir ("": the package's folder) with args, which write outs: through the
// store (tooltest.Store.Compile).
func compiled(t testing.TB, driver string, major int, dir string, args []string, outs ...string) {
	t.Helper()
	if err := compileStore.Compile(t, fmt.Sprintf("%s-%d", driver, major), tooltest.Tool(t, driver, major), dir, args, outs...); err != nil {
		t.Fatal(err)
	}
}

// builtOnce returns the file that build writes at the path it is given,
// built once per test binary for key (a compile's tool, flags and source,
// say): the tests that compile the same source with the same clang share
// one object. The file is shared: a test that changes it must copy it
// (copyTo) first.
func builtOnce(t testing.TB, key string, build func(out string) error) string {
	t.Helper()
	path, err := shared.File(key, func(path string) error {
		if err := build(path); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// copyTo copies the file src to dst (a test's own copy of a shared file).
func copyTo(t testing.TB, src, dst string) string {
	t.Helper()
	if err := tooltest.CopyFile(dst, src); err != nil {
		t.Fatal(err)
	}
	return dst
}
