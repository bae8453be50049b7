package wrappertest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// shared holds what the tests build once: the goffload program.
var shared tooltest.Shared

// objectStore holds the objects that clang compiled of the programs of
// testdata/wrapper for the default run's links (tooltest.Store).
var objectStore = tooltest.Store{Dir: filepath.Join("testdata", "objects")}

// TestStoredObjectsAreCurrent: every compile in the store was made of the
// sources as they are.
func TestStoredObjectsAreCurrent(t *testing.T) {
	objectStore.CheckCurrent(t)
}

func TestMain(m *testing.M) {
	// The programs the tests run use no cache of link steps: not the
	// user's, and no test's link is taken from another's.
	os.Setenv("GOFFLOAD_CACHE", "off")
	// What the programs the tests run leave in the temporary folder (the
	// images libomptarget's x86-64 plugin loads) goes with the test
	// binary's own folder.
	removeTemp, err := tooltest.OwnTempDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	shared.Remove()
	removeTemp()
	os.Exit(code)
}

// goffloadExe builds the command once for the tests that run it.
func goffloadExe(t *testing.T) string {
	t.Helper()
	return shared.Program(t, "github.com/goffload/goffload/cmd/goffload", "goffload")
}
