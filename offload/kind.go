package offload

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/release"
)

// ImageKind is the kind of a device image (`TheImageKind`,
// docs/offload-binary.md#image-kinds). Its values are the same in every
// release.
type ImageKind uint16

const (
	ImageNone      ImageKind = 0 // IMG_None
	ImageObject    ImageKind = 1 // IMG_Object: an ELF object
	ImageBitcode   ImageKind = 2 // IMG_Bitcode: LLVM IR
	ImageCubin     ImageKind = 3 // IMG_Cubin
	ImageFatbinary ImageKind = 4 // IMG_Fatbinary
	ImagePTX       ImageKind = 5 // IMG_PTX
	// ImageSPIRV is IMG_SPIRV, declared from LLVM 22. The 22.1.8 packager does not
	// map `.spv` to it and llvm-objdump 22 prints it as `<none>`.
	ImageSPIRV ImageKind = 6
)

// imageKindNames are llvm-objdump's names (OffloadDump.cpp) and getImageKindName's
// file extensions.
var imageKindNames = [...]struct{ dump, ext string }{
	ImageNone:      {"<none>", ""},
	ImageObject:    {"elf", "o"},
	ImageBitcode:   {"llvm ir", "bc"},
	ImageCubin:     {"cubin", "cubin"},
	ImageFatbinary: {"fatbinary", "fatbin"},
	ImagePTX:       {"ptx", "s"},
}

// String returns the name llvm-objdump --offloading prints for k: "elf",
// "llvm ir", "cubin", "fatbinary", "ptx", or "<none>" for any other value.
func (k ImageKind) String() string {
	if int(k) < len(imageKindNames) {
		return imageKindNames[k].dump
	}
	return "<none>"
}

// Extension returns the file extension (without the dot) that LLVM gives an image
// of kind k when it writes it out: "o", "bc", "cubin", "fatbin", "s", or "".
func (k ImageKind) Extension() string {
	if int(k) < len(imageKindNames) {
		return imageKindNames[k].ext
	}
	return ""
}

// ImageKindFromExtension returns the kind that clang-offload-packager gives a file
// with extension ext (with or without the leading dot); unknown extensions give
// ImageNone. It does not look at the contents: see [DetectImageKind].
func ImageKindFromExtension(ext string) ImageKind {
	ext = strings.TrimPrefix(ext, ".")
	for k, n := range imageKindNames {
		if k != int(ImageNone) && n.ext == ext {
			return ImageKind(k)
		}
	}
	return ImageNone
}

// ImageKindName returns the name release r's llvm-objdump --offloading
// prints for k: [ImageKind.String], and "spir-v" for ImageSPIRV where the
// release names it (r.SPIRVImages). A nil r is the default release.
func ImageKindName(r *release.Release, k ImageKind) string {
	if k == ImageSPIRV && r != nil && r.Main.SPIRVImages {
		return "spir-v"
	}
	return k.String()
}

// ImageKindExtension returns the extension release r's tools give an image
// of kind k: [ImageKind.Extension], and "spv" for ImageSPIRV where the
// release names it. A nil r is the default release.
func ImageKindExtension(r *release.Release, k ImageKind) string {
	if k == ImageSPIRV && r != nil && r.Main.SPIRVImages {
		return "spv"
	}
	return k.Extension()
}

// DetectImageKind returns the kind release r's clang-offload-packager gives
// the file name whose contents start with head: LLVM bitcode (raw `BC C0 DE`
// or the wrapper magic `DE C0 17 0B`) whatever the extension, else the kind
// of the extension, ImageSPIRV for a .spv file only where the release names
// that kind. A nil r knows no SPIR-V.
func DetectImageKind(r *release.Release, name string, head []byte) ImageKind {
	if bitcode.IsBitcode(head) {
		return ImageBitcode
	}
	k := ImageKindFromExtension(extension(name))
	if k == ImageNone && r != nil && r.Main.SPIRVImages && extension(name) == "spv" {
		return ImageSPIRV
	}
	return k
}

// ParseImageKind parses an image kind from its llvm-objdump name ("elf"), its
// extension ("o"), its enumerator ("IMG_Object") or a number.
func ParseImageKind(s string) (ImageKind, error) {
	for k, n := range imageKindNames {
		if s == n.dump || (s == n.ext && s != "") {
			return ImageKind(k), nil
		}
	}
	switch strings.ToLower(strings.TrimPrefix(s, "IMG_")) {
	case "none":
		return ImageNone, nil
	case "object":
		return ImageObject, nil
	case "bitcode":
		return ImageBitcode, nil
	case "cubin":
		return ImageCubin, nil
	case "fatbinary":
		return ImageFatbinary, nil
	case "ptx":
		return ImagePTX, nil
	case "spirv", "spv":
		return ImageSPIRV, nil
	}
	if n, err := strconv.ParseUint(s, 0, 16); err == nil {
		return ImageKind(n), nil
	}
	return 0, fmt.Errorf("image kind %q: %w", s, ErrUnknownKind)
}

// OffloadKind is the producer of an image: the offloading model
// (docs/offload-binary.md#offload-kinds). It is a logical value; its number in
// a binary depends on the release, see [OffloadKindCode].
type OffloadKind uint8

const (
	OffloadNone   OffloadKind = iota // OFK_None
	OffloadOpenMP                    // OFK_OpenMP
	OffloadCUDA                      // OFK_Cuda
	OffloadHIP                       // OFK_HIP
	OffloadSYCL                      // OFK_SYCL, from LLVM 21
)

var offloadKindNames = [...]string{"none", "openmp", "cuda", "hip", "sycl"}

// String returns LLVM's getOffloadKindName: "none", "openmp", "cuda", "hip" or "sycl".
func (k OffloadKind) String() string { return enumName(offloadKindNames[:], int(k), "OffloadKind") }

// ParseOffloadKind parses a kind name in any release's vocabulary ("openmp",
// "cuda", "hip", "sycl", "none"). For the packager's own rule, under which an
// unknown name or one the release lacks is none, use [OffloadKindByName].
func ParseOffloadKind(s string) (OffloadKind, error) {
	for k, n := range offloadKindNames {
		if s == n {
			return OffloadKind(k), nil
		}
	}
	return 0, fmt.Errorf("offload kind %q: %w", s, ErrUnknownKind)
}

// OffloadKindCode returns the number release r writes for kind k, and false if
// the release has no such kind (SYCL before 21).
func OffloadKindCode(r *release.Release, k OffloadKind) (uint16, bool) {
	switch k {
	case OffloadNone:
		return 0, true
	case OffloadOpenMP:
		return 1, true
	case OffloadCUDA:
		return 2, true
	case OffloadHIP:
		return r.Kinds.HIP, true
	case OffloadSYCL:
		return r.Kinds.SYCL, r.Kinds.SYCL != 0
	}
	return 0, false
}

// OffloadKindOf returns the kind that release r reads from code; a number the
// release does not define is OffloadNone, as getOffloadKindName prints it.
func OffloadKindOf(r *release.Release, code uint16) OffloadKind {
	for k := OffloadOpenMP; k <= OffloadSYCL; k++ {
		if c, ok := OffloadKindCode(r, k); ok && c == code {
			return k
		}
	}
	return OffloadNone
}

// OffloadKindByName is the packager's getOffloadKind: the kind named s, or
// OffloadNone for a name release r does not know (including "sycl" before 21).
func OffloadKindByName(r *release.Release, s string) OffloadKind {
	k, err := ParseOffloadKind(s)
	if err != nil {
		return OffloadNone
	}
	if _, ok := OffloadKindCode(r, k); !ok {
		return OffloadNone
	}
	return k
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
