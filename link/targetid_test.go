package link

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// TestPlanGroupsByTargetID: a plan of LLVM 24 links three objects of
// gfx90a, gfx90a:xnack+ and gfx90a:xnack- as three device links of one
// object each, the most specific first (main's equivalence), where 22 adds
// the xnack objects to the link of gfx90a too.
func TestPlanGroupsByTargetID(t *testing.T) {
	in := NewInputs()
	defer in.Close()
	var args []string
	for _, c := range []struct{ name, arch string }{{"a.o", "gfx90a"}, {"b.o", "gfx90a:xnack+"}, {"c.o", "gfx90a:xnack-"}} {
		r, _ := release.Lookup(22) // version 1: every release reads it
		im := offloadbinary.LinkedImage(offload.OffloadHIP, "amdgcn-amd-amdhsa", c.arch)
		im.Kind = offload.ImageBitcode
		bin, err := offloadbinary.MarshalBinary(r, &im, []byte("BC\xc0\xde device code of "+c.arch))
		if err != nil {
			t.Fatal(err)
		}
		o, err := fatobj.NewHostObject("x86_64-unknown-linux-gnu")
		if err != nil {
			t.Fatal(err)
		}
		if err := fatobj.Embed(o, io.NewSectionReader(bytes.NewReader(bin), 0, int64(len(bin)))); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := elfobj.Write(&b, o); err != nil {
			t.Fatal(err)
		}
		in.AddFile(c.name, bytes.NewReader(b.Bytes()), int64(b.Len()))
		args = append(args, c.name)
	}
	links := func(major int) []string {
		r, _ := release.Lookup(major)
		l, err := PlanInputs(&Options{Release: r, Driver: true, DryRun: true, DeviceClang: "clang-22", TempDir: "tmp",
			LinkerArgs: append([]string{"-o", "prog"}, args...)}, in)
		if err != nil {
			t.Fatalf("LLVM %d: %v", major, err)
		}
		var out []string
		for _, s := range l.Steps {
			if s.Kind == StepDeviceLink {
				out = append(out, s.Target+"="+strings.Join(s.Inputs, ","))
			}
		}
		return out
	}
	got24 := links(24)
	if len(got24) != 3 {
		t.Fatalf("LLVM 24: %q, want three device links", got24)
	}
	for _, l := range got24 {
		if strings.Count(l, ",") != 0 {
			t.Errorf("LLVM 24: %s: want one object a link (no xnack image joins the any one)", l)
		}
	}
	got22 := links(22)
	t.Logf("device links of 24: %q; of 22: %q", got24, got22)
	if !slices.ContainsFunc(got22, func(l string) bool {
		return strings.HasSuffix(strings.Split(l, "=")[0], ":gfx90a") && strings.Count(l, ",") == 2
	}) {
		t.Errorf("LLVM 22: %q, want gfx90a's link of all three", got22)
	}
}
