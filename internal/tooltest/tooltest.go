// Package tooltest finds the LLVM tools that tests compare against, and applies
// the project's rule for a missing tool: the test is skipped with the reason,
// or, when OFFLOAD_REQUIRE_TOOLS=1 (as in CI), it fails.
package tooltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// RequireEnv is the environment variable that turns a missing tool into a
// test failure.
const RequireEnv = "OFFLOAD_REQUIRE_TOOLS"

// Required reports whether missing tools fail tests.
func Required() bool {
	v := os.Getenv(RequireEnv)
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// Dirs returns the folders searched for the tools of LLVM release major, after
// $PATH: $OFFLOAD_LLVM_<major>/bin (an unpacked package, e.g. from
// `dpkg -x`), then /usr/lib/llvm-<major>/bin.
func Dirs(major int) []string {
	var dirs []string
	if root := os.Getenv("OFFLOAD_LLVM_" + strconv.Itoa(major)); root != "" {
		dirs = append(dirs, filepath.Join(root, "bin"), root)
	}
	return append(dirs, fmt.Sprintf("/usr/lib/llvm-%d/bin", major))
}

// Find returns the path of tool name of LLVM release major (for example
// "clang-offload-packager", 19 finds clang-offload-packager-19 or
// /usr/lib/llvm-19/bin/clang-offload-packager), and "" if there is none.
func Find(name string, major int) string {
	if p, err := exec.LookPath(name + "-" + strconv.Itoa(major)); err == nil {
		return p
	}
	for _, d := range Dirs(major) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Tool returns the path of tool name of release major, or ends the test: it is
// skipped with the reason, or fails when tools are required.
func Tool(t testing.TB, name string, major int) string {
	t.Helper()
	if p := Find(name, major); p != "" {
		return p
	}
	Missing(t, fmt.Sprintf("%s of LLVM %d not found (looked for %s-%d in $PATH and in %v)", name, major, name, major, Dirs(major)))
	return ""
}

// Missing ends the test for a missing prerequisite described by reason.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s; %s=1 makes this a failure", reason, RequireEnv)
	}
	t.Skip(reason)
}
