package link

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// file makes an offloadFile of input idx named name whose device symbols
// are given as "name" (defined, visible), "-name" (undefined), "~name"
// (defined, hidden) and "?name" (defined, weak).
func file(name string, idx int, archive, whole bool, arch string, syms ...string) *offloadFile {
	f := &offloadFile{obj: &fatobj.Object{Name: name}, id: targetID{"x86_64-pc-linux-gnu", arch}, kind: offload.OffloadOpenMP,
		input: idx, archive: archive, lazy: archive && !whole, read: true}
	for _, s := range syms {
		d := devSym{name: strings.TrimLeft(s, "-~?"), visible: true}
		switch s[0] {
		case '-':
			d.undefined = true
		case '~':
			d.visible = false
		case '?':
			d.weak = true
		}
		f.syms = append(f.syms, d)
	}
	return f
}

func chosen(t *testing.T, rule release.ArchiveRule, files []*offloadFile, should ...string) map[string][]string {
	t.Helper()
	ids, inputs, err := chooseDevice(rule, files, should)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, id := range ids {
		for _, f := range inputs[id] {
			out[id.arch] = append(out[id.arch], f.obj.Name)
		}
	}
	return out
}

// The rules of each release (docs/releases.md#archive-members), on one
// library: m1 resolves main.o's undefined helper, m2's only symbol is
// hidden, m3 defines a new visible symbol, m4 (hidden) needs m5's hidden z.
func TestChooseDevice(t *testing.T) {
	lib := func(idx int, whole bool) []*offloadFile {
		return []*offloadFile{
			file("m1", idx, true, whole, "", "helper"),
			file("m2", idx, true, whole, "", "~hid"),
			file("m3", idx, true, whole, "", "x"),
			file("m4", idx, true, whole, "", "~y", "-z"),
			file("m5", idx, true, whole, "", "~z"),
		}
	}
	main := func(idx int) *offloadFile { return file("main.o", idx, false, false, "", "main", "-helper") }
	for _, c := range []struct {
		name  string
		rule  release.ArchiveRule
		files []*offloadFile
		want  []string
	}{
		{"15", release.ArchiveUsedTargets, append([]*offloadFile{main(0)}, lib(1, false)...), []string{"main.o", "m1", "m2", "m3", "m4", "m5"}},
		{"16", release.ArchiveOrdered, append([]*offloadFile{main(0)}, lib(1, false)...), []string{"main.o", "m1", "m3"}},
		// 16: a library before the objects gives nothing.
		{"16 library first", release.ArchiveOrdered, append(lib(0, false), main(1)), []string{"main.o"}},
		// --whole-archive takes every member (the scan still decides which
		// symbols join the table).
		{"16 whole", release.ArchiveOrdered, append([]*offloadFile{main(0)}, lib(1, true)...), []string{"main.o", "m1", "m2", "m3", "m4", "m5"}},
		{"19", release.ArchiveResolve, append([]*offloadFile{main(0)}, lib(1, false)...), []string{"main.o", "m1", "m3"}},
		{"19 library first", release.ArchiveResolve, append(lib(0, false), main(1)), []string{"main.o", "m1", "m3"}},
		{"19 whole", release.ArchiveResolve, append(lib(0, true), main(1)), []string{"m1", "m2", "m3", "m4", "m5", "main.o"}},
		{"22", release.ArchiveAllMembers, append(lib(0, false), main(1)), []string{"main.o", "m1", "m2", "m3", "m4", "m5"}},
	} {
		got := chosen(t, c.rule, c.files)
		if !cmp.Equal(got[""], c.want) {
			t.Errorf("%s: %q, want %q", c.name, got[""], c.want)
		}
	}
}

// A symbol's entry is never updated once in the table (the wrapper merges
// with DenseMap::insert): a second definition of a symbol that an earlier
// member resolved still "resolves" it, and is taken too.
func TestChooseDeviceKeepsFirstEntry(t *testing.T) {
	files := []*offloadFile{
		file("main.o", 0, false, false, "", "-f"),
		file("a", 1, true, false, "", "~f"),
		file("b", 1, true, false, "", "~f"),
	}
	if got := chosen(t, release.ArchiveResolve, files)[""]; !cmp.Equal(got, []string{"main.o", "a", "b"}) {
		t.Errorf("%q", got)
	}
}

