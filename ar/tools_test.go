package ar

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/google/go-cmp/cmp"
)

// The archives these tests read are made at test time by GNU ar (binutils)
// and llvm-ar 19 from objects that cc compiles from the sources below, so the
// symbol indexes hold real symbols.

// source is an input file of the test archives: a C file compiled to Name, or
// a data file written as is.
type source struct {
	Name    string
	C       string   // C source, compiled with cc -c
	Data    string   // the file's contents if C is empty
	Symbols []string // defined global symbols of the object, in order
}

var sources = []source{
	{Name: "alpha.o", C: "int alpha_function(void) { return 1; }\nint shared_counter = 3;\n",
		Symbols: []string{"alpha_function", "shared_counter"}},
	// 16 bytes and more: GNU puts the name in the "//" member.
	{Name: "a_member_with_a_long_name.o", C: "static int hidden(void) { return 0; }\nint beta(void) { return hidden() + 2; }\nint gamma_value[4];\n",
		Symbols: []string{"beta", "gamma_value"}},
	// 15 bytes: the longest short GNU name ("fifteen_chars.o/").
	{Name: "fifteen_chars.o", C: "long c_func(long x) { return x * 2; }\n", Symbols: []string{"c_func"}},
	{Name: "odd.txt", Data: "odd"}, // odd size: padded
	{Name: "sixteen_chars.tx", Data: "exactly sixteen!"},
	{Name: "empty.txt", Data: ""},
}

// needTool returns the path of a tool that CI always has (binutils, cc), or
// ends the test by the project's rule for missing tools.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		tooltest.Missing(t, name+" not found in $PATH")
	}
	return p
}

// binutilsCommand is exec.Command for tool with args, and, if tool is GNU
// ar or nm, [tooltest.BinutilsPlugin]'s arguments first.
func binutilsCommand(tool string, args ...string) *exec.Cmd {
	if b := filepath.Base(tool); b == "ar" || b == "nm" {
		args = append(append([]string{}, tooltest.BinutilsPlugin()...), args...)
	}
	return exec.Command(tool, args...)
}

// run runs tool in dir with extra environment variables env and returns
// its standard output.
func run(t *testing.T, dir string, env []string, tool string, args ...string) string {
	t.Helper()
	cmd := binutilsCommand(tool, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// compiledSources holds the objects cc compiled of sources, by name: each
// is compiled once for the package's tests.
var compiledSources sync.Map // name -> []byte

// writeSources writes srcs into dir, compiling the C ones (the first time
// the package's tests ask for each; then the object cc made), and returns
// the bytes of each file by name.
func writeSources(t *testing.T, dir string, srcs []source) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, s := range srcs {
		path := filepath.Join(dir, s.Name)
		if obj, ok := compiledSources.Load(s.Name); ok && s.C != "" {
			if err := os.WriteFile(path, obj.([]byte), 0o644); err != nil {
				t.Fatal(err)
			}
		} else if s.C != "" {
			c := strings.TrimSuffix(path, ".o") + ".c"
			if err := os.WriteFile(c, []byte(s.C), 0o644); err != nil {
				t.Fatal(err)
			}
			run(t, dir, nil, needTool(t, "cc"), "-c", "-o", path, c)
		} else if err := os.WriteFile(path, []byte(s.Data), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if s.C != "" {
			compiledSources.LoadOrStore(s.Name, bytes.Clone(b))
		}
		files[s.Name] = b
	}
	return files
}

func names(srcs []source) []string {
	var n []string
	for _, s := range srcs {
		n = append(n, s.Name)
	}
	return n
}

// openFile opens the archive at path; the file is closed when the test ends.
func openFile(t *testing.T, path string) (*Archive, *os.File) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(f, st.Size())
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	return a, f
}

// fileOpener opens thin members relative to dir, closing them when the test
// ends, and counts the calls.
func fileOpener(t *testing.T, dir string, calls *int) Opener {
	return func(name string) (io.ReaderAt, int64, error) {
		*calls++
		f, err := os.Open(Member{Name: name}.Path(dir))
		if err != nil {
			return nil, 0, err
		}
		t.Cleanup(func() { f.Close() })
		st, err := f.Stat()
		if err != nil {
			return nil, 0, err
		}
		return f, st.Size(), nil
	}
}

// armapLine is one entry of an index as nm prints it: "NAME in MEMBER".
type armapLine struct{ Symbol, Member string }

// parseArmap reads the index that `nm -s` ("Archive index:") or
// `llvm-nm --print-armap` ("Archive map") prints before the members.
func parseArmap(t *testing.T, out string) []armapLine {
	t.Helper()
	var lines []armapLine
	sc := bufio.NewScanner(strings.NewReader(out))
	in := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "Archive index:" || l == "Archive map":
			in = true
		case in && l == "":
			return lines
		case in:
			sym, mem, ok := strings.Cut(l, " in ")
			if !ok {
				t.Fatalf("unexpected armap line %q", l)
			}
			lines = append(lines, armapLine{sym, mem})
		}
	}
	return lines
}

