package link

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/internal/digest"
	"github.com/goffload/goffload/internal/respfile"
)

// keyEnv are the environment variables that can change what a step's tools
// make, beside the step's own Env: where clang finds its programs and
// libraries (COMPILER_PATH, LIBRARY_PATH, GCC_EXEC_PREFIX), options it adds
// (CCC_OVERRIDE_OPTIONS), the GPU toolkits it looks for, which shared
// libraries the tools load, the rpath and emulation GNU ld takes from the
// environment, and the time reproducible builds stamp. Each is in the key
// with its value, set or not.
var keyEnv = []string{
	"COMPILER_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX", "CCC_OVERRIDE_OPTIONS",
	"ROCM_PATH", "HIP_PATH", "HIP_DEVICE_LIB_PATH", "CUDA_PATH",
	"LD_LIBRARY_PATH", "LD_PRELOAD", "LD_RUN_PATH", "LDEMULATION", "SOURCE_DATE_EPOCH",
}

// errNoKey wraps the reason a step's key cannot be made: the step then
// runs without the cache.
var errNoKey = errors.New("no cache key")

// StepKey returns the cache key of step s of the link: the SHA-256, in
// hexadecimal, of everything its outputs depend on (docs/cache.md):
//
//   - the step's kind and target;
//   - its program: the path it resolves to, the SHA-256 of its bytes and of
//     the shared libraries it loads (those its ELF header names, found as
//     the dynamic loader finds them);
//   - its arguments and Env, with the link's TempDir and the step's outputs
//     replaced by placeholders, so that two links in different temporary
//     folders share the entry;
//   - the environment variables that change what the tools do (COMPILER_PATH,
//     LIBRARY_PATH, LD_LIBRARY_PATH, ...: see docs/cache.md);
//   - the SHA-256 of every input;
//   - what the program reads that the step does not declare: for clang, the
//     commands `clang ARGS -###` prints (the linker it would run, with its
//     arguments), each command's program and shared libraries, every file
//     its arguments name (crt files, libraries), the libraries its -l
//     options find in its -L folders, and the files the linker scripts among
//     them name; for another program (llc, ld), the files its own arguments
//     name, likewise.
//
// It returns an error if something the step would read cannot be pinned
// down (a -l library found in none of the -L folders, which the linker would
// look for in its own; a linker script that includes others): such a step
// is not cached.
func (l *Link) StepKey(ctx context.Context, s *Step) (string, error) {
	k := &keyer{h: sha256.New(), l: l, s: s, seen: map[string]bool{}}
	if err := k.key(ctx); err != nil {
		return "", fmt.Errorf("%w: %w", errNoKey, err)
	}
	return hex.EncodeToString(k.h.Sum(nil)), nil
}

// keyer gathers the key of one step.
type keyer struct {
	lld  bool // the command being read is lld's
	h    hash.Hash
	l    *Link
	s    *Step
	seen map[string]bool // files hashed already
}

// put adds a record of strings to the key, each prefixed with its length,
// so that no two records run together.
func (k *keyer) put(parts ...string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(parts)))
	k.h.Write(n[:])
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		k.h.Write(n[:])
		io.WriteString(k.h, p)
	}
}

// norm replaces the link's TempDir and the step's outputs in an argument by
// placeholders holding NUL, which no argument holds.
func (k *keyer) norm(a string) string {
	for i, out := range k.s.Outputs {
		if a == out {
			return "\x00out" + strconv.Itoa(i)
		}
	}
	if t := k.l.TempDir; t != "" {
		a = strings.ReplaceAll(a, filepath.Clean(t)+string(filepath.Separator), "\x00tmp/")
	}
	return a
}

// normAll normalizes each argument (norm), and the value of -dumpdir that
// names an output (clang's OUT.: where it would write side files such as
// -save-temps', which the cache does not take, not what it writes into
// OUT): the same device code linked for another program shares the entry.
func (k *keyer) normAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = k.norm(a)
		if i == 0 || args[i-1] != "-dumpdir" {
			continue
		}
		for j, o := range k.s.Outputs {
			if filepath.Base(a) == filepath.Base(o)+"." {
				out[i] = "\x00outname" + strconv.Itoa(j)
			}
		}
	}
	return out
}

// quiet returns a clang's arguments without -v, which makes it print its
// commands and changes nothing it writes (link.Options.Verbose adds it to
// the device links of 16 to 21): a verbose link shares the entry.
func quiet(args []string) []string {
	if !slices.Contains(args, "-v") {
		return args
	}
	var q []string
	for _, a := range args {
		if a != "-v" {
			q = append(q, a)
		}
	}
	return q
}

