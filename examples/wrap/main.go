// Command wrap writes the registration object that clang-linker-wrapper
// makes for OpenMP offload binaries, with the goffload library:
//
//	go run ./examples/wrap [-llvm N] [-triple HOST] -o OUT.o BINARY...
//
// Each BINARY holds one OffloadBinary or several (what
// clang-offload-packager writes). The object registers them with
// libomptarget when the program starts; link it into the program.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap"
)

func main() {
	llvm := flag.Int("llvm", release.DefaultMajor, "the LLVM release whose wrapper to make")
	triple := flag.String("triple", wrap.DefaultTriple, "the host triple")
	out := flag.String("o", "", "the object to write")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		log.Fatal("usage: wrap [-llvm N] [-triple HOST] -o OUT.o BINARY...")
	}
	if err := run(*out, *llvm, *triple, flag.Args()); err != nil {
		log.Fatal(err)
	}
}

func run(out string, llvm int, triple string, paths []string) error {
	rel, err := release.Lookup(llvm)
	if err != nil {
		return err
	}
	var bins []wrap.Binary
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		// As the release reads them; a compressed one is embedded inflated.
		all, err := wrap.ReadBinaries(io.NewSectionReader(f, 0, st.Size()), rel)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		bins = append(bins, all...)
	}
	o, err := wrap.OpenMP(wrap.Options{Release: rel, Triple: triple}, bins)
	if err != nil {
		return err
	}
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	if _, err := elfobj.Write(w, o); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
