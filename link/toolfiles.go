package link

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/goffload/goffload/internal/digest"
	"github.com/goffload/goffload/internal/ferr"
)

// toolFileHash returns the SHA-256 of a file of the tools (a program, a
// shared library, a crt file), computed once in a process for a file of
// the same path, size, modification time and inode (the device links of
// several targets, at once, read libLLVM once), by fh if not nil (a
// [FileHasher] that remembers it across processes).
func toolFileHash(path string, fh FileHasher) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	id := fileID{path: path, size: st.Size(), mtime: st.ModTime()}
	id.dev, id.ino = devIno(st)
	toolHashes.Lock()
	sum, ok := toolHashes.m[id]
	if !ok {
		sum = sync.OnceValues(func() (string, error) {
			if fh != nil {
				return fh.HashFile(path)
			}
			return digest.File(path)
		})
		toolHashes.m[id] = sum
	}
	toolHashes.Unlock()
	return sum()
}

type fileID struct {
	path     string
	size     int64
	mtime    time.Time
	dev, ino uint64
}

var toolHashes = struct {
	sync.Mutex
	m map[fileID]func() (string, error)
}{m: map[fileID]func() (string, error){}}

// neededLib is a shared library that an ELF file names (DT_NEEDED), and
// the file the dynamic loader would load for it ("" if none is found).
type neededLib struct{ name, path string }

// maxNeeded bounds the shared libraries followed from one program.
const maxNeeded = 512

// neededLibraries returns the shared libraries that the program at path
// loads, and those they load, found as the dynamic loader finds them: the
// object's DT_RPATH (without DT_RUNPATH), $LD_LIBRARY_PATH, its DT_RUNPATH
// ($ORIGIN being its folder), the folders of /etc/ld.so.conf, then /lib64,
// /usr/lib64, /lib and /usr/lib. A program that is not ELF (a script) has
// none.
func neededLibraries(path string) []neededLib {
	neededCache.Lock()
	libs, ok := neededCache.m[path]
	neededCache.Unlock()
	if ok {
		return libs
	}
	seen := map[string]bool{}
	queue := []string{path}
	for len(queue) > 0 && len(libs) < maxNeeded {
		obj := queue[0]
		queue = queue[1:]
		names, dirs := dynamicDeps(obj)
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			found := ""
			for _, d := range dirs {
				p := filepath.Join(d, n)
				if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
					found = p
					break
				}
			}
			libs = append(libs, neededLib{n, found})
			if found != "" {
				queue = append(queue, found)
			}
		}
	}
	neededCache.Lock()
	neededCache.m[path] = libs
	neededCache.Unlock()
	return libs
}

var neededCache = struct {
	sync.Mutex
	m map[string][]neededLib
}{m: map[string][]neededLib{}}

// dynamicDeps returns the DT_NEEDED names of an ELF file and the folders
// the loader searches for them, in order.
func dynamicDeps(path string) ([]string, []string) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	dyn := dynStrings(f)
	names := dyn[elf.DT_NEEDED]
	if len(names) == 0 {
		return nil, nil
	}
	origin := filepath.Dir(path)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		origin = filepath.Dir(real)
	}
	expand := func(list []string) []string {
		var out []string
		for _, l := range list {
			for _, d := range strings.Split(l, ":") {
				d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin)
				if d != "" {
					out = append(out, d)
				}
			}
		}
		return out
	}
	runpath := dyn[elf.DT_RUNPATH]
	var dirs []string
	if len(runpath) == 0 {
		dirs = append(dirs, expand(dyn[elf.DT_RPATH])...)
	}
	dirs = append(dirs, expand([]string{os.Getenv("LD_LIBRARY_PATH")})...)
	dirs = append(dirs, expand(runpath)...)
	dirs = append(dirs, systemLibDirs()...)
	return names, dirs
}

// dynStrings returns the DT_NEEDED, DT_RPATH and DT_RUNPATH strings of f.
// It reads the dynamic section and each string where it is, not the whole
// string table as elf.File.DynString does: libLLVM's is megabytes, and a
// cached link asks this of every tool it runs.
func dynStrings(f *elf.File) map[elf.DynTag][]string {
	ds := f.SectionByType(elf.SHT_DYNAMIC)
	if ds == nil || int(ds.Link) >= len(f.Sections) || ds.Size > maxDynamic {
		return nil
	}
	strtab := f.Sections[ds.Link]
	data, err := ds.Data()
	if err != nil {
		return nil
	}
	size := 16
	if f.Class == elf.ELFCLASS32 {
		size = 8
	}
	out := map[elf.DynTag][]string{}
	for len(data) >= size {
		var tag elf.DynTag
		var val uint64
		if size == 16 {
			tag, val = elf.DynTag(f.ByteOrder.Uint64(data)), f.ByteOrder.Uint64(data[8:])
		} else {
			tag, val = elf.DynTag(f.ByteOrder.Uint32(data)), uint64(f.ByteOrder.Uint32(data[4:]))
		}
		data = data[size:]
		if tag == elf.DT_NULL {
			break
		}
		if tag != elf.DT_NEEDED && tag != elf.DT_RPATH && tag != elf.DT_RUNPATH {
			continue
		}
		if str, ok := stringAt(strtab, val); ok {
			out[tag] = append(out[tag], str)
		}
	}
	return out
}

