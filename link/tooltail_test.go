package link

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailedToolSaysWhy: with no Options.Stderr, a step whose tool fails
// returns an error holding the end of what the tool printed (the reason of
// the failure would be lost otherwise): the last 4 KiB, from a line's start;
// with Stderr, the tool prints there and the error does not repeat it.
func TestFailedToolSaysWhy(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "cc")
	script := "#!/bin/sh\ni=0\nwhile [ $i -lt 500 ]; do echo \"line $i of the linker's talk\" >&2; i=$((i+1)); done\necho 'undefined reference to `kernel_body`' >&2\nexit 1\n"
	if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Step{Kind: StepHostLink, Tool: tool, Args: []string{"-o", filepath.Join(dir, "prog")}}
	err := (&Link{opt: &Options{}}).runCommand(context.Background(), s)
	if !errors.Is(err, errStepFailed) || !strings.Contains(err.Error(), "undefined reference to `kernel_body`") ||
		!strings.Contains(err.Error(), "[...]\nline ") || len(err.Error()) > 5000 {
		t.Errorf("no Stderr: the error (%d bytes) lacks the tool's last words:\n%.300s", len(err.Error()), err)
	}
	var stderr bytes.Buffer
	err = (&Link{opt: &Options{Stderr: &stderr}}).runCommand(context.Background(), s)
	if !errors.Is(err, errStepFailed) || strings.Contains(err.Error(), "kernel_body") || !strings.Contains(stderr.String(), "kernel_body") {
		t.Errorf("with Stderr: %v; printed %d bytes", err, stderr.Len())
	}
}
