package fatobj

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/amdgpu"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/nvfatbin"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// Listing is an object's device code and entries as data, what
// `goffload list --json` prints of each object (each archive member): the
// images (with the strings of their OffloadBinary, and the cubins and PTX of
// a CUDA fat binary), the offload entries (each with its role), the
// bundles, and the releases that made the object. Its JSON is that of
// [Object.MarshalJSON]. Strings from the file are [Text]: JSON keeps their
// bytes that are not UTF-8.
type Listing struct {
	File   Text   `json:"file"`
	Format string `json:"format"`
	// MadeBy are the releases that made the object (every one when nothing
	// in it differs between releases); ReadAs the one it was read as.
	MadeBy  release.Set    `json:"made_by"`
	ReadAs  int            `json:"read_as"`
	Images  []ListedImage  `json:"images"`
	Entries []ListedEntry  `json:"entries"`
	Bundles []ListedBundle `json:"bundles"`
	// Bundled lists a bundled object's sections, ImageSections clang 14's
	// image sections.
	Bundled       []ListedBundled `json:"bundled"`
	ImageSections []ListedBundled `json:"image_sections"`
}

// ListedBundled is a bundled object's entry, or a clang 14 image section (no
// ID, kind).
type ListedBundled struct {
	Section  Text   `json:"section"`
	ID       Text   `json:"id,omitempty"`
	Kind     Text   `json:"kind,omitempty"`
	Offload  string `json:"offload_kind"`
	Triple   Text   `json:"triple"`
	TargetID Text   `json:"target_id"`
	Offset   int64  `json:"offset"`
	Size     int64  `json:"size"`
	Contents string `json:"contents"`
}

type ListedBundle struct {
	Section Text  `json:"section"`
	Offset  int64 `json:"offset"`
	Size    int64 `json:"size"`
	// Compression is "" for an uncompressed bundle, else "zlib" or "zstd";
	// the entries' offsets are then in the decompressed bundle.
	Compression string              `json:"compression"`
	Version     uint16              `json:"compressed_version,omitempty"`
	Entries     []ListedBundleEntry `json:"entries"`
}

type ListedBundleEntry struct {
	ID     Text   `json:"id"`
	Offset uint64 `json:"offset"`
	Size   uint64 `json:"size"`
}

// ListedImage is one device image. Offset and Size are those of its
// OffloadBinary for an image of one (Version, ImageOffset and ImageSize are
// then the binary's fields), else of its bytes; DataOffset is where its
// bytes are in the file, -1 where they are stored compressed or are not in
// place (a binary in a bitcode module: Offset -1 too).
type ListedImage struct {
	Index       int         `json:"index"`
	Source      string      `json:"source"`
	Path        string      `json:"path,omitempty"`
	Section     Text        `json:"section"`
	Global      Text        `json:"global,omitempty"` // the bitcode global holding its binary
	BundleID    Text        `json:"bundle_id,omitempty"`
	Offset      int64       `json:"offset"`
	Size        uint64      `json:"size"`
	Version     uint32      `json:"version"`
	ImageKind   string      `json:"image_kind"`
	OffloadKind string      `json:"offload_kind"`
	Flags       uint32      `json:"flags"`
	Triple      Text        `json:"triple"`
	Arch        Text        `json:"arch"`
	Strings     StringTable `json:"strings"`
	ImageOffset uint64      `json:"image_offset"`
	ImageSize   uint64      `json:"image_size"`
	DataOffset  int64       `json:"data_offset"`
	// Metadata is set for an entry with the OIF_Metadata flag (bit 0 of
	// flags) where the release knows it (23 and later): strings, no image.
	Metadata bool `json:"metadata,omitempty"`
	// FatbinEntries are the cubins and PTX of a CUDA fat binary image;
	// FatbinError says why they are not, where the fat binary is malformed.
	FatbinEntries []ListedFatbinEntry `json:"fatbin_entries,omitempty"`
	FatbinError   Text                `json:"fatbin_error,omitempty"`
	// CodeObject is what an AMDGPU code object says of itself (package
	// amdgpu); CodeObjectError says why it is not, where the code object
	// is malformed.
	CodeObject      *ListedCodeObject `json:"code_object,omitempty"`
	CodeObjectError Text              `json:"code_object_error,omitempty"`
}

