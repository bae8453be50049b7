package main

import (
	"flag"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// FuzzParseArgs parses any command line: flags and operands come back, in
// order, each one of the arguments, or an error; never a panic; and parsing
// allocates at most 1 KiB per byte of the arguments, plus 1 MiB.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"x.o\x00--json", "-o\x00out\x00--\x00-x", "--image=file=a\x00-image\x00b\x00-", "-o", "--json=maybe\x00-lm\x00-L\x00/usr/lib"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		fs := flag.NewFlagSet("goffload test", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		out := fs.String("o", "", "")
		fs.Bool("json", false, "")
		var images stringList
		fs.Var(&images, "image", "")
		for _, pass := range []bool{false, true} {
			var unknown []string
			var err error
			got := tooltest.Allocated(func() { unknown, err = parseArgs(fs, args, pass) })
			if bound := 1024*uint64(len(joined)+1) + 1<<20; got > bound {
				t.Errorf("%d bytes of arguments allocated %d bytes, more than %d", len(joined)+1, got, bound)
			}
			if err != nil {
				continue
			}
			if !pass && len(unknown) > 0 {
				t.Fatalf("unknown flags %q without passUnknown", unknown)
			}
			for _, a := range append(fs.Args(), unknown...) {
				if !slices.Contains(args, a) {
					t.Fatalf("%q is not an argument of %q", a, args)
				}
			}
			if *out != "" && !slices.ContainsFunc(args, func(a string) bool { return strings.HasSuffix(a, *out) }) {
				t.Fatalf("-o %q is not in %q", *out, args)
			}
		}
	})
}
