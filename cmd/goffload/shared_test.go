package main

import (
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// shared holds what the tests of the package build once and share
// (builtOnce); TestMain removes it.
var shared tooltest.Shared

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
