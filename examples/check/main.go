// Command check finds, before anything runs, what the offloading runtime would
// fail on in the files given (linked programs, shared objects, fat objects,
// archives): offload entries whose symbol no device image defines, and LLVM
// releases mixed in one object or across the objects given (fatobj.Check).
//
//	go run ./examples/check FILE...
//
// It prints a line per finding, "<object>: <kind>: <message>", and exits with
// status 1 when there is any, 2 when a file cannot be read. Raw OffloadBinaries
// and bundle files hold no entries: they have nothing to check.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/goffload/goffload/fatobj"
)

func main() {
	n, err := run(os.Stdout, os.Args[1:])
	switch {
	case err != nil:
		fmt.Fprintln(os.Stderr, "check:", err)
		os.Exit(2)
	case n > 0:
		os.Exit(1)
	}
}

// run checks the objects of the files at paths together, as the inputs of
// one link, prints the findings to w and returns how many problems there are.
func run(w io.Writer, paths []string) (int, error) {
	var objs []*fatobj.Object
	for _, path := range paths {
		f, err := fatobj.Open(path, nil)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		objs = append(objs, f.Objects...)
	}
	reports, err := fatobj.Check(objs)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range reports {
		for _, f := range r.Findings {
			fmt.Fprintf(w, "%s: %s\n", r.Object.Name, f)
		}
		n += r.Problems()
	}
	return n, nil
}
