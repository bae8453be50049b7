package tooltest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// RecordEnv is the environment variable that makes a [Store] keep what the
// tests build: with OFFLOAD_TEST_RECORD=1, each entry a test builds and the
// store lacks is written into the store's folder (in the source tree), to
// be committed.
const RecordEnv = "OFFLOAD_TEST_RECORD"

// Store is a folder of the repository that holds files real tools made for
// the tests (a release's compile of a test program, say), so that the
// default run reads and links them instead of running the compiler again.
// A compile of a small OpenMP program by clang starts five LLVM processes
// (the driver, three cc1 jobs, the packager), about a second of CPU on a
// 2-core machine, most of it the dynamic loader relocating libLLVM and
// libclang-cpp in each process: the store took a quarter of the default
// run's CPU away (538 s before, 392 s after, on a 2-core machine).
//
// Each entry is a folder named by the hash of its file KEY, which says
// what made it: the work (the tool's name and release, its flags, one line
// a command) and the SHA-256 of every input it read, by its path from the
// package's folder. A changed input changes the hash, so that an entry is
// never taken for other inputs; [Store.CheckCurrent] finds the entries
// whose inputs changed since. The exhaustive run ([Exhaustive], CI's) uses
// no entry: it builds every one with the tools installed, so that the
// whole chain, compiler included, is checked there.
type Store struct {
	Dir string // the store's folder, from the package's folder
}

// entryKey is the text of an entry's KEY file and its hash.
func entryKey(work string, inputs, names []string) (text, hash string, err error) {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(work), "\n") {
		fmt.Fprintf(&b, "work %s\n", strings.TrimSpace(line))
	}
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			return "", "", err
		}
		fmt.Fprintf(&b, "input %x %s\n", sha256.Sum256(data), filepath.ToSlash(in))
	}
	for _, n := range names {
		fmt.Fprintf(&b, "file %s\n", n)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return b.String(), hex.EncodeToString(sum[:8]), nil
}

// Files returns a folder holding the files names that build makes of
// inputs (paths from the package's folder) by work (what a command line
// says, without the folders that vary from run to run): the store's entry
// when it has one and the run is not exhaustive; else dir, where build
// writes them (and, with [RecordEnv], the store keeps them). The folder
// returned is read only: a test copies what it changes.
func (s Store) Files(t testing.TB, dir, work string, inputs, names []string, build func(dir string) error) (string, error) {
	t.Helper()
	text, hash, err := entryKey(work, inputs, names)
	if err != nil {
		return "", err
	}
	entry := filepath.Join(s.Dir, hash)
	if !Exhaustive() && hasFiles(entry, names) {
		return entry, nil
	}
	if err := build(dir); err != nil {
		return "", err
	}
	if !recording() {
		if !Exhaustive() {
			t.Logf("built what %s lacks (entry %s; %s=1 keeps it there)", s.Dir, hash, RecordEnv)
		}
		return dir, nil
	}
	if err := s.record(entry, text, dir, names); err != nil {
		return "", err
	}
	t.Logf("recorded %s", entry)
	return dir, nil
}

func recording() bool {
	b, err := strconv.ParseBool(os.Getenv(RecordEnv))
	return err == nil && b
}

func hasFiles(dir string, names []string) bool {
	for _, n := range append([]string{"KEY"}, names...) {
		if st, err := os.Stat(filepath.Join(dir, n)); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

// record writes the entry: the files names of dir and KEY, in a folder
// that appears whole. A file that holds a folder of this machine (the
// package's, the home folder, the temporary folder) is refused: the store
// is committed.
func (s Store) record(entry, text, dir string, names []string) error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(s.Dir, ".record-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		if p := machinePath(data); p != "" {
			return fmt.Errorf("%s holds the path %s of this machine: not recorded", n, p)
		}
		if err := os.WriteFile(filepath.Join(tmp, n), data, 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "KEY"), []byte(text), 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	os.RemoveAll(entry)
	return os.Rename(tmp, entry)
}

// machinePath returns the first of this machine's folders that data holds
// (the working folder, the home folder, the temporary folder), or "".
func machinePath(data []byte) string {
	var dirs []string
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	if home, err := os.UserHomeDir(); err == nil && len(home) > 1 {
		dirs = append(dirs, home+"/")
	}
	dirs = append(dirs, os.TempDir()+"/", "/tmp/")
	for _, d := range dirs {
		if bytes.Contains(data, []byte(d)) {
			return d
		}
	}
	return ""
}

// CheckCurrent fails t for each entry of the store whose KEY does not
// match its name or whose inputs changed since it was made (run the tests
// with [RecordEnv]=1, and remove the old entry), or that lacks a file its
// KEY lists.
func (s Store) CheckCurrent(t testing.TB) {
	t.Helper()
	entries, err := os.ReadDir(s.Dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(s.Dir, e.Name())
		text, err := os.ReadFile(filepath.Join(dir, "KEY"))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		work, inputs, names, sums, err := parseKey(text)
		if err != nil {
			t.Errorf("%s/KEY: %v", dir, err)
			continue
		}
		now, hash, err := entryKey(work, inputs, names)
		switch {
		case err != nil:
			t.Errorf("%s: an input is gone (%v): remove the entry, and record the tests' builds again (%s=1)", dir, err, RecordEnv)
		case now != string(text):
			for i, in := range inputs {
				if data, _ := os.ReadFile(in); fmt.Sprintf("%x", sha256.Sum256(data)) != sums[i] {
					t.Errorf("%s: %s changed since the entry was made: remove it, and record the tests' builds again (%s=1)", dir, in, RecordEnv)
				}
			}
		case hash != e.Name():
			t.Errorf("%s: its KEY hashes to %s", dir, hash)
		case !hasFiles(dir, names):
			t.Errorf("%s: a file its KEY lists is missing", dir)
		}
	}
}

// parseKey reads a KEY file.
func parseKey(text []byte) (work string, inputs, names, sums []string, err error) {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "work":
			lines = append(lines, rest)
		case "input":
			sum, path, ok := strings.Cut(rest, " ")
			if !ok {
				return "", nil, nil, nil, fmt.Errorf("bad line %q", sc.Text())
			}
			sums, inputs = append(sums, sum), append(inputs, filepath.FromSlash(path))
		case "file":
			if rest == "" || rest != filepath.Base(rest) || rest == "KEY" {
				return "", nil, nil, nil, fmt.Errorf("bad file name %q", rest)
			}
			names = append(names, rest)
		default:
			return "", nil, nil, nil, fmt.Errorf("bad line %q", sc.Text())
		}
	}
	return strings.Join(lines, "\n"), inputs, names, sums, sc.Err()
}

