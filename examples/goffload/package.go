package main

import (
	"bytes"
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
	rel, err := offload.ParseRelease(llvm)
	if err != nil {
		return err
	}
	// Check every argument before any file is written, as the packager does.
	for _, a := range images {
		if _, err := rel.ParseImageArg(a); err != nil {
			return err
		}
	}
	return atomicfile.Write(out, 0o644, func(w io.Writer) error {
		_, err := rel.Package(w, images, openImage)
		return err
	})
}

// openImage opens an image file for the packager; "-" is standard input, as for
// LLVM's getFileOrSTDIN.
func openImage(name string) (io.Reader, int64, error) {
	if name == "-" {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, 0, err
		}
		return bytes.NewReader(data), int64(len(data)), nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file", name)
	}
	return f, st.Size(), nil
}
