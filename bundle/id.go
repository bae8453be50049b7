package bundle

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// ErrBadID: a bundle entry ID that the release's bundler refuses (LLVM 20 and
// later want five or six components).
var ErrBadID = errors.New("invalid bundle entry ID")

// ID is a bundle entry ID as a release's clang-offload-bundler reads it:
// "<kind>-<triple>[-<target id>]", e.g. "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"
// is kind "hip", triple "amdgcn-amd-amdhsa-" and target ID "gfx90a:xnack+".
type ID struct {
	Kind string
	// Triple is as written in the ID (LLVM 17 and later write four
	// components, the environment possibly empty); compare triples with
	// [SameTriple].
	Triple string
	// TargetID is the processor and its features, "" when the ID has none.
	TargetID string
}

// String returns the ID's three parts joined as the bundler of LLVM 17 and
// later writes an ID whose triple has four components.
func (id ID) String() string {
	return id.Kind + "-" + id.Triple + "-" + id.TargetID
}

// ParseID reads id as release r's clang-offload-bundler reads it when it
// unbundles (nil r: release.DefaultMajor's). Up to LLVM 19 any ID reads;
// from 20 an ID of other than five or six components is an error matching
// [ErrBadID], and a sixth component that does not start with an offload
// arch is not a target ID.
func ParseID(id string, r *release.Release) (ID, error) {
	return parseID(id, idRule(r))
}

// idRule returns release r's rule for bundle entry IDs.
func idRule(r *release.Release) release.BundleIDRule {
	if r == nil {
		r = release.Default()
	}
	return r.Bundle.IDs
}

func parseID(id string, rule release.BundleIDRule) (ID, error) {
	if rule == release.BundleIDComponents {
		c := strings.SplitN(id, "-", 6)
		if len(c) != 5 && len(c) != 6 {
			return ID{}, fmt.Errorf("offload bundle: %q: %w (want <kind>-<arch>-<vendor>-<os>-<env>[-<target id>])", id, ErrBadID)
		}
		out := ID{Kind: c[0], Triple: strings.Join(c[1:5], "-")}
		if len(c) == 6 {
			if proc, _, _ := strings.Cut(c[5], ":"); proc != "" && IsOffloadArch(proc) {
				out.TargetID = c[5]
			}
		}
		return out, nil
	}
	// Up to LLVM 19: the arch, when the part before ':' ends in one, starts
	// the target ID (found by its first occurrence in the whole ID, as the
	// bundler finds it); an empty last part counts as an arch (the bundler's
	// table of arch names starts with an unused "").
	before, _, _ := strings.Cut(id, ":")
	rest, last := before, ""
	if i := strings.LastIndexByte(before, '-'); i >= 0 {
		rest, last = before[:i], before[i+1:]
	}
	if last == "" || IsOffloadArch(last) {
		kind, triple, _ := strings.Cut(rest, "-")
		return ID{Kind: kind, Triple: triple, TargetID: id[strings.Index(id, last):]}, nil
	}
	kind, triple, _ := strings.Cut(before, "-")
	return ID{Kind: kind, Triple: triple}, nil
}

// ParseTarget reads a requested target (an entry of -targets) as the
// bundler of a release with rule does when it unbundles: parsed, written
// back in the release's standard form ("<kind>-<four-part triple>-<target
// id>", an amdhsa triple with an empty environment from LLVM 20), and parsed
// again. Code-object IDs read from bundles are not standardized: an ID the
// standard form does not reproduce matches only through [Compatible]'s
// rules, or not at all.
func ParseTarget(target string, r *release.Release) (ID, error) {
	rule := idRule(r)
	id, err := parseID(target, rule)
	if err != nil {
		return ID{}, err
	}
	c := strings.SplitN(id.Triple, "-", 4)
	for len(c) < 4 {
		c = append(c, "")
	}
	triple := strings.Join(c, "-")
	if rule == release.BundleIDComponents && parseTriple(id.Triple).os == "amdhsa" {
		triple = strings.Join(c[:3], "-") + "-"
	}
	return parseID(id.Kind+"-"+triple+"-"+id.TargetID, rule)
}

// SameTriple reports whether the bundler takes two triples for the same
// (llvm::Triple's equality: each component's known name, any unknown name
// standing for "unknown").
func SameTriple(a, b string) bool { return parseTriple(a) == parseTriple(b) }