// ourArmap is a's symbol index as nm prints it.
func ourArmap(t *testing.T, a *Archive) []armapLine {
	t.Helper()
	syms, err := a.Symbols()
	if err != nil {
		t.Fatalf("Symbols: %v", err)
	}
	members := a.Members()
	var lines []armapLine
	for _, s := range syms {
		if members[s.Member].Offset != s.Offset {
			t.Errorf("symbol %q: member %d is at %#x, the index says %#x", s.Name, s.Member, members[s.Member].Offset, s.Offset)
		}
		lines = append(lines, armapLine{s.Name, members[s.Member].Name})
	}
	return lines
}

// expectedArmap is the index made from srcs: each object's global symbols.
func expectedArmap(srcs []source) []armapLine {
	var lines []armapLine
	for _, s := range srcs {
		for _, sym := range s.Symbols {
			lines = append(lines, armapLine{sym, s.Name})
		}
	}
	return lines
}

func sortedArmap(l []armapLine) []armapLine {
	l = append([]armapLine(nil), l...)
	sort.Slice(l, func(i, j int) bool {
		if l[i].Member != l[j].Member {
			return l[i].Member < l[j].Member
		}
		return l[i].Symbol < l[j].Symbol
	})
	return l
}

// archiveTool is a way to make an archive: a tool, its flags, its
// environment, and what the archive then is.
type archiveTool struct {
	name  string
	tool  string // "ar" or "llvm-ar"
	args  []string
	env   []string
	kind  Kind
	index IndexFormat
	// pad8: llvm-ar --format=darwin pads members to 8 bytes with '\n' and
	// counts the padding in the member's size (llvm-ar p prints it too).
	pad8 bool
	// binutilsNM: GNU nm reads the index (it does not read llvm-ar's BSD
	// and Darwin ones).
	binutilsNM bool
}

var archiveTools = []archiveTool{
	{name: "binutils-ar", tool: "ar", args: []string{"rcsD"}, kind: GNU, index: IndexSysV, binutilsNM: true},
	{name: "binutils-ar-noindex", tool: "ar", args: []string{"rcSD"}, kind: GNU, index: NoIndex},
	{name: "binutils-ar-thin", tool: "ar", args: []string{"rcsDT"}, kind: Thin, index: IndexSysV, binutilsNM: true},
	{name: "llvm19-gnu", tool: "llvm-ar", args: []string{"--format=gnu", "rcs"}, kind: GNU, index: IndexSysV, binutilsNM: true},
	// llvm-ar switches to the 64-bit index past SYM64_THRESHOLD (4 GiB).
	{name: "llvm19-gnu64", tool: "llvm-ar", args: []string{"--format=gnu", "rcs"}, env: []string{"SYM64_THRESHOLD=0"}, kind: GNU, index: IndexSysV64, binutilsNM: true},
	{name: "llvm19-thin", tool: "llvm-ar", args: []string{"--format=gnu", "rcsT"}, kind: Thin, index: IndexSysV, binutilsNM: true},
	{name: "llvm19-bsd", tool: "llvm-ar", args: []string{"--format=bsd", "rcs"}, kind: BSD, index: IndexBSD},
	// For BSD llvm-ar writes a GNU "/SYM64/" index before BSD names.
	{name: "llvm19-bsd64", tool: "llvm-ar", args: []string{"--format=bsd", "rcs"}, env: []string{"SYM64_THRESHOLD=0"}, kind: BSD, index: IndexSysV64},
	{name: "llvm19-darwin", tool: "llvm-ar", args: []string{"--format=darwin", "rcs"}, kind: BSD, index: IndexBSD, pad8: true},
	{name: "llvm19-darwin64", tool: "llvm-ar", args: []string{"--format=darwin", "rcs"}, env: []string{"SYM64_THRESHOLD=0"}, kind: BSD, index: IndexBSD64, pad8: true},
	// COFF: NUL-terminated long names, a second (little-endian) "/" member.
	{name: "llvm19-coff", tool: "llvm-ar", args: []string{"--format=coff", "rcs"}, kind: GNU, index: IndexSysV},
}