// ListedCodeObject is an AMDGPU code object: its version, target ID (the
// processor and its xnack and sramecc settings), a generic processor's
// version, and the kernels and targets of its metadata notes.
type ListedCodeObject struct {
	Version        int            `json:"version"`
	TargetID       Text           `json:"target_id"`
	XNACK          string         `json:"xnack"`
	SRAMECC        string         `json:"sramecc"`
	GenericVersion int            `json:"generic_version,omitempty"`
	Targets        []Text         `json:"targets"` // amdhsa.target of each metadata note
	Kernels        []ListedKernel `json:"kernels"`
}

// ListedKernel is a kernel of a code object's metadata: its name and
// descriptor symbol, register counts, LDS (group segment), scratch
// (private segment) and argument bytes, and wavefront size.
type ListedKernel struct {
	Name          Text  `json:"name"`
	Symbol        Text  `json:"symbol"`
	SGPRs         int64 `json:"sgprs"`
	VGPRs         int64 `json:"vgprs"`
	AGPRs         int64 `json:"agprs"`
	LDS           int64 `json:"lds"`
	Scratch       int64 `json:"scratch"`
	Kernarg       int64 `json:"kernarg"`
	WavefrontSize int64 `json:"wavefront_size"`
}

// ListedFatbinEntry is a cubin or PTX file of a CUDA fat binary: what
// cuobjdump -lelf -lptx names it (Number, Name), and where its payload lies
// in the input (Offset -1 where the image's bytes are not in place).
type ListedFatbinEntry struct {
	Kind       string `json:"kind"` // "elf" or "ptx"
	Number     int    `json:"number"`
	Name       Text   `json:"name"`
	Arch       string `json:"arch"`
	Flags      uint64 `json:"flags"`
	Compressed bool   `json:"compressed"`
	Offset     int64  `json:"offset"`
	Size       int64  `json:"size"`
}

type ListedEntry struct {
	Section Text   `json:"section"`
	Format  string `json:"format"`
	Kind    string `json:"kind"`
	Name    Text   `json:"name"`
	Symbol  Text   `json:"symbol"`
	Addend  int64  `json:"addend"`
	Size    uint64 `json:"size"`
	Flags   uint32 `json:"flags"`
	Role    string `json:"role"` // offload.Entry.Role: kernel, global, link, indirect, requires...
	Data    uint64 `json:"data"`
	Aux     Text   `json:"aux"`
}

