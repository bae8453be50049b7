package respfile

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
)

// roundTrip are arguments that a response file must carry as they are:
// spaces, quotes, backslashes, shell characters, control characters, bytes
// that are not UTF-8. Each is also a file name (no '/'), and none starts
// with '-' or '@'.
var roundTrip = []string{
	"plain", "two words", `dq"uote`, `back\slash`, `trailing\`, `\\double`, "dollar$HOME",
	"single'quote", "tab\there", "new\nline", "cr\rreturn", "v\vf\f", "\u00e9t\u00e9 \U0001F600",
	"bad\xffutf8", `"`, `'`, `\`, " lead", "trail ", "#hash", "*star?", `a"b'c\d e`, `\"`,
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"a":       `"a"`,
		"":        `""`,
		`a"b\c`:   `"a\"b\\c"`,
		"$x 'y'":  `"$x 'y'"`,
		"a\nb\tc": "\"a\nb\tc\"",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestWriteRefusesWhatCannotBeReadBack(t *testing.T) {
	for _, args := range [][]string{{"a", ""}, {"a\x00b"}} {
		var b bytes.Buffer
		if err := Write(&b, args); err == nil || b.Len() != 0 {
			t.Errorf("Write(%q): %v, wrote %q; want an error and nothing", args, err, b.String())
		}
	}
}

// writeFile writes args as a response file in dir.
func writeFile(t *testing.T, dir string, args []string) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, args); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "args.rsp")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readers are the LLVM tools that read back what Write writes in
// TestWriteReadsBack and TestWriteReadsBackByLinkers: the rows of the
// matrix readers × llvmReleases that the two tests share and sample
// (tooltest.Sample): by default clang-19, clang-linker-wrapper-22 and
// ld.lld-19 read it (every cell with OFFLOAD_TEST_EXHAUSTIVE); ld.bfd,
// of no release, always does.
var readers = []string{"clang", "clang-linker-wrapper", "ld.lld"}

// sampleReader skips t unless tool of llvmReleases[r] is in the sample of
// the matrix of readers.
func sampleReader(t *testing.T, tool string, r int) {
	t.Helper()
	tooltest.Sample(t, slices.Index(readers, tool), r, len(readers), len(llvmReleases))
}

// TestWriteReadsBack: Expand, clang's driver (19, 22) and
// clang-linker-wrapper (19, 22) read what Write writes as the arguments
// written (the tools sampled: readers).
func TestWriteReadsBack(t *testing.T) {
	dir := t.TempDir()
	rsp := writeFile(t, dir, roundTrip)
	got, err := Expand([]string{"@" + rsp})
	if err != nil || !slices.Equal(got, roundTrip) {
		t.Fatalf("Expand: %q, %v\nwant %q", got, err, roundTrip)
	}
	for r, major := range llvmReleases {
		t.Run("clang-"+strconv.Itoa(major), func(t *testing.T) {
			sampleReader(t, "clang", r)
			clang := tooltest.Tool(t, "clang", major)
			if got, msg := clangArgs(t, clang, dir, []string{"@" + rsp}); msg != "" || !slices.Equal(got, roundTrip) {
				t.Errorf("read back %q (%s)\nwant %q", got, msg, roundTrip)
			}
		})
		t.Run("clang-linker-wrapper-"+strconv.Itoa(major), func(t *testing.T) {
			sampleReader(t, "clang-linker-wrapper", r)
			wrapper := tooltest.Tool(t, "clang-linker-wrapper", major)
			if got, stderr := wrapperArgs(t, wrapper, dir, []string{"@" + rsp}); !slices.Equal(got, roundTrip) {
				t.Errorf("read back %q (%s)\nwant %q", got, stderr, roundTrip)
			}
		})
	}
}