// maxDynamic bounds the dynamic section read (a library's has a few
// hundred entries); maxDynName, a string of it (a path).
const (
	maxDynamic = 1 << 20
	maxDynName = 4096
)

// stringAt returns the NUL-terminated string at off in the string table s.
func stringAt(s *elf.Section, off uint64) (string, bool) {
	if off >= s.Size {
		return "", false
	}
	b := make([]byte, min(s.Size-off, maxDynName))
	n, _ := s.ReadAt(b, int64(off))
	b = b[:n]
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return "", false
	}
	return string(b[:i]), true
}

// systemLibDirs are the folders of /etc/ld.so.conf (and the files it
// includes), then the loader's own.
var systemLibDirs = sync.OnceValue(func() []string {
	var dirs []string
	var read func(path string, depth int)
	read = func(path string, depth int) {
		f, err := os.Open(path)
		if err != nil || depth > 4 {
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line, _, _ := strings.Cut(sc.Text(), "#")
			line = strings.TrimSpace(line)
			if rest, ok := strings.CutPrefix(line, "include "); ok {
				pat := strings.TrimSpace(rest)
				if !filepath.IsAbs(pat) {
					pat = filepath.Join(filepath.Dir(path), pat)
				}
				ms, _ := filepath.Glob(pat)
				for _, m := range ms {
					read(m, depth+1)
				}
				continue
			}
			if strings.HasPrefix(line, "/") {
				dirs = append(dirs, line)
			}
		}
	}
	read("/etc/ld.so.conf", 0)
	return append(dirs, "/lib64", "/usr/lib64", "/lib", "/usr/lib")
})

// maxScript bounds a linker script read for the files it names.
const maxScript = 1 << 20

