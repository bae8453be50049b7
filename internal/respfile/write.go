package respfile

import (
	"fmt"
	"io"
	"strings"
)

// Fits reports whether a program and its arguments fit on a command line,
// as llvm::sys::commandLineFitsWithinSystemLimits decides on Unix, the
// test by which clang's driver writes a response file for a tool instead:
// no argument of 128 KiB or more, and the program's name and the
// arguments, each with one byte more, at most 64 KiB in all (half of
// xargs' 128 KiB baseline, LLVM's margin for the environment; the system's
// ARG_MAX would lower that baseline, but is at least 128 KiB on Linux and
// the BSDs). As in LLVM, a name alone never makes a command too long.
func Fits(program string, args []string) bool {
	const (
		baseline  = 128 << 10 // xargs'
		maxArgLen = 32 * 4096 // Linux's MAX_ARG_STRLEN
	)
	n := len(program) + 1
	for _, a := range args {
		if len(a) >= maxArgLen {
			return false
		}
		n += len(a) + 1
		if n > baseline/2 {
			return false
		}
	}
	return true
}

// Quote returns arg as clang's driver writes it into a response file
// (Command::writeResponseFile): in double quotes, with each '"' and '\'
// after a backslash, every other byte as it is.
func Quote(arg string) string {
	var b strings.Builder
	b.Grow(len(arg) + 2)
	quote(&b, arg)
	return b.String()
}

func quote(b *strings.Builder, arg string) {
	b.WriteByte('"')
	for i := 0; i < len(arg); i++ {
		if arg[i] == '"' || arg[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(arg[i])
	}
	b.WriteByte('"')
}

// Write writes args to w as the response file clang's driver writes on
// Unix: each argument quoted by [Quote] and followed by a space, on one
// line with no newline at its end, in the arguments' own bytes (UTF-8, no
// byte order mark). clang's driver, clang-linker-wrapper, ld.lld, GNU ld
// and [Expand] read it back as args, with one exception: an argument that
// starts with '@' is expanded again if it names a file, by all of them.
//
// An empty argument, or one holding a NUL byte, is an error and nothing is
// written: clang writes "", which LLVM's readers drop and GNU ld keeps, and
// a NUL ends an argument.
func Write(w io.Writer, args []string) error {
	n := 0
	for i, a := range args {
		switch {
		case a == "":
			return fmt.Errorf("response file: argument %d is empty: LLVM's tools would not read it back", i)
		case strings.IndexByte(a, 0) >= 0:
			return fmt.Errorf("response file: argument %d (%q) holds a NUL byte, which would end it", i, a)
		}
		n += len(a) + 3
	}
	var b strings.Builder
	b.Grow(n + n/8)
	for _, a := range args {
		quote(&b, a)
		b.WriteByte(' ')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