// TestWriteReadsBackByLinkers: GNU ld and ld.lld (19, 22) read what Write
// writes as the arguments written: given as input files whose names are
// the arguments, they link them (-r) and list them (--trace) in order (the
// releases of ld.lld sampled: readers).
func TestWriteReadsBackByLinkers(t *testing.T) {
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[runtime.GOARCH]
	if machine == elf.EM_NONE {
		t.Skipf("no object of this machine (%s) to link", runtime.GOARCH)
	}
	dir := t.TempDir()
	var obj bytes.Buffer
	if _, err := elfobj.Write(&obj, &elfobj.Object{Data: elf.ELFDATA2LSB, Machine: machine}); err != nil {
		t.Fatal(err)
	}
	for _, name := range roundTrip {
		if err := os.WriteFile(filepath.Join(dir, name), obj.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rsp := writeFile(t, t.TempDir(), roundTrip)
	want := strings.Join(roundTrip, "\n") + "\n"
	type linker struct {
		name, path string
		r          int // ld.lld's release: llvmReleases[r]; ld.bfd: -1
	}
	var linkers []linker
	if ld, err := exec.LookPath("ld.bfd"); err == nil {
		linkers = append(linkers, linker{"ld.bfd", ld, -1})
	}
	for r, major := range llvmReleases {
		if p := tooltest.Find("ld.lld", major); p != "" {
			linkers = append(linkers, linker{"ld.lld-" + strconv.Itoa(major), p, r})
		}
	}
	if len(linkers) == 0 {
		tooltest.Missing(t, "neither ld.bfd nor ld.lld found")
	}
	for _, l := range linkers {
		name, ld := l.name, l.path
		t.Run(name, func(t *testing.T) {
			if l.r >= 0 {
				sampleReader(t, "ld.lld", l.r)
			}
			cmd := exec.Command(ld, "-r", "-o", filepath.Join(t.TempDir(), "out.o"), "--trace", "@"+rsp)
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			if string(out) != want {
				t.Errorf("%s read %q\nwant %q", name, out, want)
			}
		})
	}
}

// unprintArgs splits a command line as clang -### and -v print it
// (llvm::sys::printArg, quoted): each argument in double quotes, with '"',
// '\' and '$' after a backslash, one space between.
func unprintArgs(t *testing.T, line string) []string {
	t.Helper()
	var args []string
	for line = strings.TrimLeft(line, " "); line != ""; line = strings.TrimLeft(line, " ") {
		if line[0] != '"' {
			t.Fatalf("not a quoted argument: %q", line)
		}
		var b strings.Builder
		i := 1
		for ; i < len(line) && line[i] != '"'; i++ {
			if line[i] == '\\' {
				i++
			}
			b.WriteByte(line[i])
		}
		args = append(args, b.String())
		line = line[i+1:]
	}
	return args
}

// TestFitsAndWriteMatchClang: clang-19 and clang-22 write a response file
// for the linker exactly when Fits says the command does not fit (one
// byte either side of the bound), and write it as Write does (-v prints
// it). The releases × sides of the bound are sampled (tooltest.Sampled):
// by default clang-19 links the command that fits, clang-22 the one that
// does not.
func TestFitsAndWriteMatchClang(t *testing.T) {
	trueProg, err := exec.LookPath("true")
	if err != nil {
		tooltest.Missing(t, "no true program to link with")
	}
	for r, major := range llvmReleases {
		t.Run(strconv.Itoa(major), func(t *testing.T) {
			clang := tooltest.Tool(t, "clang", major)
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "e.o"), nil, 0o644)
			// The link of e.o with arguments of every kind, and pad.
			clangArgs := func(pad int) []string {
				return []string{"--ld-path=" + trueProg, "e.o", "-o", "prog", `-Wl,a"b\c$d`, "-Wl,x y", "-Wl,'q'", "-Wl," + strings.Repeat("p", pad)}
			}
			run := func(flag string, pad int) string {
				cmd := exec.Command(clang, append([]string{flag}, clangArgs(pad)...)...)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s %s: %v\n%s", clang, flag, err, out)
				}
				return string(out)
			}
			lines := strings.Split(strings.TrimSpace(run("-###", 1)), "\n")
			link := unprintArgs(t, lines[len(lines)-1])
			if link[0] != trueProg {
				t.Fatalf("the last command of -### is not the link: %q", link)
			}
			padAt := slices.Index(link, "p")
			if padAt < 0 {
				t.Fatalf("the pad is not in the link: %q", link)
			}
			size := len(link[0]) + 1
			for _, a := range link[1:] {
				size += len(a) + 1
			}
			// With pad n, the command has size-1+n bytes: at most 64 KiB fits.
			pads := []int{64<<10 - size + 1, 64<<10 - size + 2}
			for i, pad := range pads {
				if !tooltest.Sampled(r, i, len(llvmReleases), len(pads)) {
					t.Logf("%d bytes: not in the default sample (%s=1 runs it)", size-1+pad, tooltest.ExhaustiveEnv)
					continue
				}
				args := slices.Clone(link[1:])
				args[padAt-1] = strings.Repeat("p", pad)
				fits := Fits(link[0], args)
				out := run("-v", pad)
				const marker = "Arguments passed via response file:\n"
				i := strings.Index(out, marker)
				if used := i >= 0; used == fits {
					t.Errorf("%d bytes: Fits says %v, clang-%d used a response file: %v", size-1+pad, fits, major, used)
				}
				if i < 0 {
					continue
				}
				rsp, _, ok := strings.Cut(out[i+len(marker):], "\n (end of response file)")
				var b bytes.Buffer
				Write(&b, args)
				if !ok || rsp != b.String() {
					t.Errorf("clang-%d wrote the response file\n%q\nWrite writes\n%q", major, clip(rsp), clip(b.String()))
				}
			}
		})
	}
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:200] + "..." + s[len(s)-200:]
	}
	return s
}

// TestFits: the bounds, one byte either side.
func TestFits(t *testing.T) {
	for _, c := range []struct {
		prog string
		args []string
		want bool
	}{
		{"p", nil, true},
		{strings.Repeat("p", 1<<20), nil, true},                   // the name alone never counts
		{"p", []string{strings.Repeat("a", 64<<10-4)}, true},      // 65535 bytes with the name
		{"p", []string{strings.Repeat("a", 64<<10-3)}, true},      // 65536
		{"p", []string{strings.Repeat("a", 64<<10-2)}, false},     // 65537
		{"p", []string{"a", strings.Repeat("a", 64<<10-5)}, true}, // 65536
		{"p", []string{"a", strings.Repeat("a", 64<<10-4)}, false},
		{"", []string{strings.Repeat("a", 128<<10)}, false},
	} {
		if got := Fits(c.prog, c.args); got != c.want {
			n := len(c.prog) + 1
			for _, a := range c.args {
				n += len(a) + 1
			}
			t.Errorf("Fits(%d bytes) = %v, want %v", n, got, c.want)
		}
	}
}
