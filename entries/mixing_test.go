package entries

import (
	"bytes"
	"debug/elf"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

func llvmTestdata(parts ...string) string {
	return filepath.Join(append([]string{"..", "offload", "testdata", "llvm"}, parts...)...)
}

func mixing(t *testing.T, f *elfobj.File) *Origin {
	t.Helper()
	o, err := Mixing(f, release.Default())
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func kinds(fs []Finding) string {
	var ks []string
	for _, f := range fs {
		ks = append(ks, string(f.Kind))
	}
	return strings.Join(ks, " ")
}

// TestMixingOfClangObjects: clang's objects tell the releases that made
// them, and hold nothing mixed.
func TestMixingOfClangObjects(t *testing.T) {
	for _, c := range []struct {
		major int
		made  string
	}{{15, "LLVM 15-18"}, {16, "LLVM 15-18"}, {19, "LLVM 19-20"}, {22, "LLVM 21-22"}} {
		path := llvmTestdata("host-objects", fmt.Sprintf("openmp-x86-llvm%d.o", c.major))
		o := mixing(t, readFile(t, path))
		if got := o.Made().String(); got != c.made || len(o.Findings) != 0 || len(o.Registrations) != 0 {
			t.Errorf("llvm%d: made by %s, want %s; registrations %+v; findings %v", c.major, got, c.made, o.Registrations, o.Findings)
		}
	}
}

// TestMixingFindsWrapperRelease: the registration objects of
// clang-linker-wrapper tell their release from the section they register,
// where the device image points into the OffloadBinary, and the
// constructor's priority and destructor.
func TestMixingFindsWrapperRelease(t *testing.T) {
	for _, c := range []struct {
		file, section, releases string
		kind                    offload.OffloadKind
	}{
		{"openmp-wrapper-llvm15.o", "omp_offloading_entries", "LLVM 15-17", offload.OffloadOpenMP},
		{"openmp-wrapper-llvm16.o", "omp_offloading_entries", "LLVM 15-17", offload.OffloadOpenMP},
		{"openmp-wrapper-llvm19.o", "omp_offloading_entries", "LLVM 19-20", offload.OffloadOpenMP},
		{"openmp-wrapper-llvm22.o", "llvm_offload_entries", "LLVM 21-23", offload.OffloadOpenMP},
		{"hip-wrapper-llvm19.o", "hip_offloading_entries", "LLVM 15-20", offload.OffloadNone},
		{"cuda-wrapper-llvm22.o", "llvm_offload_entries", "LLVM 21-23", offload.OffloadNone},
	} {
		o := mixing(t, readFile(t, llvmTestdata("wrapper", c.file)))
		if len(o.Registrations) != 1 {
			t.Errorf("%s: registrations %+v", c.file, o.Registrations)
			continue
		}
		g := o.Registrations[0]
		if g.Section != c.section || g.Releases.String() != c.releases || g.Kind != c.kind || len(o.Findings) != 0 {
			t.Errorf("%s: %v registers %q (%s), want %q (%s); findings %v", c.file, g.Kind, g.Section, g.Releases, c.section, c.releases, o.Findings)
		}
	}
}

// TestMixingRetain: main after 23 sets SHF_GNU_RETAIN on the entries
// sections it writes and 22 and 23 do not, so the flag tells a wrapper of 24
// from one of 22 or 23.
func TestMixingRetain(t *testing.T) {
	for _, c := range []struct {
		file     string
		retain   bool
		releases string
	}{
		{"openmp-wrapper-llvm22.o", false, "LLVM 21-23"},
		{"openmp-wrapper-llvm22.o", true, "LLVM 24"},
		{"cuda-wrapper-llvm22.o", true, "LLVM 24"},
		// 19 registers another section: the flag does not make it 24.
		{"openmp-wrapper-llvm19.o", true, "LLVM 19-20"},
	} {
		f := readFile(t, llvmTestdata("wrapper", c.file))
		for _, s := range f.Sections {
			if baseSection(s.Name) != "" && c.retain {
				s.Flags |= elfobj.SHF_GNU_RETAIN
			}
		}
		o := mixing(t, f)
		if len(o.Registrations) != 1 || o.Registrations[0].Releases.String() != c.releases {
			t.Errorf("%s (retain %v): registrations %+v, want %s", c.file, c.retain, o.Registrations, c.releases)
		}
	}
}

// TestIncompatibleObjects: objects of LLVM 19 and 22 cannot be linked
// together, 15 and 16 can, and neither 19 nor 22 with a wrapper of the
// other.
func TestIncompatibleObjects(t *testing.T) {
	input := func(dir, name string) Input {
		return Input{Name: name, Origin: mixing(t, readFile(t, llvmTestdata(dir, name)))}
	}
	o15, o16, o19, o22 := input("host-objects", "openmp-x86-llvm15.o"), input("host-objects", "openmp-x86-llvm16.o"),
		input("host-objects", "openmp-x86-llvm19.o"), input("host-objects", "openmp-x86-llvm22.o")
	w19, w22 := input("wrapper", "openmp-wrapper-llvm19.o"), input("wrapper", "openmp-wrapper-llvm22.o")
	for _, c := range []struct {
		ins  []Input
		want []string // per input: the kinds found
	}{
		{[]Input{o15, o16, o19}, []string{"", "", ""}},
		{[]Input{o19, o22}, []string{"", "mixed-entry-layouts"}},
		{[]Input{o22, o15, o16}, []string{"", "mixed-entry-layouts", "mixed-entry-layouts"}},
		{[]Input{w22, o19}, []string{"", "unregistered-entries"}},
		{[]Input{o22, w19}, []string{"", "unregistered-entries"}},
		{[]Input{w19, o19, o16}, []string{"", "", ""}},
	} {
		got := Incompatible(c.ins)
		for i, fs := range got {
			if kinds(fs) != c.want[i] {
				t.Errorf("%s among %d inputs: %v, want %q", c.ins[i].Name, len(c.ins), fs, c.want[i])
			}
			for _, f := range fs {
				if f.Other != c.ins[0].Name || !strings.Contains(f.Message, c.ins[0].Name) {
					t.Errorf("%s: finding names %q, not %s: %s", c.ins[i].Name, f.Other, c.ins[0].Name, f.Message)
				}
			}
		}
	}
}

// objectOf writes an x86-64 object with the entries of each release given,
// the sections and undefined symbols.
func objectOf(t *testing.T, ents map[int][]offload.Entry, secs []*elfobj.Section, undefined ...string) *elfobj.File {
	t.Helper()
	o, err := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	for _, major := range []int{13, 14, 15, 16, 17, 18, 19, 20, 21, 22} {
		if es, ok := ents[major]; ok {
			if err := Write(o, lookupRelease(t, major), es); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, s := range secs {
		o.AddSection(s, false)
	}
	for _, name := range undefined {
		o.Symbols = append(o.Symbols, &elfobj.Symbol{Name: name, Bind: elf.STB_GLOBAL, Index: elf.SHN_UNDEF})
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	f, err := elfobj.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// offloadingSection returns a .llvm.offloading section holding one binary of
// release major whose image has offload kind k.
func offloadingSection(t *testing.T, major int, k offload.OffloadKind) *elfobj.Section {
	t.Helper()
	im := offloadbinary.LinkedImage(k, "amdgcn-amd-amdhsa", "gfx90a")
	b, err := offloadbinary.MarshalBinary(lookupRelease(t, major), &im, []byte("not an image"))
	if err != nil {
		t.Fatal(err)
	}
	return &elfobj.Section{Name: ".llvm.offloading", Type: elfobj.SHT_LLVM_OFFLOADING, Flags: elfobj.SHF_EXCLUDE, Addralign: 8, Data: b}
}

// TestMixingInOneObject: an object that holds what no one release makes
// (as `ld -r` of objects of two releases does) is reported, one line per
// kind of problem.
func TestMixingInOneObject(t *testing.T) {
	hipEntry := offload.Entry{Kind: offload.OffloadHIP, Name: "_Z4kernPi", Address: offload.SymbolRef{Symbol: "_Z4kernPi"}}
	req19, err := RequiresEntry(lookupRelease(t, 19), offload.RequiresUnifiedSharedMemory)
	if err != nil {
		t.Fatal(err)
	}
	bundled := &elfobj.Section{Name: bundle.SectionPrefix + "openmp-x86_64-pc-linux-gnu", Type: elf.SHT_PROGBITS, Flags: elfobj.SHF_EXCLUDE, Addralign: 1, Data: []byte("\x7fELF")}
	for _, c := range []struct {
		name string
		f    *elfobj.File
		want string
	}{
		{"one release", objectOf(t, map[int][]offload.Entry{22: {KernelEntry("k22")}}, []*elfobj.Section{offloadingSection(t, 22, offload.OffloadOpenMP)}), ""},
		{"32 and 56 bytes", objectOf(t, map[int][]offload.Entry{19: {KernelEntry("k19")}, 22: {KernelEntry("k22")}}, nil), "mixed-entry-layouts"},
		{"HIP 3 and 56 bytes", objectOf(t, map[int][]offload.Entry{22: {hipEntry}}, []*elfobj.Section{offloadingSection(t, 19, offload.OffloadHIP)}), "hip-kind-numbering"},
		{"HIP 4 and 32 bytes", objectOf(t, map[int][]offload.Entry{19: {hipEntry}}, []*elfobj.Section{offloadingSection(t, 22, offload.OffloadHIP)}), "hip-kind-numbering"},
		{"bundled and OffloadBinary", objectOf(t, map[int][]offload.Entry{16: {KernelEntry("k16")}}, []*elfobj.Section{bundled, offloadingSection(t, 16, offload.OffloadOpenMP)}), "device-code-form"},
		// libomptarget 22 reads LLVM 19's requires entry.
		{"requires entry of 19 and 56 bytes", objectOf(t, map[int][]offload.Entry{19: {req19}, 22: {KernelEntry("k22")}}, nil), "mixed-entry-layouts"},
		{"requires ctor and entry", objectOf(t, map[int][]offload.Entry{19: {req19}}, nil, "__tgt_register_requires"), "requires-encoding"},
		{"requires ctor and 56 bytes", objectOf(t, map[int][]offload.Entry{22: {KernelEntry("k22")}}, nil, "__tgt_register_requires"), "requires-encoding"},
	} {
		o := mixing(t, c.f)
		if got := kinds(o.Findings); got != c.want {
			t.Errorf("%s: %q, want %q: %v", c.name, got, c.want, o.Findings)
		}
		for _, f := range o.Findings {
			if strings.Contains(f.Message, "\n") || !strings.Contains(f.Message, "LLVM") {
				t.Errorf("%s: message %q", c.name, f.Message)
			}
		}
	}
}

// TestMixingOfLinkedPrograms reads the programs of testdata/mixing (made by
// make.sh there): the wrapper's release, the runtime the program needs, and
// the findings that predict its failure at run time.
func TestMixingOfLinkedPrograms(t *testing.T) {
	for _, c := range []struct {
		file, wrapper, section, runtime, findings string
	}{
		// clang-19 links clang-19's object.
		{"same19", "LLVM 19-20", "omp_offloading_entries", "libomptarget.so.19.1", ""},
		// clang-22 links clang-19's object: its entries lie outside the
		// empty range of llvm_offload_entries (found by its shape: the
		// file is stripped).
		{"m19by22.strip", "LLVM 18-24", "", "libomptarget.so.22.1", "unregistered-entries"},
		// A wrapper of 22 whose program needs libomptarget 19.
		{"p22w22rt19", "LLVM 21-24", "llvm_offload_entries", "libomptarget.so.19.1", "runtime-entry-layout"},
		// clang-19 links clang-14's object: its bundle is not read, and no
		// wrapper registers anything. Its requires constructor, which
		// runtime 19 ignores, registers OMP_REQ_NONE: nothing is lost.
		{"m14by19", "", "", "libomptarget.so.19.1", "unregistered-entries"},
	} {
		o := mixing(t, readFile(t, filepath.Join("testdata", "mixing", c.file)))
		var wrapper, section string
		if len(o.Registrations) == 1 {
			wrapper, section = o.Registrations[0].Releases.String(), o.Registrations[0].Section
		}
		if wrapper != c.wrapper || section != c.section || o.Runtime != c.runtime || kinds(o.Findings) != c.findings {
			t.Errorf("%s: wrapper %q registering %q, runtime %q, findings %q; want %q, %q, %q, %q\n%v",
				c.file, wrapper, section, o.Runtime, kinds(o.Findings), c.wrapper, c.section, c.runtime, c.findings, o.Findings)
		}
	}
}

// TestIncompatibleNamesFirstConflict: among inputs of random sets of
// releases, each finding names the first earlier input whose set is
// disjoint from the input's, as comparing every pair in order does.
func TestIncompatibleNamesFirstConflict(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	rows := release.Known().Rows()
	for round := range 200 {
		ins := make([]Input, 1+rng.Intn(12))
		for i := range ins {
			var links release.Set
			for _, r := range rows[:4] {
				if rng.Intn(2) == 0 {
					links |= release.SetOf(r)
				}
			}
			ins[i] = Input{Name: fmt.Sprintf("in%d", i), Origin: &Origin{Facts: []Fact{{Topic: TopicEntries, What: "x", Made: links, Links: links}}}}
			if rng.Intn(8) == 0 {
				ins[i].Origin = nil
			}
		}
		got := Incompatible(ins)
		for i, a := range ins {
			want := ""
			if a.Origin != nil && a.Origin.Links() != 0 {
				for _, b := range ins[:i] {
					if b.Origin != nil && b.Origin.Links() != 0 && a.Origin.Links()&b.Origin.Links() == 0 {
						want = b.Name
						break
					}
				}
			}
			other := ""
			if len(got[i]) > 0 {
				other = got[i][0].Other
			}
			if other != want || len(got[i]) > 1 {
				t.Fatalf("round %d, %s: findings %v, want one naming %q", round, a.Name, got[i], want)
			}
		}
	}
}