// Members of a target no object has are not taken, unless
// --should-extract names the arch (21 and later); a "generic" image joins
// every target of its triple, and every image of the triple joins the
// generic target (the wrapper's CompatibleTargets).
func TestChooseDeviceTargets(t *testing.T) {
	files := []*offloadFile{
		file("main.o", 0, false, false, "gfx90a", "k"),
		file("any.o", 1, false, false, "generic", "g"),
		file("m90a", 2, true, false, "gfx90a", "a"),
		file("m1100", 2, true, false, "gfx1100", "b"),
	}
	for i := range files {
		files[i].id.triple = "amdgcn-amd-amdhsa"
	}
	got := chosen(t, release.ArchiveAllMembers, files)
	want := map[string][]string{"gfx90a": {"main.o", "any.o", "m90a"}, "generic": {"any.o", "m90a", "m1100"}}
	if !cmp.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, f := range files {
		f.moved = false
	}
	got = chosen(t, release.ArchiveAllMembers, files, "gfx1100")
	want["gfx1100"] = []string{"m1100"}
	if !cmp.Equal(got, want) {
		t.Errorf("--should-extract=gfx1100: got %q, want %q", got, want)
	}
}

func TestCompatibleTargets(t *testing.T) {
	for _, c := range []struct {
		a, b targetID
		want bool
	}{
		{targetID{"amdgcn-amd-amdhsa", "gfx90a"}, targetID{"amdgcn-amd-amdhsa", "gfx90a"}, false}, // the same target
		{targetID{"amdgcn-amd-amdhsa", "gfx90a"}, targetID{"amdgcn-amd-amdhsa", "generic"}, true},
		{targetID{"amdgcn-amd-amdhsa", "gfx90a:xnack+"}, targetID{"amdgcn-amd-amdhsa", "gfx90a"}, true},
		{targetID{"amdgcn-amd-amdhsa", "gfx90a:xnack+"}, targetID{"amdgcn-amd-amdhsa", "gfx90a:xnack-"}, false},
		{targetID{"amdgcn-amd-amdhsa", "gfx90a"}, targetID{"amdgcn-amd-amdhsa", "gfx908"}, false},
		{targetID{"nvptx64-nvidia-cuda", "sm_70"}, targetID{"nvptx64-nvidia-cuda", "sm_80"}, false},
		{targetID{"x86_64-pc-linux-gnu", ""}, targetID{"x86_64-pc-linux-gnu", "generic"}, true},
	} {
		if got := compatible(c.a, c.b); got != c.want {
			t.Errorf("compatible(%v, %v) = %v", c.a, c.b, got)
		}
	}
}

func TestSortImages(t *testing.T) {
	ts := []*target{{triple: "amdgcn-amd-amdhsa", arch: "gfx1030"}, {triple: "amdgcn-amd-amdhsa", arch: "gfx90a"}, {triple: "amdgcn-amd-amdhsa", arch: "gfx1100"}, {triple: "amdgcn-amd-amdhsa", arch: "gfx908"}}
	sortImages(ts)
	var got []string
	for _, t := range ts {
		got = append(got, t.arch)
	}
	if want := []string{"gfx90a", "gfx908", "gfx1100", "gfx1030"}; !cmp.Equal(got, want) {
		t.Errorf("%q, want %q", got, want)
	}
}

