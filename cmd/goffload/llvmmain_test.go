package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/strtab"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// The OffloadBinary tests of LLVM main after 23 (release row 24), rebuilt in
// Go: llvm/test/tools/llvm-objdump/Offloading, llvm/test/ObjectYAML/Offload,
// llvm/test/tools/llvm-offload-binary. Each input is made as the test makes
// it (yaml2obj, llvm-offload-binary, llvm-objcopy) with the offload
// package's writers, or, for multi-entry and malformed binaries, as the few
// bytes main's OffloadBinary::write lays out (lmBinary, which also checks
// that offloadbinary.WriteBinaries writes those bytes); `goffload list --llvm 24`
// must print the test's CHECK lines (main's llvm-objdump --offloading,
// every line, in order) and `goffload extract --llvm 24 --raw` must write
// what main's llvm-offload-binary writes. A malformed input is refused
// (exit 1) with the typed error whose meaning LLVM's message has:
// goffload.ErrTruncated for "The end of the file was unexpectedly
// encountered", goffload.ErrInvalid for "Invalid data was encountered while
// parsing the file".
//
// Not reproduced here (see the comments at the end of this file): the COFF
// and fatbin tests of llvm-objdump, llvm-offload-binary's file= and
// ignore-shared-object.ll, and llvm-offload-wrapper's tests.

var lmLE = binary.LittleEndian

// lmImage is one member of an !Offload document: what main's
// OffloadBinary::write takes for one entry.
type lmImage struct {
	kind  offload.ImageKind
	code  uint16 // the offload kind as stored: main's OpenMP 1, CUDA 2, HIP 4
	flags uint32
	strs  []offloadbinary.KeyValue
	data  []byte
}

