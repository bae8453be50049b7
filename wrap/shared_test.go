package wrap

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// sharedDir holds what the tests build once and share (see shared);
// TestMain makes it and removes it.
var sharedDir string

func TestMain(m *testing.M) {
	// What the programs the tests run leave in the temporary folder goes
	// with the test binary's own folder.
	removeTemp, err := tooltest.OwnTempDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := os.MkdirTemp("", "wrap-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	removeTemp()
	os.Exit(code)
}

// sharedEntry is one thing built once for the test binary.
type sharedEntry struct {
	once    sync.Once
	val     any
	ok      bool   // built
	skipped bool   // the test that built it was skipped (a missing tool)
	by      string // that test
}

var sharedEntries sync.Map // key → *sharedEntry

// shared returns what build returns for key, built once per test binary by
// the first test that asks: the tests that compile the same source with the
// same tool, or run clang-linker-wrapper on the same inputs, share one run.
// build writes its files in dir, a folder of its own that lasts as long as
// the test binary; what it returns (and the files in dir) must not be
// changed by the tests that share it. If the first test failed or skipped
// in build, the others fail or skip too, naming it.
func shared[T any](t testing.TB, key string, build func(t testing.TB, dir string) T) T {
	t.Helper()
	v, _ := sharedEntries.LoadOrStore(key, new(sharedEntry))
	e := v.(*sharedEntry)
	e.once.Do(func() {
		e.by = t.Name()
		defer func() { e.skipped = t.Skipped() }()
		sum := sha256.Sum256([]byte(key))
		dir := filepath.Join(sharedDir, hex.EncodeToString(sum[:8]))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		e.val = build(t, dir)
		e.ok = true
	})
	switch {
	case e.ok:
		return e.val.(T)
	case e.skipped:
		t.Skipf("skipped in %s, which builds what this test shares (%.200s)", e.by, key)
	default:
		t.Fatalf("failed in %s, which builds what this test shares (%.200s)", e.by, key)
	}
	panic("unreachable")
}

// hashOf is the key of a long input (a module) in shared's keys.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// runCmd runs cmd holding a tooltest.Slot (so that parallel tests run no more
// tools than there are processors) and returns its standard output and
// error together; an error ends the test with them.
func runCmd(t testing.TB, cmd *exec.Cmd) []byte {
	t.Helper()
	free := tooltest.Slot()
	out, err := cmd.CombinedOutput()
	free()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return out
}

// compileLLC compiles the module with llc and flags, as the wrapper tests
// give it to llc, and returns the object's path: once per test binary for
// the same llc, flags and module (23's COFF modules are 22's, say).
func compileLLC(t testing.TB, llc, module string, flags ...string) string {
	t.Helper()
	key := fmt.Sprintf("llc %s %q %s", llc, flags, hashOf(module))
	return shared(t, key, func(t testing.TB, dir string) string {
		ir, obj := filepath.Join(dir, "w.ll"), filepath.Join(dir, "w.o")
		if err := os.WriteFile(ir, []byte(module), 0o644); err != nil {
			t.Fatal(err)
		}
		runCmd(t, exec.Command(llc, append(append([]string{}, flags...), ir, "-o", obj)...))
		return obj
	})
}

// trueProgram returns the path of `true`, which stands in for the host
// linker where a test needs what clang-linker-wrapper made before the host
// link (the registration object) but not the program.
func trueProgram(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("true")
	if err != nil {
		tooltest.Missing(t, "no `true` program to stand in for the host linker")
	}
	return p
}

// linkShared returns a stand-in for the host linker that runs ld for a
// shared object (clang-linker-wrapper 15 links an x86-64 offload target's
// device image with the host linker, -shared) and does nothing else: the
// tests that need what clang-linker-wrapper made before the host link (the
// registration object, the fatbin) but not the program give it as
// --ld-path, which saves linking the program against libomptarget and its
// libraries.
func linkShared(t testing.TB) string {
	t.Helper()
	ld := tooltest.Program(t, "ld")
	return shared(t, "linkShared", func(t testing.TB, dir string) string {
		p := filepath.Join(dir, "ld")
		script := "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -shared ] && exec '" + ld + "' \"$@\"; done\nexit 0\n"
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	})
}
