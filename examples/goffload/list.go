package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/goffload/goffload/offload"
)

func runList(args []string, stdout io.Writer) error {
	var llvm string
	var asJSON bool
	fs := newFlags("list", &llvm)
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per file")
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
	opt := &offload.ReadOptions{Release: rel}
	for _, name := range fs.Args() {
		bins, err := readFile(name, opt)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if asJSON {
			err = printJSON(stdout, name, bins)
		} else {
			err = printText(stdout, bins)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func readFile(name string, opt *offload.ReadOptions) ([]*offload.Binary, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 {
		// As llvm-objdump: an empty file is no OffloadBinary.
		return nil, fmt.Errorf("empty file: %w", offload.ErrInvalid)
	}
	var magic [8]byte
	n, _ := f.ReadAt(magic[:], 0)
	if m := string(magic[:n]); strings.HasPrefix(m, "\x7fELF") || strings.HasPrefix(m, "!<arch>\n") {
		return nil, fmt.Errorf("an object or archive: list reads raw OffloadBinary files only, for now")
	}
	return offload.ReadAll(f, st.Size(), opt)
}

// printText prints what llvm-objdump --offloading prints for a raw OffloadBinary
// file: the images numbered from 0, with no file header.
func printText(w io.Writer, bins []*offload.Binary) error {
	i := 0
	for _, b := range bins {
		for _, im := range b.Images {
			_, err := fmt.Fprintf(w, "\nOFFLOADING IMAGE [%d]:\n%-16s%s\n%-16s%s\n%-16s%s\n%-16s%s\n", i,
				"kind", im.Kind, "arch", im.Arch(), "triple", im.Triple(), "producer", im.OffloadKind)
			if err != nil {
				return err
			}
			i++
		}
	}
	return nil
}

type jsonFile struct {
	File    string      `json:"file"`
	Images  []jsonImage `json:"images"`
	Entries []any       `json:"entries"`
}

type jsonImage struct {
	Index       int               `json:"index"`
	Offset      int64             `json:"offset"`
	Size        uint64            `json:"size"`
	Version     uint32            `json:"version"`
	ImageKind   string            `json:"image_kind"`
	OffloadKind string            `json:"offload_kind"`
	Flags       uint32            `json:"flags"`
	Triple      string            `json:"triple"`
	Arch        string            `json:"arch"`
	Strings     map[string]string `json:"strings"`
	ImageOffset uint64            `json:"image_offset"`
	ImageSize   uint64            `json:"image_size"`
}

func printJSON(w io.Writer, name string, bins []*offload.Binary) error {
	out := jsonFile{File: name, Images: []jsonImage{}, Entries: []any{}}
	for _, b := range bins {
		for _, im := range b.Images {
			strs := make(map[string]string, len(im.Strings))
			for _, kv := range im.Strings {
				strs[kv.Key] = kv.Value
			}
			out.Images = append(out.Images, jsonImage{
				Index: len(out.Images), Offset: b.Offset, Size: b.Size, Version: b.Version,
				ImageKind: im.Kind.String(), OffloadKind: im.OffloadKind.String(), Flags: im.Flags,
				Triple: im.Triple(), Arch: im.Arch(), Strings: strs,
				ImageOffset: im.ImageOffset, ImageSize: im.ImageSize,
			})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
