package goffload

import "testing"

// TestVersion: a program built from the module knows its version, "(devel)"
// for a build from a checkout, as the tests are.
func TestVersion(t *testing.T) {
	if v := Version(); v == "" || v == "unknown" {
		t.Errorf("Version() = %q", v)
	}
}
