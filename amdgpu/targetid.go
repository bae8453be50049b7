package amdgpu

import (
	"strings"
)

// TargetID is an AMDGPU target as LLVM main's AMDGPU::TargetID reads a
// device image's triple and arch ("gfx90a:xnack+:sramecc-") to match
// images to link groups (llvm-project #209563, July 2026:
// llvm/lib/TargetParser/AMDGPUTargetParser.cpp, used by
// object::areTargetsEquivalent and areTargetsCompatible): the processor,
// and each of its two features unsupported, any, off or on.
type TargetID struct {
	// Processor is the canonical processor name ("gfx90a",
	// "gfx9-generic"), or "" for none: a "generic" or empty arch on a
	// triple without a subarch, or a name LLVM does not know.
	Processor string
	Xnack     Feature
	SramEcc   Feature
	// triple is the triple's vendor, OS and environment; subarch the
	// processor its subarch names ("" for amdgcn-/amdgpu- without one).
	triple, subarch string
	amdgpu          bool
}

// processor is what TargetID needs of a processor: its family's generic
// processor (the major subarch it belongs to), and which features it has.
type processor struct {
	generic       string // the generic processor of its family, or "" (a family of its own)
	xnack, sramec bool   // xnack's on/off modes; sramecc
}

// processors are the AMDGPU processors LLVM main knows, with their family
// (AMDGPUMajorFamilies and the generic targets' CoveredGPUs) and features
// (FEATURE_XNACK_ON_OFF_MODES, FEATURE_SRAMECC in AMDGPUTargetParser.def),
// as read from main's sources on 29 November 2026.
var processors = func() map[string]processor {
	m := map[string]processor{}
	add := func(generic string, xnack, sramecc bool, names ...string) {
		for _, n := range names {
			m[n] = processor{generic: generic, xnack: xnack, sramec: sramecc}
		}
	}
	add("", false, false, "gfx600", "gfx601", "gfx602", "gfx700", "gfx701", "gfx702", "gfx703", "gfx704", "gfx705",
		"gfx802", "gfx803", "gfx805")
	add("", true, false, "gfx801", "gfx810")
	add("gfx9-generic", true, false, "gfx900", "gfx902", "gfx904", "gfx909", "gfx90c")
	add("gfx9-generic", true, true, "gfx906")
	add("", true, true, "gfx908", "gfx90a")
	add("gfx9-4-generic", true, true, "gfx942", "gfx950")
	add("gfx10-1-generic", true, false, "gfx1010", "gfx1011", "gfx1012", "gfx1013")
	add("gfx10-3-generic", false, false, "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036")
	add("gfx11-generic", false, false, "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153", "gfx1154")
	add("gfx11-7-generic", false, false, "gfx1170", "gfx1171", "gfx1172")
	add("gfx12-generic", false, false, "gfx1200", "gfx1201")
	add("gfx12-5-generic", false, true, "gfx1250", "gfx1251")
	add("gfx13-generic", false, false, "gfx1310")
	// The generic processors: each the major of its family.
	add("", true, false, "gfx9-generic", "gfx10-1-generic")
	add("", true, true, "gfx9-4-generic")
	add("", false, false, "gfx10-3-generic", "gfx11-generic", "gfx11-7-generic", "gfx12-generic", "gfx13-generic")
	add("", false, false, "gfx12-5-generic")
	return m
}()

