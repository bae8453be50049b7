package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/release"
)

// runConvert rewrites an object, or every object member of an archive, into
// the formats of another LLVM release (fatobj.ConvertFile).
func runConvert(args []string, stdout io.Writer) error {
	var llvm, fromFlag, out string
	fs := newFlags("convert", &llvm)
	fs.StringVar(&fromFlag, "from", "", "the inputs were made by LLVM release `M` (13-24, 24 being main; default: told from each object)")
	fs.StringVar(&out, "o", "", "write the result to `OUT`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if out == "" || fs.NArg() != 1 {
		return fmt.Errorf("-o OUT and one input are required")
	}
	dest := newOutput(out, stdout)
	if err := dest.check(); err != nil {
		return err
	}
	to, err := parseRelease(llvm)
	if err != nil {
		return err
	}
	var from *release.Release
	if fromFlag != "" {
		if from, err = release.Parse(fromFlag); err != nil {
			return err
		}
	}
	f, err := fatobj.Open(fs.Arg(0), nil)
	if err != nil {
		return err
	}
	defer f.Close()
	var results []fatobj.ConvertResult
	err = dest.write(func(w io.Writer) error {
		var err error
		results, err = fatobj.ConvertFile(w, f, from, to)
		return err
	})
	if err != nil {
		return err
	}
	var report strings.Builder
	for _, r := range results {
		switch {
		case r.Object == nil || r.Object.ELF == nil:
			fmt.Fprintf(&report, "%s: not an object: as it is\n", shown(r.Name))
		case r.From == nil:
			fmt.Fprintf(&report, "%s: no offloading format that differs between releases: as it is\n", shown(r.Name))
		default:
			made := ""
			if r.Made != 0 {
				made = " (made by " + r.Made.String() + ")"
			}
			if !r.Conversion.Changed() {
				fmt.Fprintf(&report, "%s: %v to %v%s: nothing to change: as it is\n", shown(r.Name), r.From, to, made)
				continue
			}
			fmt.Fprintf(&report, "%s: %v to %v%s\n", shown(r.Name), r.From, to, made)
			for _, ch := range r.Conversion.Changes {
				fmt.Fprintf(&report, "  %s\n", escaped(fmt.Sprint(ch)))
			}
		}
	}
	fmt.Fprint(dest.report(), report.String())
	return nil
}
