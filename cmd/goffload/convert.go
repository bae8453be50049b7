package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/ar"
	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/offload"
)

// runConvert rewrites an object, or every object member of an archive, into
// the formats of another LLVM release (fatobj.Convert).
func runConvert(args []string, stdout io.Writer) error {
	var llvm, from, out string
	fs := newFlags("convert", &llvm)
	fs.StringVar(&from, "from", "", "the inputs were made by LLVM release `M` (13-22; default: told from each object)")
	fs.StringVar(&out, "o", "", "write the result to `OUT`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if out == "" || fs.NArg() != 1 {
		return fmt.Errorf("-o OUT and one input are required")
	}
	if err := atomicfile.Check(out); err != nil {
		return err
	}
	to, err := offload.ParseRelease(llvm)
	if err != nil {
		return err
	}
	cv := &converter{to: to}
	if from != "" {
		if cv.from, err = offload.ParseRelease(from); err != nil {
			return err
		}
	}
	in := fs.Arg(0)
	f, err := openSized(in)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := f.ReadAt(head, 0)
	if ar.IsArchive(head[:n]) {
		err = rewriteArchive(in, f, f.Size(), out, cv.member, nil)
	} else {
		var o *elfobj.Object
		if o, err = cv.object(in, io.NewSectionReader(f, 0, f.Size())); err == nil {
			if o == nil {
				err = atomicfile.Write(out, func(w io.Writer) error {
					_, err := io.Copy(w, io.NewSectionReader(f, 0, f.Size()))
					return err
				})
			} else {
				err = writeObject(out, o)
			}
		}
		err = fromInput(in, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, cv.report.String())
	return nil
}

// converter converts the objects of one input.
type converter struct {
	from, to *offload.Release // from nil: told from each object
	report   strings.Builder  // printed once the output is written
}

// member converts an archive member; nil means it stays as it is.
func (c *converter) member(name string, sr *io.SectionReader) (*elfobj.Object, error) {
	var magic [4]byte
	if n, _ := sr.ReadAt(magic[:], 0); n < 4 || !bytes.Equal(magic[:], elfMagic) {
		fmt.Fprintf(&c.report, "%s: not an object: as it is\n", name)
		return nil, nil
	}
	return c.object(name, sr)
}

// object converts the object name; nil means it stays byte for byte (made
// by the target release, or nothing in it differs between releases).
func (c *converter) object(name string, sr *io.SectionReader) (*elfobj.Object, error) {
	ef, err := elfobj.Read(sr, sr.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if ef.Type != elf.ET_REL {
		return nil, fmt.Errorf("%s: a %v file: convert the relocatable objects it was linked from", name, ef.Type)
	}
	from, made := c.from, ""
	if from == nil {
		var set offload.ReleaseSet
		if from, set, err = fatobj.MadeBy(ef); err != nil {
			return nil, fmt.Errorf("%s: %w (give --from)", name, err)
		}
		if from == nil {
			fmt.Fprintf(&c.report, "%s: no offloading format that differs between releases: as it is\n", name)
			return nil, nil
		}
		made = " (made by " + set.String() + ")"
	}
	o, err := ef.Object()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	conv, err := fatobj.Convert(o, from, c.to)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !conv.Changed() {
		fmt.Fprintf(&c.report, "%s: %v to %v%s: nothing to change: as it is\n", name, from, c.to, made)
		return nil, nil
	}
	fmt.Fprintf(&c.report, "%s: %v to %v%s\n", name, from, c.to, made)
	for _, ch := range conv.Changes {
		fmt.Fprintf(&c.report, "  %s\n", ch)
	}
	return o, nil
}