// toolPath finds the tool of at, ending the test if it is missing.
func toolPath(t *testing.T, at archiveTool) string {
	if at.tool == "llvm-ar" {
		return tooltest.Tool(t, "llvm-ar", 19)
	}
	return needTool(t, at.tool)
}

// TestReadsArchivesOfRealTools makes an archive of sources with each tool and
// checks the members (names, sizes, contents read in place, header fields)
// and the symbol index (against the objects' symbols and against nm).
func TestReadsArchivesOfRealTools(t *testing.T) {
	dir := t.TempDir()
	files := writeSources(t, dir, sources)
	for _, at := range archiveTools {
		t.Run(at.name, func(t *testing.T) {
			tool := toolPath(t, at)
			archive := at.name + ".a"
			run(t, dir, at.env, tool, append(append(at.args, archive), names(sources)...)...)
			a, f := openFile(t, filepath.Join(dir, archive))
			if a.Kind() != at.kind || a.Index() != at.index {
				t.Errorf("Kind, Index = %v, %v; want %v, %v", a.Kind(), a.Index(), at.kind, at.index)
			}
			want := files
			if at.pad8 {
				want = map[string][]byte{}
				for name, b := range files {
					want[name] = append(b[:len(b):len(b)], bytes.Repeat([]byte("\n"), -len(b)&7)...)
				}
			}
			checkMembers(t, a, f, dir, sources, want)
			checkSymbols(t, a, dir, archive, at, sources)
		})
	}
}

// checkMembers compares a's members with srcs and their files.
func checkMembers(t *testing.T, a *Archive, f io.ReaderAt, dir string, srcs []source, files map[string][]byte) {
	t.Helper()
	var got []string
	members := a.Members()
	for _, m := range members {
		got = append(got, m.Name)
	}
	if diff := cmp.Diff(names(srcs), got); diff != "" {
		t.Fatalf("member names (-want +got):\n%s", diff)
	}
	calls := 0
	for _, m := range members {
		want := files[m.Name]
		if m.Size != int64(len(want)) || m.Thin != (a.Kind() == Thin) {
			t.Errorf("%s: Size %d, Thin %v; want %d, %v", m.Name, m.Size, m.Thin, len(want), a.Kind() == Thin)
		}
		// Deterministic mode (D, llvm-ar's default): zero dates and ids, mode 644.
		if m.Date != 0 || m.UID != 0 || m.GID != 0 || m.Mode != 0o644 {
			t.Errorf("%s: Date %d, UID %d, GID %d, Mode %o; want 0, 0, 0, 644", m.Name, m.Date, m.UID, m.GID, m.Mode)
		}
		var sr *io.SectionReader
		var err error
		if m.Thin {
			if _, err := a.Open(m); !errors.Is(err, ErrThin) {
				t.Errorf("%s: Open of a thin member: %v, want ErrThin", m.Name, err)
			}
			sr, err = a.OpenThin(m, fileOpener(t, dir, &calls))
		} else {
			sr, err = a.Open(m)
			if err == nil {
				// In place: a section of the archive file itself.
				if r, off, n := sr.Outer(); r != f || off != m.DataOffset || n != m.Size {
					t.Errorf("%s: section (%T, %#x, %d), want the archive at (%#x, %d)", m.Name, r, off, n, m.DataOffset, m.Size)
				}
			}
		}
		if err != nil {
			t.Errorf("%s: %v", m.Name, err)
			continue
		}
		b, err := io.ReadAll(sr)
		if err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s: read %d bytes (%v), want the %d bytes of the file", m.Name, len(b), err, len(want))
		}
	}
	if a.Kind() != Thin && calls != 0 {
		t.Errorf("the opener was called %d times for a regular archive", calls)
	}
}

