// Command embed makes a fat object, as clang -fembed-offload-object does: it
// adds OffloadBinaries (made by clang-offload-packager, llvm-offload-binary or
// goffload package) to the .llvm.offloading section of a host object.
//
//	go run ./examples/embed -o OUT.o [--into HOST.o] BINARY...
//
// Without --into it makes a new x86-64 object holding only the binaries.
// OUT.o is written whole or not at all, so it may be HOST.o itself.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
)

func main() {
	out := flag.String("o", "", "write the fat object to `OUT.o`")
	into := flag.String("into", "", "add the binaries to the host object `HOST.o` (else to a new x86-64 object)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: embed -o OUT.o [--into HOST.o] BINARY...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*out, *into, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
}

// run writes to out the host object into (or a new one when into is "")
// with the binaries in the files at paths embedded.
func run(out, into string, paths []string) error {
	var o *elfobj.Object
	if into == "" {
		var err error
		if o, err = fatobj.NewHostObject("x86_64-unknown-linux-gnu"); err != nil {
			return err
		}
	} else {
		// The host object's contents are streamed from the file when o is
		// written: it stays open until then.
		f, r, err := open(into)
		if err != nil {
			return err
		}
		defer f.Close()
		ef, err := elfobj.Read(r, r.Size())
		if err != nil {
			return fmt.Errorf("%s: %w", into, err)
		}
		if o, err = ef.Object(); err != nil {
			return fmt.Errorf("%s: %w", into, err)
		}
	}
	for _, path := range paths {
		// Embed checks that the file holds OffloadBinaries; their bytes are
		// read again when o is written.
		f, r, err := open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := fatobj.Embed(o, r); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return writeFile(out, func(w io.Writer) error {
		_, err := elfobj.Write(w, o)
		return err
	})
}

// open opens the file at path, and a reader of all its bytes.
func open(path string) (*os.File, *io.SectionReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, io.NewSectionReader(f, 0, st.Size()), nil
}

// writeFile writes a file named path with write, through a temporary file in
// the same folder that replaces path only when everything was written.
func writeFile(path string, write func(io.Writer) error) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriter(tmp)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