// Listing returns the object's listing: its images, entries and bundles as
// data ([Listing]), read as the object's release reads them. An image
// whose nested binaries failed to read (where the release reads nested
// binaries) gives that error.
func (o *Object) Listing() (*Listing, error) {
	for _, im := range o.Images {
		if im.NestedErr != nil {
			return nil, im.NestedErr
		}
	}
	made, err := o.Made()
	if err != nil {
		return nil, err
	}
	// Each image finds its binary in one look-up: an object may hold
	// tens of thousands of binaries of one image each.
	binaries := make(map[*offloadbinary.Binary]int, len(o.Binaries))
	for i, b := range o.Binaries {
		if _, ok := binaries[b.Binary]; !ok {
			binaries[b.Binary] = i
		}
	}
	out := Listing{File: Text(o.Name), Format: o.Format.String(), MadeBy: made, ReadAs: o.Release.Major,
		Images: []ListedImage{}, Entries: []ListedEntry{}, Bundles: []ListedBundle{}, Bundled: []ListedBundled{}, ImageSections: []ListedBundled{}}
	for _, s := range o.Bundled {
		jb := ListedBundled{Section: Text(s.Section), ID: Text(s.ID), Offload: s.OffloadKind.String(), Triple: Text(s.Triple()), TargetID: Text(s.Arch()),
			Offset: s.Offset, Size: s.Size, Contents: s.Contents.String()}
		kind, _, _ := strings.Cut(s.ID, "-")
		jb.Kind = Text(kind)
		out.Bundled = append(out.Bundled, jb)
	}
	fatbins, err := cudaFatbins(o)
	if err != nil {
		return nil, err
	}
	fatbinOf := map[*Image]cudaFatbin{}
	for _, fb := range fatbins {
		fatbinOf[fb.im] = fb
	}
	for _, im := range o.Images {
		if im.Source == SourceImageSection {
			out.ImageSections = append(out.ImageSections, ListedBundled{Section: Text(im.Section), Offload: im.OffloadKind.String(), Triple: Text(im.Triple()),
				TargetID: Text(im.Arch()), Offset: im.Offset, Size: im.Size, Contents: contentsName(im)})
		}
		ji := ListedImage{Index: len(out.Images), Source: im.Source.String(), Section: Text(im.Section), BundleID: Text(im.BundleID),
			Offset: im.Offset, Size: uint64(im.Size), ImageKind: offload.ImageKindName(o.Release, im.Kind), OffloadKind: im.OffloadKind.String(),
			Flags: im.Flags, Triple: Text(im.Triple()), Arch: Text(im.Arch()), Strings: StringTable(im.Strings), ImageSize: uint64(im.Size), DataOffset: im.Offset}
		i, top := binaries[im.Binary]
		if top {
			ji.Global = Text(o.Binaries[i].Global)
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
			ji.Metadata = o.Release.Main.NestedImages && im.IsMetadata()
		}
		if fb, ok := fatbinOf[im]; ok {
			ji.FatbinEntries = fb.entries
			if fb.err != nil {
				ji.FatbinError = Text(fb.err.Error())
			}
		}
		if ji.CodeObject, err = codeObject(im); err != nil {
			if !errors.Is(err, goffload.ErrInvalid) && !errors.Is(err, goffload.ErrLimit) && !errors.Is(err, goffload.ErrUnsupported) {
				return nil, fmt.Errorf("%s: image %s: %w", o.Name, im.Number(), err)
			}
			ji.CodeObjectError = Text(err.Error())
		}
		out.Images = append(out.Images, ji)
	}
	for _, e := range o.Entries {
		je := ListedEntry{Section: Text(e.Section), Format: e.Layout.String(), Kind: e.Kind.String(), Name: Text(e.Name),
			Symbol: Text(e.Address.Symbol), Addend: e.Address.Addend, Size: e.Size, Flags: e.Flags, Role: string(e.Role()), Data: e.Data}
		if !e.Aux.IsNull() {
			je.Aux = Text(e.Aux.String())
		}
		out.Entries = append(out.Entries, je)
	}
	for _, b := range o.Bundles {
		jb := ListedBundle{Section: Text(b.Section), Offset: b.Offset, Size: b.Size, Entries: []ListedBundleEntry{}}
		if b.Compressed != nil {
			jb.Compression, jb.Version = b.Compressed.Method.String(), b.Compressed.Version
		}
		for _, e := range b.Entries {
			jb.Entries = append(jb.Entries, ListedBundleEntry{ID: Text(e.ID), Offset: e.Offset, Size: e.Size})
		}
		out.Bundles = append(out.Bundles, jb)
	}
	return &out, nil
}

// MarshalJSON writes the object's [Listing].
func (o *Object) MarshalJSON() ([]byte, error) {
	l, err := o.Listing()
	if err != nil {
		return nil, err
	}
	return json.Marshal(l)
}

