package wrappertest

import (
	"fmt"
	"os"
	"os/exec"
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
	if testing.Short() {
		t.Skip("builds goffload")
	}
	exe, err := shared.File("go build github.com/goffload/goffload/cmd/goffload", func(path string) error {
		if out, err := exec.Command("go", "build", "-o", path, "github.com/goffload/goffload/cmd/goffload").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
