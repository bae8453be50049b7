package main

import (
	"debug/elf"
	"debug/macho"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

func runList(args []string, stdout io.Writer) error {
	var llvm string
	var asJSON, all bool
	fs := newFlags("list", &llvm)
	fs.BoolVar(&asJSON, "json", false, "print one JSON object per file (per member of an archive), with everything --all prints")
	fs.BoolVar(&all, "all", false, "after what llvm-objdump --offloading prints, print the offload entries, bundles, bundled objects' sections, clang 14's image sections, bitcode's embedded objects, CUDA fat binaries' cubins and PTX, AMDGPU code objects' versions, target IDs and kernels, and the releases that made each object")
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
func listFile(w io.Writer, path string, opt *offloadbinary.ReadOptions, mode listMode) error {
	var f *fatobj.File
	var err error
	if !mode.json && opt.Release == nil {
		asDefault := *opt
		asDefault.Release = release.Default()
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
// line for an ELF, COFF or Mach-O file, then the images numbered from 0); with all,
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
	case o.MachO != nil:
		fmt.Fprintf(&sb, "\n%s:\tfile format %s\n", shown(o.Name), machoFormat(o.MachO.Cpu))
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
	l, err := o.Listing()
	if err != nil {
		return err
	}
	for i, im := range o.Images {
		if im.Kind != offload.ImageFatbinary {
			continue
		}
		fb := l.Images[i]
		where := fmt.Sprintf("%s at %#x", shown(im.Section), im.Offset)
		if im.Section == "" {
			where = fmt.Sprintf("at %#x", im.Offset) // a fat binary file
		}
		fmt.Fprintf(sb, "\nCUDA FATBINARY [%s] (cuobjdump -lelf -lptx):\n", where)
		if fb.FatbinError != "" {
			fmt.Fprintf(sb, "  not read: %s\n", shown(string(fb.FatbinError)))
		}
		for _, e := range fb.FatbinEntries {
			fmt.Fprintf(sb, "%s file %4d: %s\n", strings.ToUpper(e.Kind), e.Number, shown(string(e.Name)))
		}
	}
	for i, im := range o.Images {
		co := l.Images[i]
		if co.CodeObject == nil && co.CodeObjectError == "" {
			continue
		}
		where := im.Number()
		if im.BundleID != "" {
			where = im.BundleID
		}
		fmt.Fprintf(sb, "\nAMDGPU CODE OBJECT [%s]", shown(where))
		if co.CodeObjectError != "" {
			fmt.Fprintf(sb, ":\n  not read: %s\n", shown(string(co.CodeObjectError)))
			continue
		}
		c := co.CodeObject
		fmt.Fprintf(sb, " (llvm-readelf -h --notes):\n  version %d, target ID %s", c.Version, shown(string(c.TargetID)))
		if c.GenericVersion != 0 {
			fmt.Fprintf(sb, ", generic version %d", c.GenericVersion)
		}
		for i, t := range c.Targets {
			if !slices.Contains(c.Targets[:i], t) {
				fmt.Fprintf(sb, ", amdhsa.target %s", shown(string(t)))
			}
		}
		sb.WriteByte('\n')
		for _, k := range c.Kernels {
			fmt.Fprintf(sb, "  kernel %s symbol=%s sgprs=%d vgprs=%d agprs=%d lds=%d scratch=%d kernarg=%d wavefront=%d\n",
				quoteName(string(k.Name)), shown(string(k.Symbol)), k.SGPRs, k.VGPRs, k.AGPRs, k.LDS, k.Scratch, k.Kernarg, k.WavefrontSize)
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
	nested := o.Release.Main.NestedImages
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
		for _, kv := range [][2]string{{"kind", offload.ImageKindName(o.Release, im.Kind)}, {"arch", im.Arch()}, {"triple", im.Triple()}, {"producer", im.OffloadKind.String()}} {
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
func madeBy(o *fatobj.Object) (release.Set, bool, error) {
	if len(o.Images) == 0 && len(o.Entries) == 0 && len(o.Bundled) == 0 && len(o.Bundles) == 0 {
		return 0, false, nil
	}
	made, err := o.Made()
	return made, err == nil, err
}

func madeString(s release.Set) string {
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

// machoFormat is llvm-objdump's name of a 64-bit Mach-O file's format
// (LLVM's MachOObjectFile::getFileFormatName).
func machoFormat(cpu macho.Cpu) string {
	switch cpu {
	case machoobj.CpuAmd64:
		return "mach-o 64-bit x86-64"
	case machoobj.CpuArm64:
		return "mach-o arm64"
	case macho.CpuPpc64:
		return "mach-o 64-bit ppc64"
	}
	return "mach-o 64-bit unknown"
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

// The listing types are the library's (fatobj.Listing): list --json
// prints each object's.
type (
	jsonFile    = fatobj.Listing
	jsonImage   = fatobj.ListedImage
	jsonEntry   = fatobj.ListedEntry
	jsonStrings = fatobj.StringTable
)

func printJSON(w io.Writer, o *fatobj.Object) error {
	l, err := o.Listing()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(l)
}