// OffloadKind returns the offload kind of a bundle entry kind: openmp, hip
// (and hipv4), or OffloadNone for host and other kinds.
func (id ID) OffloadKind(r *release.Release) offload.OffloadKind {
	switch id.Kind {
	case "openmp":
		return offload.OffloadOpenMP
	case "hip", "hipv4":
		return offload.OffloadHIP
	case "sycl":
		return offload.OffloadKindByName(r, "sycl")
	}
	return offload.OffloadNone
}

// IsHost reports whether the entry is the host's.
func (id ID) IsHost() bool { return id.Kind == "host" }

// kindCompatible is the bundler's isOffloadKindCompatible: the same kind, hip
// and hipv4 for each other, and with hipOpenMP hip* and openmp for each
// other.
func kindCompatible(have, want string, hipOpenMP bool) bool {
	switch {
	case have == want, have == "hip" && want == "hipv4", have == "hipv4" && want == "hip":
		return true
	case hipOpenMP:
		return strings.HasPrefix(strings.ToLower(have), "hip") && want == "openmp" ||
			have == "openmp" && strings.HasPrefix(strings.ToLower(want), "hip")
	}
	return false
}

// Compatible reports whether the bundler extracts the code object of entry
// have for the requested target want (clang's isCodeObjectCompatible): an
// exact match, or kinds and triples compatible, the same processor, and
// every feature have states stated alike by want (a feature have leaves out
// is compatible with any). With hipOpenMP (-hip-openmp-compatible), HIP
// entries serve OpenMP targets and the other way.
func Compatible(have, want ID, hipOpenMP bool) bool {
	if have.Kind == want.Kind && SameTriple(have.Triple, want.Triple) && have.TargetID == want.TargetID {
		return true
	}
	if !kindCompatible(have.Kind, want.Kind, hipOpenMP) || !SameTriple(have.Triple, want.Triple) {
		return false
	}
	hp, hf, ok1 := parseTargetID(have.Triple, have.TargetID)
	wp, wf, ok2 := parseTargetID(want.Triple, want.TargetID)
	if !ok1 || !ok2 || hp != wp || len(hf) > len(wf) {
		return false
	}
	for name, on := range hf {
		if v, ok := wf[name]; !ok || v != on {
			return false
		}
	}
	return true
}

// parseTargetID splits a target ID into its processor and features
// ("gfx90a:xnack+:sramecc-"), as clang::parseTargetID does: every feature
// named once, with '+' or '-'; for AMDGPU a known processor and only the
// features AMDGPU target IDs have. An empty ID has no processor: not ok.
func parseTargetID(triple, targetID string) (proc string, feats map[string]bool, ok bool) {
	parts := strings.Split(targetID, ":")
	proc = parts[0]
	if proc == "" {
		return "", nil, false
	}
	amd := parseTriple(triple).isAMDGPU()
	if amd && !strings.HasPrefix(proc, "gfx") {
		return "", nil, false
	}
	feats = map[string]bool{}
	for _, f := range parts[1:] {
		if len(f) < 2 || (f[len(f)-1] != '+' && f[len(f)-1] != '-') {
			return "", nil, false
		}
		name := f[:len(f)-1]
		if _, dup := feats[name]; dup || amd && name != "xnack" && name != "sramecc" {
			return "", nil, false
		}
		feats[name] = f[len(f)-1] == '+'
	}
	return proc, feats, true
}

// offloadArchs are the processors clang knows as offload arches
// (clang/lib/Basic/OffloadArch.cpp); the bundlers test a target ID's start
// against them.
var offloadArchs = map[string]bool{}

func init() {
	for _, sm := range strings.Fields("20 21 30 32 35 37 50 52 53 60 61 62 70 72 75 80 86 87 89 90 90a 100 100a 101 101a 103 103a 120 120a 121 121a") {
		offloadArchs["sm_"+sm] = true
	}
	for _, gfx := range strings.Fields("600 601 602 700 701 702 703 704 705 801 802 803 805 810 9-generic 900 902 904 906 908 909 90a 90c 9-4-generic 940 941 942 950 " +
		"10-1-generic 1010 1011 1012 1013 10-3-generic 1030 1031 1032 1033 1034 1035 1036 11-generic 1100 1101 1102 1103 1150 1151 1152 1153 12-generic 1200 1201 1250") {
		offloadArchs["gfx"+gfx] = true
	}
	for _, a := range []string{"amdgcnspirv", "graniterapids", "bmg_g21", "generic"} {
		offloadArchs[a] = true
	}
}

// IsOffloadArch reports whether clang knows name as an offload arch
// (processor), such as "sm_70" or "gfx90a".
func IsOffloadArch(name string) bool { return offloadArchs[name] }
