package elfobj_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// toolOnFiles runs prog in dir with args on all files at once, holding a
// tooltest.Slot, and returns what it printed on stdout of each file, and its
// stderr; a non-zero exit fails the test. Each file's part of stdout begins
// with a line that head returns the file of (and "" for any other line),
// when there are several.
func toolOnFiles(t *testing.T, dir, prog string, args []string, files []string, head func(line string) string) (map[string]string, string) {
	t.Helper()
	var o, e bytes.Buffer
	argv := append(append([]string{}, args...), files...)
	cmd := exec.Command(prog, argv...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &o, &e
	release := tooltest.Slot()
	err := cmd.Run()
	release()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", prog, strings.Join(argv, " "), err, o.String(), e.String())
	}
	if len(files) == 1 {
		return map[string]string{files[0]: strings.TrimRight(o.String(), "\n") + "\n"}, e.String()
	}
	want := map[string]bool{}
	for _, f := range files {
		want[f] = true
	}
	parts := map[string]*strings.Builder{}
	var cur *strings.Builder
	for _, line := range strings.SplitAfter(o.String(), "\n") {
		if f := head(strings.TrimRight(line, "\n")); want[f] && parts[f] == nil {
			cur = &strings.Builder{}
			parts[f] = cur
			continue
		}
		if cur == nil {
			if strings.TrimSpace(line) != "" {
				t.Fatalf("%s %s: output before the first file's:\n%s", prog, strings.Join(argv, " "), o.String())
			}
			continue
		}
		cur.WriteString(line)
	}
	out := map[string]string{}
	for _, f := range files {
		if parts[f] == nil {
			t.Fatalf("%s %s printed nothing for %s:\n%s", prog, strings.Join(argv, " "), f, o.String())
		}
		// The blank line that separates one file's part from the next
		// file's heading belongs to neither.
		out[f] = strings.TrimRight(parts[f].String(), "\n") + "\n"
	}
	return out, e.String()
}

// readelfHead is the heading of a file in the output of llvm-readelf and
// binutils readelf run on several files.
func readelfHead(line string) string {
	f, _ := strings.CutPrefix(line, "File: ")
	if f == line {
		return ""
	}
	return f
}

// dwarfdumpHead is the heading of a file in the output of llvm-dwarfdump.
func dwarfdumpHead(line string) string {
	f, _, ok := strings.Cut(line, ":\tfile format ")
	if !ok {
		return ""
	}
	return f
}

// checkReadelfCleanAll runs llvm-readelf 19 and binutils readelf on all
// files at once with opts: both must exit 0 and print nothing on stderr
// and no warning for any file. It returns binutils readelf's output of each
// file.
func checkReadelfCleanAll(t *testing.T, files []string, llvmOpts, gnuOpts []string) map[string]string {
	t.Helper()
	var gnu map[string]string
	for _, c := range []struct {
		prog string
		opts []string
	}{
		{tooltest.Tool(t, "llvm-readelf", 19), llvmOpts},
		{lookTool(t, "readelf"), gnuOpts},
	} {
		outs, stderr := toolOnFiles(t, "", c.prog, c.opts, files, readelfHead)
		if stderr != "" {
			t.Errorf("%s %s: stderr:\n%s", filepath.Base(c.prog), strings.Join(c.opts, " "), stderr)
		}
		for _, f := range files {
			if w := warningLine.FindAllString(outs[f], -1); len(w) > 0 {
				t.Errorf("%s %s %s: warnings:\n%s", filepath.Base(c.prog), strings.Join(c.opts, " "), filepath.Base(f), strings.Join(w, "\n"))
			}
		}
		gnu = outs
	}
	return gnu
}