// TestChooseDeviceTargetID: main's grouping (release.TargetMatchTargetID,
// llvm-project #207853 and #209563), case by case as main's
// linker-wrapper.c test names them: objects by equivalence, the most
// specific first; archive members one way, by what they provide for.
func TestChooseDeviceTargetID(t *testing.T) {
	const amdgcn = "amdgcn-amd-amdhsa"
	img := func(name string, member bool, triple, arch string) *offloadFile {
		f := file(name, 0, member, false, arch)
		f.id.triple = triple
		return f
	}
	obj := func(name, arch string) *offloadFile { return img(name, false, amdgcn, arch) }
	mem := func(name, arch string) *offloadFile { return img(name, true, amdgcn, arch) }
	for _, c := range []struct {
		name   string
		files  []*offloadFile
		should []string
		want   string // each link "triple/arch=inputs", in order
	}{
		{"AMD-XNACK-SPLIT", []*offloadFile{obj("a", "gfx90a"), obj("b", "gfx90a:xnack+"), obj("c", "gfx90a:xnack-")}, nil,
			"amdgcn-amd-amdhsa/gfx90a:xnack+=b amdgcn-amd-amdhsa/gfx90a:xnack-=c amdgcn-amd-amdhsa/gfx90a=a"},
		{"AMD-DISTINCT-PROC", []*offloadFile{obj("a", "gfx900"), obj("b", "gfx9-generic")}, nil,
			"amdgcn-amd-amdhsa/gfx900=a amdgcn-amd-amdhsa/gfx9-generic=b"},
		{"AMDGPU-TRIPLE-MERGE", []*offloadFile{obj("a", "gfx90a"), img("b", false, "amdgpu9.0a-amd-amdhsa", "")}, nil,
			"amdgcn-amd-amdhsa/gfx90a=a,b"},
		{"AMD-TARGET-ID", []*offloadFile{obj("a", "gfx90a:xnack+"), obj("b", "gfx90a:xnack-"), mem("m", "gfx90a")}, nil,
			"amdgcn-amd-amdhsa/gfx90a:xnack+=a,m amdgcn-amd-amdhsa/gfx90a:xnack-=b,m"},
		{"specific member, any object", []*offloadFile{obj("a", "gfx90a"), mem("m", "gfx90a:xnack+")}, nil,
			"amdgcn-amd-amdhsa/gfx90a=a"},
		{"ARCH-ALL", []*offloadFile{obj("a", "gfx90a"), obj("b", "gfx908"), mem("m", "generic")}, nil,
			"amdgcn-amd-amdhsa/gfx90a=a,m amdgcn-amd-amdhsa/gfx908=b,m"},
		{"AMD-ARCHIVE-GENERIC", []*offloadFile{obj("a", "gfx900"), img("m", true, "amdgpu9-amd-amdhsa", "")}, nil,
			"amdgcn-amd-amdhsa/gfx900=a,m"},
		{"no generic from specific", []*offloadFile{obj("a", "gfx9-generic"), mem("m", "gfx900")}, nil,
			"amdgcn-amd-amdhsa/gfx9-generic=a"},
		{"AMD-ARCHIVE-SUBARCH-EXACT", []*offloadFile{img("a", false, "amdgpu9.0a-amd-amdhsa", ""), mem("m", "gfx90a")}, nil,
			"amdgpu9.0a-amd-amdhsa/=a,m"},
		{"should-extract", []*offloadFile{obj("a", "gfx90a"), mem("m", "gfx1100")}, []string{"gfx1100"},
			"amdgcn-amd-amdhsa/gfx90a=a amdgcn-amd-amdhsa/gfx1100=m"},
		{"member of no target", []*offloadFile{obj("a", "gfx90a"), mem("m", "gfx1100")}, nil,
			"amdgcn-amd-amdhsa/gfx90a=a"},
	} {
		ids, inputs := chooseByTargetID(c.files, c.should)
		var got []string
		for _, id := range ids {
			var names []string
			for _, f := range inputs[id] {
				names = append(names, f.obj.Name)
			}
			got = append(got, id.triple+"/"+id.arch+"="+strings.Join(names, ","))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s: %s\nwant %s", c.name, g, c.want)
		}
	}
	// 22's rule, on the first case: both xnack images join the any
	// image's link, which came first.
	files := []*offloadFile{obj("a", "gfx90a"), obj("b", "gfx90a:xnack+"), obj("c", "gfx90a:xnack-")}
	want := map[string][]string{"gfx90a": {"a", "b", "c"}, "gfx90a:xnack+": {"b"}, "gfx90a:xnack-": {"c"}}
	if got := chosen(t, release.ArchiveAllMembers, files); !cmp.Equal(got, want) {
		t.Errorf("22's rule: %q, want %q", got, want)
	}
}