// linkerFiles adds to the key the files that a command's arguments name
// for it to read, as a linker reads them: every argument (or the value
// after an argument's '=') that is an existing regular file, but the
// outputs; the plugins of -plugin, with their shared libraries; the libraries its -l options find in its -L folders (the first
// folder holding libNAME.so or libNAME.a: both, as -Bstatic may choose
// either; -l:NAME the file NAME); and the files that the linker scripts
// among them name (INPUT, GROUP, AS_NEEDED, STARTUP). A -l library found in
// no -L folder, or a script that includes another or adds a folder
// (INCLUDE, SEARCH_DIR), is an error: the linker would read what the key
// does not know.
func (k *keyer) linkerFiles(args []string, depth int) error {
	var dirs []string
	sysroot := ""
	for i, a := range args {
		if a == "--sysroot" && i+1 < len(args) {
			sysroot = args[i+1]
		} else if v, ok := strings.CutPrefix(a, "--sysroot="); ok {
			sysroot = v
		}
	}
	addDir := func(d string) {
		// -L=DIR is under the sysroot (as ld and lld read it; DIR with
		// none).
		if rest, ok := strings.CutPrefix(d, "="); ok {
			d = filepath.Join(sysroot, rest)
			if sysroot == "" {
				d = rest
			}
		}
		dirs = append(dirs, d)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-L" || a == "--library-path":
			if i+1 < len(args) {
				addDir(args[i+1])
				i++
			}
		case strings.HasPrefix(a, "--library-path="):
			addDir(a[len("--library-path="):])
		case strings.HasPrefix(a, "-L"):
			addDir(a[2:])
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		var lib string
		switch {
		case a == "-o" || a == "--output" || a == "-L" || a == "--library-path":
			i++
			continue
		case a == "-plugin" || a == "--plugin":
			// A program of the linker's: with its shared libraries.
			if i+1 < len(args) {
				i++
				if err := k.program(args[i]); err != nil {
					return err
				}
			}
			continue
		case strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "-L") || strings.HasPrefix(a, "--library-path="):
			continue
		case a == "-l" || a == "--library":
			if i+1 < len(args) {
				i++
				lib = args[i]
			}
		case strings.HasPrefix(a, "--library="):
			lib = a[len("--library="):]
		case strings.HasPrefix(a, "-l"):
			lib = a[2:]
		}
		if lib != "" {
			if err := k.library(lib, dirs, depth); err != nil {
				return err
			}
			continue
		}
		cands := []string{a}
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			cands = append(cands, v)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			// A short option joined to its file: -Tscript.ld.
			cands = append(cands, a[2:])
		}
		for _, c := range cands {
			if c == "" || k.isOutput(c) {
				continue
			}
			if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
				if err := k.linkerInput(c, dirs, depth); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (k *keyer) isOutput(path string) bool {
	for _, o := range k.s.Outputs {
		if o == path {
			return true
		}
	}
	return false
}

// library adds the file(s) -lNAME finds in dirs.
func (k *keyer) library(name string, dirs []string, depth int) error {
	cands := []string{"lib" + name + ".so", "lib" + name + ".a"}
	if exact, ok := strings.CutPrefix(name, ":"); ok {
		cands = []string{exact}
	}
	for _, d := range dirs {
		var found []string
		for _, c := range cands {
			p := filepath.Join(d, c)
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				found = append(found, p)
			}
		}
		if len(found) == 0 {
			continue
		}
		k.put("library-search", name, k.norm(d))
		for _, p := range found {
			if err := k.linkerInput(p, dirs, depth); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("-l%s: in none of the -L folders", name)
}

// linkerInput adds a file a linker reads, and if it is a linker script, the
// files it names.
func (k *keyer) linkerInput(path string, dirs []string, depth int) error {
	if k.seen[path] {
		return nil
	}
	if err := k.file("file", path); err != nil {
		return err
	}
	if !linkerScript(path) {
		return nil
	}
	if depth > 8 {
		return fmt.Errorf("%s: linker scripts nested too deep", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(b) > maxScript {
		return fmt.Errorf("%s: a linker script of over %d bytes", path, maxScript)
	}
	files, libs, err := scriptFiles(string(b))
	if err != nil {
		return &ferr.InFile{Name: path, Err: err}
	}
	for _, l := range libs {
		if err := k.library(l, dirs, depth+1); err != nil {
			return err
		}
	}
	for _, f := range files {
		p := f
		if !filepath.IsAbs(f) {
			// As ld: the current folder, then the -L folders; lld looks
			// in the script's own folder first.
			p = ""
			search := append([]string{"."}, dirs...)
			if k.lld {
				search = append([]string{filepath.Dir(path)}, search...)
			}
			for _, d := range search {
				if st, err := os.Stat(filepath.Join(d, f)); err == nil && st.Mode().IsRegular() {
					p = filepath.Join(d, f)
					break
				}
			}
			if p == "" {
				return fmt.Errorf("%s: %s: in none of the -L folders", path, f)
			}
		}
		k.put("script-file", f)
		if err := k.linkerInput(p, dirs, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// scriptFiles returns the files and the -l libraries that a linker script
// names in INPUT, GROUP, AS_NEEDED and STARTUP; INCLUDE and SEARCH_DIR are
// errors (see linkerFiles).
func scriptFiles(s string) (files, libs []string, err error) {
	// Comments out.
	for {
		i := strings.Index(s, "/*")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+2:], "*/")
		if j < 0 {
			s = s[:i]
			break
		}
		s = s[:i] + " " + s[i+2+j+2:]
	}
	toks := strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '(' || r == ')' || r == ',' || r == ';' || r == '{' || r == '}'
	})
	// A file list runs from INPUT, GROUP or STARTUP to the next keyword of
	// a script in capitals that is not AS_NEEDED.
	inList := false
	for _, t := range toks {
		switch t {
		case "INCLUDE", "SEARCH_DIR":
			return nil, nil, fmt.Errorf("the linker script uses %s", t)
		case "INPUT", "GROUP", "STARTUP":
			inList = true
			continue
		case "AS_NEEDED":
			continue
		}
		if isScriptKeyword(t) {
			inList = false
			continue
		}
		if !inList {
			continue
		}
		if l, ok := strings.CutPrefix(t, "-l"); ok {
			libs = append(libs, l)
		} else {
			files = append(files, strings.Trim(t, `"`))
		}
	}
	return files, libs, nil
}

// isScriptKeyword reports whether a token is a keyword of a linker script
// (OUTPUT_FORMAT, SECTIONS...): capitals, digits and underscores, not a
// file name.
func isScriptKeyword(t string) bool {
	if t == "" || strings.ContainsAny(t, "./") {
		return false
	}
	for _, r := range t {
		if !(r >= 'A' && r <= 'Z' || r == '_' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
