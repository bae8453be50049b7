package amdgpu

import "testing"

// TestTargetIDMatching: main's areTargetsEquivalent and
// areTargetsCompatible on AMDGPU targets, case by case as
// llvm-project #209563's tests and AMDGPU::TargetID's code decide them.
func TestTargetIDMatching(t *testing.T) {
	const amdgcn, sub90a, sub9 = "amdgcn-amd-amdhsa", "amdgpu9.0a-amd-amdhsa", "amdgpu9-amd-amdhsa"
	for _, c := range []struct {
		pt, pa, rt, ra       string
		equivalent, provides bool
	}{
		{amdgcn, "gfx90a", amdgcn, "gfx90a", true, true},
		{amdgcn, "gfx90a", amdgcn, "gfx90a:xnack+", false, true}, // any serves on
		{amdgcn, "gfx90a:xnack+", amdgcn, "gfx90a", false, false},
		{amdgcn, "gfx90a:xnack+", amdgcn, "gfx90a:xnack-", false, false},
		{amdgcn, "gfx90a:sramecc-:xnack+", amdgcn, "gfx90a:xnack+:sramecc-", true, true}, // order does not matter
		{amdgcn, "generic", amdgcn, "gfx90a", false, true},                               // no processor: the check is skipped
		{amdgcn, "generic", amdgcn, "gfx908", false, true},
		{amdgcn, "gfx90a", amdgcn, "generic", false, true},
		{amdgcn, "gfx90a:xnack+", amdgcn, "generic", false, false}, // on does not serve unsupported
		{amdgcn, "gfx900", amdgcn, "gfx9-generic", false, false},
		{amdgcn, "gfx9-generic", amdgcn, "gfx900", false, true},
		{amdgcn, "gfx9-generic", amdgcn, "gfx900:xnack+", false, true},
		{amdgcn, "gfx9-generic:xnack+", amdgcn, "gfx900", false, false},
		{amdgcn, "gfx9-generic", amdgcn, "gfx906:sramecc+", false, true}, // gfx9-generic has no sramecc
		{amdgcn, "gfx9-generic", amdgcn, "gfx90a", false, false},         // gfx90a is a family of its own
		{amdgcn, "gfx908", amdgcn, "gfx90a", false, false},
		{amdgcn, "gfx900", amdgcn, "gfx906", false, false},
		{sub9, "", amdgcn, "gfx900", false, true},  // amdgpu9: gfx9-generic
		{amdgcn, "gfx90a", sub90a, "", true, true}, // the subarch names the processor
		{sub90a, "generic", amdgcn, "gfx90a", true, true},
		{amdgcn, "gfx1030:xnack+", amdgcn, "gfx1030", true, true}, // gfx1030 has no xnack: the modifier is dropped
		{amdgcn, "gfx90a", "amdgcn-amd-amdpal", "gfx90a", false, false},
		{"nvptx64-nvidia-cuda", "sm_90", "nvptx64-nvidia-cuda", "sm_90", false, false}, // not AMDGPU
	} {
		p, r := ParseTargetID(c.pt, c.pa), ParseTargetID(c.rt, c.ra)
		if got := p.Equivalent(r); got != c.equivalent {
			t.Errorf("%s %s equivalent to %s %s: %v", c.pt, c.pa, c.rt, c.ra, got)
		}
		if got := p.ProvidesFor(r); got != c.provides {
			t.Errorf("%s %s provides for %s %s: %v", c.pt, c.pa, c.rt, c.ra, got)
		}
	}
}

// TestParseTargetID: the processor and features a target ID gives.
func TestParseTargetID(t *testing.T) {
	for _, c := range []struct {
		triple, arch, proc string
		xnack, sramecc     Feature
	}{
		{"amdgcn-amd-amdhsa", "gfx90a:xnack+:sramecc-", "gfx90a", FeatureOn, FeatureOff},
		{"amdgcn-amd-amdhsa", "gfx90a", "gfx90a", FeatureAny, FeatureAny},
		{"amdgcn-amd-amdhsa", "gfx1100", "gfx1100", FeatureUnsupported, FeatureUnsupported},
		{"amdgcn-amd-amdhsa", "gfx90a:xnack+:xnack-", "gfx90a", FeatureOn, FeatureAny}, // a repeat is dropped
		{"amdgcn-amd-amdhsa", "gfx9999", "", FeatureUnsupported, FeatureUnsupported},   // unknown
		{"amdgpu10.30-amd-amdhsa", "", "gfx1030", FeatureUnsupported, FeatureUnsupported},
		{"amdgpu10.3-amd-amdhsa", "generic", "gfx10-3-generic", FeatureUnsupported, FeatureUnsupported},
		{"amdgpu9.4-amd-amdhsa", "", "gfx9-4-generic", FeatureAny, FeatureAny},
	} {
		id := ParseTargetID(c.triple, c.arch)
		if id.Processor != c.proc || id.Xnack != c.xnack || id.SramEcc != c.sramecc {
			t.Errorf("%s %s: %q xnack %v sramecc %v; want %q %v %v", c.triple, c.arch, id.Processor, id.Xnack, id.SramEcc, c.proc, c.xnack, c.sramecc)
		}
	}
}
