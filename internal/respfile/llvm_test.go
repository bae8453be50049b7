package respfile

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/goffload/goffload/internal/tooltest"
)

// The releases whose tools the expansion is compared with.
var llvmReleases = []int{19, 22}

// clangArgs returns the arguments clang's driver sees once it has expanded
// args in dir, or the message of its expansion error. It runs `clang -### --
// ARGS`: after "--" every argument is an input, and each input that is not
// a file is reported, in order, as "<prog>: error: no such file or
// directory: '<argument>'" (the arguments of expandCases name no file).
func clangArgs(t *testing.T, clang, dir string, args []string) (got []string, errMsg string) {
	t.Helper()
	cmd := exec.Command(clang, append([]string{"-###", "--"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	out := stderr.String()
	prog := strings.TrimSuffix(filepath.Base(clang), filepath.Ext(clang))
	const missing = "error: no such file or directory: '"
	parts := strings.Split("\n"+strings.TrimSuffix(out, "\n"), "\n"+prog+": ")
	for _, p := range parts[1:] {
		switch {
		case strings.HasPrefix(p, missing):
			got = append(got, unescapeDiag(strings.TrimSuffix(p[len(missing):], "'")))
		case strings.HasPrefix(p, "error: no input files"):
		default:
			t.Fatalf("%s: unexpected diagnostic %q", prog, p)
		}
	}
	if err == nil {
		t.Fatalf("%s -### -- %q: no error, though no argument names a file:\n%s", prog, args, out)
	}
	if len(got) == 0 && !strings.Contains(out, "error: no input files") {
		// Not a diagnostic of the driver: the expansion's own message.
		return nil, out
	}
	return got, ""
}

// unescapeDiag undoes what clang's diagnostics do to bytes they do not
// print: "<U+0001>" for a control character, "<FF>" for a byte that is not
// UTF-8. (No argument of the tests holds such text itself.)
func unescapeDiag(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		if strings.HasPrefix(s, "<U+") {
			if end := strings.IndexByte(s, '>'); end > 0 {
				if r, err := strconv.ParseUint(s[3:end], 16, 32); err == nil {
					b.WriteRune(rune(r))
					s = s[end+1:]
					continue
				}
			}
		}
		if len(s) >= 4 && s[0] == '<' && s[3] == '>' {
			if v, err := strconv.ParseUint(s[1:3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				s = s[4:]
				continue
			}
		}
		_, n := utf8.DecodeRuneInString(s)
		b.WriteString(s[:n])
		s = s[n:]
	}
	return b.String()
}

// printArgs is a host linker that writes its arguments, each followed by a
// NUL byte, to $ARGS_OUT.
const printArgs = "#!/bin/sh\nfor a; do printf '%s\\0' \"$a\"; done > \"$ARGS_OUT\"\n"

// wrapperArgs returns the arguments that clang-linker-wrapper passes to its
// host linker once it has expanded args in dir (OptTable::parseArgs
// expands them), and what it printed. It runs the wrapper with
// --linker-path naming printArgs; the wrapper drops empty arguments, and
// adds -o OUT at the end, which is removed.
func wrapperArgs(t *testing.T, wrapper, dir string, args []string) (got []string, stderr string) {
	t.Helper()
	tools := t.TempDir()
	linker := filepath.Join(tools, "print-args")
	if err := os.WriteFile(linker, []byte(printArgs), 0o755); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(tools, "args")
	cmd := exec.Command(wrapper, append(append([]string{"--host-triple=x86_64-pc-linux-gnu", "--linker-path=" + linker}, args...), "-o", filepath.Join(tools, "out"))...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ARGS_OUT="+outFile)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %q: %v\n%s", wrapper, args, err, errb.String())
	}
	data, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatalf("the wrapper did not run its host linker: %v\n%s", err, errb.String())
	}
	got = strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
	if len(got) < 2 || got[len(got)-2] != "-o" {
		t.Fatalf("host linker's arguments %q do not end with -o OUT", got)
	}
	return got[:len(got)-2], errb.String()
}

// expandTools are the tools whose expansion of expandCases is compared with
// Expand's, each of llvmReleases: the columns of the matrix expandCases ×
// (tool, release), which TestExpandMatchesClang and
// TestExpandMatchesLinkerWrapper share and sample (tooltest.Sample): each
// case runs with one tool and release of the four (every one with
// OFFLOAD_TEST_EXHAUSTIVE), each tool and release with a quarter of the
// cases.
var expandTools = []string{"clang", "clang-linker-wrapper"}

// sampleExpandCase skips t unless case i of expandCases with tool and
// llvmReleases[r] is in the sample of the matrix of expandTools.
func sampleExpandCase(t *testing.T, i int, tool string, r int) {
	t.Helper()
	ti := slices.Index(expandTools, tool)
	tooltest.Sample(t, i, ti*len(llvmReleases)+r, len(expandCases), len(expandTools)*len(llvmReleases))
}

// TestExpandMatchesClang: for each case, clang-19's and clang-22's drivers
// expand the command line as Expand does, and refuse what Expand refuses
// (the cases sampled with TestExpandMatchesLinkerWrapper: expandTools).
func TestExpandMatchesClang(t *testing.T) {
	for r, major := range llvmReleases {
		t.Run(strconv.Itoa(major), func(t *testing.T) {
			clang := tooltest.Tool(t, "clang", major)
			for i, c := range expandCases {
				t.Run(c.name, func(t *testing.T) {
					sampleExpandCase(t, i, "clang", r)
					dir := t.TempDir()
					c.setUp(t, dir)
					got, msg := clangArgs(t, clang, dir, c.argsIn(dir))
					switch {
					case c.err != "" && !strings.Contains(msg, c.llvm):
						t.Errorf("clang-%d expanded to %q, printed %q; want an error saying %q", major, got, msg, c.llvm)
					case c.err == "" && msg != "":
						t.Errorf("clang-%d: %s", major, msg)
					case c.err == "" && !slices.Equal(got, c.want):
						t.Errorf("clang-%d expanded to %q, want %q", major, got, c.want)
					}
				})
			}
		})
	}
}

// TestExpandMatchesLinkerWrapper: clang-linker-wrapper 19 and 22 (the
// OptTable path) expand each case as clang's driver does, but for errors,
// which they print and then go on with what was expanded so far (the cases
// sampled with TestExpandMatchesClang: expandTools).
func TestExpandMatchesLinkerWrapper(t *testing.T) {
	for r, major := range llvmReleases {
		t.Run(strconv.Itoa(major), func(t *testing.T) {
			wrapper := tooltest.Tool(t, "clang-linker-wrapper", major)
			for i, c := range expandCases {
				t.Run(c.name, func(t *testing.T) {
					sampleExpandCase(t, i, "clang-linker-wrapper", r)
					dir := t.TempDir()
					c.setUp(t, dir)
					got, stderr := wrapperArgs(t, wrapper, dir, c.argsIn(dir))
					if c.err != "" {
						if !strings.Contains(stderr, c.llvm) {
							t.Errorf("clang-linker-wrapper-%d passed %q, printed %q; want a message saying %q", major, got, stderr, c.llvm)
						}
						return
					}
					// OptTable::ParseArgs skips empty arguments.
					want := slices.DeleteFunc(slices.Clone(c.want), func(s string) bool { return s == "" })
					if !slices.Equal(got, want) {
						t.Errorf("clang-linker-wrapper-%d passed %q, want %q", major, got, want)
					}
				})
			}
		})
	}
}
