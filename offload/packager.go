package offload

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// PackagerImage is one binary that clang-offload-packager writes for an --image
// argument: the file to read and the metadata to write with it.
type PackagerImage struct {
	File  string
	Image Image // Kind is from File's extension; see [DetectImageKind]
}

// ParseImageArg interprets one `--image=key=value,...` argument (without the
// `--image=` prefix) as clang-offload-packager of release r does (spec §1.6,
// §1.10), without reading any file:
//
//   - the argument is split at every comma, each part at its first '=' (a part
//     without one is a key with an empty value);
//   - a repeated key gets its values joined with ',';
//   - `file` is required, and `triple` too before LLVM 22;
//   - `kind` is the offload kind (an unknown name is none); every other key goes
//     into the string map, in the order of the packager's hash maps;
//   - from LLVM 17 a `file` value with commas names several files, one binary
//     each.
//
// The images come back in the order the packager writes them. A release
// without the packager (BinaryVersion 0: LLVM 13, 14) gives ErrUnsupported.
func (r *Release) ParseImageArg(arg string) ([]PackagerImage, error) {
	if r.BinaryVersion == 0 {
		return nil, fmt.Errorf("%v has no clang-offload-packager (it came with LLVM 15, with the OffloadBinary): %w", r, ErrUnsupported)
	}
	values := map[string]string{}
	var keys []string
	for _, part := range strings.Split(arg, ",") {
		k, v, _ := strings.Cut(part, "=")
		if old, ok := values[k]; ok {
			values[k] = old + "," + v
			continue
		}
		values[k] = v
		keys = append(keys, k)
	}
	_, hasFile := values["file"]
	_, hasTriple := values["triple"]
	switch {
	case r.PackagerNeedsTriple && (!hasFile || !hasTriple):
		return nil, fmt.Errorf("%w: 'file' and 'triple' are required image arguments", ErrPackagerArgs)
	case !hasFile:
		return nil, fmt.Errorf("%w: 'file' is a required image arguments", ErrPackagerArgs)
	}
	var im Image
	var strKeys []string
	for _, k := range orderedKeys(r.PackagerArgs, keys) {
		switch k {
		case "file":
		case "kind":
			im.OffloadKind = r.OffloadKindByName(values[k])
		default:
			strKeys = append(strKeys, k)
		}
	}
	for _, k := range orderedKeys(r.PackagerStrings, strKeys) {
		im.Strings = append(im.Strings, KeyValue{k, values[k]})
	}
	files := []string{values["file"]}
	if r.PackagerSplitsFiles {
		files = strings.Split(values["file"], ",")
	}
	out := make([]PackagerImage, len(files))
	for i, f := range files {
		out[i] = PackagerImage{File: f, Image: im}
		out[i].Image.Strings = append([]KeyValue(nil), im.Strings...)
		out[i].Image.Kind = ImageKindFromExtension(extension(f))
	}
	return out, nil
}

// extension is llvm::sys::path::extension without the dot: the part of the last
// path element after its last '.', unless that element is "." or "..".
func extension(p string) string {
	name := p[strings.LastIndexByte(p, '/')+1:]
	if name == "." || name == ".." {
		return ""
	}
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		return name[i+1:]
	}
	return ""
}

// ImageSource opens the file an --image argument names: it returns the file's
// contents and size. The returned reader is closed by the caller when it is an
// io.Closer.
type ImageSource func(name string) (io.Reader, int64, error)

// Package writes to w what clang-offload-packager of release r writes for the
// given --image arguments: one binary per image, concatenated. Each file's
// kind is found from its first bytes and its extension, as the packager
// does. Files are streamed, never held whole in memory.
func (r *Release) Package(w io.Writer, args []string, open ImageSource) (int64, error) {
	return r.pack(w, args, open, nil)
}

// PackageCompressed writes what llvm-offload-binary of release r writes
// with --compress, --compression-format and --compression-level: as
// [Release.Package], each binary compressed as [WriteCompressedBinary]
// writes it. Only a release that writes OffloadBinary version 3 has it
// (LLVM main after 22).
func (r *Release) PackageCompressed(w io.Writer, args []string, open ImageSource, c Compression) (int64, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	if r.BinaryVersion < VersionCompressed {
		return 0, fmt.Errorf("%v writes OffloadBinary version %d, which has no compression (version 3, LLVM main after 22): %w", r, r.BinaryVersion, ErrUnsupported)
	}
	return r.pack(w, args, open, &c)
}

func (r *Release) pack(w io.Writer, args []string, open ImageSource, c *Compression) (int64, error) {
	if r.BinaryVersion == 0 {
		return 0, fmt.Errorf("%v has no clang-offload-packager (it came with LLVM 15, with the OffloadBinary): %w", r, ErrUnsupported)
	}
	var total int64
	for _, arg := range args {
		imgs, err := r.ParseImageArg(arg)
		if err != nil {
			return total, err
		}
		for _, pi := range imgs {
			n, err := r.packageOne(w, pi, open, c)
			total += n
			if err != nil {
				return total, fmt.Errorf("%s: %w", pi.File, err)
			}
		}
	}
	return total, nil
}

func (r *Release) packageOne(w io.Writer, pi PackagerImage, open ImageSource, c *Compression) (int64, error) {
	rd, size, err := open(pi.File)
	if err != nil {
		return 0, err
	}
	if c, ok := rd.(io.Closer); ok {
		defer c.Close()
	}
	head := make([]byte, min(size, 4))
	if _, err := io.ReadFull(rd, head); err != nil {
		return 0, err
	}
	pi.Image.Kind = r.DetectImageKind(pi.File, head)
	data := io.MultiReader(bytes.NewReader(head), rd)
	if c != nil {
		return WriteCompressedBinary(w, r, &pi.Image, data, size, *c)
	}
	return WriteBinary(w, r, &pi.Image, data, size)
}
