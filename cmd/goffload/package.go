package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/offloadbinary"
)

func runPackage(args []string, stdout io.Writer) error {
	var llvm, out, format string
	var images stringList
	var compress bool
	var level int
	fs := newFlags("package", &llvm)
	fs.StringVar(&out, "o", "", "write the output to `OUT`")
	fs.Var(&images, "image", "an image as `file=F,triple=T[,arch=A][,kind=K][,key=V]...` (repeatable)")
	fs.BoolVar(&compress, "compress", false, "compress the binary, as llvm-offload-binary --compress (--llvm 24, main: OffloadBinary version 3)")
	fs.StringVar(&format, "compression-format", "zstd", "with --compress: `zstd` or zlib")
	fs.IntVar(&level, "compression-level", 0, "with --compress: the level `N` (zstd -131072 to 22, default 5; zlib 0 to 9, default 6)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	var comp *offloadbinary.Compression
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case compress:
		comp = &offloadbinary.Compression{Format: format, Level: level}
		if format == "zlib" && given["compression-level"] && level == 0 {
			comp.Level = offloadbinary.ZlibStored
		}
	case given["compression-format"] || given["compression-level"]:
		return fmt.Errorf("--compression-format and --compression-level go with --compress")
	}
	if out == "" {
		return fmt.Errorf("-o OUT is required")
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	dest := newOutput(out, stdout)
	if err := dest.check(); err != nil {
		return err
	}
	rel, err := parseRelease(llvm)
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
		pis, err := offloadbinary.ParseImageArg(rel, a)
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
	open := func(name string) (io.Reader, int64, error) {
		r := files[name]
		return io.NewSectionReader(r, 0, r.Size()), r.Size(), nil
	}
	if comp != nil {
		// The release and the level are checked before the output is made.
		if err := offloadbinary.CheckCompression(rel, *comp); err != nil {
			return err
		}
	}
	return dest.write(func(w io.Writer) error {
		var err error
		if comp != nil {
			_, err = offloadbinary.PackageCompressed(rel, w, images, open, *comp)
		} else {
			_, err = offloadbinary.Package(rel, w, images, open)
		}
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
