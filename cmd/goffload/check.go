package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/release"
)

func runCheck(args []string, stdout io.Writer) error {
	var llvm string
	var asJSON bool
	var runtime string
	fs := newFlags("check", &llvm)
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per file (per member of an archive)")
	fs.StringVar(&runtime, "runtime", "", "also find the device images that libomptarget of LLVM `N` will not load")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	checkOpt := &fatobj.CheckOptions{}
	if runtime != "" {
		r, err := release.Parse(runtime)
		if err != nil {
			return fmt.Errorf("--runtime: %w", err)
		}
		checkOpt.Runtime = r
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("no input file")
	}
	readOpt, err := readOptions(llvm)
	if err != nil {
		return err
	}
	var objs []*fatobj.Object
	for _, path := range fs.Args() {
		f, err := fatobj.Open(path, readOpt)
		if err != nil {
			return err
		}
		defer f.Close()
		if f.Format == fatobj.FormatBinary || f.Format == fatobj.FormatBundle {
			return fmt.Errorf("%s: a raw OffloadBinary has no entries to check", path)
		}
		objs = append(objs, f.Objects...)
	}
	// The relocatable objects are the inputs of one link: releases that no
	// one release links together are found across them.
	reps, err := fatobj.CheckWith(objs, checkOpt)
	if err != nil {
		return err
	}
	var checked []*checkedInput
	for _, o := range objs {
		if !o.HostObject() {
			checked = append(checked, &checkedInput{name: o.Name, raw: true, object: o})
			continue
		}
		checked = append(checked, &checkedInput{name: o.Name, object: o, report: reps[0]})
		reps = reps[1:]
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
		if c.report != nil && len(c.report.Findings) > 0 {
			problems += c.report.Problems()
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
	name   string
	raw    bool // a raw OffloadBinary or bundle file, bitcode or a PE image: nothing to check
	object *fatobj.Object
	report *fatobj.Report
}

// bitcode reports whether the input is LLVM bitcode, whose entries check
// does not read.
func (c *checkedInput) bitcode() bool {
	return c.object != nil && c.object.Format == fatobj.FormatBitcode
}

// coff reports whether the input is a COFF file (of a Windows host).
func (c *checkedInput) coff() bool {
	return c.object != nil && c.object.Format == fatobj.FormatCOFF
}

func (c *checkedInput) printText(w io.Writer) {
	if c.coff() && c.raw {
		fmt.Fprintf(w, "%s: a PE image: its entries were linked, and check reads those of objects; %d device images not checked\n", shown(c.name), len(c.object.Images))
		return
	}
	if c.bitcode() {
		fmt.Fprintf(w, "%s: LLVM bitcode: its offload entries are IR, which check does not read; %d device images not checked\n", shown(c.name), len(c.object.Images))
		return
	}
	if c.raw && c.object != nil && c.object.Format == fatobj.FormatFatbin {
		fmt.Fprintf(w, "%s: a CUDA fat binary: no entries to check\n", shown(c.name))
		return
	}
	if c.raw {
		fmt.Fprintf(w, "%s: a raw OffloadBinary: no entries to check\n", shown(c.name))
		return
	}
	for _, im := range c.report.Images {
		if im.Symbols == nil {
			fmt.Fprintf(w, "%s: %s image for %s (arch %q) not checked: %s\n", shown(c.name), im.Kind, shown(im.Triple()), im.Arch(), escaped(fmt.Sprint(im.Skipped)))
		}
	}
	for _, f := range c.report.Findings {
		if f.Kind == entries.FindMissingSymbol {
			fmt.Fprintf(w, "%s: %s\n", shown(c.name), escaped(f.Message))
		} else {
			fmt.Fprintf(w, "%s: %s\n", shown(c.name), escaped(fmt.Sprint(f)))
		}
	}
	if len(c.report.Missing) == 0 {
		fmt.Fprintf(w, "%s: %d entries, %d device images: every entry has its symbol\n", shown(c.name), len(c.report.Object.Entries), len(c.report.Images))
	}
	if c.report.Origin == nil {
		return // a COFF object: the signs of releases are ELF's
	}
	if s := describeOrigin(c.report.Origin, c.report.Made); s != "" {
		fmt.Fprintf(w, "%s: %s\n", shown(c.name), escaped(s))
	}
}

// describeOrigin says in a line which releases the file shows, its wrappers
// and its runtime, or "" when it shows none.
func describeOrigin(o *entries.Origin, madeBy release.Set) string {
	var parts []string
	if len(o.Facts) > 0 {
		made := "made by " + madeBy.String()
		if madeBy == 0 {
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
	File jsonText `json:"file"`
	// RawBinary: the input is a raw OffloadBinary, with nothing to check.
	RawBinary bool `json:"raw_binary,omitempty"`
	// Bitcode: the input is LLVM bitcode, whose entries (IR) check does
	// not read; Images counts its device images, and Unchecked lists them.
	Bitcode bool `json:"bitcode,omitempty"`
	// COFF: the input is a COFF file (a Windows host's). An object's
	// entries are checked as an ELF object's, but the signs of releases are
	// ELF's (made_by and read_by are every release); a PE image's are not
	// read: Images counts its device images, and Unchecked lists them.
	COFF bool `json:"coff,omitempty"`
	// MachO: the input is a Mach-O file (an Apple host's), checked as a
	// COFF object; made_by narrowed by what only some releases write
	// there (the entries section: main's).
	MachO   bool `json:"macho,omitempty"`
	Entries int  `json:"entries"`
	Images  int  `json:"images"`
	// Unchecked lists the images whose symbols cannot be read.
	Unchecked []jsonText `json:"unchecked_images"`
	// MadeBy and ReadBy are the releases that make and that link and run
	// everything the file holds.
	MadeBy          release.Set        `json:"made_by"`
	ReadBy          release.Set        `json:"read_by"`
	Facts           []jsonFact         `json:"facts"`
	Registrations   []jsonRegistration `json:"registrations"`
	Runtime         string             `json:"runtime"`
	RuntimeReleases release.Set        `json:"runtime_releases"`
	Findings        []jsonFinding      `json:"findings"`
}

// The entries package's findings, facts and registrations, their strings
// from the file (section and symbol names in messages, the other input's
// name) written as jsonText: bytes that are not UTF-8 kept.
type jsonFinding struct {
	Kind     entries.FindingKind `json:"kind"`
	Message  jsonText            `json:"message"`
	Section  jsonText            `json:"section,omitempty"`
	Entries  int                 `json:"entries,omitempty"`
	Releases release.Set         `json:"releases,omitempty"`
	Other    jsonText            `json:"other,omitempty"`
}

type jsonFact struct {
	Topic entries.Topic `json:"topic"`
	What  jsonText      `json:"what"`
	Made  release.Set   `json:"made_by"`
	Links release.Set   `json:"read_by"`
}

type jsonRegistration struct {
	Kind      string      `json:"kind"`
	Section   jsonText    `json:"section"`
	Entries   int         `json:"entries"`
	Images    int         `json:"images,omitempty"`
	RawImages bool        `json:"raw_images,omitempty"`
	Releases  release.Set `json:"releases"`
}

func (c *checkedInput) printJSON(w io.Writer) error {
	j := jsonCheck{File: jsonText(c.name), RawBinary: c.raw && !c.bitcode() && !c.coff(), Bitcode: c.bitcode(), COFF: c.coff(), MachO: c.object != nil && c.object.MachO != nil, Unchecked: []jsonText{}, Facts: []jsonFact{}, Registrations: []jsonRegistration{}, Findings: []jsonFinding{}}
	if c.bitcode() {
		j.Images = len(c.object.Images)
		for _, im := range c.object.Images {
			j.Unchecked = append(j.Unchecked, jsonText(fmt.Sprintf("%s image for %s (arch %q): in LLVM bitcode, whose entries are not read", im.Kind, im.Triple(), im.Arch())))
		}
	}
	if c.coff() && c.raw {
		j.Images = len(c.object.Images)
		for _, im := range c.object.Images {
			j.Unchecked = append(j.Unchecked, jsonText(fmt.Sprintf("%s image for %s (arch %q): in a PE image, whose entries were linked", im.Kind, im.Triple(), im.Arch())))
		}
	}
	if !c.raw {
		for _, f := range c.report.Findings {
			j.Findings = append(j.Findings, jsonFinding{Kind: f.Kind, Message: jsonText(f.Message), Section: jsonText(f.Section), Entries: f.Entries, Releases: f.Releases, Other: jsonText(f.Other)})
		}
		j.Entries, j.Images = len(c.report.Object.Entries), len(c.report.Images)
		for _, im := range c.report.Images {
			if im.Symbols == nil {
				j.Unchecked = append(j.Unchecked, jsonText(fmt.Sprintf("%s image for %s (arch %q): %s", im.Kind, im.Triple(), im.Arch(), im.Skipped)))
			}
		}
		o, made := c.report.Origin, c.report.Made
		if o == nil {
			// A COFF or Mach-O object: the signs of releases are ELF's;
			// made_by is what list prints, from the binaries, bundles
			// and sections.
			o = &entries.Origin{}
		}
		j.MadeBy, j.ReadBy, j.Runtime, j.RuntimeReleases = made, o.Links(), o.Runtime, o.RuntimeReleases
		for _, f := range o.Facts {
			j.Facts = append(j.Facts, jsonFact{Topic: f.Topic, What: jsonText(f.What), Made: f.Made, Links: f.Links})
		}
		for _, g := range o.Registrations {
			j.Registrations = append(j.Registrations, jsonRegistration{Kind: g.Kind.String(), Section: jsonText(g.Section), Entries: g.Entries, Images: g.Images, RawImages: g.RawImages, Releases: g.Releases})
		}
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
