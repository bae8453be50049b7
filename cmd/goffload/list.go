package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/offload"
)

func runList(args []string, stdout io.Writer) error {
	var llvm string
	var asJSON bool
	fs := newFlags("list", &llvm)
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
	opt := &offload.ReadOptions{Release: rel}
	for _, name := range fs.Args() {
		if err := listFile(stdout, name, opt, asJSON); err != nil {
			return err
		}
	}
	return nil
}

func listFile(w io.Writer, path string, opt *offload.ReadOptions, asJSON bool) error {
	ins, done, err := openInputs(path)
	if err != nil {
		return inFile(path, err)
	}
	defer done()
	for _, in := range ins {
		bins, err := in.Binaries(opt)
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		var ents []entries.Entry
		if in.ELF != nil {
			if ents, err = entries.Read(in.ELF, opt.Release); err != nil {
				return fmt.Errorf("%s: %w", in.Name, err)
			}
		}
		fbs, err := hipFatbins(in)
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		var legacy []fatobj.LegacyImage
		if in.ELF != nil {
			if legacy, err = fatobj.LegacyImages(in.ELF, opt.Release); err != nil {
				return fmt.Errorf("%s: %w", in.Name, err)
			}
		}
		if asJSON {
			err = printJSON(w, in.Name, bins, ents, fbs, legacy, opt)
		} else {
			err = printText(w, in, bins, ents, fbs, legacy, opt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// printText prints what llvm-objdump --offloading prints (the file's format
// line for an ELF file, then the images numbered from 0), then the entries,
// then the entries of the HIP fatbins and bundle files, then the device code
// of a bundled object's sections and of clang 14's image sections.
func printText(w io.Writer, in input, bins []located, ents []entries.Entry, fbs []hipFatbin, legacy []fatobj.LegacyImage, opt *offload.ReadOptions) error {
	var sb strings.Builder
	switch {
	case in.ELF != nil:
		fmt.Fprintf(&sb, "\n%s:\tfile format %s\n", in.Name, fileFormat(in.ELF))
	case in.Member:
		// llvm-objdump refuses such a member; llvm-offload-binary reads it.
		fmt.Fprintf(&sb, "\n%s:\tfile format offload-binary\n", in.Name)
	}
	i := 0
	for _, b := range bins {
		if err := printImages(&sb, b.Binary, strconv.Itoa(i), "", opt); err != nil {
			// Only a nested binary fails here (main after 22): what was
			// listed before it is printed, as main's llvm-objdump prints
			// the image holding a bad nested binary before its message.
			io.WriteString(w, sb.String())
			return fmt.Errorf("%s: %w", in.Name, err)
		}
		i += len(b.Images)
	}
	section := ""
	for _, e := range ents {
		if e.Section != section {
			section = e.Section
			fmt.Fprintf(&sb, "\nOFFLOADING ENTRIES [%s] (%v):\n", section, e.Layout)
		}
		fmt.Fprintf(&sb, "  [%d] %s name=%s symbol=%s size=%d flags=%s data=%d", e.Index, e.Kind, quoteName(e.Name), e.Address, e.Size, flagsString(e.Entry), e.Data)
		if !e.Aux.IsNull() {
			fmt.Fprintf(&sb, " aux=%s", e.Aux)
		}
		sb.WriteByte('\n')
	}
	for _, fb := range fbs {
		where := fmt.Sprintf("%s at %#x", fb.section, fb.offset)
		if fb.section == "" {
			where = fmt.Sprintf("at %#x", fb.offset)
		}
		fmt.Fprintf(&sb, "\nOFFLOAD BUNDLE [%s] (%s):\n", where, fb.compression())
		for i, e := range fb.Entries {
			fmt.Fprintf(&sb, "  [%d] %s offset=%d size=%d\n", i, quoteName(e.ID), e.Offset, e.Size)
		}
	}
	n := 0
	for _, im := range legacy {
		if im.ID == "" {
			continue
		}
		if n == 0 {
			sb.WriteString("\nBUNDLED OBJECT (clang-offload-bundler -type=o):\n")
		}
		fmt.Fprintf(&sb, "  [%d] %s size=%d %s\n", n, quoteName(im.ID), im.Size, im.Contents)
		n++
	}
	n = 0
	for _, im := range legacy {
		if im.ID != "" {
			continue
		}
		if n == 0 {
			sb.WriteString("\nIMAGE SECTIONS (clang 14 -fopenmp-new-driver):\n")
		}
		fmt.Fprintf(&sb, "  [%d] %s triple=%s arch=%s size=%d %s\n", n, quoteName(im.Section), im.Triple(), quoteName(im.Arch()), im.Size, im.Contents)
		n++
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// maxNesting bounds how deep binaries nested in images are listed.
const maxNesting = 16

// printImages prints the images of b numbered from first ("0", or "1.0"
// for nested ones) with indent, as llvm-objdump --offloading does; where the
// release knows nested images (main after 22), with an `image size` line,
// and for an image that is itself an OffloadBinary, `nested images N` and
// its images, numbered [i.j] and indented by two spaces.
func printImages(sb *strings.Builder, b *offload.Binary, first, indent string, opt *offload.ReadOptions) error {
	nested := opt.Release != nil && opt.Release.NestedImages
	prefix, n := "", 0
	if i := strings.LastIndexByte(first, '.'); i >= 0 {
		prefix = first[:i+1]
		n, _ = strconv.Atoi(first[i+1:])
	} else {
		n, _ = strconv.Atoi(first)
	}
	for k, im := range b.Images {
		fmt.Fprintf(sb, "\n%sOFFLOADING IMAGE [%s%d]:\n", indent, prefix, n+k)
		for _, kv := range [][2]string{{"kind", opt.Release.ImageKindName(im.Kind)}, {"arch", im.Arch()}, {"triple", im.Triple()}, {"producer", im.OffloadKind.String()}} {
			fmt.Fprintf(sb, "%s%-16s%s\n", indent, kv[0], kv[1])
		}
		if !nested {
			continue
		}
		fmt.Fprintf(sb, "%s%-16s%d bytes\n", indent, "image size", im.ImageSize)
		r, err := b.Open(k)
		if err != nil {
			return err
		}
		if !offload.StartsWithMagic(r) {
			continue
		}
		if len(indent) >= 2*maxNesting {
			return fmt.Errorf("failed to extract nested OffloadBinary of image [%s%d]: more than %d levels of nested binaries: %w", prefix, n+k, maxNesting, goffload.ErrLimit)
		}
		inner, err := offload.ReadAll(r, r.Size(), opt)
		if err != nil {
			// main's llvm-objdump: "failed to extract nested OffloadBinary:
			// <the reader's error>" (a warning there; refused here).
			return fmt.Errorf("failed to extract nested OffloadBinary of image [%s%d]: %w", prefix, n+k, err)
		}
		count := 0
		for _, ib := range inner {
			count += len(ib.Images)
		}
		fmt.Fprintf(sb, "%s%-16s%d\n", indent, "nested images", count)
		j := 0
		for _, ib := range inner {
			if err := printImages(sb, ib, fmt.Sprintf("%s%d.%d", prefix, n+k, j), indent+"  ", opt); err != nil {
				return err
			}
			j += len(ib.Images)
		}
	}
	return nil
}

func quoteName(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// flagsString names the flags of an entry by its kind.
func flagsString(e offload.Entry) string {
	switch e.Kind {
	case offload.OffloadOpenMP:
		return offload.OpenMPFlags(e.Flags).String()
	case offload.OffloadCUDA, offload.OffloadHIP:
		return offload.GPUFlags(e.Flags).String()
	}
	return fmt.Sprintf("%#x", e.Flags)
}

type jsonFile struct {
	File    string       `json:"file"`
	Images  []jsonImage  `json:"images"`
	Entries []jsonEntry  `json:"entries"`
	Bundles []jsonBundle `json:"bundles"`
	// Bundled lists a bundled object's sections, ImageSections clang 14's
	// image sections.
	Bundled       []jsonBundled `json:"bundled"`
	ImageSections []jsonBundled `json:"image_sections"`
}

// jsonBundled is a bundled object's entry, or a clang 14 image section (no
// ID, kind).
type jsonBundled struct {
	Section  string `json:"section"`
	ID       string `json:"id,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Offload  string `json:"offload_kind"`
	Triple   string `json:"triple"`
	TargetID string `json:"target_id"`
	Offset   int64  `json:"offset"`
	Size     int64  `json:"size"`
	Contents string `json:"contents"`
}

type jsonBundle struct {
	Section string `json:"section"`
	Offset  int64  `json:"offset"`
	Size    int64  `json:"size"`
	// Compression is "" for an uncompressed bundle, else "zlib" or "zstd";
	// the entries' offsets are then in the decompressed bundle.
	Compression string            `json:"compression"`
	Version     uint16            `json:"compressed_version,omitempty"`
	Entries     []jsonBundleEntry `json:"entries"`
}

type jsonBundleEntry struct {
	ID     string `json:"id"`
	Offset uint64 `json:"offset"`
	Size   uint64 `json:"size"`
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
	// Metadata is set for an entry with the OIF_Metadata flag (bit 0 of
	// flags) where the release knows it (main after 22): strings, no image.
	Metadata bool `json:"metadata,omitempty"`
}

type jsonEntry struct {
	Section string `json:"section"`
	Format  string `json:"format"`
	Kind    string `json:"kind"`
	Name    string `json:"name"`
	Symbol  string `json:"symbol"`
	Addend  int64  `json:"addend"`
	Size    uint64 `json:"size"`
	Flags   uint32 `json:"flags"`
	Data    uint64 `json:"data"`
	Aux     string `json:"aux"`
}

func printJSON(w io.Writer, name string, bins []located, ents []entries.Entry, fbs []hipFatbin, legacy []fatobj.LegacyImage, opt *offload.ReadOptions) error {
	out := jsonFile{File: name, Images: []jsonImage{}, Entries: []jsonEntry{}, Bundles: []jsonBundle{}, Bundled: []jsonBundled{}, ImageSections: []jsonBundled{}}
	for _, im := range legacy {
		jb := jsonBundled{Section: im.Section, ID: im.ID, Offload: im.OffloadKind.String(), Triple: im.Triple(), TargetID: im.Arch(),
			Offset: im.Offset, Size: im.Size, Contents: im.Contents.String()}
		if im.ID == "" {
			out.ImageSections = append(out.ImageSections, jb)
			continue
		}
		jb.Kind, _, _ = strings.Cut(im.ID, "-")
		out.Bundled = append(out.Bundled, jb)
	}
	for _, b := range bins {
		for _, im := range b.Images {
			strs := make(map[string]string, len(im.Strings))
			for _, kv := range im.Strings {
				strs[kv.Key] = kv.Value
			}
			out.Images = append(out.Images, jsonImage{
				Index: len(out.Images), Offset: b.Base + b.Offset, Size: b.Size, Version: b.Version,
				ImageKind: opt.Release.ImageKindName(im.Kind), OffloadKind: im.OffloadKind.String(), Flags: im.Flags,
				Triple: im.Triple(), Arch: im.Arch(), Strings: strs,
				ImageOffset: im.ImageOffset, ImageSize: im.ImageSize,
				// Only where the release knows OIF_Metadata (main after 22).
				Metadata: opt.Release != nil && opt.Release.NestedImages && im.IsMetadata(),
			})
		}
	}
	for _, e := range ents {
		je := jsonEntry{Section: e.Section, Format: e.Layout.String(), Kind: e.Kind.String(), Name: e.Name,
			Symbol: e.Address.Symbol, Addend: e.Address.Addend, Size: e.Size, Flags: e.Flags, Data: e.Data}
		if !e.Aux.IsNull() {
			je.Aux = e.Aux.String()
		}
		out.Entries = append(out.Entries, je)
	}
	for _, fb := range fbs {
		jb := jsonBundle{Section: fb.section, Offset: fb.offset, Size: fb.size, Entries: []jsonBundleEntry{}}
		if fb.comp != nil {
			jb.Compression, jb.Version = fb.comp.Method.String(), fb.comp.Version
		}
		for _, e := range fb.Entries {
			jb.Entries = append(jb.Entries, jsonBundleEntry{ID: e.ID, Offset: e.Offset, Size: e.Size})
		}
		out.Bundles = append(out.Bundles, jb)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
