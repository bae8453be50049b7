package bundle

import (
	"fmt"
	"io"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/release"
)

// HIPAlign is the -bundle-align that clang-linker-wrapper gives
// clang-offload-bundler for a HIP fatbin (docs/bundles.md#hip-fatbin).
const HIPAlign = 4096

// HIPReleases returns the rows of the releases whose clang-linker-wrapper
// has clang-offload-bundler write a HIP fatbin (17–24, their
// [release.Bundle] facts), oldest first.
func HIPReleases() []*release.Release {
	return release.Where(hasHIPFatbin).Rows()
}

func hasHIPFatbin(r *release.Release) bool { return r.Bundle.HIPFatbin.DeviceKind != "" }

// CheckRelease returns nil where release r's clang-linker-wrapper bundles
// HIP fatbins (see [HIPReleases]), and an error matching
// [goffload.ErrUnsupported] for another release (15, 16: their wrapper
// makes no HIP fatbin this package knows).
func CheckRelease(r *release.Release) error {
	if hasHIPFatbin(r) {
		return nil
	}
	return fmt.Errorf("offload bundle: the HIP fatbin of %v: %w (%v has one)", r, goffload.ErrUnsupported, release.Where(hasHIPFatbin))
}

// DeviceID returns the ID of the device entry for an AMDGPU target ID such as
// "gfx90a" or "gfx90a:xnack+": the wrapper passes it in -targets as
// <kind>-<triple>--<target id>, and every release's bundler writes it
// unchanged. The triple is amdgcn-amd-amdhsa up to 23; LLVM main after 23
// names the processor in it (amdgpu9.0a-amd-amdhsa for gfx90a, see
// [release.Release.AMDGPUTriple]).
func DeviceID(r *release.Release, targetID string) string {
	return r.Bundle.HIPFatbin.DeviceKind + "-" + r.AMDGPUTriple(targetID) + "--" + targetID
}

// CodeObject is the code object of one AMDGPU target ID in a HIP fatbin.
type CodeObject struct {
	TargetID string // "gfx90a", "gfx90a:xnack+", ...
	Data     *io.SectionReader
}

// HIPInputs returns the inputs of the fatbin that clang-linker-wrapper
// bundles for images: the empty host entry (its input is /dev/null), then
// one entry per image, in order.
func HIPInputs(r *release.Release, images []CodeObject) []Input {
	in := make([]Input, 0, 1+len(images))
	in = append(in, Input{ID: r.Bundle.HIPFatbin.HostID})
	for _, im := range images {
		in = append(in, Input{ID: DeviceID(r, im.TargetID), Data: im.Data})
	}
	return in
}

// WriteHIPFatbin writes the uncompressed HIP fatbin of images, byte for byte
// what release r's clang-linker-wrapper has clang-offload-bundler write.
func WriteHIPFatbin(w io.Writer, r *release.Release, images []CodeObject) error {
	if err := CheckRelease(r); err != nil {
		return err
	}
	return Write(w, HIPAlign, HIPInputs(r, images))
}

// HIPFatbin returns the fatbin that WriteHIPFatbin writes as a reader (see
// [NewReader]): what wrap.GPU embeds without the fatbin being written
// anywhere first.
func HIPFatbin(r *release.Release, images []CodeObject) (*io.SectionReader, error) {
	if err := CheckRelease(r); err != nil {
		return nil, err
	}
	return NewReader(HIPAlign, HIPInputs(r, images))
}
