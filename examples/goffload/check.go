package main

import (
	"fmt"
	"io"

	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/offload"
)

// errMissing: check found entries without a device symbol; they are printed.
type errMissing struct{ n int }

func (e errMissing) Error() string {
	return fmt.Sprintf("%d entries have no symbol in a device image", e.n)
}

func runCheck(args []string, stdout io.Writer) error {
	var llvm string
	fs := newFlags("check", &llvm)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("no input file")
	}
	rel, err := offload.ParseRelease(llvm)
	if err != nil {
		return err
	}
	missing := 0
	for _, path := range fs.Args() {
		n, err := checkFile(stdout, path, rel)
		if err != nil {
			return err
		}
		missing += n
	}
	if missing > 0 {
		return errMissing{missing}
	}
	return nil
}

func checkFile(w io.Writer, path string, rel *offload.Release) (int, error) {
	ins, done, err := openInputs(path)
	if err != nil {
		return 0, inFile(path, err)
	}
	defer done()
	missing := 0
	for _, in := range ins {
		if in.elf == nil && !in.member {
			return 0, fmt.Errorf("%s: a raw OffloadBinary has no entries to check", in.name)
		}
		if in.elf == nil {
			fmt.Fprintf(w, "%s: a raw OffloadBinary: no entries to check\n", in.name)
			continue
		}
		rep, err := entries.Check(in.elf, rel)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", in.name, err)
		}
		for _, im := range rep.Images {
			if im.Symbols == nil {
				fmt.Fprintf(w, "%s: %s image for %s (arch %q) not checked: %s\n", in.name, im.Kind, im.Triple(), im.Arch(), im.Skipped)
			}
		}
		for _, m := range rep.Missing {
			fmt.Fprintf(w, "%s: %s\n", in.name, m)
		}
		if len(rep.Missing) == 0 {
			fmt.Fprintf(w, "%s: %d entries, %d device images: every entry has its symbol\n", in.name, len(rep.Entries), len(rep.Images))
		}
		missing += len(rep.Missing)
	}
	return missing, nil
}
