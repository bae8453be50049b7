package machoobj

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/objfmt"
)

// ForTriple returns an empty object for the host triple, which must be one
// whose objects LLVM makes in Mach-O (an Apple system:
// "x86_64-apple-macosx10.15.0", "arm64-apple-macos", "arm64-apple-ios15")
// of an architecture this package writes: x86_64 or arm64 (aarch64). The
// object has MH_SUBSECTIONS_VIA_SYMBOLS, as clang and llc set it, and the
// deployment target that llc gives the triple: none when the triple names
// no OS version; else LC_BUILD_VERSION, but on macOS before 10.14 and
// iOS and tvOS before 12 an LC_VERSION_MIN_* command, and on arm64 macOS
// no earlier than 11.0. A triple of another format, architecture or
// system (watchOS, whose versions LLVM remaps, is not written) gives an
// error matching goffload.ErrUnsupported.
func ForTriple(triple string) (*Object, error) {
	if f := objfmt.Of(triple); f != "Mach-O" {
		return nil, fmt.Errorf("triple %q: LLVM makes %s objects for it, not Mach-O: %w", triple, f, goffload.ErrUnsupported)
	}
	parts := strings.Split(strings.ToLower(triple), "-")
	o := &Object{Flags: MH_SUBSECTIONS_VIA_SYMBOLS}
	switch parts[0] {
	case "x86_64", "amd64":
		o.Cpu, o.SubCpu = CpuAmd64, CPU_SUBTYPE_X86_64_ALL
	case "arm64", "aarch64":
		o.Cpu, o.SubCpu = CpuArm64, CPU_SUBTYPE_ARM64_ALL
	default:
		return nil, fmt.Errorf("triple %q: architecture %q is not one of x86_64, arm64: %w", triple, parts[0], goffload.ErrUnsupported)
	}
	v, err := versionOf(triple, parts, o.Cpu == CpuArm64)
	if err != nil {
		return nil, err
	}
	o.Version = v
	return o, nil
}

// platforms maps an OS name of a triple to its LC_BUILD_VERSION platform,
// its LC_VERSION_MIN_* command, and the first version given a build
// version (LLVM's MCStreamer::emitVersionForTarget).
var platforms = []struct {
	prefix   string
	platform uint32
	minCmd   uint32
	build    uint32 // first version with LC_BUILD_VERSION
}{
	{"macosx", PLATFORM_MACOS, LC_VERSION_MIN_MACOSX, 0x000a0e00},
	{"macos", PLATFORM_MACOS, LC_VERSION_MIN_MACOSX, 0x000a0e00},
	{"darwin", PLATFORM_MACOS, LC_VERSION_MIN_MACOSX, 0x000a0e00},
	{"ios", PLATFORM_IOS, LC_VERSION_MIN_IPHONEOS, 0x000c0000},
	{"tvos", PLATFORM_TVOS, LC_VERSION_MIN_TVOS, 0x000c0000},
	{"xros", PLATFORM_XROS, 0, 0},
}

// versionOf returns the deployment target of the triple's OS part.
func versionOf(triple string, parts []string, arm64 bool) (*Version, error) {
	for _, p := range parts[1:] {
		for _, pl := range platforms {
			rest, ok := strings.CutPrefix(p, pl.prefix)
			if !ok || rest != "" && (rest[0] < '0' || rest[0] > '9') {
				continue
			}
			if rest == "" {
				return nil, nil
			}
			if pl.prefix == "darwin" {
				// darwinN is macOS 10.(N-4); LLVM maps darwin20 on to 11.
				return nil, fmt.Errorf("triple %q: a darwin version: %w (name the system: macosx10.15.0)", triple, goffload.ErrUnsupported)
			}
			v, err := encodeVersion(rest)
			if err != nil {
				return nil, fmt.Errorf("triple %q: %w", triple, err)
			}
			if arm64 && pl.platform == PLATFORM_MACOS && v < 0x000b0000 {
				v = 0x000b0000
			}
			if v >= pl.build && pl.build != 0 || pl.minCmd == 0 {
				return &Version{Cmd: LC_BUILD_VERSION, Platform: pl.platform, Min: v}, nil
			}
			return &Version{Cmd: pl.minCmd, Min: v}, nil
		}
	}
	return nil, fmt.Errorf("triple %q: no Apple system in it: %w", triple, goffload.ErrUnsupported)
}

// encodeVersion encodes "10.15.0" as 0x000a0f00.
func encodeVersion(s string) (uint32, error) {
	f := strings.Split(s, ".")
	if len(f) > 3 {
		return 0, fmt.Errorf("version %q: %w", s, goffload.ErrInvalid)
	}
	var n [3]uint64
	for i, x := range f {
		v, err := strconv.ParseUint(x, 10, 16)
		if err != nil || i > 0 && v > 255 {
			return 0, fmt.Errorf("version %q: %w", s, goffload.ErrInvalid)
		}
		n[i] = v
	}
	return uint32(n[0]<<16 | n[1]<<8 | n[2]), nil
}