// MarshalJSON writes the file's objects (an archive's members, each
// object of a nested archive) as an array of their [Listing]s.
func (f *File) MarshalJSON() ([]byte, error) {
	ls := make([]*Listing, 0, len(f.Objects))
	for _, o := range f.Objects {
		l, err := o.Listing()
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	return json.Marshal(ls)
}

// contentsName is what an image section of clang 14 holds: "elf",
// "bitcode", ... as bundle.Classify names it.
func contentsName(im *Image) string {
	r, err := im.Open()
	if err != nil {
		return bundle.ContentsUnknown.String()
	}
	return bundle.Classify(r, r.Size()).String()
}

// cudaFatbin is an image that holds a CUDA fat binary, and its entries, or
// why they were not read.
type cudaFatbin struct {
	im      *Image
	entries []ListedFatbinEntry
	err     error
}

// cudaFatbins reads the CUDA fat binaries among o's images (those of kind
// fatbinary: .nv_fatbin, or an OffloadBinary's), numbering their entries
// across the file as cuobjdump does: the cubins 1, 2, ..., the PTX files 1,
// 2, ... A fat binary that does not read is reported with its error, as
// what list --all adds to llvm-objdump's listing is: the listing stands.
// codeObject reads im as an AMDGPU code object; nil for an image that is
// none (its ELF header says so, or it is no ELF file).
func codeObject(im *Image) (*ListedCodeObject, error) {
	if im.Size < 64 {
		return nil, nil
	}
	r, err := im.Open()
	if err != nil {
		return nil, nil // compressed or not in place: not listed here
	}
	h, err := elfobj.ReadHeader(io.NewSectionReader(r, 0, r.Size()))
	if err != nil || !amdgpu.IsCodeObject(h) {
		return nil, nil
	}
	c, err := amdgpu.Read(r, r.Size())
	if err != nil {
		return nil, err
	}
	lc := &ListedCodeObject{Version: c.Version, TargetID: Text(c.TargetID()), XNACK: c.XNACK.String(), SRAMECC: c.SRAMECC.String(),
		GenericVersion: c.GenericVersion, Targets: []Text{}, Kernels: []ListedKernel{}}
	for _, m := range c.Metadata {
		lc.Targets = append(lc.Targets, Text(m.Target))
	}
	for _, k := range c.Kernels() {
		lc.Kernels = append(lc.Kernels, ListedKernel{Name: Text(k.Name), Symbol: Text(k.Symbol), SGPRs: k.SGPRCount, VGPRs: k.VGPRCount, AGPRs: k.AGPRCount,
			LDS: k.GroupSegmentFixedSize, Scratch: k.PrivateSegmentFixedSize, Kernarg: k.KernargSegmentSize, WavefrontSize: k.WavefrontSize})
	}
	return lc, nil
}

func cudaFatbins(o *Object) ([]cudaFatbin, error) {
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
				return nil, fmt.Errorf("%s: image %s: %w", o.Name, im.Number(), err)
			}
			fb.err = err
			out = append(out, fb)
			continue
		}
		for _, e := range f.Entries {
			n[e.Kind]++
			je := ListedFatbinEntry{Kind: e.Kind.String(), Number: n[e.Kind], Name: Text(e.CuobjdumpName(input, n[e.Kind])), Arch: e.Arch(),
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

// Text is a string from a file (a name, a triple, a symbol) in a
// [Listing]. JSON strings are
// Unicode; a byte that is not UTF-8 is written as the lone surrogate
// \udc80 to \udcff (U+DC00 plus the byte), as Python's "surrogateescape"
// decodes it, so that no two strings that differ are written alike (
// encoding/json would write U+FFFD for each). A valid string is written
// as encoding/json writes it.
type Text string

func (s Text) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(s)) {
		return json.Marshal(string(s))
	}
	b := []byte{'"'}
	for rest := string(s); rest != ""; {
		i := 0
		for i < len(rest) {
			r, n := utf8.DecodeRuneInString(rest[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		if i > 0 {
			q, err := json.Marshal(rest[:i])
			if err != nil {
				return nil, err
			}
			b = append(b, q[1:len(q)-1]...)
		}
		if i < len(rest) {
			b = fmt.Appendf(b, `\udc%02x`, rest[i])
			i++
		}
		rest = rest[i:]
	}
	return append(b, '"'), nil
}

// StringTable is an image's string table in JSON: an object of its keys
// in byte order (the last value of a key given twice), keys and values
// written as Text.
type StringTable []offloadbinary.KeyValue

func (kvs StringTable) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	keys := slices.Sorted(maps.Keys(m))
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kj, err := Text(k).MarshalJSON()
		if err != nil {
			return nil, err
		}
		vj, err := Text(m[k]).MarshalJSON()
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kj...), ':'), vj...)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes, for the tests and for
// programs that read a Listing (lone surrogates are
// read as U+FFFD, as encoding/json reads them).
func (kvs *StringTable) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*kvs = (*kvs)[:0]
	for _, k := range slices.Sorted(maps.Keys(m)) {
		*kvs = append(*kvs, offloadbinary.KeyValue{Key: k, Value: m[k]})
	}
	return nil
}
