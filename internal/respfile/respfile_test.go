package respfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode/utf16"

	"github.com/goffload/goffload"
)

// expandCase is a command line with its response files, and what LLVM's
// tools make of it (as clang 19 and 22 and their clang-linker-wrappers do:
// TestExpandMatchesClang and TestExpandMatchesLinkerWrapper check each case
// against them).
type expandCase struct {
	name  string
	files map[string]string // path in the test's folder: contents ($DIR: the folder)
	links map[string]string // symbolic link: target
	dirs  []string
	args  []string // run in the folder ($DIR: the folder)
	want  []string // with err "": the expanded arguments
	err   string   // what goffload's error says
	llvm  string   // what LLVM's error says (clang exits 1; the wrapper goes on)
}

func utf16File(bom []byte, s string, big bool) string {
	b := append([]byte(nil), bom...)
	for _, u := range utf16.Encode([]rune(s)) {
		if big {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

var expandCases = []expandCase{
	{name: "plain", files: map[string]string{"a.rsp": "-x y\tz\r\nw\n"},
		args: []string{"pre", "@a.rsp", "post"}, want: []string{"pre", "-x", "y", "z", "w", "post"}},
	{name: "quotes", files: map[string]string{"a.rsp": `'a b' "c d" e"f g"h 'i"j' "k'l"`},
		args: []string{"@a.rsp"}, want: []string{"a b", "c d", "ef gh", `i"j`, "k'l"}},
	{name: "escapes", files: map[string]string{"a.rsp": `a\ b c\"d "e\"f" 'g\'h' "i\\j" k\\l m\n \'`},
		args: []string{"@a.rsp"}, want: []string{"a b", `c"d`, `e"f`, "g'h", `i\j`, `k\l`, "mn", "'"}},
	{name: "backslash-newline", files: map[string]string{"a.rsp": "a\\\nb \"c\\\nd\" e"},
		args: []string{"@a.rsp"}, want: []string{"a\nb", "c\nd", "e"}},
	{name: "empty-quoted", files: map[string]string{"a.rsp": `"" a '' "" b x"" ""y "" `},
		args: []string{"@a.rsp"}, want: []string{"a", "b", "x", "y"}},
	{name: "trailing-backslash", files: map[string]string{"a.rsp": `a b\`},
		args: []string{"@a.rsp"}, want: []string{"a", `b\`}},
	{name: "open-quote", files: map[string]string{"a.rsp": `a "b c\`},
		args: []string{"@a.rsp"}, want: []string{"a", `b c\`}},
	{name: "open-single-quote", files: map[string]string{"a.rsp": "a 'b\n\"c"},
		args: []string{"@a.rsp"}, want: []string{"a", "b\n\"c"}},
	{name: "vertical-tab-form-feed", files: map[string]string{"a.rsp": "a\vb\fc d"},
		args: []string{"@a.rsp"}, want: []string{"a\vb\fc", "d"}},
	{name: "nul", files: map[string]string{"a.rsp": "a\x00b \x00c d\x00"},
		args: []string{"@a.rsp"}, want: []string{"a", "", "d"}},
	{name: "utf8-bom", files: map[string]string{"a.rsp": "\xEF\xBB\xBFa b"},
		args: []string{"@a.rsp"}, want: []string{"a", "b"}},
	{name: "utf16-le", files: map[string]string{"a.rsp": utf16File([]byte{0xFF, 0xFE}, "le1 \"q r\" \u00e9\U0001F600", false)},
		args: []string{"@a.rsp"}, want: []string{"le1", "q r", "\u00e9\U0001F600"}},
	{name: "utf16-be", files: map[string]string{"a.rsp": utf16File([]byte{0xFE, 0xFF}, "be1 be\u20ac2", true)},
		args: []string{"@a.rsp"}, want: []string{"be1", "be\u20ac2"}},
	{name: "utf16-nul", files: map[string]string{"a.rsp": utf16File([]byte{0xFF, 0xFE}, "a\x00b c", false)},
		args: []string{"@a.rsp"}, want: []string{"a", "c"}},
	{name: "utf16-bom-only", files: map[string]string{"a.rsp": "\xFF\xFE"},
		args: []string{"x", "@a.rsp"}, want: []string{"x"}},
	{name: "utf16-second-bom", files: map[string]string{"a.rsp": "\xFF\xFE\xFF\xFEa\x00b\x00"},
		args: []string{"@a.rsp"}, want: []string{"\uFEFFab"}},
	{name: "utf8-bom-then-utf16-bom", files: map[string]string{"a.rsp": "\xEF\xBB\xBF\xFF\xFEab"},
		args: []string{"@a.rsp"}, want: []string{"\xFF\xFEab"}},
	{name: "one-ff", files: map[string]string{"a.rsp": "\xFF"},
		args: []string{"@a.rsp"}, want: []string{"\xFF"}},
	{name: "utf16-odd", files: map[string]string{"a.rsp": "\xFF\xFEa\x00b"},
		args: []string{"@a.rsp"}, err: "odd length", llvm: "Could not convert UTF16 to UTF8"},
	{name: "utf16-lone-high", files: map[string]string{"a.rsp": "\xFF\xFEa\x00\x00\xD8b\x00"},
		args: []string{"@a.rsp"}, err: "lone surrogate", llvm: "Could not convert UTF16 to UTF8"},
	{name: "utf16-high-at-end", files: map[string]string{"a.rsp": "\xFE\xFF\x00a\xD8\x00"},
		args: []string{"@a.rsp"}, err: "lone surrogate", llvm: "Could not convert UTF16 to UTF8"},
	{name: "utf16-lone-low", files: map[string]string{"a.rsp": "\xFF\xFEa\x00\x00\xDC"},
		args: []string{"@a.rsp"}, err: "lone surrogate", llvm: "Could not convert UTF16 to UTF8"},
	{name: "nested-relative-to-cwd",
		files: map[string]string{"a.rsp": "@sub/b.rsp x", "sub/b.rsp": "@c.rsp @missing.rsp", "c.rsp": "in-top", "sub/c.rsp": "in-sub"},
		args:  []string{"@a.rsp"}, want: []string{"in-top", "@missing.rsp", "x"}},
	{name: "nested-from-absolute",
		files: map[string]string{"sub/b.rsp": "@c.rsp", "c.rsp": "in-top", "sub/c.rsp": "in-sub"},
		args:  []string{"@$DIR/sub/b.rsp"}, want: []string{"in-top"}},
	{name: "nested-absolute",
		files: map[string]string{"a.rsp": "@$DIR/sub/c.rsp", "sub/c.rsp": "in-sub"},
		args:  []string{"@a.rsp"}, want: []string{"in-sub"}},
	{name: "dot-dot-after-link",
		files: map[string]string{"a.rsp": "@lnk/../x.rsp", "real/x.rsp": "in-real", "x.rsp": "in-top"},
		dirs:  []string{"real/inner"}, links: map[string]string{"lnk": "real/inner"},
		args: []string{"@a.rsp"}, want: []string{"in-real"}},
	{name: "missing", args: []string{"a", "@nope", "b", "@sub/nope"}, want: []string{"a", "@nope", "b", "@sub/nope"}},
	{name: "empty-file", files: map[string]string{"e.rsp": ""},
		args: []string{"a", "@e.rsp", "b", "@e.rsp"}, want: []string{"a", "b"}},
	{name: "spaces-in-name", files: map[string]string{"my file.rsp": "m", "a.rsp": `"@my file.rsp" @my\ file.rsp`},
		args: []string{"@my file.rsp", "@a.rsp"}, want: []string{"m", "m", "m"}},
	{name: "at-at", files: map[string]string{"@x": "q"},
		args: []string{"@@x", "@@nope"}, want: []string{"q", "@@nope"}},
	{name: "named-twice", files: map[string]string{"a.rsp": "@c.rsp @c.rsp", "c.rsp": "z"},
		args: []string{"@a.rsp", "@c.rsp"}, want: []string{"z", "z", "z"}},
	{name: "in-argument", files: map[string]string{"a.rsp": `x@c.rsp -Wl,@c.rsp "@c.rsp" @"c.rsp" \@c.rsp`, "c.rsp": "z"},
		args: []string{"@a.rsp", "y@c.rsp"}, want: []string{"x@c.rsp", "-Wl,@c.rsp", "z", "z", "z", "y@c.rsp"}},
	{name: "after-dash-dash", files: map[string]string{"a.rsp": "-- @c.rsp", "c.rsp": "z"},
		args: []string{"--", "@c.rsp", "@a.rsp"}, want: []string{"--", "z", "--", "z"}},
	{name: "at-alone", args: []string{"x", "@"}, err: "not a regular file (a directory)", llvm: "Is a directory"},
	{name: "at-alone-nested", files: map[string]string{"a.rsp": "x @"},
		args: []string{"@a.rsp"}, err: "not a regular file (a directory)", llvm: "Is a directory"},
	{name: "directory", dirs: []string{"d.rsp"},
		args: []string{"@d.rsp"}, err: "not a regular file (a directory)", llvm: "Is a directory"},
	{name: "not-a-directory", files: map[string]string{"a.rsp": "x"},
		args: []string{"@a.rsp/b"}, err: "not a directory", llvm: "Not a directory"},
	{name: "self", files: map[string]string{"a.rsp": "x @a.rsp y"},
		args: []string{"@a.rsp"}, err: "recursive expansion", llvm: "recursive expansion of: '"},
	{name: "mutual", files: map[string]string{"a.rsp": "a @b.rsp", "b.rsp": "b @a.rsp"},
		args: []string{"@a.rsp"}, err: "recursive expansion", llvm: "recursive expansion of: '"},
	{name: "through-link", files: map[string]string{"a.rsp": "@lnk.rsp"}, links: map[string]string{"lnk.rsp": "a.rsp"},
		args: []string{"@a.rsp"}, err: "recursive expansion", llvm: "recursive expansion of: '"},
	{name: "last-argument-names-parent", files: map[string]string{"a.rsp": "@b.rsp", "b.rsp": "b @a.rsp"},
		args: []string{"@a.rsp", "z"}, err: "recursive expansion", llvm: "recursive expansion of: '"},
}

// setUp makes c's files in dir.
func (c *expandCase) setUp(t *testing.T, dir string) {
	t.Helper()
	for _, d := range c.dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range c.files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(data, "$DIR", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, to := range c.links {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// argsIn is c's command line in dir.
func (c *expandCase) argsIn(dir string) []string {
	args := make([]string, len(c.args))
	for i, a := range c.args {
		args[i] = strings.ReplaceAll(a, "$DIR", dir)
	}
	return args
}

func TestExpand(t *testing.T) {
	for _, c := range expandCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setUp(t, dir)
			args := c.argsIn(dir)
			given := slices.Clone(args)
			got, err := ExpandIn(dir, args)
			if !slices.Equal(args, given) {
				t.Errorf("Expand changed its argument: %q", args)
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %q, %v; want an error saying %q", got, err, c.err)
				}
				if !strings.Contains(err.Error(), dir) {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestExpandRelativeToCurrentDirectory: Expand resolves names in the
// current directory, as ExpandIn does in its folder.
func TestExpandRelativeToCurrentDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.rsp"), []byte("@b.rsp"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.rsp"), []byte("b"), 0o644)
	t.Chdir(dir)
	got, err := Expand([]string{"@a.rsp"})
	if err != nil || !slices.Equal(got, []string{"b"}) {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestExpandRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, os.DevNull} {
		_, err := ExpandIn(dir, []string{"@" + p})
		if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("@%s: %v, want an error naming it", p, err)
		}
	}
}

// TestExpandErrors: recursion and decoding errors match ErrInvalid, and
// every error names the file.
func TestExpandErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "self.rsp"), []byte("@self.rsp"), 0o644)
	os.WriteFile(filepath.Join(dir, "odd.rsp"), []byte("\xFF\xFEa"), 0o644)
	for _, name := range []string{"self.rsp", "odd.rsp"} {
		_, err := ExpandIn(dir, []string{"@" + name})
		if !errors.Is(err, goffload.ErrInvalid) || !strings.Contains(err.Error(), filepath.Join(dir, name)) {
			t.Errorf("@%s: %v, want ErrInvalid naming it", name, err)
		}
	}
}

// TestExpandLimits: nesting, a file named many times, and a large file
// stop at their bounds with ErrLimit; a file named many times is read once.
func TestExpandLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A chain of n files, each naming the next: MaxDepth nest, one more
	// is over the limit, and the error names the file too deep.
	chain := func(prefix string, n int) string {
		for i := 1; i < n; i++ {
			write(fmt.Sprintf("%s%d.rsp", prefix, i), fmt.Sprintf("x @%s%d.rsp", prefix, i+1))
		}
		write(fmt.Sprintf("%s%d.rsp", prefix, n), "end")
		return fmt.Sprintf("@%s1.rsp", prefix)
	}
	if got, err := ExpandIn(dir, []string{chain("ok", MaxDepth)}); err != nil || len(got) != MaxDepth {
		t.Errorf("%d levels: %d arguments, %v", MaxDepth, len(got), err)
	}
	deepest := fmt.Sprintf("over%d.rsp", MaxDepth+1)
	if _, err := ExpandIn(dir, []string{chain("over", MaxDepth+1)}); !errors.Is(err, goffload.ErrLimit) || !strings.Contains(err.Error(), deepest) {
		t.Errorf("%d levels: %v, want ErrLimit naming %s", MaxDepth+1, err, deepest)
	}

	// Billion laughs: each level names the next ten times.
	write("l9.rsp", strings.Repeat("lol ", 10))
	for i := 8; i >= 0; i-- {
		write("l"+string(rune('0'+i))+".rsp", strings.Repeat("@l"+string(rune('1'+i))+".rsp ", 10))
	}
	got, err := ExpandIn(dir, []string{"@l0.rsp"})
	if !errors.Is(err, goffload.ErrLimit) || !strings.Contains(err.Error(), dir) {
		t.Errorf("laughs: %d arguments, %v; want ErrLimit naming a file", len(got), err)
	}
	// Named 1,000 times, by one file or through many paths, a file of 4
	// bytes makes 1,000 arguments: within the bound.
	write("few.rsp", strings.Repeat("@l9.rsp ", 100))
	var paths []string
	for i := 0; i < 100; i++ {
		paths = append(paths, "@"+strings.Repeat("./", i)+"l9.rsp")
	}
	write("paths.rsp", strings.Join(paths, " "))
	for _, name := range []string{"few.rsp", "paths.rsp"} {
		if got, err := ExpandIn(dir, []string{"@" + name}); err != nil || len(got) != 1000 {
			t.Errorf("%s: %d arguments, %v", name, len(got), err)
		}
	}
	// One file named through many paths counts once in the input: the
	// bound is reached as if it were named by one.
	write("big.rsp", strings.Repeat("x", 1<<16))
	paths = paths[:0]
	for i := 0; i < 64; i++ {
		paths = append(paths, "@"+strings.Repeat("./", i)+"big.rsp")
	}
	write("bigpaths.rsp", strings.Join(paths, " "))
	if _, err := ExpandIn(dir, []string{"@bigpaths.rsp"}); !errors.Is(err, goffload.ErrLimit) {
		t.Errorf("a 64 KiB file through 64 paths: %v, want ErrLimit", err)
	}
	// Named by many, with nothing in it: the names count.
	write("empty.rsp", "")
	write("e1.rsp", strings.Repeat("@empty.rsp ", 10000))
	write("e0.rsp", strings.Repeat("@e1.rsp ", 10000))
	if _, err := ExpandIn(dir, []string{"@e0.rsp"}); !errors.Is(err, goffload.ErrLimit) {
		t.Errorf("10^8 names of an empty file: %v, want ErrLimit", err)
	}
	// Over MaxFileSize: refused by its size, not read.
	f, err := os.Create(filepath.Join(dir, "huge.rsp"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ExpandIn(dir, []string{"@huge.rsp"}); !errors.Is(err, goffload.ErrLimit) || !strings.Contains(err.Error(), "huge.rsp") {
		t.Errorf("a file over MaxFileSize: %v, want ErrLimit naming it", err)
	}
}

func TestTokenize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" \t\r\n", nil},
		{"a", []string{"a"}},
		{`\`, []string{`\`}},
		{`\\`, []string{`\`}},
		{`"`, nil},
		{`'`, nil},
		{`"\`, []string{`\`}},
		{`a\ `, []string{"a "}},
		{"\\\n", []string{"\n"}},
		{`'a'"b"c`, []string{"abc"}},
		{`"a'b"`, []string{"a'b"}},
		{`"" ""`, nil},
		{"\x00", []string{""}},
		{"\x00 a", []string{"", "a"}},
		{"a\x00b\x00c", []string{"a"}},
		{"\xFF\xFE", []string{"\xFF\xFE"}}, // not decoded here
	} {
		if got := Tokenize(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