func (k *keyer) key(ctx context.Context) error {
	s := k.s
	k.put("goffload link cache key", "1")
	k.put("step", string(s.Kind), s.Target)
	tool, err := resolveProgram(s.Tool)
	if err != nil {
		return err
	}
	if err := k.program(tool); err != nil {
		return err
	}
	args := s.Args
	if isClang(tool) {
		args = quiet(args)
	}
	k.put(append([]string{"args"}, k.normAll(args)...)...)
	k.put(append([]string{"env"}, k.normAll(s.Env)...)...)
	for _, name := range keyEnv {
		v, ok := os.LookupEnv(name)
		k.put("getenv", name, strconv.FormatBool(ok), v)
	}
	for _, in := range s.Inputs {
		sum, err := digest.File(in)
		if err != nil {
			return err
		}
		k.put("input", k.norm(in), sum)
		k.seen[in] = true
	}
	if !isClang(tool) {
		return k.command(append([]string{tool}, s.Args...))
	}
	cmds, err := k.l.clangCommands(ctx, s)
	if err != nil {
		return err
	}
	for _, c := range cmds {
		k.put(append([]string{"command"}, k.normAll(c)...)...)
		if err := k.command(c); err != nil {
			return err
		}
	}
	return nil
}

// isClang reports whether a program is a clang driver, which -### asks
// for its commands.
func isClang(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "clang")
}

// resolveProgram returns the file a program name runs, as exec finds it.
func resolveProgram(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// clangCommands returns the commands that clang, run as s runs it, prints
// with -### (in the folder and environment s runs in).
func (l *Link) clangCommands(ctx context.Context, s *Step) ([][]string, error) {
	args := append(s.Args[:len(s.Args):len(s.Args)], "-###")
	if !respfile.Fits(s.Tool, args) {
		rsp, remove, err := atomicfile.TempFile(l.TempDir, ".clang-key-*.rsp", func(w io.Writer) error { return respfile.Write(w, args) })
		if err != nil {
			return nil, err
		}
		defer remove()
		args = []string{"@" + rsp}
	}
	cmd := exec.CommandContext(ctx, s.Tool, args...)
	if len(s.Env) > 0 {
		cmd.Env = append(os.Environ(), s.Env...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -###: %w", filepath.Base(s.Tool), err)
	}
	return parseDashHashes(out.Bytes())
}

// parseDashHashes reads the commands of clang -###: each line that starts
// with a space and a double quote is one, its arguments in double quotes
// with \ before ", \ and $.
func parseDashHashes(out []byte) ([][]string, error) {
	var cmds [][]string
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, ` "`) {
			continue
		}
		var argv []string
		for i := 1; i < len(line); {
			if line[i] == ' ' {
				i++
				continue
			}
			if line[i] != '"' {
				return nil, fmt.Errorf("clang -###: unquoted argument in %q", line)
			}
			var b strings.Builder
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				b.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf("clang -###: unterminated argument in %q", line)
			}
			i++
			argv = append(argv, b.String())
		}
		if len(argv) > 0 {
			cmds = append(cmds, argv)
		}
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("clang -### printed no command")
	}
	return cmds, nil
}

// command adds to the key what a command (a program and its arguments)
// reads: the program, and every file its arguments name, as a linker reads
// them (see [keyer.linkerFiles]).
func (k *keyer) command(argv []string) error {
	prog, err := resolveProgram(argv[0])
	if err != nil {
		return err
	}
	if err := k.program(prog); err != nil {
		return err
	}
	if out := sideOutput(argv[1:]); out != "" {
		return fmt.Errorf("%s writes %s besides its outputs, which a hit would not make", filepath.Base(prog), out)
	}
	k.lld = strings.HasPrefix(filepath.Base(prog), "ld.lld") || filepath.Base(prog) == "lld"
	return k.linkerFiles(argv[1:], 0)
}

// sideOutput returns the option of a linker's arguments that makes it write
// a file besides its output (a map, a dependency file, a reproduction
// tarball, its temporary files), or "": such a step is not cached.
func sideOutput(args []string) string {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if strings.HasPrefix(a, "-plugin-opt=obj-path=") || strings.HasPrefix(a, "--plugin-opt=obj-path=") {
			return a
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "Map", "dependency-file", "why-extract", "reproduce", "save-temps", "lto-obj-path", "print-archive-stats":
			return a
		}
	}
	return ""
}

// program adds a program to the key: its path, its bytes, and those of the
// shared libraries it loads; for GNU ld also the plugins it loads by itself
// (PREFIX/lib/bfd-plugins).
func (k *keyer) program(path string) error {
	if err := k.file("program", path); err != nil {
		return err
	}
	for _, lib := range neededLibraries(path) {
		if lib.path == "" {
			k.put("library-not-found", lib.name)
			continue
		}
		if err := k.file("library", lib.path); err != nil {
			return err
		}
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && strings.HasPrefix(filepath.Base(real), "ld.bfd") {
		plugins, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(real)), "lib", "bfd-plugins", "*"))
		for _, p := range plugins {
			if err := k.file("plugin", p); err != nil {
				return err
			}
		}
	}
	return nil
}

// file adds a file of the tools' to the key, once: its path and bytes.
func (k *keyer) file(what, path string) error {
	if k.seen[path] {
		return nil
	}
	k.seen[path] = true
	fh, _ := k.l.opt.Cache.(FileHasher)
	sum, err := toolFileHash(path, fh)
	if err != nil {
		return err
	}
	k.put(what, k.norm(path), sum)
	return nil
}
