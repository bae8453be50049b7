package stubs

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/internal/tooltest"
)

// TestMain removes the files that the tests share (see cached).
func TestMain(m *testing.M) {
	code := m.Run()
	shared.Remove()
	os.Exit(code)
}

// shared holds the files made once for all the tests of the package (llc's
// objects, those of the Code's .eh_frame).
var shared tooltest.Shared

// cached returns the file that build writes to the path it is given, made
// once for the package for each key.
func cached(key string, build func(path string) error) (string, error) {
	return shared.File(key, build)
}

// runTool runs a tool holding a tooltest.Slot and returns its stdout, or an
// error with its stderr.
func runTool(name string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	release := tooltest.Slot()
	err := cmd.Run()
	release()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// llcObject compiles ir with llc for triple (position-independent), once
// for the package for each llc, triple and module, and returns the object.
func llcObject(llc, triple, ir string) (string, error) {
	return cached("llc\x00"+llc+"\x00"+triple+"\x00"+ir, func(obj string) error {
		src := obj + ".ll"
		if err := os.WriteFile(src, []byte(ir), 0o644); err != nil {
			return err
		}
		_, err := runTool(llc, "-mtriple="+triple, "-relocation-model=pic", "-filetype=obj", src, "-o", obj)
		return err
	})
}

// inParallel calls f for 0 to n-1, each in a goroutine of its own, and
// waits for all (f takes a tooltest.Slot around each tool it runs).
func inParallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i)
		}()
	}
	wg.Wait()
}

// ehFrameObject writes an object holding c's code and an .eh_frame made from
// its CFI (buildEHFrame), once for the package for each such object, and
// returns its path.
func ehFrameObject(m elf.Machine, c *Code) (string, error) {
	fi, err := ehframe.FrameInfoFor(m)
	if err != nil {
		return "", err
	}
	o, err := buildEHFrame(m, fi, c)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		return "", err
	}
	return cached("eh_frame\x00"+buf.String(), func(path string) error {
		return os.WriteFile(path, buf.Bytes(), 0o644)
	})
}

// dwarfdumpFDEs runs llvm-dwarfdump --eh-frame once on all paths and returns
// the FDEs of each (see fdes).
func dwarfdumpFDEs(t *testing.T, dwarfdump string, paths []string) map[string][]string {
	t.Helper()
	var uniq []string
	seen := map[string]bool{}
	for _, p := range paths {
		if p != "" && !seen[p] {
			seen[p] = true
			uniq = append(uniq, p)
		}
	}
	out := map[string][]string{}
	if len(uniq) == 0 {
		return out
	}
	text, err := runTool(dwarfdump, append([]string{"--eh-frame"}, uniq...)...)
	if err != nil {
		t.Fatal(err)
	}
	// Each file's part begins with "PATH:\tfile format NAME".
	parts := map[string]*strings.Builder{}
	var cur *strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		if p, _, ok := strings.Cut(line, ":\tfile format "); ok && seen[p] {
			cur = &strings.Builder{}
			parts[p] = cur
			continue
		}
		if cur != nil {
			cur.WriteString(line)
		}
	}
	for _, p := range uniq {
		b, ok := parts[p]
		if !ok {
			t.Fatalf("%s --eh-frame printed nothing for %s:\n%s", dwarfdump, p, text)
		}
		out[p] = fdes(b.String())
	}
	return out
}