// checkSymbols compares a's index with the objects' global symbols and with
// what nm prints.
func checkSymbols(t *testing.T, a *Archive, dir, archive string, at archiveTool, srcs []source) {
	t.Helper()
	got := ourArmap(t, a)
	want := expectedArmap(srcs)
	if at.index == NoIndex {
		want = nil
	}
	if diff := cmp.Diff(sortedArmap(want), sortedArmap(got)); diff != "" {
		t.Errorf("symbol index (-objects' symbols +read):\n%s", diff)
	}
	t.Run("llvm-nm", func(t *testing.T) {
		nm := tooltest.Tool(t, "llvm-nm", 19)
		nmOut := parseArmap(t, run(t, dir, nil, nm, "--print-armap", archive))
		if a.Index() == IndexSysV && a.Kind() != Thin && strings.Contains(at.name, "coff") {
			// llvm-nm prints the sorted second linker member.
			got, nmOut = sortedArmap(got), sortedArmap(nmOut)
		}
		if diff := cmp.Diff(nmOut, got); diff != "" {
			t.Errorf("symbol index (-llvm-nm +read):\n%s", diff)
		}
	})
	if at.binutilsNM {
		t.Run("binutils-nm", func(t *testing.T) {
			nm := needTool(t, "nm")
			// nm exits 1 for the members that are not objects.
			// It names thin members by their paths from the current folder.
			cmd := binutilsCommand(nm, "-s", archive)
			cmd.Dir = dir
			out, _ := cmd.Output()
			if diff := cmp.Diff(parseArmap(t, string(out)), got); diff != "" {
				t.Errorf("symbol index (-nm +read):\n%s", diff)
			}
		})
	}
}

// TestReadsRealArchiveFields checks the header fields of a non-deterministic
// GNU archive (ar U) against the files' metadata.
func TestReadsRealArchiveFields(t *testing.T) {
	ar := needTool(t, "ar")
	dir := t.TempDir()
	srcs := sources[3:4]
	writeSources(t, dir, srcs)
	run(t, dir, nil, ar, "rcU", "u.a", srcs[0].Name)
	st, err := os.Stat(filepath.Join(dir, srcs[0].Name))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := openFile(t, filepath.Join(dir, "u.a"))
	m := a.Members()[0]
	if m.Date != st.ModTime().Unix() || m.UID != os.Getuid() || m.GID != os.Getgid() || m.Mode != uint32(0o100000|st.Mode().Perm()) {
		t.Errorf("Date %d, UID %d, GID %d, Mode %o; want %d, %d, %d, %o",
			m.Date, m.UID, m.GID, m.Mode, st.ModTime().Unix(), os.Getuid(), os.Getgid(), 0o100000|st.Mode().Perm())
	}
}

// TestNestedArchiveMember reads an archive stored as a member of another,
// with both tools.
func TestNestedArchiveMember(t *testing.T) {
	dir := t.TempDir()
	files := writeSources(t, dir, sources[:3])
	for _, at := range []archiveTool{archiveTools[0], archiveTools[3], archiveTools[6]} {
		t.Run(at.name, func(t *testing.T) {
			tool := toolPath(t, at)
			inner, outer := at.name+"-inner.a", at.name+"-outer.a"
			run(t, dir, at.env, tool, append(append(at.args, inner), names(sources[1:3])...)...)
			run(t, dir, at.env, tool, append(at.args, outer, "alpha.o", inner)...)
			a, _ := openFile(t, filepath.Join(dir, outer))
			ms := a.Members()
			if len(ms) != 2 || ms[1].Name != inner {
				t.Fatalf("members %+v, want alpha.o and %s", ms, inner)
			}
			sr, err := a.Open(ms[1])
			if err != nil {
				t.Fatal(err)
			}
			head := make([]byte, 8)
			if _, err := sr.ReadAt(head, 0); err != nil || !IsArchive(head) {
				t.Fatalf("IsArchive(%q) false (%v)", head, err)
			}
			in, err := Open(sr, sr.Size())
			if err != nil {
				t.Fatal(err)
			}
			checkMembers(t, in, sr, dir, sources[1:3], files)
			if diff := cmp.Diff(sortedArmap(expectedArmap(sources[1:3])), sortedArmap(ourArmap(t, in))); diff != "" {
				t.Errorf("inner symbol index (-want +got):\n%s", diff)
			}
			// The outer index names only alpha.o's symbols: tools do not index
			// nested archives.
			if diff := cmp.Diff(expectedArmap(sources[:1]), ourArmap(t, a)); diff != "" {
				t.Errorf("outer symbol index (-want +got):\n%s", diff)
			}
		})
	}
}