func lmStrings(kv ...string) []offloadbinary.KeyValue {
	var out []offloadbinary.KeyValue
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, offloadbinary.KeyValue{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

// lmBinary returns the binary main's OffloadBinary::write makes of ims, as
// yaml2obj makes it of an !Offload document's Members: one header (version
// 3: 40 bytes ending in InflatedSize 0; version 2: 32 bytes) with
// EntriesCount entries after it, then the 24-byte string entries of every
// entry, the string table of all of their strings, zeros to a multiple of
// 8, the images one after another and zeros to a multiple of 8. Laid out
// here by hand, it must be what offloadbinary.WriteBinaries writes (lmWritten).
func lmBinary(t *testing.T, version uint32, ims ...lmImage) []byte {
	t.Helper()
	var strs []string
	nstr := 0
	for _, im := range ims {
		for _, kv := range im.strs {
			strs = append(strs, kv.Key, kv.Value)
		}
		nstr += len(im.strs)
	}
	st := strtab.Build(strs)
	hdr := uint64(offloadbinary.HeaderSizeV3)
	if version < 3 {
		hdr = offloadbinary.HeaderSize
	}
	strEntries := hdr + uint64(len(ims))*offloadbinary.ImageEntrySize
	strTab := strEntries + uint64(nstr)*offloadbinary.StringEntrySizeV2
	imageAt := (strTab + uint64(len(st.Data)) + 7) &^ 7
	end := imageAt
	for _, im := range ims {
		end += uint64(len(im.data))
	}
	size := (end + 7) &^ 7

	b := append([]byte{}, offloadbinary.Magic[:]...)
	b = lmLE.AppendUint32(b, version)
	b = lmLE.AppendUint64(b, size)
	b = lmLE.AppendUint64(b, hdr)
	b = lmLE.AppendUint64(b, uint64(len(ims)))
	if version >= 3 {
		b = lmLE.AppendUint64(b, 0) // InflatedSize
	}
	so, at := strEntries, imageAt
	for _, im := range ims {
		b = lmLE.AppendUint16(b, uint16(im.kind))
		b = lmLE.AppendUint16(b, im.code)
		b = lmLE.AppendUint32(b, im.flags)
		b = lmLE.AppendUint64(b, so)
		b = lmLE.AppendUint64(b, uint64(len(im.strs)))
		b = lmLE.AppendUint64(b, at)
		b = lmLE.AppendUint64(b, uint64(len(im.data)))
		so += uint64(len(im.strs)) * offloadbinary.StringEntrySizeV2
		at += uint64(len(im.data))
	}
	for _, im := range ims {
		for _, kv := range im.strs {
			b = lmLE.AppendUint64(b, strTab+st.Offset(kv.Key))
			b = lmLE.AppendUint64(b, strTab+st.Offset(kv.Value))
			b = lmLE.AppendUint64(b, uint64(len(kv.Value)))
		}
	}
	b = append(b, st.Data...)
	b = append(b, make([]byte, imageAt-uint64(len(b)))...)
	for _, im := range ims {
		b = append(b, im.data...)
	}
	b = append(b, make([]byte, size-uint64(len(b)))...)
	if w, ok := lmWritten(t, version, ims...); ok && !bytes.Equal(w, b) {
		t.Errorf("offloadbinary.WriteBinaries (version %d) differs from the layout of main's OffloadBinary::write:\n% x\nwant\n% x", version, w, b)
	}
	return b
}

// lmWritten returns what offloadbinary.WriteBinaries writes of ims for release
// row 24 (version 3) or, for version 2, for row 23 (LLVM 23 writes version 2,
// as main did before version 3); false when an image's offload kind is a
// number that names no kind (yaml2obj writes any number, the writer kinds).
func lmWritten(t *testing.T, version uint32, ims ...lmImage) ([]byte, bool) {
	t.Helper()
	r := *lmRelease(t, 24)
	if version == 2 {
		r = *lmRelease(t, 23)
	}
	if r.BinaryVersion != version {
		t.Fatalf("%v writes version %d, not %d", &r, r.BinaryVersion, version)
	}
	var data []offloadbinary.ImageData
	for _, im := range ims {
		ok := offload.OffloadKindOf(&r, im.code)
		if code, _ := offload.OffloadKindCode(&r, ok); code != im.code {
			return nil, false
		}
		data = append(data, offloadbinary.ImageData{Image: offloadbinary.Image{Kind: im.kind, OffloadKind: ok, Flags: im.flags, Strings: im.strs},
			Data: bytes.NewReader(im.data), Size: int64(len(im.data))})
	}
	var buf bytes.Buffer
	if _, err := offloadbinary.WriteBinaries(&buf, &r, data); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), true
}

// lmPackage returns what main's llvm-offload-binary writes for the --image
// arguments args, the files read from files: one binary of every image
// (release row 24's packager).
func lmPackage(t *testing.T, files map[string][]byte, args ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	open := func(name string) (io.Reader, int64, error) {
		data, ok := files[name]
		if !ok {
			return nil, 0, fmt.Errorf("%s: %w", name, os.ErrNotExist)
		}
		return bytes.NewReader(data), int64(len(data)), nil
	}
	if _, err := offloadbinary.Package(lmRelease(t, 24), &buf, args, open); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lmRelease returns the release table's row n.
func lmRelease(t *testing.T, n int) *release.Release {
	t.Helper()
	r, err := release.Lookup(n)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// lmMarshal returns release n's binary (23: version 3; 22: version 1) of
// one image with the strings kv.
func lmMarshal(t *testing.T, n int, kind offload.ImageKind, ok offload.OffloadKind, data []byte, kv ...string) []byte {
	t.Helper()
	im := offloadbinary.Image{Kind: kind, OffloadKind: ok, Strings: lmStrings(kv...)}
	b, err := offloadbinary.MarshalBinary(lmRelease(t, n), &im, data)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lmCompressed returns main's compressed binary of one image.
func lmCompressed(t *testing.T, kind offload.ImageKind, ok offload.OffloadKind, data []byte, c offloadbinary.Compression, kv ...string) []byte {
	t.Helper()
	im := offloadbinary.Image{Kind: kind, OffloadKind: ok, Strings: lmStrings(kv...)}
	var buf bytes.Buffer
	if _, err := offloadbinary.WriteCompressedBinary(&buf, lmRelease(t, 24), &im, bytes.NewReader(data), int64(len(data)), c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lmSet returns b with the uint64 at off set to v, as the malformed YAML
// documents set a header field.
func lmSet(b []byte, off int, v uint64) []byte {
	b = slices.Clone(b)
	lmLE.PutUint64(b[off:], v)
	return b
}

// lmELF returns the ELF file yaml2obj makes of an !ELF document with no
// machine (llvm-objdump's "elf64-unknown") and the sections secs, its
// e_type typ.
func lmELF(t *testing.T, typ elf.Type, secs ...*elfobj.Section) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, &elfobj.Object{Data: elf.ELFDATA2LSB, Sections: secs}); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	lmLE.PutUint16(b[16:], uint16(typ))
	return b
}

// lmOffloading is a `.llvm.offloading` section holding data (what
// llvm-objcopy --update-section/--add-section puts there).
func lmOffloading(data []byte, align uint64) *elfobj.Section {
	return &elfobj.Section{Name: ".llvm.offloading", Type: elfobj.SHT_LLVM_OFFLOADING, Flags: elfobj.SHF_EXCLUDE, Addralign: align, Data: data}
}

// lmArchive returns a GNU archive of the members, in order (llvm-ar rcs).
func lmArchive(t *testing.T, members ...[2]string) []byte {
	t.Helper()
	var ms []ar.NewMember
	for _, m := range members {
		ms = append(ms, ar.NewMember{Name: m[0], Mode: 0o644, Data: io.NewSectionReader(strings.NewReader(m[1]), 0, int64(len(m[1])))})
	}
	var buf bytes.Buffer
	if err := ar.WriteGNU(&buf, ms); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lmListed is one image as main's llvm-objdump --offloading prints it,
// nested level deep (two spaces a level).
func lmListed(level int, index, kind, arch, triple, producer string, size int) string {
	in := strings.Repeat("  ", level)
	return "\n" + in + "OFFLOADING IMAGE [" + index + "]:\n" +
		in + "kind            " + kind + "\n" +
		in + "arch            " + arch + "\n" +
		in + "triple          " + triple + "\n" +
		in + "producer        " + producer + "\n" +
		in + fmt.Sprintf("image size      %d bytes\n", size)
}

// lmNested is the line after an image that is itself a binary of n images.
func lmNested(level, n int) string {
	return strings.Repeat("  ", level) + fmt.Sprintf("nested images   %d\n", n)
}

// lmELFLine is llvm-objdump's line before the images of an ELF file; FILE
// stands for its path.
const lmELFLine = "\nFILE:\tfile format elf64-unknown\n"

// The documents the tests share.
var (
	// llvm-objdump/Offloading/Inputs/binary.yaml (its newest version:
	// AMDGPU subarch triples); no Content: every image is empty.
	lmBinaryYAML = []lmImage{
		{kind: offload.ImageBitcode, code: 1, strs: lmStrings("triple", "amdgpu9.08-amd-amdhsa", "arch", "gfx908")},
		{kind: offload.ImageBitcode, code: 1, strs: lmStrings("triple", "amdgpu9.0a-amd-amdhsa", "arch", "gfx90a")},
		{kind: offload.ImageCubin, code: 1, strs: lmStrings("triple", "nvptx64-nvidia-cuda", "arch", "sm_52")},
		{kind: offload.ImageNone, code: 0, strs: lmStrings("triple", "nvptx64-nvidia-cuda", "arch", "sm_70")},
	}
	lmBinaryListed = lmListed(0, "0", "llvm ir", "gfx908", "amdgpu9.08-amd-amdhsa", "openmp", 0) +
		lmListed(0, "1", "llvm ir", "gfx90a", "amdgpu9.0a-amd-amdhsa", "openmp", 0) +
		lmListed(0, "2", "cubin", "sm_52", "nvptx64-nvidia-cuda", "openmp", 0) +
		lmListed(0, "3", "<none>", "sm_70", "nvptx64-nvidia-cuda", "none", 0)
	// llvm-objdump/Offloading/Inputs/inner.yaml.
	lmInnerYAML = []lmImage{
		{kind: offload.ImageBitcode, code: 1, strs: lmStrings("triple", "x-y-z", "arch", "arch1")},
		{kind: offload.ImageBitcode, code: 1, strs: lmStrings("triple", "x-y-z", "arch", "arch2")},
	}
	lmDeadbeef = []byte{0xde, 0xad, 0xbe, 0xef}
	// The file llvm-offload-binary.ll packages (%s): any bytes.
	lmSource = []byte("; RUN: llvm-offload-binary -o %t --image=file=%s,arch=abc,triple=x-y-z\n")
)

// lmSourceName is the name of lmSource: its extension names no image kind.
const lmSourceName = "llvm-offload-binary.ll"

// lmT5 returns llvm-offload-binary.ll's %t5, what main's
// llvm-offload-binary writes for --image=file=%s,arch=abc,triple=x-y-z
// --image=file=%s,arch=def,triple=x-y-z: one binary of both images, laid
// out as lmBinary lays them out. files holds the source and t5.
func lmT5(t *testing.T) (files map[string][]byte, t5 []byte) {
	t.Helper()
	files = map[string][]byte{lmSourceName: lmSource}
	t5 = lmPackage(t, files, "file="+lmSourceName+",arch=abc,triple=x-y-z", "file="+lmSourceName+",arch=def,triple=x-y-z")
	leaf := func(arch string) lmImage {
		return lmImage{strs: lmStrings("arch", arch, "triple", "x-y-z"), data: lmSource}
	}
	if want := lmBinary(t, 3, leaf("abc"), leaf("def")); !bytes.Equal(t5, want) {
		t.Errorf("llvm-offload-binary.ll's %%t5: Package wrote\n% x\nmain writes\n% x", t5, want)
	}
	files["t5"] = t5
	return files, t5
}

// lmCase is one LLVM test (or one RUN line of it) as goffload list
// --llvm 24 runs it.
type lmCase struct {
	test  string                  // the LLVM test, under llvm/test
	input func(*testing.T) []byte // the file listed
	want  string                  // its listing, every line (FILE: the input's path)
	// refused is the typed error of a malformed input, field the header
	// or entry field its goffload.FormatError names, says what else the
	// message must say.
	refused error
	field   string
	says    []string
}

func lmCases(t *testing.T) []lmCase {
	deadbeef := func(n int) func(*testing.T) []byte {
		return func(t *testing.T) []byte {
			return lmMarshal(t, n, offload.ImageCubin, offload.OffloadOpenMP, lmDeadbeef, "triple", "nvptx64-nvidia-cuda", "arch", "sm_70")
		}
	}
	inner := lmBinary(t, 3, lmInnerYAML...)
	nestedListed := func(i, triple string) string {
		return lmListed(0, i, "elf", "none", triple, "openmp", len(inner)) + lmNested(0, 2) +
			lmListed(1, i+".0", "llvm ir", "arch1", "x-y-z", "openmp", 0) +
			lmListed(1, i+".1", "llvm ir", "arch2", "x-y-z", "openmp", 0)
	}
	// main's llvm-offload-binary.ll, as its llvm-offload-binary writes
	// them: %t5 one binary of two images of the source, %t6 one of %t5, %t7
	// one of the source and %t5, %t8 one of %t7 and %t5.
	files, t5 := lmT5(t)
	t7 := lmPackage(t, files, "file="+lmSourceName+",arch=abc,triple=x-y-z", "file=t5,arch=nested,triple=x-y-z")
	files["t7"] = t7
	leaf := func(level int, i, arch string) string {
		return lmListed(level, i, "<none>", arch, "x-y-z", "none", len(lmSource))
	}
	compressed := func(c offloadbinary.Compression) []byte {
		return lmCompressed(t, offload.ImageCubin, offload.OffloadHIP, lmDeadbeef, c, "triple", "amdgcn-amd-amdhsa", "arch", "gfx90a")
	}
	return []lmCase{
		// llvm-objdump/Offloading.
		{test: "tools/llvm-objdump/Offloading/binary.test (the binary itself)", want: lmBinaryListed,
			input: func(t *testing.T) []byte { return lmBinary(t, 3, lmBinaryYAML...) }},
		// The test's older runs: yaml2obj of 22 and before wrote a version-1
		// binary per member, the triples then amdgcn-amd-amdhsa.
		{test: "tools/llvm-objdump/Offloading/binary.test (version 1, a binary per member)",
			want: strings.ReplaceAll(strings.ReplaceAll(lmBinaryListed, "amdgpu9.08", "amdgcn"), "amdgpu9.0a", "amdgcn"),
			input: func(t *testing.T) []byte {
				var b []byte
				for _, im := range lmBinaryYAML {
					triple := strings.NewReplacer("amdgpu9.08", "amdgcn", "amdgpu9.0a", "amdgcn").Replace(im.strs[0].Value)
					ok := offload.OffloadNone
					if im.code == 1 {
						ok = offload.OffloadOpenMP
					}
					b = append(b, lmMarshal(t, 22, im.kind, ok, nil, "triple", triple, "arch", im.strs[1].Value)...)
				}
				return b
			}},
		{test: "tools/llvm-objdump/Offloading/binary.test, elf.test (ET_EXEC)", want: lmELFLine + lmBinaryListed,
			input: func(t *testing.T) []byte {
				return lmELF(t, elf.ET_EXEC, lmOffloading(lmBinary(t, 3, lmBinaryYAML...), 8))
			}},
		{test: "tools/llvm-objdump/Offloading/elf.test (ET_DYN)", want: lmELFLine + lmBinaryListed,
			input: func(t *testing.T) []byte {
				return lmELF(t, elf.ET_DYN, lmOffloading(lmBinary(t, 3, lmBinaryYAML...), 8))
			}},
		{test: "tools/llvm-objdump/Offloading/elf.test (ET_REL)", want: lmELFLine + lmBinaryListed,
			input: func(t *testing.T) []byte {
				return lmELF(t, elf.ET_REL, lmOffloading(lmBinary(t, 3, lmBinaryYAML...), 8))
			}},
		// The section's contents start at an odd offset: read all the same.
		{test: "tools/llvm-objdump/Offloading/alignment.test", want: lmELFLine + lmBinaryListed,
			input: func(t *testing.T) []byte {
				b := lmELF(t, elf.ET_EXEC,
					&elfobj.Section{Name: ".misaligned", Type: elf.SHT_PROGBITS, Addralign: 1, Data: []byte("ABC\x00")},
					lmOffloading(lmBinary(t, 3, lmBinaryYAML...), 1))
				f, err := elfobj.Read(bytes.NewReader(b), int64(len(b)))
				if err != nil {
					t.Fatal(err)
				}
				if s := f.Section(".llvm.offloading"); s == nil || s.Offset%8 == 0 {
					t.Fatalf("the section is aligned: %+v", s)
				}
				return b
			}},
		{test: "tools/llvm-objdump/Offloading/compressed.test (the binary itself)",
			want:  lmListed(0, "0", "cubin", "gfx90a", "amdgcn-amd-amdhsa", "hip", 4),
			input: func(*testing.T) []byte { return compressed(offloadbinary.Compression{Format: "zstd"}) }},
		{test: "tools/llvm-objdump/Offloading/compressed.test (ELF)",
			want: lmELFLine + lmListed(0, "0", "cubin", "gfx90a", "amdgcn-amd-amdhsa", "hip", 4),
			input: func(t *testing.T) []byte {
				return lmELF(t, elf.ET_REL, lmOffloading(compressed(offloadbinary.Compression{Format: "zstd"}), 8))
			}},
		{test: "tools/llvm-objdump/Offloading/failure.test", refused: goffload.ErrInvalid, says: []string{"while extracting offloading files"},
			input: func(t *testing.T) []byte {
				return lmELF(t, elf.ET_EXEC, lmOffloading([]byte{0x10, 0xff, 0xb0, 0xad}, 8))
			}},
		// Main stops at the bad binary after the good ones (22's warning
		// became an error when extractOffloadBinaries replaced the loop).
		{test: "tools/llvm-objdump/Offloading/warning.test", refused: goffload.ErrTruncated, field: "EntriesOffset",
			input: func(t *testing.T) []byte {
				bad := lmSet(deadbeef(23)(t), 16, 999999999) // Inputs/malformed.yaml
				return lmELF(t, elf.ET_EXEC, lmOffloading(append(lmBinary(t, 3, lmBinaryYAML...), bad...), 8))
			}},
		// A section past the end of the file: an elf FormatError matching
		// ErrTruncated, "past the end of the file".
		{test: "tools/llvm-objdump/Offloading/content-failure.test", refused: goffload.ErrTruncated, says: []string{"past the end of the file"},
			input: func(t *testing.T) []byte {
				b := lmELF(t, elf.ET_EXEC, &elfobj.Section{Name: ".llvm.offloading", Type: elf.SHT_PROGBITS, Flags: elfobj.SHF_EXCLUDE, Addralign: 8, Data: []byte{0}})
				f, err := elf.NewFile(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				for i, s := range f.Sections {
					if s.Name == ".llvm.offloading" {
						shoff := lmLE.Uint64(b[0x28:])
						lmLE.PutUint64(b[shoff+uint64(i)*64+24:], 0x99999) // ShOffset
					}
				}
				return b
			}},
		{test: "tools/llvm-objdump/Offloading/nested-offload-binary.test", want: nestedListed("0", "x-y-z") + nestedListed("1", "a-b-c"),
			input: func(t *testing.T) []byte {
				return lmBinary(t, 3,
					lmImage{kind: offload.ImageObject, code: 1, strs: lmStrings("triple", "x-y-z", "arch", "none"), data: inner},
					lmImage{kind: offload.ImageObject, code: 1, strs: lmStrings("triple", "a-b-c", "arch", "none"), data: inner})
			}},
		// An image of only the magic: main lists the image holding it (7
		// lines), then "failed to extract nested OffloadBinary: Invalid
		// data ..." (a warning there, refused here).
		{test: "tools/llvm-objdump/Offloading/nested-offload-binary-fails.test, nested-offload-binary-empty.test",
			want:    lmListed(0, "0", "elf", "none", "x-y-z", "openmp", 4),
			refused: goffload.ErrInvalid, says: []string{"failed to extract nested OffloadBinary"},
			input: func(t *testing.T) []byte {
				return lmBinary(t, 3, lmImage{kind: offload.ImageObject, code: 1, strs: lmStrings("triple", "x-y-z", "arch", "none"), data: offloadbinary.Magic[:]})
			}},
		// Main's objdump warns that it reads COFF and ELF only and lists
		// nothing; goffload reads 64-bit Mach-O and refuses this 32-bit one
		// as what it does not read.
		{test: "tools/llvm-objdump/Offloading/non-elf.test", refused: goffload.ErrUnsupported, says: []string{"a 32-bit Mach-O file"},
			input: func(*testing.T) []byte {
				var b []byte
				for _, v := range []uint32{0xfeedface, 7, 3, 1, 0, 0, 0x2000} {
					b = lmLE.AppendUint32(b, v)
				}
				return b
			}},

		// ObjectYAML/Offload: yaml2obj's binary, read back.
		{test: "ObjectYAML/Offload/binary.yaml", want: lmListed(0, "0", "cubin", "sm_70", "nvptx64-nvidia-cuda", "openmp", 4), input: deadbeef(23)},
		{test: "ObjectYAML/Offload/compressed.yaml", want: lmListed(0, "0", "cubin", "gfx90a", "amdgcn-amd-amdhsa", "hip", 4),
			input: func(*testing.T) []byte { return compressed(offloadbinary.Compression{Format: "zstd"}) }},
		{test: "ObjectYAML/Offload/compressed-zlib.yaml", want: lmListed(0, "0", "cubin", "gfx90a", "amdgcn-amd-amdhsa", "hip", 4),
			input: func(*testing.T) []byte { return compressed(offloadbinary.Compression{Format: "zlib"}) }},
		{test: "ObjectYAML/Offload/default.yaml", want: lmListed(0, "0", "<none>", "", "", "none", 0),
			input: func(t *testing.T) []byte { return lmBinary(t, 3, lmImage{}) }},
		{test: "ObjectYAML/Offload/enumeration_kinds.yaml",
			want: lmListed(0, "0", "<none>", "", "", "none", 0) + lmListed(0, "1", "elf", "", "", "openmp", 0) +
				lmListed(0, "2", "llvm ir", "", "", "cuda", 0) + lmListed(0, "3", "cubin", "", "", "hip", 0) +
				lmListed(0, "4", "fatbinary", "", "", "none", 0) + lmListed(0, "5", "ptx", "", "", "none", 0) +
				lmListed(0, "6", "<none>", "", "", "none", 0),
			input: func(t *testing.T) []byte {
				return lmBinary(t, 3, lmImage{}, lmImage{kind: offload.ImageObject, code: 1}, lmImage{kind: offload.ImageBitcode, code: 2},
					lmImage{kind: offload.ImageCubin, code: 4}, lmImage{kind: offload.ImageFatbinary}, lmImage{kind: offload.ImagePTX},
					lmImage{kind: 999, code: 999})
			}},
		{test: "ObjectYAML/Offload/multiple_members.yaml",
			want: lmListed(0, "0", "cubin", "sm_70", "nvptx64-nvidia-cuda", "openmp", 4) + lmListed(0, "1", "llvm ir", "gfx908", "amdgcn-amd-amdhsa", "openmp", 4),
			input: func(t *testing.T) []byte {
				return lmBinary(t, 3,
					lmImage{kind: offload.ImageCubin, code: 1, strs: lmStrings("triple", "nvptx64-nvidia-cuda", "arch", "sm_70"), data: lmDeadbeef},
					lmImage{kind: offload.ImageBitcode, code: 1, strs: lmStrings("triple", "amdgcn-amd-amdhsa", "arch", "gfx908"), data: []byte{0xca, 0xfe, 0xfe, 0xed}})
			}},
		// EntriesOffset 48 into a compressed binary's stream. Main says "The
		// end of the file was unexpectedly encountered"; offload refuses
		// it at EntriesOffset as invalid data (compress.go), so only the
		// field is checked.
		{test: "ObjectYAML/Offload/malformed-compressed-offset.yaml", refused: goffload.ErrTruncated, field: "EntriesOffset",
			input: func(*testing.T) []byte { return lmSet(compressed(offloadbinary.Compression{Format: "zstd"}), 16, 48) }},
		{test: "ObjectYAML/Offload/malformed-entries-count.yaml", refused: goffload.ErrTruncated, field: "EntriesCount",
			input: func(t *testing.T) []byte { return lmSet(deadbeef(23)(t), 24, 999999999) }},
		{test: "ObjectYAML/Offload/malformed-entry-size.yaml (version 1)", refused: goffload.ErrTruncated, field: "EntrySize",
			input: func(t *testing.T) []byte { return lmSet(deadbeef(22)(t), 24, 999999999) }},
		{test: "ObjectYAML/Offload/malformed-offset.yaml", refused: goffload.ErrTruncated, field: "EntriesOffset",
			input: func(t *testing.T) []byte { return lmSet(deadbeef(23)(t), 16, 999999999) }},
		{test: "ObjectYAML/Offload/malformed-offset.yaml (version 1: EntryOffset)", refused: goffload.ErrTruncated, field: "EntryOffset",
			input: func(t *testing.T) []byte { return lmSet(deadbeef(22)(t), 16, 999999999) }},
		{test: "ObjectYAML/Offload/malformed-size.yaml", refused: goffload.ErrTruncated, field: "Size",
			input: func(t *testing.T) []byte { return lmSet(deadbeef(23)(t), 8, 999999999) }},
		{test: "ObjectYAML/Offload/malformed-size.yaml (version 1)", refused: goffload.ErrTruncated, field: "Size",
			input: func(t *testing.T) []byte { return lmSet(deadbeef(22)(t), 8, 999999999) }},
		// The version after the newest the reader knows (3 for main; the
		// test sets 2 for a reader of 1 and 3 for one of 2), and 0.
		{test: "ObjectYAML/Offload/malformed-version.yaml (version 4)", refused: goffload.ErrInvalid, field: "Version",
			input: func(t *testing.T) []byte {
				b := deadbeef(23)(t)
				lmLE.PutUint32(b[4:], 4)
				return b
			}},
		{test: "ObjectYAML/Offload/malformed-version.yaml (version 0)", refused: goffload.ErrInvalid, field: "Version",
			input: func(t *testing.T) []byte {
				b := deadbeef(23)(t)
				lmLE.PutUint32(b[4:], 0)
				return b
			}},
		// What that test refused under the version-1 reader, main reads: a
		// version-2 binary (32-byte header, several entries).
		{test: "ObjectYAML/Offload/malformed-version.yaml (version 2, read by main)",
			want: lmListed(0, "0", "cubin", "sm_70", "nvptx64-nvidia-cuda", "openmp", 4) + lmListed(0, "1", "llvm ir", "gfx908", "amdgcn-amd-amdhsa", "openmp", 4),
			input: func(t *testing.T) []byte {
				return lmBinary(t, 2,
					lmImage{kind: offload.ImageCubin, code: 1, strs: lmStrings("triple", "nvptx64-nvidia-cuda", "arch", "sm_70"), data: lmDeadbeef},
					lmImage{kind: offload.ImageBitcode, code: 1, strs: lmStrings("triple", "amdgcn-amd-amdhsa", "arch", "gfx908"), data: []byte{0xca, 0xfe, 0xfe, 0xed}})
			}},
		{test: "ObjectYAML/Offload/malformed-entries-count.yaml (version 2)", refused: goffload.ErrTruncated, field: "EntriesCount",
			input: func(t *testing.T) []byte {
				return lmSet(lmBinary(t, 2, lmImage{kind: offload.ImageCubin, code: 1, data: lmDeadbeef}), 24, 999999999)
			}},

		// llvm-offload-binary: what it packages, listed by objdump.
		{test: "tools/llvm-offload-binary/llvm-offload-binary.ll (CHECK)", want: leaf(0, "0", "abc"),
			input: func(t *testing.T) []byte {
				return lmMarshal(t, 24, offload.ImageNone, offload.OffloadNone, lmSource, "arch", "abc", "triple", "x-y-z")
			}},
		{test: "tools/llvm-offload-binary/llvm-offload-binary.ll (NESTED)",
			want:  lmListed(0, "0", "<none>", "nested", "x-y-z", "none", len(t5)) + lmNested(0, 2) + leaf(1, "0.0", "abc") + leaf(1, "0.1", "def"),
			input: func(t *testing.T) []byte { return lmPackage(t, files, "file=t5,arch=nested,triple=x-y-z") }},
		{test: "tools/llvm-offload-binary/llvm-offload-binary.ll (NESTED2)",
			want: lmListed(0, "0", "<none>", "nested", "x-y-z", "none", len(t7)) + lmNested(0, 2) +
				leaf(1, "0.0", "abc") +
				lmListed(1, "0.1", "<none>", "nested", "x-y-z", "none", len(t5)) + lmNested(1, 2) + leaf(2, "0.1.0", "abc") + leaf(2, "0.1.1", "def") +
				lmListed(0, "1", "<none>", "nested2", "x-y-z", "none", len(t5)) + lmNested(0, 2) + leaf(1, "1.0", "abc") + leaf(1, "1.1", "def"),
			input: func(t *testing.T) []byte {
				return lmPackage(t, files, "file=t7,arch=nested,triple=x-y-z", "file=t5,arch=nested2,triple=x-y-z")
			}},
		{test: "tools/llvm-offload-binary/compress.test (CHECK)", want: leaf(0, "0", "abc"),
			input: func(t *testing.T) []byte {
				return lmCompressed(t, offload.ImageNone, offload.OffloadNone, lmSource, offloadbinary.Compression{Format: "zstd"}, "arch", "abc", "triple", "x-y-z")
			}},
		// A compressed binary then an uncompressed one: the second starts
		// at the next multiple of 8.
		{test: "tools/llvm-offload-binary/compress.test (CONCAT)", want: leaf(0, "0", "abc") + leaf(0, "1", "abc"),
			input: func(t *testing.T) []byte {
				return append(lmCompressed(t, offload.ImageNone, offload.OffloadNone, lmSource, offloadbinary.Compression{Format: "zstd"}, "arch", "abc", "triple", "x-y-z"),
					lmMarshal(t, 24, offload.ImageNone, offload.OffloadNone, lmSource, "arch", "abc", "triple", "x-y-z")...)
			}},
	}
}

// TestLLVMMainList lists the inputs of LLVM main's tests as main's
// llvm-objdump --offloading lists them, and refuses the malformed ones.
func TestLLVMMainList(t *testing.T) {
	dir := t.TempDir()
	for i, c := range lmCases(t) {
		t.Run(c.test, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("in%d.bin", i))
			in := c.input(t)
			if err := os.WriteFile(path, in, 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := cli(t, "list", "--llvm", "24", path)
			refused := c.refused != nil || c.field != "" || c.says != nil
			// Main's llvm-objdump prints an ELF file's format line before
			// its error; goffload prints nothing but the error.
			want := strings.ReplaceAll(c.want, "FILE", path)
			if stdout != want && !(refused && want == "" && bytes.HasPrefix(in, elfMagic)) {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
			}
			if !refused {
				if code != 0 {
					t.Errorf("exit %d: %s", code, stderr)
				}
				return
			}
			if code != 1 || !strings.Contains(stderr, path) {
				t.Fatalf("exit %d, want 1 with a message naming the input: %q", code, stderr)
			}
			says := slices.Clone(c.says)
			if c.refused != nil {
				says = append(says, c.refused.Error())
			}
			if c.field != "" {
				says = append(says, c.field)
			}
			for _, s := range says {
				if !strings.Contains(stderr, s) {
					t.Errorf("message %q does not say %q", stderr, s)
				}
			}
		})
	}
}

// TestLLVMMainRead reads the malformed raw binaries of TestLLVMMainList with
// the package as row 24 reads them: a FormatError at the field, of the
// typed error.
func TestLLVMMainRead(t *testing.T) {
	opt := &offloadbinary.ReadOptions{Release: lmRelease(t, 24)}
	// lmBinary lays one image out as the package's writer does.
	one := lmImage{kind: offload.ImageCubin, code: 1, strs: lmStrings("triple", "nvptx64-nvidia-cuda", "arch", "sm_70"), data: lmDeadbeef}
	if got, want := lmBinary(t, 3, one), lmMarshal(t, 24, offload.ImageCubin, offload.OffloadOpenMP, lmDeadbeef, "triple", "nvptx64-nvidia-cuda", "arch", "sm_70"); !bytes.Equal(got, want) {
		t.Errorf("lmBinary:\n% x\nMarshalBinary:\n% x", got, want)
	}
	for _, c := range lmCases(t) {
		if c.field == "" {
			continue
		}
		t.Run(c.test, func(t *testing.T) {
			b := c.input(t)
			if !bytes.HasPrefix(b, offloadbinary.Magic[:]) {
				t.Skip("an ELF file: list reads it")
			}
			_, err := offloadbinary.ReadAllBytes(b, opt)
			var fe *goffload.FormatError
			if !errors.As(err, &fe) || !strings.Contains(fe.Field, c.field) || c.refused != nil && !errors.Is(err, c.refused) {
				t.Errorf("%v, want a FormatError at %s matching %v", err, c.field, c.refused)
			}
		})
	}
}

// lmExtractCase is one extraction of an LLVM test (llvm-offload-binary
// without file=) as goffload extract --llvm 24 --raw runs it.
type lmExtractCase struct {
	test  string
	name  string // the input's file name: its stem names the files
	input func(t *testing.T) []byte
	args  []string
	// want are the files written, in the order of the Extracted lines, and
	// their bytes.
	want    [][2]string
	refused error
}

func lmExtractCases(t *testing.T) []lmExtractCase {
	src := string(lmSource)
	pkg := func(data []byte, arch string) []byte {
		return lmMarshal(t, 24, offload.ImageNone, offload.OffloadNone, data, "arch", arch, "triple", "x-y-z")
	}
	files, t5 := lmT5(t)
	bad := []byte("\x10\xff\x10\xad\n") // printf "\020\377\020\255\012"
	member := func(content string) string {
		return string(lmMarshal(t, 24, offload.ImageNone, offload.OffloadOpenMP, []byte(content), "triple", "x-y-z", "arch", "gfx90a"))
	}
	lib := func(t *testing.T) []byte {
		return lmArchive(t, [2]string{"a.o", member("aaaa\n")}, [2]string{"b.o", member("bbbb\n")})
	}
	compressed := func(c offloadbinary.Compression) func(*testing.T) []byte {
		return func(t *testing.T) []byte {
			return lmCompressed(t, offload.ImageNone, offload.OffloadNone, lmSource, c, "arch", "abc", "triple", "x-y-z")
		}
	}
	return []lmExtractCase{
		{test: "tools/llvm-offload-binary/llvm-offload-binary.ll (EXTRACT)", name: "t.bin",
			input: func(*testing.T) []byte { return pkg(lmSource, "abc") },
			want:  [][2]string{{"t-x-y-z-abc.0.", src}}},
		{test: "tools/llvm-offload-binary/llvm-offload-binary.ll (EXTRACT-NESTED)", name: "t6.bin",
			input: func(*testing.T) []byte { return pkg(t5, "nested") },
			want:  [][2]string{{"t6-x-y-z-abc.0.", src}, {"t6-x-y-z-def.1.", src}}},
		{test: "tools/llvm-offload-binary/llvm-offload-binary.ll (EXTRACT-MIXED)", name: "t7.bin",
			input: func(t *testing.T) []byte {
				return lmPackage(t, files, "file=t5,arch=nested,triple=x-y-z", "file="+lmSourceName+",arch=ghi,triple=x-y-z")
			},
			want: [][2]string{{"t7-x-y-z-abc.0.", src}, {"t7-x-y-z-def.1.", src}, {"t7-x-y-z-ghi.2.", src}}},
		{test: "tools/llvm-offload-binary/llvm-offload-binary.ll, llvm-offload-binary-malformed.ll (MALFORMED-OUTER)", name: "t9.bin",
			input: func(*testing.T) []byte { return bad }, refused: goffload.ErrInvalid},
		{test: "tools/llvm-offload-binary/llvm-offload-binary.ll, llvm-offload-binary-malformed.ll (MALFORMED-INNER)", name: "t10.bin",
			input: func(*testing.T) []byte { return pkg(bad, "nested") }, refused: goffload.ErrInvalid},
		// --image=arch=abc,triple=x-y-z: the image, inflated.
		{test: "tools/llvm-offload-binary/compress.test (zstd)", name: "c.bin", args: []string{"--arch", "abc", "--triple", "x-y-z"},
			input: compressed(offloadbinary.Compression{Format: "zstd"}), want: [][2]string{{"c-x-y-z-abc.0.", src}}},
		{test: "tools/llvm-offload-binary/compress.test (zstd, --compression-level=-5)", name: "c.bin", args: []string{"--arch", "abc", "--triple", "x-y-z"},
			input: compressed(offloadbinary.Compression{Format: "zstd", Level: -5}), want: [][2]string{{"c-x-y-z-abc.0.", src}}},
		{test: "tools/llvm-offload-binary/compress-level-zlib.test", name: "c.bin", args: []string{"--arch", "abc", "--triple", "x-y-z"},
			input: compressed(offloadbinary.Compression{Format: "zlib", Level: 9}), want: [][2]string{{"c-x-y-z-abc.0.", src}}},
		// member=NAME selects archive members by name.
		{test: "tools/llvm-offload-binary/member-extract.test (member=a.o)", name: "lib.a", input: lib,
			args: []string{"--member", "a.o", "--triple", "x-y-z", "--arch", "gfx90a", "--kind", "openmp"},
			want: [][2]string{{"lib-x-y-z-gfx90a.0.", "aaaa\n"}}},
		{test: "tools/llvm-offload-binary/member-extract.test (member=b.o)", name: "lib.a", input: lib,
			args: []string{"--member", "b.o", "--triple", "x-y-z", "--arch", "gfx90a", "--kind", "openmp"},
			want: [][2]string{{"lib-x-y-z-gfx90a.0.", "bbbb\n"}}},
		// Without member= the filter matches both.
		{test: "tools/llvm-offload-binary/member-extract.test (no member)", name: "lib.a", input: lib,
			args: []string{"--triple", "x-y-z", "--arch", "gfx90a", "--kind", "openmp"},
			want: [][2]string{{"lib-x-y-z-gfx90a.0.", "aaaa\n"}, {"lib-x-y-z-gfx90a.1.", "bbbb\n"}}},
		// yaml2obj's binaries: the images are their Content.
		{test: "ObjectYAML/Offload/binary.yaml", name: "y.bin",
			input: func(t *testing.T) []byte {
				return lmMarshal(t, 24, offload.ImageCubin, offload.OffloadOpenMP, lmDeadbeef, "triple", "nvptx64-nvidia-cuda", "arch", "sm_70")
			},
			want: [][2]string{{"y-nvptx64-nvidia-cuda-sm_70.0.cubin", string(lmDeadbeef)}}},
		{test: "ObjectYAML/Offload/compressed.yaml, compressed-zlib.yaml", name: "y.bin",
			input: func(t *testing.T) []byte {
				return append(lmCompressed(t, offload.ImageCubin, offload.OffloadHIP, lmDeadbeef, offloadbinary.Compression{Format: "zstd"}, "triple", "amdgcn-amd-amdhsa", "arch", "gfx90a"),
					lmCompressed(t, offload.ImageCubin, offload.OffloadHIP, lmDeadbeef, offloadbinary.Compression{Format: "zlib"}, "triple", "amdgcn-amd-amdhsa", "arch", "gfx90a")...)
			},
			want: [][2]string{{"y-amdgcn-amd-amdhsa-gfx90a.0.cubin", string(lmDeadbeef)}, {"y-amdgcn-amd-amdhsa-gfx90a.1.cubin", string(lmDeadbeef)}}},
		{test: "ObjectYAML/Offload/multiple_members.yaml", name: "y.bin",
			input: func(t *testing.T) []byte {
				return lmBinary(t, 3,
					lmImage{kind: offload.ImageCubin, code: 1, strs: lmStrings("triple", "nvptx64-nvidia-cuda", "arch", "sm_70"), data: lmDeadbeef},
					lmImage{kind: offload.ImageBitcode, code: 1, strs: lmStrings("triple", "amdgcn-amd-amdhsa", "arch", "gfx908"), data: []byte{0xca, 0xfe, 0xfe, 0xed}})
			},
			want: [][2]string{{"y-nvptx64-nvidia-cuda-sm_70.0.cubin", string(lmDeadbeef)}, {"y-amdgcn-amd-amdhsa-gfx908.1.bc", "\xca\xfe\xfe\xed"}}},
	}
}

// TestLLVMMainExtract extracts the inputs of LLVM main's tests as main's
// llvm-offload-binary extracts them without file=: every leaf image (nested
// binaries recursed into) as STEM-TRIPLE[-ARCH].IDX.KIND, one "Extracted:"
// line each.
func TestLLVMMainExtract(t *testing.T) {
	for _, c := range lmExtractCases(t) {
		t.Run(c.test, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.name)
			if err := os.WriteFile(path, c.input(t), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			args := append(append([]string{"extract", "--llvm", "24", "--raw"}, c.args...), "-o", out, path)
			stdout, stderr, code := cli(t, args...)
			if c.refused != nil {
				if code != 1 || !strings.Contains(stderr, c.refused.Error()) || !strings.Contains(stderr, path) {
					t.Errorf("exit %d %q, want 1 and %q", code, stderr, c.refused)
				}
				if ents, _ := os.ReadDir(out); len(ents) > 0 {
					t.Errorf("refused, yet wrote %d files", len(ents))
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var want strings.Builder
			for _, f := range c.want {
				fmt.Fprintf(&want, "Extracted: %s\n", f[0])
			}
			if stdout != want.String() {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want.String())
			}
			ents, _ := os.ReadDir(out)
			if len(ents) != len(c.want) {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("wrote %q", names)
			}
			for _, f := range c.want {
				if got, err := os.ReadFile(filepath.Join(out, f[0])); err != nil || string(got) != f[1] {
					t.Errorf("%s: %q, %v; want %q", f[0], got, err, f[1])
				}
			}
		})
	}
}

// TestLLVMMainMetadata: an entry with OIF_Metadata (bit 0 of Flags: strings,
// no image), as LLVM's unit test OffloadingTest.checkMultiEntryBinaryExtraction
// (llvm/unittests/Object/OffloadingTest.cpp) makes it: five entries, the
// last metadata-only with an empty image. Main's llvm-objdump lists it as
// any entry (image size 0 bytes); list --json marks it "metadata" under
// --llvm 24, and not under --llvm 22, which knows no such flag.
func TestLLVMMainMetadata(t *testing.T) {
	var ims []lmImage
	var want strings.Builder
	kinds := []string{"<none>", "elf", "llvm ir", "cubin", "fatbinary"}
	producers := []string{"none", "openmp", "cuda", "none", "hip"} // 3 is no kind in main
	for i := range 5 {
		im := lmImage{kind: offload.ImageKind(i), code: uint16(i), flags: uint32(i * 100), strs: lmStrings("id", fmt.Sprint(i), "arch", fmt.Sprintf("gpu%d", i)),
			data: fmt.Appendf(nil, "ImageData%d", i)}
		if i == 4 {
			im.flags, im.data = offloadbinary.FlagMetadata, nil
		}
		ims = append(ims, im)
		want.WriteString(lmListed(0, fmt.Sprint(i), kinds[i], fmt.Sprintf("gpu%d", i), "", producers[i], len(im.data)))
	}
	path := filepath.Join(t.TempDir(), "multi.bin")
	if err := os.WriteFile(path, lmBinary(t, 3, ims...), 0o644); err != nil {
		t.Fatal(err)
	}
	if stdout, stderr, code := cli(t, "list", "--llvm", "24", path); code != 0 || stdout != want.String() {
		t.Errorf("exit %d %s\n%s\nwant\n%s", code, stderr, stdout, want.String())
	}
	var got struct {
		Images []struct {
			Flags     uint32 `json:"flags"`
			Metadata  *bool  `json:"metadata"`
			ImageSize uint64 `json:"image_size"`
		} `json:"images"`
	}
	stdout, stderr, code := cli(t, "list", "--llvm", "24", "--json", path)
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 0 || len(got.Images) != 5 {
		t.Fatalf("--json: exit %d %s %v\n%s", code, stderr, err, stdout)
	}
	for i, im := range got.Images {
		if meta := im.Metadata != nil && *im.Metadata; meta != (i == 4) || im.Flags != ims[i].flags || im.ImageSize != uint64(len(ims[i].data)) {
			t.Errorf("image %d: flags %d metadata %v size %d", i, im.Flags, im.Metadata, im.ImageSize)
		}
	}
	// Read as LLVM 22 reads a version-1 binary with the same flag.
	v1 := filepath.Join(t.TempDir(), "v1.bin")
	b := lmMarshal(t, 22, offload.ImageObject, offload.OffloadOpenMP, nil, "triple", "x86_64-unknown-linux-gnu", "arch", "generic")
	lmLE.PutUint32(b[offloadbinary.HeaderSize+4:], offloadbinary.FlagMetadata)
	if err := os.WriteFile(v1, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		llvm string
		meta bool
	}{{"22", false}, {"23", true}, {"24", true}} {
		stdout, stderr, code := cli(t, "list", "--llvm", c.llvm, "--json", v1)
		if code != 0 || strings.Contains(stdout, `"metadata": true`) != c.meta || !strings.Contains(stdout, `"flags": 1`) {
			t.Errorf("--llvm %s --json: exit %d %s\n%s", c.llvm, code, stderr, stdout)
		}
	}
}

// TestLLVMMainCompressionLevel: compress-level-zlib.test's refusal of
// zlib level 12, in llvm-offload-binary's words.
func TestLLVMMainCompressionLevel(t *testing.T) {
	im := offloadbinary.Image{Strings: lmStrings("arch", "abc", "triple", "x-y-z")}
	var buf bytes.Buffer
	_, err := offloadbinary.WriteCompressedBinary(&buf, lmRelease(t, 24), &im, bytes.NewReader(lmSource), int64(len(lmSource)), offloadbinary.Compression{Format: "zlib", Level: 12})
	if err == nil || !strings.Contains(err.Error(), "invalid zlib compression level 12; expected a value in [0, 9]") {
		t.Errorf("zlib level 12: %v", err)
	}
}

// TestLLVMMainWrapper: llvm-offload-wrapper/offload-wrapper.ll's checks of
// the compiled OpenMP wrapper for x86_64-unknown-linux-gnu (OMP-SECTION:
// llvm_offload_entries is PROGBITS, flags "AR", SHF_ALLOC and
// SHF_GNU_RETAIN; OMP-RELOCATABLE: under --relocatable the image goes in
// .llvm.offloading.relocatable) on goffload wrap --llvm 24 of a version-3
// binary, which list then finds in either section.
func TestLLVMMainWrapper(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "image.bin")
	data := lmMarshal(t, 24, offload.ImageObject, offload.OffloadOpenMP, lmSource, "triple", "x86_64-unknown-linux-gnu", "arch", "generic")
	if err := os.WriteFile(bin, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags   []string
		section string
	}{{nil, ".llvm.offloading"}, {[]string{"-r"}, ".llvm.offloading.relocatable"}} {
		out := filepath.Join(dir, "wrapper.o")
		args := append(append([]string{"wrap", "--llvm", "24", "--kind", "openmp", "--triple", "x86_64-unknown-linux-gnu"}, c.flags...), "-o", out, bin)
		if _, stderr, code := cli(t, args...); code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		f, err := elfobj.Read(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		const allocRetain = elf.SHF_ALLOC | 0x200000 // "AR": SHF_ALLOC, SHF_GNU_RETAIN
		if s := f.Section("llvm_offload_entries"); s == nil || s.Type != elf.SHT_PROGBITS || s.Flags&allocRetain != allocRetain {
			t.Errorf("%v: llvm_offload_entries %+v, want PROGBITS, flags AR", c.flags, s)
		}
		s := f.Section(c.section)
		if s == nil || s.Type != elfobj.SHT_LLVM_OFFLOADING {
			t.Fatalf("%v: no %s", c.flags, c.section)
		}
		if got, err := s.Data(); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%v: %s holds %d bytes, not the binary (%v)", c.flags, c.section, len(got), err)
		}
		want := strings.ReplaceAll(lmELFLine, "elf64-unknown", "elf64-x86-64") + lmListed(0, "0", "elf", "generic", "x86_64-unknown-linux-gnu", "openmp", len(lmSource))
		if stdout, stderr, code := cli(t, "list", "--llvm", "24", out); code != 0 || stdout != strings.ReplaceAll(want, "FILE", out) {
			t.Errorf("%v: list: exit %d %s\n%s", c.flags, code, stderr, stdout)
		}
	}
}

// Not reproduced:
//
//   - llvm-objdump/Offloading/coff.test: a COFF object; goffload reads ELF
//     files (and archives of them) only.
//   - llvm-objdump/Offloading/fatbin*.test: HIP offload bundles (CCOB) in
//     .hip_fatbin, no OffloadBinary of version 3 or nested.
//   - llvm-offload-binary.ll's --image=file=%t8,arch=nested (diff %t5 %t8)
//     and member-extract.test's file= and "Multiple inputs match to a
//     single file": goffload extract has no file= (one named output).
//   - llvm-offload-binary/ignore-shared-object.ll: needs clang -shared, and
//     its check is `|| true`: it asserts nothing.
//   - llvm-offload-wrapper/offload-wrapper.ll but OMP-SECTION and
//     OMP-RELOCATABLE (TestLLVMMainWrapper), and coff-opt-ref.ll: the
//     wrapper's IR (llvm-dis), COFF ($OA/$OZ) and Mach-O sections and
//     lld-link's map; goffload wrap writes ELF objects.
