package link

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload"
)

// TestParseWrapperArgsExpandsResponseFiles: an @file anywhere, after "--"
// too, is read as clang-linker-wrapper reads it, nested files relative to
// the current directory; a missing one stays.
func TestParseWrapperArgsExpandsResponseFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.Mkdir("sub", 0o755)
	for name, data := range map[string]string{
		"wrapper.rsp":    `--host-triple=x86_64-pc-linux-gnu "--linker-path=/usr/bin/my ld" @sub/linker.rsp`,
		"sub/linker.rsp": "-o 'a b' @late.rsp",
		"late.rsp":       `main.o -L"dir with space" -lm`,
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o, err := ParseWrapperArgs([]string{"--wrapper-verbose", "@wrapper.rsp", "--", "@late.rsp", "@missing.rsp"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-o", "a b", "main.o", "-Ldir with space", "-lm", "main.o", "-Ldir with space", "-lm", "@missing.rsp"}
	if o.HostTriple != "x86_64-pc-linux-gnu" || o.Linker != "/usr/bin/my ld" || !o.Verbose || !slices.Equal(o.LinkerArgs, want) {
		t.Errorf("got triple %q, linker %q, verbose %v, linker args %q\nwant linker args %q", o.HostTriple, o.Linker, o.Verbose, o.LinkerArgs, want)
	}
}

// TestParseWrapperArgsResponseFileErrors: a response file that names
// itself, one past the bounds and a folder are ErrUsage errors naming the
// file, and match ErrInvalid and ErrLimit where they apply.
func TestParseWrapperArgsResponseFileErrors(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "self.rsp")
	os.WriteFile(self, []byte("-o x @"+self), 0o644)
	laugh := filepath.Join(dir, "laugh.rsp")
	os.WriteFile(laugh, []byte(strings.Repeat("@"+laugh+"2 ", 1000)), 0o644)
	os.WriteFile(laugh+"2", []byte(strings.Repeat("@"+laugh+"3 ", 1000)), 0o644)
	os.WriteFile(laugh+"3", []byte(strings.Repeat("lol ", 1000)), 0o644)
	for _, c := range []struct {
		arg, names string
		is         error
	}{
		{"@" + self, self, goffload.ErrInvalid},
		{"@" + laugh, laugh, goffload.ErrLimit},
		{"@" + dir, dir, nil},
	} {
		_, err := ParseWrapperArgs([]string{"--linker-path=ld", c.arg})
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.names) || c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: %v; want ErrUsage naming %s, matching %v", c.arg, err, c.names, c.is)
		}
	}
}
