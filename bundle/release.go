package bundle

import (
	"fmt"
	"io"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/facts"
	"github.com/goffload/goffload/offload"
)

// HIPAlign is the -bundle-align that clang-linker-wrapper gives
// clang-offload-bundler for a HIP fatbin (docs/bundles.md#hip-fatbin).
const HIPAlign = 4096

// Release holds what one LLVM release's clang-linker-wrapper asks of
// clang-offload-bundler for a HIP fatbin, and what the bundler then writes: a
// view of the release table's row ([offload.LookupRelease]).
type Release struct {
	// Major is the LLVM major version.
	Major int
	// Tested is the Debian package version whose clang-offload-bundler and
	// clang-linker-wrapper produced the row, or "" when the row is inferred
	// from the upstream history (17, 18, 20, 21: no bundler of those releases
	// was run for this package).
	Tested string
	// HostTarget is the host entry of the wrapper's -targets (hardcoded in
	// clang-linker-wrapper, whatever the host); HostID the ID the bundler
	// writes for it. From LLVM 17 (D145770; measured on 19 and 22) the
	// bundler rewrites every -targets entry as
	// <kind>-<arch>-<vendor>-<os>-<env>-<target id>, so a three-field host
	// triple gains "--" and a four-field one "-". (The bundler of 19 mangles
	// a target that already ends in '-': give it HostTarget, not HostID.)
	HostTarget, HostID string
	// DeviceKind is the offload kind of the device entries: "hipv4" up to 18,
	// "hip" from 19.
	DeviceKind string
	// CompressedVersion is the compressed bundle version the bundler writes
	// with -compress (19.1.7 writes 2, 22 writes 3; COMPRESSED_BUNDLE_FORMAT_VERSION
	// selects 2 or 3 in 22); 0 for a release without -compress.
	CompressedVersion uint16

	row *offload.Release // the release table's row: its AMDGPU triples
}

// fromOffload returns the bundle facts of a row of the release table, and
// false for a release without them.
func fromOffload(r *offload.Release) (Release, bool) {
	h := facts.Of(r).Bundle.HIPFatbin
	if h.DeviceKind == "" {
		return Release{}, false
	}
	out := Release{Major: r.Major, HostTarget: h.HostTarget, HostID: h.HostID, DeviceKind: h.DeviceKind, CompressedVersion: h.CompressedVersion, row: r}
	if h.Measured {
		out.Tested = facts.Of(r).Tested
	}
	return out, true
}

// Releases returns the rows of the releases with HIP fatbin facts (17–24),
// oldest first.
func Releases() []Release {
	var out []Release
	for _, r := range offload.Releases() {
		if b, ok := fromOffload(r); ok {
			out = append(out, b)
		}
	}
	return out
}

// LookupRelease returns the row of LLVM release major, or an error matching
// [goffload.ErrUnknownRelease].
func LookupRelease(major int) (*Release, error) {
	if r, err := offload.LookupRelease(major); err == nil {
		if b, ok := fromOffload(r); ok {
			return &b, nil
		}
	}
	rows := Releases()
	return nil, fmt.Errorf("offload bundle: major version %d: %w (HIP fatbin rows are %d to %d)",
		major, goffload.ErrUnknownRelease, rows[0].Major, rows[len(rows)-1].Major)
}

// DeviceID returns the ID of the device entry for an AMDGPU target ID such as
// "gfx90a" or "gfx90a:xnack+": the wrapper passes it in -targets as
// <kind>-<triple>--<target id>, and every release's bundler writes it
// unchanged. The triple is amdgcn-amd-amdhsa up to 23; LLVM main after 23
// names the processor in it (amdgpu9.0a-amd-amdhsa for gfx90a, see
// [offload.Release.AMDGPUTriple]).
func (r *Release) DeviceID(targetID string) string {
	triple := "amdgcn-amd-amdhsa"
	if r.row != nil {
		triple = r.row.AMDGPUTriple(targetID)
	}
	return r.DeviceKind + "-" + triple + "--" + targetID
}

// CodeObject is the code object of one AMDGPU target ID in a HIP fatbin.
type CodeObject struct {
	TargetID string // "gfx90a", "gfx90a:xnack+", ...
	Data     *io.SectionReader
}

// HIPInputs returns the inputs of the fatbin that clang-linker-wrapper
// bundles for images: the empty host entry (its input is /dev/null), then
// one entry per image, in order.
func (r *Release) HIPInputs(images []CodeObject) []Input {
	in := make([]Input, 0, 1+len(images))
	in = append(in, Input{ID: r.HostID})
	for _, im := range images {
		in = append(in, Input{ID: r.DeviceID(im.TargetID), Data: im.Data})
	}
	return in
}

// WriteHIPFatbin writes the uncompressed HIP fatbin of images, byte for byte
// what release r's clang-linker-wrapper has clang-offload-bundler write.
func (r *Release) WriteHIPFatbin(w io.Writer, images []CodeObject) error {
	return Write(w, HIPAlign, r.HIPInputs(images))
}

// HIPFatbin returns the fatbin that WriteHIPFatbin writes as a reader (see
// [NewReader]): what wrap.GPU embeds without the fatbin being written
// anywhere first.
func (r *Release) HIPFatbin(images []CodeObject) (*io.SectionReader, error) {
	return NewReader(HIPAlign, r.HIPInputs(images))
}
