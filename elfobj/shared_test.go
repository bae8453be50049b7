package elfobj

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestMain removes the files that the tests share (see shared).
func TestMain(m *testing.M) {
	code := m.Run()
	shared.Remove()
	os.Exit(code)
}

// shared holds the files built once for all the tests of the package.
var shared tooltest.Shared

// sharedBuild returns the file name that the command prog args writes to
// the path that replaces the argument "OUT", built once for the package for
// each name, holding a tooltest.Slot while it runs.
func sharedBuild(t testing.TB, name, prog string, args ...string) string {
	t.Helper()
	path, err := shared.File(name, func(path string) error {
		argv := append([]string{}, args...)
		for i, a := range argv {
			if a == "OUT" {
				argv[i] = path
			}
		}
		release := tooltest.Slot()
		msg, err := exec.Command(prog, argv...).CombinedOutput()
		release()
		if err != nil {
			return fmt.Errorf("%s %q: %v\n%s", prog, argv, err, msg)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// dynBuild returns testdata/dyn/dyn.c built by cc, once for the package, as
// kind: "pie" and "so" (a PIE and a shared object that need libm), "nopie"
// (an executable at a fixed address), "obj" (a relocatable object).
func dynBuild(t *testing.T, kind string) string {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		tooltest.Missing(t, "cc not found")
	}
	libm := []string{"-Wl,--no-as-needed", "-lm"}
	args := map[string][]string{
		"pie":   append([]string{"-pie", "-fPIE"}, libm...),
		"so":    append([]string{"-shared", "-fPIC"}, libm...),
		"nopie": {"-no-pie", "-fno-PIE"},
		"obj":   {"-c"},
	}[kind]
	if args == nil {
		t.Fatalf("dynBuild: no kind %q", kind)
	}
	return sharedBuild(t, "dyn-"+kind, cc, append(args, filepath.Join("testdata", "dyn", "dyn.c"), "-o", "OUT")...)
}

// ompMain returns testdata/roundtrip/omp_main.c compiled by clang-19, once
// for the package: it holds no OpenMP, so it is compiled without.
func ompMain(t *testing.T) string {
	t.Helper()
	clang := tooltest.Tool(t, "clang", 19)
	return sharedBuild(t, "omp_main.o", clang, "-c", filepath.Join("testdata", "roundtrip", "omp_main.c"), "-o", "OUT")
}

// readelfFiles runs llvm-readelf once with args on all files, holding a
// tooltest.Slot, and returns what it printed of each: the part of its
// output under the heading "File: path" that it prints when there are
// several, then the lines of its stderr that name the file (or no file).
func readelfFiles(t *testing.T, readelf string, args []string, files ...string) map[string]string {
	t.Helper()
	argv := append(append([]string{}, args...), files...)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(readelf, argv...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	release := tooltest.Slot()
	err := cmd.Run()
	release()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s%s", readelf, argv, err, stdout.String(), stderr.String())
	}
	parts := map[string]*strings.Builder{}
	for _, f := range files {
		parts[f] = &strings.Builder{}
	}
	if len(files) == 1 {
		parts[files[0]].WriteString(stdout.String())
	} else {
		var cur *strings.Builder
		seen := map[string]bool{}
		for _, line := range strings.SplitAfter(stdout.String(), "\n") {
			if p, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "File: "); ok && parts[p] != nil {
				cur = parts[p]
				seen[p] = true
				continue
			}
			if cur == nil {
				if strings.TrimSpace(line) == "" {
					continue
				}
				t.Fatalf("%s %q: output before the first file's:\n%s", readelf, argv, stdout.String())
			}
			cur.WriteString(line)
		}
		for _, f := range files {
			if !seen[f] {
				t.Fatalf("%s %q printed nothing for %s:\n%s", readelf, argv, f, stdout.String())
			}
		}
	}
	for _, line := range strings.SplitAfter(stderr.String(), "\n") {
		named := false
		for _, f := range files {
			if strings.Contains(line, "'"+f+"'") {
				parts[f].WriteString(line)
				named = true
			}
		}
		if !named && line != "" {
			for _, f := range files {
				parts[f].WriteString(line)
			}
		}
	}
	out := map[string]string{}
	for f, b := range parts {
		// The blank line that separates one file's part from the next
		// file's heading belongs to neither.
		out[f] = strings.TrimRight(b.String(), "\n") + "\n"
	}
	return out
}
