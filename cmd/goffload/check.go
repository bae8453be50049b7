package main

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/offload"
)

func runCheck(args []string, stdout io.Writer) error {
	var llvm string
	var asJSON bool
	fs := newFlags("check", &llvm)
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per file (per member of an archive)")
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
	var checked []*checkedInput
	for _, path := range fs.Args() {
		c, err := checkFile(path, rel)
		if err != nil {
			return err
		}
		checked = append(checked, c...)
	}
	// The objects are the inputs of one link: releases that no one release
	// links together are found across them.
	var set []entries.Input
	var inSet []*checkedInput
	for _, c := range checked {
		if c.origin != nil && c.object {
			set = append(set, entries.Input{Name: c.name, Origin: c.origin})
			inSet = append(inSet, c)
		}
	}
	for i, fs := range entries.Incompatible(set) {
		inSet[i].findings = append(inSet[i].findings, fs...)
	}
	var bad []string
	problems := 0
	for _, c := range checked {
		if asJSON {
			err = c.printJSON(stdout)
		} else {
			c.printText(stdout)
		}
		if err != nil {
			return err
		}
		if len(c.findings) > 0 {
			problems += len(c.findings)
			bad = append(bad, c.name)
		}
	}
	if problems > 0 {
		where := "printed above"
		if asJSON {
			where = "in the JSON output"
		}
		noun := "problems"
		if problems == 1 {
			noun = "problem"
		}
		return fmt.Errorf("%s: %d %s (%s)", strings.Join(bad, ", "), problems, noun, where)
	}
	return nil
}

// checkedInput is what check found in one input.
type checkedInput struct {
	name     string
	raw      bool // a raw OffloadBinary: nothing to check
	object   bool // a relocatable object: one of the inputs of a link
	report   *entries.Report
	origin   *entries.Origin
	findings []entries.Finding
}

func checkFile(path string, rel *offload.Release) ([]*checkedInput, error) {
	ins, done, err := openInputs(path)
	if err != nil {
		return nil, inFile(path, err)
	}
	defer done()
	var out []*checkedInput
	for _, in := range ins {
		if in.ELF == nil && !in.Member {
			return nil, fmt.Errorf("%s: a raw OffloadBinary has no entries to check", in.Name)
		}
		c := &checkedInput{name: in.Name, raw: in.ELF == nil}
		if in.ELF != nil {
			if c.report, err = entries.Check(in.ELF, rel); err != nil {
				return nil, fmt.Errorf("%s: %w", in.Name, err)
			}
			if c.origin, err = entries.Mixing(in.ELF, rel); err != nil {
				return nil, fmt.Errorf("%s: %w", in.Name, err)
			}
			c.object = in.ELF.Type == elf.ET_REL
			for _, m := range c.report.Missing {
				c.findings = append(c.findings, m.Finding())
			}
			c.findings = append(c.findings, c.origin.Findings...)
		}
		out = append(out, c)
	}
	return out, nil
}

func (c *checkedInput) printText(w io.Writer) {
	if c.raw {
		fmt.Fprintf(w, "%s: a raw OffloadBinary: no entries to check\n", c.name)
		return
	}
	for _, im := range c.report.Images {
		if im.Symbols == nil {
			fmt.Fprintf(w, "%s: %s image for %s (arch %q) not checked: %s\n", c.name, im.Kind, im.Triple(), im.Arch(), im.Skipped)
		}
	}
	for _, f := range c.findings {
		if f.Kind == entries.FindMissingSymbol {
			fmt.Fprintf(w, "%s: %s\n", c.name, f.Message)
		} else {
			fmt.Fprintf(w, "%s: %s\n", c.name, f)
		}
	}
	if len(c.report.Missing) == 0 {
		fmt.Fprintf(w, "%s: %d entries, %d device images: every entry has its symbol\n", c.name, len(c.report.Entries), len(c.report.Images))
	}
	if s := describeOrigin(c.origin); s != "" {
		fmt.Fprintf(w, "%s: %s\n", c.name, s)
	}
}

// describeOrigin says in a line which releases the file shows, its wrappers
// and its runtime, or "" when it shows none.
func describeOrigin(o *entries.Origin) string {
	var parts []string
	if len(o.Facts) > 0 {
		made := "made by " + o.Made().String()
		if o.Made() == 0 {
			made = "made by mixed releases"
		}
		parts = append(parts, made)
	}
	for _, g := range o.Registrations {
		sec := g.Section
		if sec == "" {
			sec = "an unnamed range"
		}
		parts = append(parts, fmt.Sprintf("a wrapper of %s registers %s", g.Releases, sec))
	}
	if o.Runtime != "" {
		parts = append(parts, fmt.Sprintf("runtime %s (%s)", o.Runtime, o.RuntimeReleases))
	}
	return strings.Join(parts, "; ")
}

// jsonCheck is the JSON object check prints per input.
type jsonCheck struct {
	File string `json:"file"`
	// RawBinary: the input is a raw OffloadBinary, with nothing to check.
	RawBinary bool `json:"raw_binary,omitempty"`
	Entries   int  `json:"entries"`
	Images    int  `json:"images"`
	// Unchecked lists the images whose symbols cannot be read.
	Unchecked []string `json:"unchecked_images"`
	// MadeBy and ReadBy are the releases that make and that link and run
	// everything the file holds.
	MadeBy          offload.ReleaseSet `json:"made_by"`
	ReadBy          offload.ReleaseSet `json:"read_by"`
	Facts           []entries.Fact     `json:"facts"`
	Registrations   []jsonRegistration `json:"registrations"`
	Runtime         string             `json:"runtime"`
	RuntimeReleases offload.ReleaseSet `json:"runtime_releases"`
	Findings        []entries.Finding  `json:"findings"`
}

type jsonRegistration struct {
	Kind string `json:"kind"`
	entries.Registration
}

func (c *checkedInput) printJSON(w io.Writer) error {
	j := jsonCheck{File: c.name, RawBinary: c.raw, Unchecked: []string{}, Facts: []entries.Fact{}, Registrations: []jsonRegistration{}, Findings: c.findings}
	if j.Findings == nil {
		j.Findings = []entries.Finding{}
	}
	if !c.raw {
		j.Entries, j.Images = len(c.report.Entries), len(c.report.Images)
		for _, im := range c.report.Images {
			if im.Symbols == nil {
				j.Unchecked = append(j.Unchecked, fmt.Sprintf("%s image for %s (arch %q): %s", im.Kind, im.Triple(), im.Arch(), im.Skipped))
			}
		}
		o := c.origin
		j.MadeBy, j.ReadBy, j.Runtime, j.RuntimeReleases = o.Made(), o.Links(), o.Runtime, o.RuntimeReleases
		j.Facts = append(j.Facts, o.Facts...)
		for _, g := range o.Registrations {
			j.Registrations = append(j.Registrations, jsonRegistration{Kind: g.Kind.String(), Registration: g})
		}
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