// TestThinArchivePaths: thin members are paths relative to the archive's
// folder (with "..") or absolute, and OpenThin gives their files.
func TestThinArchivePaths(t *testing.T) {
	dir := t.TempDir()
	files := writeSources(t, dir, sources[:2])
	lib := filepath.Join(dir, "lib")
	if err := os.Mkdir(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(dir, sources[1].Name)
	for _, at := range []archiveTool{archiveTools[2], archiveTools[5]} {
		t.Run(at.name, func(t *testing.T) {
			tool := toolPath(t, at)
			archive := at.name + ".a"
			run(t, lib, at.env, tool, append(at.args, archive, "../alpha.o", abs)...)
			a, _ := openFile(t, filepath.Join(lib, archive))
			var got []string
			for _, m := range a.Members() {
				got = append(got, m.Name)
				if p := m.Path(lib); filepath.Clean(p) != filepath.Join(dir, filepath.Base(m.Name)) {
					t.Errorf("%s: Path %q", m.Name, p)
				}
				calls := 0
				sr, err := a.OpenThin(m, fileOpener(t, lib, &calls))
				if err != nil {
					t.Fatal(err)
				}
				if b, _ := io.ReadAll(sr); !bytes.Equal(b, files[filepath.Base(m.Name)]) || calls != 1 {
					t.Errorf("%s: contents differ from the file (%d opener calls)", m.Name, calls)
				}
			}
			if diff := cmp.Diff([]string{"../alpha.o", abs}, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			// A file that changed size since it was archived.
			if err := os.WriteFile(filepath.Join(dir, "alpha.o"), append(files["alpha.o"], 0), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(filepath.Join(dir, "alpha.o"), files["alpha.o"], 0o644)
			calls := 0
			if _, err := a.OpenThin(a.Members()[0], fileOpener(t, lib, &calls)); !errors.Is(err, ErrStale) {
				t.Errorf("OpenThin of a changed file: %v, want ErrStale", err)
			}
		})
	}
}

// TestThinReferenceIntoRegularArchive: GNU ar, given a regular archive for a
// thin one, refers to each of its members as "/<name>:<member offset>".
func TestThinReferenceIntoRegularArchive(t *testing.T) {
	ar := needTool(t, "ar")
	dir := t.TempDir()
	files := writeSources(t, dir, sources[:3])
	run(t, dir, nil, ar, "rcsD", "inner.a", "a_member_with_a_long_name.o", "fifteen_chars.o")
	run(t, dir, nil, ar, "rcsDT", "thin.a", "alpha.o", "inner.a")
	a, _ := openFile(t, filepath.Join(dir, "thin.a"))
	ms := a.Members()
	inner, _ := openFile(t, filepath.Join(dir, "inner.a"))
	im := inner.Members()
	if len(ms) != 3 || ms[0].NestedOffset != 0 {
		t.Fatalf("members %+v", ms)
	}
	for i, m := range ms[1:] {
		if m.Name != "inner.a" || m.NestedOffset != im[i].Offset || m.Size != im[i].Size {
			t.Errorf("member %+v, want inner.a at %#x (%s)", m, im[i].Offset, im[i].Name)
		}
		calls := 0
		sr, err := a.OpenThin(m, fileOpener(t, dir, &calls))
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(sr); !bytes.Equal(b, files[im[i].Name]) {
			t.Errorf("%s in inner.a: contents differ", im[i].Name)
		}
	}
	syms := ourArmap(t, a)
	want := []armapLine{{"alpha_function", "alpha.o"}, {"shared_counter", "alpha.o"}, {"beta", "inner.a"}, {"gamma_value", "inner.a"}, {"c_func", "inner.a"}}
	if diff := cmp.Diff(want, syms); diff != "" {
		t.Errorf("symbol index (-want +got):\n%s", diff)
	}
}
