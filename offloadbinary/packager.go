package offloadbinary

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// PackagerImage is one binary that clang-offload-packager writes for an --image
// argument: the file to read and the metadata to write with it.
type PackagerImage struct {
	File  string
	Image Image // Kind is from File's extension; see [DetectImageKind]
}

// ParseImageArg interprets one `--image=key=value,...` argument (without the
// `--image=` prefix) as clang-offload-packager of release r does
// (docs/offload-binary.md#packager-rules, docs/offload-binary.md#packager),
// without reading any file:
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
// without the packager (BinaryVersion 0: LLVM 13, 14) gives goffload.ErrUnsupported.
func ParseImageArg(r *release.Release, arg string) ([]PackagerImage, error) {
	if r.BinaryVersion == 0 {
		return nil, fmt.Errorf("%v has no clang-offload-packager (it came with LLVM 15, with the OffloadBinary): %w", r, goffload.ErrUnsupported)
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
	case r.Packager.NeedsTriple && (!hasFile || !hasTriple):
		return nil, fmt.Errorf("%w: 'file' and 'triple' are required image arguments", ErrPackagerArgs)
	case !hasFile:
		return nil, fmt.Errorf("%w: 'file' is a required image arguments", ErrPackagerArgs)
	}
	var im Image
	var strKeys []string
	for _, k := range r.Packager.Args.Order(keys) {
		switch k {
		case "file":
		case "kind":
			im.OffloadKind = offload.OffloadKindByName(r, values[k])
		default:
			strKeys = append(strKeys, k)
		}
	}
	for _, k := range r.Packager.Strings.Order(strKeys) {
		im.Strings = append(im.Strings, KeyValue{k, values[k]})
	}
	files := []string{values["file"]}
	if r.Packager.SplitsFiles {
		files = strings.Split(values["file"], ",")
	}
	out := make([]PackagerImage, len(files))
	for i, f := range files {
		out[i] = PackagerImage{File: f, Image: im}
		out[i].Image.Strings = append([]KeyValue(nil), im.Strings...)
		out[i].Image.Kind = offload.DetectImageKind(nil, f, nil)
	}
	return out, nil
}

// ImageSource opens the file an --image argument names: it returns the file's
// contents and size. The returned reader is closed by the caller when it is an
// io.Closer.
type ImageSource func(name string) (io.Reader, int64, error)

// Package writes to w what clang-offload-packager of release r writes for the
// given --image arguments: up to LLVM 22 one binary per image, concatenated;
// where the release writes OffloadBinary version 2 or later (LLVM 23 and
// 24: --llvm 23, --llvm 24) one binary holding every image in the order of
// the arguments, as llvm-offload-binary writes it since llvm-project
// #197456 ([WriteBinaries]).
// Each file's kind is found from its first bytes and its extension, as the
// packager does. Files are streamed, never held whole in memory; for one
// binary of all images every file is opened before the first is read (its
// size goes in the header), and each is closed when the binary is written.
// No image gives no bytes (main's tool requires one).
func Package(r *release.Release, w io.Writer, args []string, open ImageSource) (int64, error) {
	return pack(r, w, args, open, nil)
}

// PackageCompressed writes what llvm-offload-binary of release r writes
// with --compress, --compression-format and --compression-level: the binary
// [Package] writes, compressed as [WriteCompressedBinaries] writes
// it. Only a release that writes OffloadBinary version 3 has it (LLVM main
// after 22).
func PackageCompressed(r *release.Release, w io.Writer, args []string, open ImageSource, c Compression) (int64, error) {
	if err := CheckCompression(r, c); err != nil {
		return 0, err
	}
	return pack(r, w, args, open, &c)
}

func pack(r *release.Release, w io.Writer, args []string, open ImageSource, c *Compression) (int64, error) {
	if r.BinaryVersion == 0 {
		return 0, fmt.Errorf("%v has no clang-offload-packager (it came with LLVM 15, with the OffloadBinary): %w", r, goffload.ErrUnsupported)
	}
	if r.BinaryVersion >= 2 {
		return packAll(r, w, args, open, c)
	}
	var total int64
	for _, arg := range args {
		imgs, err := ParseImageArg(r, arg)
		if err != nil {
			return total, err
		}
		for _, pi := range imgs {
			n, err := packageOne(r, w, pi, open)
			total += n
			if err != nil {
				return total, fmt.Errorf("%s: %w", pi.File, err)
			}
		}
	}
	return total, nil
}

// packageOne writes the version-1 binary of one image.
func packageOne(r *release.Release, w io.Writer, pi PackagerImage, open ImageSource) (int64, error) {
	d, closer, err := openImage(r, pi, open)
	if closer != nil {
		defer closer.Close()
	}
	if err != nil {
		return 0, err
	}
	return WriteBinary(w, r, &d.Image, d.Data, d.Size)
}

// packAll writes one binary of every image of args, compressed with c
// unless it is nil.
func packAll(r *release.Release, w io.Writer, args []string, open ImageSource, c *Compression) (int64, error) {
	var pis []PackagerImage
	for _, arg := range args {
		imgs, err := ParseImageArg(r, arg)
		if err != nil {
			return 0, err
		}
		pis = append(pis, imgs...)
	}
	if len(pis) == 0 {
		return 0, nil
	}
	ims := make([]ImageData, len(pis))
	for i, pi := range pis {
		d, closer, err := openImage(r, pi, open)
		if closer != nil {
			defer closer.Close()
		}
		if err != nil {
			return 0, fmt.Errorf("%s: %w", pi.File, err)
		}
		d.Data = &fileReader{r: d.Data, name: pi.File, size: d.Size}
		ims[i] = d
	}
	if c != nil {
		return WriteCompressedBinaries(w, r, ims, *c)
	}
	return WriteBinaries(w, r, ims)
}

// openImage opens the file of pi and finds its image kind, as the packager
// does, from its first bytes and its extension. The closer, when not nil,
// is to be closed once the image is read.
func openImage(r *release.Release, pi PackagerImage, open ImageSource) (ImageData, io.Closer, error) {
	rd, size, err := open(pi.File)
	if err != nil {
		return ImageData{}, nil, err
	}
	closer, _ := rd.(io.Closer)
	head := make([]byte, min(size, 4))
	if _, err := io.ReadFull(rd, head); err != nil {
		return ImageData{}, closer, err
	}
	pi.Image.Kind = offload.DetectImageKind(r, pi.File, head)
	return ImageData{Image: pi.Image, Data: io.MultiReader(bytes.NewReader(head), rd), Size: size}, closer, nil
}

// fileReader reads the size bytes of the file name, its errors naming it:
// in a binary of several images the writer knows an image by its index.
type fileReader struct {
	r          io.Reader
	name       string
	size, read int64
}

func (f *fileReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	f.read += int64(n)
	switch {
	case err == io.EOF && f.read < f.size:
		return n, fmt.Errorf("%s: got %d of %d bytes: %w", f.name, f.read, f.size, io.ErrUnexpectedEOF)
	case err != nil && err != io.EOF:
		return n, fmt.Errorf("%s: %w", f.name, err)
	}
	return n, err
}
