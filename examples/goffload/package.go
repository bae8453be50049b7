package main

import (
	"fmt"
	"io"
	"os"

	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/offload"
)

func runPackage(args []string, _ io.Writer) error {
	var llvm, out string
	var images stringList
	fs := newFlags("package", &llvm)
	fs.StringVar(&out, "o", "", "write the output to `OUT`")
	fs.Var(&images, "image", "an image as `file=F,triple=T[,arch=A][,kind=K][,key=V]...` (repeatable)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if out == "" {
		return fmt.Errorf("-o OUT is required")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := atomicfile.Check(out); err != nil {
		return err
	}
	rel, err := offload.ParseRelease(llvm)
	if err != nil {
		return err
	}
	// Check every argument and open every file before the output is made, as
	// the packager checks its arguments.
	files := map[string]*io.SectionReader{}
	var closers []io.Closer
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	for _, a := range images {
		pis, err := rel.ParseImageArg(a)
		if err != nil {
			return err
		}
		for _, pi := range pis {
			if _, ok := files[pi.File]; ok {
				continue
			}
			r, c, err := openImage(pi.File)
			if err != nil {
				return err
			}
			files[pi.File], closers = r, append(closers, c)
		}
	}
	return atomicfile.Write(out, func(w io.Writer) error {
		_, err := rel.Package(w, images, func(name string) (io.Reader, int64, error) {
			r := files[name]
			return io.NewSectionReader(r, 0, r.Size()), r.Size(), nil
		})
		return err
	})
}

// openImage opens an image file for the packager; "-" is standard input, as
// for LLVM's getFileOrSTDIN, copied to a scratch file.
func openImage(name string) (*io.SectionReader, io.Closer, error) {
	if name == "-" {
		f, n, err := atomicfile.Spool(os.Stdin)
		if err != nil {
			return nil, nil, fmt.Errorf("standard input: %w", err)
		}
		return io.NewSectionReader(f, 0, n), f, nil
	}
	f, err := openSized(name)
	if err != nil {
		return nil, nil, err
	}
	return f.Section(), f, nil
}
