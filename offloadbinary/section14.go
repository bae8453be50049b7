package offloadbinary

import "strings"

// ImageSectionPrefix starts the names of the sections in which clang 14's
// experimental -fopenmp-new-driver put each device image of an object, raw
// (no OffloadBinary around it): ".llvm.offloading.<triple>.<arch>.<stem>",
// SHT_PROGBITS, SHF_ALLOC, aligned to 16 (measured with clang 14.0.6; the
// arch is empty for a host-device target).
const ImageSectionPrefix = ".llvm.offloading."

// ParseImageSection splits the name of such a section into the image's
// triple and arch and the stem of the source file. The triple and the arch
// end at the first and second '.' after the prefix, as clang 14 wrote no
// triple or arch with a dot. The section of OffloadBinaries,
// ".llvm.offloading" itself, and names without the three parts give ok
// false.
func ParseImageSection(name string) (triple, arch, stem string, ok bool) {
	rest, found := strings.CutPrefix(name, ImageSectionPrefix)
	if !found {
		return "", "", "", false
	}
	parts := strings.SplitN(rest, ".", 3)
	if len(parts) != 3 || parts[0] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}
