// Package wrappertest holds the tests that link the OpenMP programs of
// ../testdata/wrapper through clang -B DIR with goffload as DIR's
// clang-linker-wrapper, beside clang's own links, for every release (see
// TestWrapperOpenMP). They are a package of their own so that the
// command's tests and these run side by side, each well within go test's
// ten minutes a package on a busy 2-core machine. It has no code to use.
package wrappertest