// ParseTargetID reads the arch of an image for triple as main's
// AMDGPU::TargetID(Triple, StringRef) does: the processor before the first
// ':' (from the triple's subarch when it is empty or "generic"), each
// feature "any" where the processor has it and "unsupported" where not,
// then "xnack+"/"xnack-"/"sramecc+"/"sramecc-" after it; a modifier that is
// malformed, repeated or of a feature the processor lacks is dropped, as
// that constructor drops it.
func ParseTargetID(triple, arch string) TargetID {
	t := TargetID{}
	parts := strings.Split(triple, "-")
	a := parts[0]
	switch {
	case a == "amdgcn":
		t.amdgpu = true
	case strings.HasPrefix(a, "amdgpu"):
		t.amdgpu = true
		t.subarch = subarchProcessor(a[len("amdgpu"):])
	}
	if len(parts) > 1 {
		t.triple = strings.Join(parts[1:], "-")
	}
	name, mods, _ := strings.Cut(arch, ":")
	if name == "" || name == "generic" {
		t.Processor = t.subarch
	} else if _, ok := processors[name]; ok {
		t.Processor = name
	}
	p, known := processors[t.Processor]
	t.Xnack, t.SramEcc = FeatureUnsupported, FeatureUnsupported
	if known && p.xnack {
		t.Xnack = FeatureAny
	}
	if known && p.sramec {
		t.SramEcc = FeatureAny
	}
	seen := map[string]bool{}
	for _, m := range strings.Split(mods, ":") {
		if len(m) < 2 {
			continue
		}
		f, sign := m[:len(m)-1], m[len(m)-1]
		v := FeatureOn
		if sign == '-' {
			v = FeatureOff
		} else if sign != '+' {
			continue
		}
		switch {
		case seen[f]:
		case f == "xnack" && t.Xnack != FeatureUnsupported:
			t.Xnack = v
		case f == "sramecc" && t.SramEcc != FeatureUnsupported:
			t.SramEcc = v
		}
		seen[f] = true
	}
	return t
}

// subarchProcessor is the processor a triple's subarch names: "9.0a" is
// gfx90a (the last two characters minor and stepping), "10.3" is
// gfx10-3-generic, "9" gfx9-generic ([release.AMDGPUSubarch] the other
// way); "" for none or one LLVM does not know.
func subarchProcessor(s string) string {
	if s == "" {
		return ""
	}
	major, minor, dot := strings.Cut(s, ".")
	var name string
	switch {
	case !dot:
		name = "gfx" + major + "-generic"
	case len(minor) == 2:
		name = "gfx" + major + minor
	default:
		name = "gfx" + major + "-" + minor + "-generic"
	}
	if _, ok := processors[name]; ok {
		return name
	}
	return ""
}

// family is the generic processor of p's family, or p itself.
func family(p string) string {
	if g := processors[p].generic; g != "" {
		return g
	}
	return p
}

// compatibleTriples is Triple::isCompatibleWith of two AMDGPU triples:
// the same vendor, OS and environment, and subarchs equal, absent on
// either side, or one the generic processor of the other's family.
func (t TargetID) compatibleTriples(o TargetID) bool {
	if t.triple != o.triple {
		return false
	}
	a, b := t.subarch, o.subarch
	return a == "" || b == "" || a == b || family(a) == family(b) && (processors[a].generic == "" || processors[b].generic == "")
}

// featureProvides is featureProvidesFor: an image whose setting is any or
// unsupported serves any request; on serves on, off serves off.
func featureProvides(p, r Feature) bool {
	return p == FeatureAny || p == FeatureUnsupported || p == r
}

// Equivalent reports whether t and o are one target for main's
// areTargetsEquivalent: the same processor and the same settings, any
// being neither on nor off, of compatible triples. Both must be AMDGPU.
func (t TargetID) Equivalent(o TargetID) bool {
	return t.amdgpu && o.amdgpu && t.Processor == o.Processor && t.Xnack == o.Xnack && t.SramEcc == o.SramEcc && t.compatibleTriples(o)
}

// ProvidesFor reports whether an image for t serves a request for r, in
// main's areTargetsCompatible (one way): the same processor, or t the
// generic processor of r's family, or either without one; each of t's
// features any, unsupported or r's setting; and compatible triples.
func (t TargetID) ProvidesFor(r TargetID) bool {
	if !t.amdgpu || !r.amdgpu {
		return false
	}
	if t.Processor != r.Processor && t.Processor != "" && r.Processor != "" {
		if processors[t.Processor].generic != "" || family(r.Processor) != t.Processor {
			return false
		}
	}
	return featureProvides(t.Xnack, r.Xnack) && featureProvides(t.SramEcc, r.SramEcc) && t.compatibleTriples(r)
}

// IsAMDGPU reports whether the target's triple is an AMDGPU one (amdgcn-,
// amdgpu-).
func (t TargetID) IsAMDGPU() bool { return t.amdgpu }
