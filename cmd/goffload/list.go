package main

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/nvfatbin"
	"github.com/goffload/goffload/offload"
)

func runList(args []string, stdout io.Writer) error {
	var llvm string
	var asJSON, all bool
	fs := newFlags("list", &llvm)
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per file (per member of an archive), with everything --all prints")
	fs.BoolVar(&all, "all", false, "after what llvm-objdump --offloading prints, print the offload entries, bundles, bundled objects' sections, clang 14's image sections, bitcode's embedded objects and the releases that made each object")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("no input file")
	}
	opt, err := readOptions(llvm)
	if err != nil {
		return err
	}
	for _, name := range fs.Args() {
		if err := listFile(stdout, name, opt, listMode{json: asJSON, all: all}); err != nil {
			return err
		}
	}
	return nil
}

// listMode is how list prints: JSON, or text with (all) or without
// goffload's additions to llvm-objdump's listing.
type listMode struct{ json, all bool }

// listFile lists the file at path. With no release asked for, the text
// listing is what llvm-objdump of the default release prints, and the file
// is read as that release; a file that release cannot read (a binary of a
// later version) is read, as JSON always is, each object as the release
// that made it.
func listFile(w io.Writer, path string, opt *offload.ReadOptions, mode listMode) error {
	var f *fatobj.File
	var err error
	if !mode.json && opt.Release == nil {
		asDefault := *opt
		asDefault.Release = offload.Default()
		f, err = fatobj.Open(path, &asDefault)
	}
	if f == nil {
		f, err = fatobj.Open(path, opt)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	for _, o := range f.Objects {
		if mode.json {
			err = printJSON(w, o)
		} else {
			err = printText(w, o, mode.all)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// printText prints what llvm-objdump --offloading prints (the file's format
// line for an ELF or COFF file, then the images numbered from 0); with all,
// then goffload's additions: the embedded objects of a bitcode module, the
// entries, the entries of the HIP fatbins and bundle files, the device code
// of a bundled object's sections and of clang 14's image sections, and the
// releases that made the object.
func printText(w io.Writer, o *fatobj.Object, all bool) error {
	var sb strings.Builder
	switch {
	case o.ELF != nil:
		fmt.Fprintf(&sb, "\n%s:\tfile format %s\n", shown(o.Name), fileFormat(o.ELF))
	case o.COFF != nil:
		fmt.Fprintf(&sb, "\n%s:\tfile format %s\n", shown(o.Name), coffFormat(o.COFF.Machine))
	case o.Member != "" && o.Format == fatobj.FormatBinary:
		// llvm-objdump refuses such a member; llvm-offload-binary reads it.
		fmt.Fprintf(&sb, "\n%s:\tfile format offload-binary\n", shown(o.Name))
	case o.Format == fatobj.FormatBitcode:
		// llvm-objdump refuses bitcode; llvm-offload-binary reads it.
		fmt.Fprintf(&sb, "\n%s:\tfile format bitcode\n", shown(o.Name))
	}
	if err := printImages(&sb, o); err != nil {
		// What was listed before is printed, as main's llvm-objdump prints
		// the image holding a bad nested binary before its message.
		io.WriteString(w, sb.String())
		return err
	}
	if all {
		if err := printAdditions(&sb, o); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// printAdditions prints what list --all adds to llvm-objdump's listing.
func printAdditions(sb *strings.Builder, o *fatobj.Object) error {
	for i, b := range o.Binaries {
		if b.Global == "" {
			continue
		}
		if i == 0 {
			sb.WriteString("\nEMBEDDED OBJECTS (llvm.embedded.objects):\n")
		}
		fmt.Fprintf(sb, "  [%d] @%s section=%s binary version=%d size=%d images=%d\n", i, shown(b.Global), shown(b.Section), b.Version, b.Size, len(b.Images))
	}
	section := ""
	for _, e := range o.Entries {
		if e.Section != section {
			section = e.Section
			fmt.Fprintf(sb, "\nOFFLOADING ENTRIES [%s] (%v):\n", shown(section), e.Layout)
		}
		fmt.Fprintf(sb, "  [%d] %s name=%s symbol=%s size=%d flags=%s data=%d", e.Index, e.Kind, quoteName(e.Name), shown(e.Address.String()), e.Size, flagsString(e.Entry), e.Data)
		if !e.Aux.IsNull() {
			fmt.Fprintf(sb, " aux=%s", shown(e.Aux.String()))
		}
		sb.WriteByte('\n')
	}
	for _, b := range o.Bundles {
		where := fmt.Sprintf("%s at %#x", shown(b.Section), b.Offset)
		if b.Section == "" {
			where = fmt.Sprintf("at %#x", b.Offset)
		}
		fmt.Fprintf(sb, "\nOFFLOAD BUNDLE [%s] (%s):\n", where, compression(b))
		for i, e := range b.Entries {
			fmt.Fprintf(sb, "  [%d] %s offset=%d size=%d\n", i, quoteName(e.ID), e.Offset, e.Size)
		}
	}
	for i, s := range o.Bundled {
		if i == 0 {
			sb.WriteString("\nBUNDLED OBJECT (clang-offload-bundler -type=o):\n")
		}
		fmt.Fprintf(sb, "  [%d] %s size=%d %s\n", i, quoteName(s.ID), s.Size, s.Contents)
	}
	n := 0
	for _, im := range o.Images {
		if im.Source != fatobj.SourceImageSection {
			continue
		}
		if n == 0 {
			sb.WriteString("\nIMAGE SECTIONS (clang 14 -fopenmp-new-driver):\n")
		}
		fmt.Fprintf(sb, "  [%d] %s triple=%s arch=%s size=%d %s\n", n, quoteName(im.Section), shown(im.Triple()), quoteName(im.Arch()), im.Size, contentsName(im))
		n++
	}
	fatbins, err := cudaFatbins(o)
	if err != nil {
		return err
	}
	for _, fb := range fatbins {
		fmt.Fprintf(sb, "\nCUDA FATBINARY [%s at %#x] (cuobjdump -lelf -lptx):\n", shown(fb.im.Section), fb.im.Offset)
		if fb.err != nil {
			fmt.Fprintf(sb, "  not read: %s\n", shown(fb.err.Error()))
		}
		for _, e := range fb.entries {
			fmt.Fprintf(sb, "%s file %4d: %s\n", strings.ToUpper(e.Kind), e.Number, shown(string(e.Name)))
		}
	}
	set, ok, err := madeBy(o)
	if err != nil {
		return err
	}
	if ok {
		fmt.Fprintf(sb, "\nMADE BY: %s (read as %v)\n", madeString(set), o.Release)
	}
	return nil
}

// printImages prints the images of the object's OffloadBinaries as
// llvm-objdump --offloading does: numbered from 0 across the binaries; where
// the release reads nested binaries (23 and later), with an `image size`
// line, and for an image that is itself an OffloadBinary, `nested images N`
// and its images, numbered [i.j] and indented by two spaces.
func printImages(sb *strings.Builder, o *fatobj.Object) error {
	nested := o.Release.NestedImages()
	children := map[*fatobj.Image]int{}
	for _, im := range o.Images {
		if im.Parent != nil {
			children[im.Parent]++
		}
	}
	for _, im := range o.Images {
		if im.Source != fatobj.SourceBinary && im.Source != fatobj.SourceNested && im.Source != fatobj.SourceBitcode {
			continue
		}
		indent := strings.Repeat("  ", len(im.Path)-1)
		fmt.Fprintf(sb, "\n%sOFFLOADING IMAGE [%s]:\n", indent, im.Number())
		for _, kv := range [][2]string{{"kind", o.Release.ImageKindName(im.Kind)}, {"arch", im.Arch()}, {"triple", im.Triple()}, {"producer", im.OffloadKind.String()}} {
			fmt.Fprintf(sb, "%s%-16s%s\n", indent, kv[0], shown(kv[1]))
		}
		if !nested {
			continue
		}
		fmt.Fprintf(sb, "%s%-16s%d bytes\n", indent, "image size", im.Size)
		if im.NestedErr != nil {
			return im.NestedErr
		}
		if n, ok := children[im]; ok {
			fmt.Fprintf(sb, "%s%-16s%d\n", indent, "nested images", n)
		}
	}
	return nil
}

// contentsName is what list says an image section holds: "elf",
// "bitcode", "empty", ...
func contentsName(im *fatobj.Image) string {
	r, err := im.Open()
	if err != nil {
		return bundle.ContentsUnknown.String()
	}
	return bundle.Classify(r, r.Size()).String()
}

// madeBy returns the releases that made o, and whether o holds anything
// that tells them (device code, entries).
func madeBy(o *fatobj.Object) (offload.ReleaseSet, bool, error) {
	if len(o.Images) == 0 && len(o.Entries) == 0 && len(o.Bundled) == 0 && len(o.Bundles) == 0 {
		return 0, false, nil
	}
	made, err := o.Made()
	return made, err == nil, err
}

func madeString(s offload.ReleaseSet) string {
	if s == 0 {
		return "mixed releases (no one release makes all of it)"
	}
	return s.String()
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

// compression describes how a bundle is stored, for list.
func compression(b *fatobj.Bundle) string {
	if b.Compressed == nil {
		return "uncompressed"
	}
	return fmt.Sprintf("%v, compressed bundle version %d, %d bytes", b.Compressed.Method, b.Compressed.Version, b.Size)
}

// coffFormat is llvm-objdump's name of a COFF file's format (LLVM's
// COFFObjectFile::getFileFormatName, lower-cased), for an object and a PE
// image alike.
func coffFormat(machine uint16) string {
	switch machine {
	case 0x14c:
		return "coff-i386"
	case coffobj.MachineAMD64:
		return "coff-x86-64"
	case 0x1c4:
		return "coff-arm"
	case coffobj.MachineARM64:
		return "coff-arm64"
	case 0xa641:
		return "coff-arm64ec"
	case 0xa64e:
		return "coff-arm64x"
	}
	return "coff-<unknown arch>"
}

// fileFormat is llvm-objdump's name of an ELF file's format.
func fileFormat(f *elfobj.File) string {
	switch {
	case f.Machine == elf.EM_X86_64:
		return "elf64-x86-64"
	case f.Machine == elf.EM_AARCH64 && f.Data == elf.ELFDATA2LSB:
		return "elf64-littleaarch64"
	case f.Machine == elf.EM_AARCH64:
		return "elf64-bigaarch64"
	case f.Machine == elf.EM_PPC64 && f.Data == elf.ELFDATA2LSB:
		return "elf64-powerpcle"
	case f.Machine == elf.EM_PPC64:
		return "elf64-powerpc"
	case f.Machine == elf.EM_RISCV:
		return "elf64-littleriscv"
	case f.Machine == elf.EM_AMDGPU:
		return "elf64-amdgpu"
	}
	return "elf64-unknown"
}

// jsonFile is the object list --json prints per file (per archive member).
type jsonFile struct {
	File   jsonText `json:"file"`
	Format string   `json:"format"`
	// MadeBy are the releases that made the object (every one when nothing
	// in it differs between releases); ReadAs the one it was read as.
	MadeBy  offload.ReleaseSet `json:"made_by"`
	ReadAs  int                `json:"read_as"`
	Images  []jsonImage        `json:"images"`
	Entries []jsonEntry        `json:"entries"`
	Bundles []jsonBundle       `json:"bundles"`
	// Bundled lists a bundled object's sections, ImageSections clang 14's
	// image sections.
	Bundled       []jsonBundled `json:"bundled"`
	ImageSections []jsonBundled `json:"image_sections"`
}

// jsonBundled is a bundled object's entry, or a clang 14 image section (no
// ID, kind).
type jsonBundled struct {
	Section  jsonText `json:"section"`
	ID       jsonText `json:"id,omitempty"`
	Kind     jsonText `json:"kind,omitempty"`
	Offload  string   `json:"offload_kind"`
	Triple   jsonText `json:"triple"`
	TargetID jsonText `json:"target_id"`
	Offset   int64    `json:"offset"`
	Size     int64    `json:"size"`
	Contents string   `json:"contents"`
}

type jsonBundle struct {
	Section jsonText `json:"section"`
	Offset  int64    `json:"offset"`
	Size    int64    `json:"size"`
	// Compression is "" for an uncompressed bundle, else "zlib" or "zstd";
	// the entries' offsets are then in the decompressed bundle.
	Compression string            `json:"compression"`
	Version     uint16            `json:"compressed_version,omitempty"`
	Entries     []jsonBundleEntry `json:"entries"`
}

type jsonBundleEntry struct {
	ID     jsonText `json:"id"`
	Offset uint64   `json:"offset"`
	Size   uint64   `json:"size"`
}

// jsonImage is one device image. Offset and Size are those of its
// OffloadBinary for an image of one (Version, ImageOffset and ImageSize are
// then the binary's fields), else of its bytes; DataOffset is where its
// bytes are in the file, -1 where they are stored compressed or are not in
// place (a binary in a bitcode module: Offset -1 too).
type jsonImage struct {
	Index       int         `json:"index"`
	Source      string      `json:"source"`
	Path        string      `json:"path,omitempty"`
	Section     jsonText    `json:"section"`
	Global      jsonText    `json:"global,omitempty"` // the bitcode global holding its binary
	BundleID    jsonText    `json:"bundle_id,omitempty"`
	Offset      int64       `json:"offset"`
	Size        uint64      `json:"size"`
	Version     uint32      `json:"version"`
	ImageKind   string      `json:"image_kind"`
	OffloadKind string      `json:"offload_kind"`
	Flags       uint32      `json:"flags"`
	Triple      jsonText    `json:"triple"`
	Arch        jsonText    `json:"arch"`
	Strings     jsonStrings `json:"strings"`
	ImageOffset uint64      `json:"image_offset"`
	ImageSize   uint64      `json:"image_size"`
	DataOffset  int64       `json:"data_offset"`
	// Metadata is set for an entry with the OIF_Metadata flag (bit 0 of
	// flags) where the release knows it (23 and later): strings, no image.
	Metadata bool `json:"metadata,omitempty"`
	// FatbinEntries are the cubins and PTX of a CUDA fat binary image;
	// FatbinError says why they are not, where the fat binary is malformed.
	FatbinEntries []jsonFatbinEntry `json:"fatbin_entries,omitempty"`
	FatbinError   jsonText          `json:"fatbin_error,omitempty"`
}

// jsonFatbinEntry is a cubin or PTX file of a CUDA fat binary: what
// cuobjdump -lelf -lptx names it (Number, Name), and where its payload lies
// in the input (Offset -1 where the image's bytes are not in place).
type jsonFatbinEntry struct {
	Kind       string   `json:"kind"` // "elf" or "ptx"
	Number     int      `json:"number"`
	Name       jsonText `json:"name"`
	Arch       string   `json:"arch"`
	Flags      uint64   `json:"flags"`
	Compressed bool     `json:"compressed"`
	Offset     int64    `json:"offset"`
	Size       int64    `json:"size"`
}

type jsonEntry struct {
	Section jsonText `json:"section"`
	Format  string   `json:"format"`
	Kind    string   `json:"kind"`
	Name    jsonText `json:"name"`
	Symbol  jsonText `json:"symbol"`
	Addend  int64    `json:"addend"`
	Size    uint64   `json:"size"`
	Flags   uint32   `json:"flags"`
	Role    string   `json:"role"` // offload.Entry.Role: kernel, global, link, indirect, requires...
	Data    uint64   `json:"data"`
	Aux     jsonText `json:"aux"`
}

func printJSON(w io.Writer, o *fatobj.Object) error {
	for _, im := range o.Images {
		if im.NestedErr != nil {
			return im.NestedErr
		}
	}
	made, err := o.Made()
	if err != nil {
		return err
	}
	// Each image finds its binary in one look-up: an object may hold
	// tens of thousands of binaries of one image each.
	binaries := make(map[*offload.Binary]int, len(o.Binaries))
	for i, b := range o.Binaries {
		if _, ok := binaries[b.Binary]; !ok {
			binaries[b.Binary] = i
		}
	}
	out := jsonFile{File: jsonText(o.Name), Format: o.Format.String(), MadeBy: made, ReadAs: o.Release.Major,
		Images: []jsonImage{}, Entries: []jsonEntry{}, Bundles: []jsonBundle{}, Bundled: []jsonBundled{}, ImageSections: []jsonBundled{}}
	for _, s := range o.Bundled {
		jb := jsonBundled{Section: jsonText(s.Section), ID: jsonText(s.ID), Offload: s.OffloadKind.String(), Triple: jsonText(s.Triple()), TargetID: jsonText(s.Arch()),
			Offset: s.Offset, Size: s.Size, Contents: s.Contents.String()}
		kind, _, _ := strings.Cut(s.ID, "-")
		jb.Kind = jsonText(kind)
		out.Bundled = append(out.Bundled, jb)
	}
	fatbins, err := cudaFatbins(o)
	if err != nil {
		return err
	}
	fatbinOf := map[*fatobj.Image]cudaFatbin{}
	for _, fb := range fatbins {
		fatbinOf[fb.im] = fb
	}
	for _, im := range o.Images {
		if im.Source == fatobj.SourceImageSection {
			out.ImageSections = append(out.ImageSections, jsonBundled{Section: jsonText(im.Section), Offload: im.OffloadKind.String(), Triple: jsonText(im.Triple()),
				TargetID: jsonText(im.Arch()), Offset: im.Offset, Size: im.Size, Contents: contentsName(im)})
		}
		ji := jsonImage{Index: len(out.Images), Source: im.Source.String(), Section: jsonText(im.Section), BundleID: jsonText(im.BundleID),
			Offset: im.Offset, Size: uint64(im.Size), ImageKind: o.Release.ImageKindName(im.Kind), OffloadKind: im.OffloadKind.String(),
			Flags: im.Flags, Triple: jsonText(im.Triple()), Arch: jsonText(im.Arch()), Strings: jsonStrings(im.Strings), ImageSize: uint64(im.Size), DataOffset: im.Offset}
		i, top := binaries[im.Binary]
		if top {
			ji.Global = jsonText(o.Binaries[i].Global)
		}
		if b := im.Binary; b != nil {
			bi := &b.Images[im.Index]
			ji.Path, ji.Version, ji.Size = im.Number(), b.Version, b.Size
			ji.ImageOffset, ji.ImageSize = bi.ImageOffset, bi.ImageSize
			ji.Offset = -1
			switch {
			case im.Parent == nil && top:
				ji.Offset = o.Binaries[i].FileOffset
			case im.Parent != nil && im.Parent.Offset >= 0:
				// A nested image's binary is inside its parent's bytes.
				ji.Offset = im.Parent.Offset + b.Offset
			}
			// Only where the release knows OIF_Metadata (23 and later).
			ji.Metadata = o.Release.NestedImages() && im.IsMetadata()
		}
		if fb, ok := fatbinOf[im]; ok {
			ji.FatbinEntries = fb.entries
			if fb.err != nil {
				ji.FatbinError = jsonText(fb.err.Error())
			}
		}
		out.Images = append(out.Images, ji)
	}
	for _, e := range o.Entries {
		je := jsonEntry{Section: jsonText(e.Section), Format: e.Layout.String(), Kind: e.Kind.String(), Name: jsonText(e.Name),
			Symbol: jsonText(e.Address.Symbol), Addend: e.Address.Addend, Size: e.Size, Flags: e.Flags, Role: string(e.Role()), Data: e.Data}
		if !e.Aux.IsNull() {
			je.Aux = jsonText(e.Aux.String())
		}
		out.Entries = append(out.Entries, je)
	}
	for _, b := range o.Bundles {
		jb := jsonBundle{Section: jsonText(b.Section), Offset: b.Offset, Size: b.Size, Entries: []jsonBundleEntry{}}
		if b.Compressed != nil {
			jb.Compression, jb.Version = b.Compressed.Method.String(), b.Compressed.Version
		}
		for _, e := range b.Entries {
			jb.Entries = append(jb.Entries, jsonBundleEntry{ID: jsonText(e.ID), Offset: e.Offset, Size: e.Size})
		}
		out.Bundles = append(out.Bundles, jb)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// cudaFatbin is an image that holds a CUDA fat binary, and its entries, or
// why they were not read.
type cudaFatbin struct {
	im      *fatobj.Image
	entries []jsonFatbinEntry
	err     error
}

// cudaFatbins reads the CUDA fat binaries among o's images (those of kind
// fatbinary: .nv_fatbin, or an OffloadBinary's), numbering their entries
// across the file as cuobjdump does: the cubins 1, 2, ..., the PTX files 1,
// 2, ... A fat binary that does not read is reported with its error, as
// what list --all adds to llvm-objdump's listing is: the listing stands.
func cudaFatbins(o *fatobj.Object) ([]cudaFatbin, error) {
	var out []cudaFatbin
	input := o.Name
	if o.Member != "" {
		input = o.Member
	}
	n := map[nvfatbin.Kind]int{}
	for _, im := range o.Images {
		if im.Kind != offload.ImageFatbinary {
			continue
		}
		fb := cudaFatbin{im: im}
		r, err := im.Open()
		var f *nvfatbin.File
		if err == nil {
			f, err = nvfatbin.Read(r, r.Size())
		}
		if err != nil {
			if !errors.Is(err, goffload.ErrInvalid) && !errors.Is(err, goffload.ErrUnsupported) {
				return nil, fmt.Errorf("%s: image %s: %w", shown(o.Name), im.Number(), err)
			}
			fb.err = err
			out = append(out, fb)
			continue
		}
		for _, e := range f.Entries {
			n[e.Kind]++
			je := jsonFatbinEntry{Kind: e.Kind.String(), Number: n[e.Kind], Name: jsonText(e.CuobjdumpName(input, n[e.Kind])), Arch: e.Arch(),
				Flags: e.Flags, Compressed: e.Compressed(), Offset: -1, Size: e.Size}
			if im.Offset >= 0 {
				je.Offset = im.Offset + e.Offset
			}
			fb.entries = append(fb.entries, je)
		}
		out = append(out, fb)
	}
	return out, nil
}
