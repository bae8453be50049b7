package wrappertest

import (
	"os"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// shared holds what the tests build once: the goffload program.
var shared tooltest.Shared

func TestMain(m *testing.M) {
	// The programs the tests run use no cache of link steps: not the
	// user's, and no test's link is taken from another's.
	os.Setenv("GOFFLOAD_CACHE", "off")
	code := m.Run()
	shared.Remove()
	os.Exit(code)
}

// goffloadExe builds the command once for the tests that run it.
func goffloadExe(t *testing.T) string {
	t.Helper()
	return shared.Program(t, "github.com/goffload/goffload/cmd/goffload", "goffload")
}