// Inputs returns the regular files of the folders dirs, each folder's
// sorted by name, but those named in skip: the inputs of a build that
// reads a folder's sources and headers.
func Inputs(dirs []string, skip ...string) ([]string, error) {
	var out []string
	for _, d := range dirs {
		var files []string
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.Type().IsRegular() && !slices.Contains(skip, e.Name()) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(files)
		out = append(out, files...)
	}
	return out, nil
}

// Compile runs the compiler at path (a clang of the release that name
// says, e.g. "clang-22") in dir ("": the package's folder) with args, which
// write the files outs (paths as args give them, from dir); the default run
// takes those from the store when it has them (see [Store.Files]). The
// work the store's key names is name and args, each of outs by its base
// name; its inputs are the files args name and those they include with
// #include "..." (and theirs): a file of the module by its path from the
// package's folder, checked by [Store.CheckCurrent]; any other (a source
// the test wrote) by its name in args and its bytes, part of the work.
// The store refuses objects that hold a folder of this machine: args name
// the sources by paths relative to dir. The compiler runs in a [Slot]:
// the caller holds none. It calls no t.Fatal: a test's goroutines may
// call it.
func (s Store) Compile(t testing.TB, name, path, dir string, args []string, outs ...string) error {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root := moduleRoot(wd)
	at := func(p string) string {
		if filepath.IsAbs(p) || dir == "" {
			return p
		}
		return filepath.Join(dir, p)
	}
	keyArgs := slices.Clone(args)
	for i, a := range keyArgs {
		if slices.Contains(outs, a) {
			keyArgs[i] = filepath.Base(a)
		}
	}
	work := []string{name + " " + strings.Join(keyArgs, " ")}
	var inputs []string
	seen := map[string]bool{}
	var add func(file string)
	add = func(file string) {
		abs, err := filepath.Abs(file)
		if err != nil || seen[abs] {
			return
		}
		seen[abs] = true
		data, err := os.ReadFile(abs)
		if err != nil {
			return
		}
		if rel, err := filepath.Rel(wd, abs); err == nil && root != "" && strings.HasPrefix(abs, root+string(filepath.Separator)) {
			inputs = append(inputs, rel) // the module's
		} else {
			rel := abs
			if dir != "" {
				rel, _ = filepath.Rel(dir, abs)
			}
			work = append(work, fmt.Sprintf("source %s %x", filepath.ToSlash(rel), sha256.Sum256(data)))
		}
		for _, inc := range quotedIncludes(data) {
			add(filepath.Join(filepath.Dir(abs), inc))
		}
	}
	for i, a := range args {
		if slices.Contains(outs, a) || i > 0 && args[i-1] == "-o" {
			continue
		}
		if st, err := os.Stat(at(a)); err == nil && st.Mode().IsRegular() {
			add(at(a))
		}
	}
	tmp, err := os.MkdirTemp("", "store-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	got, err := s.Files(t, tmp, strings.Join(work, "\n"), inputs, bases(outs), func(string) error {
		cmd := exec.Command(path, args...)
		cmd.Dir = dir
		if out, err := CombinedOutput(cmd); err != nil {
			return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, Clip(out))
		}
		for _, o := range outs {
			if err := os.Rename(at(o), filepath.Join(tmp, filepath.Base(o))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, o := range outs {
		if err := CopyFile(at(o), filepath.Join(got, filepath.Base(o))); err != nil {
			return err
		}
	}
	return nil
}

// moduleRoot returns the folder of the go.mod above dir, or "".
func moduleRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func bases(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// quotedIncludes returns the files of the #include "..." lines of a C
// source.
func quotedIncludes(src []byte) []string {
	var out []string
	for _, line := range bytes.Split(src, []byte("\n")) {
		line = bytes.TrimSpace(line)
		rest, ok := bytes.CutPrefix(line, []byte("#"))
		if !ok {
			continue
		}
		rest, ok = bytes.CutPrefix(bytes.TrimSpace(rest), []byte("include"))
		if !ok {
			continue
		}
		rest = bytes.TrimSpace(rest)
		if len(rest) > 1 && rest[0] == '"' {
			if end := bytes.IndexByte(rest[1:], '"'); end > 0 {
				out = append(out, string(rest[1:1+end]))
			}
		}
	}
	return out
}
