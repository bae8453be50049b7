package main

import (
	"bufio"
	"io"

	"github.com/goffload/goffload/internal/atomicfile"
)

// output is the file a command writes (-o OUT): "-" is standard output,
// as LLVM's tools (clang-offload-packager, llvm-objcopy,
// clang-offload-bundler) take it, not a file named "-".
type output struct {
	path   string
	stdout io.Writer
}

func newOutput(path string, stdout io.Writer) output { return output{path, stdout} }

func (o output) isStdout() bool { return o.path == "-" }

// check is atomicfile.Check: whether the file may be written, before the
// work.
func (o output) check() error {
	if o.isStdout() {
		return nil
	}
	return atomicfile.Check(o.path)
}

// write writes the file whole or not at all (atomicfile.Write); to
// standard output, as it is made (what was written stays when fill fails,
// as with LLVM's tools).
func (o output) write(fill func(w io.Writer) error) error {
	if !o.isStdout() {
		return atomicfile.Write(o.path, fill)
	}
	w := bufio.NewWriterSize(o.stdout, 1<<20)
	if err := fill(w); err != nil {
		return err
	}
	return w.Flush()
}

// report is where a command prints what it did: standard output, unless
// the file goes there.
func (o output) report() io.Writer {
	if o.isStdout() {
		return io.Discard
	}
	return o.stdout
}
