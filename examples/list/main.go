// Command list prints a line per device image, then per offload entry, of the files given (strings quoted as by %q):
//
//	IMAGE "<object>" <source> <offload kind> "<image kind>" "<triple>" "<arch>" <offset in file, -1 if compressed> <size>
//	ENTRY "<object>" "<section>" <kind> "<name>"
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/goffload/goffload/fatobj"
)

func main() {
	if err := run(os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "list:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, paths []string) error {
	for _, path := range paths {
		f, err := fatobj.Open(path, nil)
		if err != nil {
			return err
		}
		for _, o := range f.Objects {
			for _, im := range o.Images {
				fmt.Fprintf(w, "IMAGE %q %s %s %q %q %q %d %d\n", o.Name, im.Source, im.OffloadKind, im.KindName(), im.Triple(), im.Arch(), im.Offset, im.Size)
			}
			for _, e := range o.Entries {
				fmt.Fprintf(w, "ENTRY %q %q %s %q\n", o.Name, e.Section, e.Kind, e.Name)
			}
		}
		f.Close()
	}
	return nil
}
