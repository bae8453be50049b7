package main

import (
	"fmt"
	"io"
	"os"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/wrap"
)

func runWrap(args []string, _ io.Writer) error {
	var llvm, kind, triple, out, suffix string
	var relocatable bool
	fs := newFlags("wrap", &llvm)
	fs.StringVar(&kind, "kind", "openmp", "offload `kind`: openmp")
	fs.StringVar(&triple, "triple", "x86_64-unknown-linux-gnu", "the host `triple`")
	fs.StringVar(&out, "o", "", "write the object to `OUT`")
	fs.StringVar(&suffix, "suffix", "", "append `S` to the wrapper's symbol names")
	fs.BoolVar(&relocatable, "r", false, "for a relocatable link: the images in .llvm.offloading.relocatable (LLVM 19+)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if out == "" || fs.NArg() == 0 {
		return fmt.Errorf("-o OUT and at least one BINARY are required")
	}
	if kind != "openmp" {
		return fmt.Errorf("--kind %s: only openmp registration objects are made", kind)
	}
	rel, err := offload.ParseRelease(llvm)
	if err != nil {
		return err
	}
	var bins []wrap.Binary
	for _, path := range fs.Args() {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		all, err := offload.ReadAll(f, st.Size(), &offload.ReadOptions{Release: rel, MaxVersion: 1})
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, b := range all {
			bin, err := wrap.FromBinary(io.NewSectionReader(f, b.Offset, int64(b.Size)), int64(b.Size))
			if err != nil {
				return fmt.Errorf("%s: binary at %#x: %w", path, b.Offset, err)
			}
			bins = append(bins, bin)
		}
	}
	return writeWrapper(out, wrap.Options{Release: rel, Triple: triple, Suffix: suffix, Relocatable: relocatable}, bins)
}

func writeWrapper(out string, opt wrap.Options, bins []wrap.Binary) error {
	o, err := wrap.OpenMP(opt, bins)
	if err != nil {
		return err
	}
	return atomicfile.Write(out, 0o644, func(w io.Writer) error {
		_, err := elfobj.Write(w, o)
		return err
	})
}
