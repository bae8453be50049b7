package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShownAndEscaped(t *testing.T) {
	for _, c := range []struct{ in, shown, escaped string }{
		{"x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu", "x86_64-unknown-linux-gnu"},
		{"gfx90a:xnack+ é", "gfx90a:xnack+ é", "gfx90a:xnack+ é"},
		{"", "", ""},
		{"a\nb", `"a\nb"`, `a\nb`},
		{"\x1b[2J\r", `"\x1b[2J\r"`, `\x1b[2J\r`},
		{"a\xffb", `"a\xffb"`, `a\xffb`},
		{"a\u202eb", `"a\u202eb"`, `a\u202eb`},
		{"tab\t", `"tab\t"`, `tab\t`},
	} {
		if got := shown(c.in); got != c.shown {
			t.Errorf("shown(%q) = %s, want %s", c.in, got, c.shown)
		}
		if got := escaped(c.in); got != c.escaped {
			t.Errorf("escaped(%q) = %s, want %s", c.in, got, c.escaped)
		}
	}
}

// noControl fails if out holds a control character but newline and tab.
func noControl(t *testing.T, what, out string) {
	t.Helper()
	if i := strings.IndexFunc(out, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f }); i >= 0 {
		t.Errorf("%s holds control character %q at %d:\n%s", what, out[i], i, out)
	}
}

// Names and strings from files are printed quoted when they do not print
// as themselves: a member name cannot forge an image block, a triple
// cannot send ESC sequences to the terminal (issue 24, item 9).
func TestListEscapesNamesFromFiles(t *testing.T) {
	dir := t.TempDir()
	member := filepath.Join(dir, "inject.a")
	triple := filepath.Join(dir, "inject.bin")
	os.WriteFile(member, injectArchive(), 0o644)
	os.WriteFile(triple, injectBinary(), 0o644)
	for _, args := range [][]string{{"list", member}, {"list", triple}, {"list", "--llvm", "24", member, triple}, {"check", member, triple}} {
		stdout, stderr, _ := cli(t, args...)
		noControl(t, strings.Join(args[:len(args)-1], " ")+" stdout", stdout)
		noControl(t, strings.Join(args[:len(args)-1], " ")+" stderr", stderr)
		if strings.Contains(stdout, "\nOFFLOADING IMAGE [7]") || strings.Contains(stdout, "\nproducer        cuda") {
			t.Errorf("%v: a name forged lines:\n%s", args, stdout)
		}
	}
	stdout, _, _ := cli(t, "list", member)
	if want := `"` + member + `(k.o\n\nOFFLOADING IMAGE [7]:\n`; !strings.Contains(stdout, want) {
		t.Errorf("list: the member's name is not quoted (want %s):\n%s", want, stdout)
	}
	stdout, _, _ = cli(t, "list", triple)
	if want := "triple          \"x86_64-unknown-linux-gnu\\x1b[2J\\r\"\n"; !strings.Contains(stdout, want) {
		t.Errorf("list: the triple is not quoted (want %q):\n%s", want, stdout)
	}
}

// extract makes no file whose name holds a control character, and prints
// no such name.
func TestExtractRefusesControlInNames(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "inject.bin")
	os.WriteFile(in, injectBinary(), 0o644)
	for _, args := range [][]string{{"--raw"}, {}, {"--llvm", "24", "--raw"}} {
		out := filepath.Join(dir, "out")
		stdout, stderr, code := cli(t, append(append([]string{"extract", "-o", out}, args...), in)...)
		if code != 1 || !strings.Contains(stderr, "not a safe file name") {
			t.Errorf("extract %v: exit %d, %q; want 1, not a safe file name", args, code, stderr)
		}
		noControl(t, "stdout", stdout)
		noControl(t, "stderr", stderr)
		if _, err := os.Lstat(out); err == nil {
			t.Errorf("extract %v: made %s", args, out)
		}
	}
}

// Messages are printed with what does not print escaped: a path or a
// member name in an error reaches no terminal as ESC or CR.
func TestErrorsEscapeControl(t *testing.T) {
	name := filepath.Join(t.TempDir(), "a\x1b[31m\rb")
	for _, args := range [][]string{{"list", name}, {"convert", "--llvm", "19", "-o", name + ".o", name}, {"strip", "--keep", "x", "-o", name + ".o", name}} {
		_, stderr, code := cli(t, args...)
		if code != 1 || !strings.Contains(stderr, `a\x1b[31m\rb`) {
			t.Errorf("%s: exit %d, %q; want 1 and the name escaped", args[0], code, stderr)
		}
		noControl(t, args[0]+" stderr", stderr)
	}
}

// list --json keeps bytes that are not UTF-8: keys \xff and \xfe are two
// keys (encoding/json wrote U+FFFD for both, and one entry was lost).
func TestListJSONKeepsBytes(t *testing.T) {
	in := filepath.Join(t.TempDir(), "bytes.bin")
	os.WriteFile(in, notUTF8Binary(), 0o644)
	stdout, stderr, code := cli(t, "list", "--json", in)
	if code != 0 {
		t.Fatalf("list --json: exit %d: %s", code, stderr)
	}
	want := `"strings": {
        "arch": "generic",
        "k\udcc3": "v\udcff",
        "triple": "x86_64-unknown-linux-gnu",
        "\udcfe": "b",
        "\udcff": "a"
      },`
	if !strings.Contains(stdout, want) {
		t.Errorf("list --json: want\n%s\nin\n%s", want, stdout)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Errorf("list --json: not JSON: %v", err)
	}
	for _, c := range []struct{ in, want string }{{"plain", `"plain"`}, {"<é>", `"\u003cé\u003e"`}, {"a\xffb\xc3", `"a\udcffb\udcc3"`}, {"\xf0\x9f\x98\x80\x80", `"😀\udc80"`}} {
		if got, _ := jsonText(c.in).MarshalJSON(); string(got) != c.want {
			t.Errorf("jsonText(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
