package fatobj_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// check ends an example on an error.
func check(err error) {
	if err != nil {
		panic(err)
	}
}

// member reads a file into an archive member of that name.
func member(name, path string) ar.NewMember {
	b, err := os.ReadFile(path)
	if err != nil {
		panic(err)
	}
	return ar.NewMember{Name: name, Data: io.NewSectionReader(bytes.NewReader(b), 0, int64(len(b)))}
}

// List every device image of a static library that holds another library,
// each of fat objects that clang made: Open (and NewFile) read archives in
// archives, and name each object by its path through them.
func ExampleOpen_nestedArchive() {
	const objs = "../offload/testdata/llvm/host-objects/"
	var inner, outer bytes.Buffer
	if err := ar.WriteGNU(&inner, []ar.NewMember{member("k19.o", objs+"openmp-x86-llvm19.o"), member("k22.o", objs+"openmp-x86-llvm22.o")}); err != nil {
		panic(err)
	}
	in := inner.Bytes()
	libk := ar.NewMember{Name: "libk.a", Data: io.NewSectionReader(bytes.NewReader(in), 0, int64(len(in)))}
	if err := ar.WriteGNU(&outer, []ar.NewMember{member("k16.o", objs+"openmp-x86-llvm16.o"), libk}); err != nil {
		panic(err)
	}
	f, err := fatobj.NewFile("libapp.a", bytes.NewReader(outer.Bytes()), int64(outer.Len()), nil)
	if err != nil {
		panic(err)
	}
	for _, im := range f.Images() {
		fmt.Println(im)
	}
	// Output:
	// libapp.a(k16.o): openmp image [0] for x86_64-unknown-linux-gnu (arch "")
	// libapp.a(libk.a)(k19.o): openmp image [0] for x86_64-unknown-linux-gnu (arch "")
	// libapp.a(libk.a)(k22.o): openmp image [0] for x86_64-unknown-linux-gnu (arch "generic")
}

// Embed a cubin for sm_90 into an object clang-22 compiled, beside the
// device code clang put there, and read the object back.
func ExampleEmbed_intoClangObject() {
	cubin, err := os.ReadFile("../offload/testdata/nvidia/openmp-llvm19/teams.sm_90.cubin")
	check(err)
	im := offloadbinary.Image{Kind: offload.ImageCubin, OffloadKind: offload.OffloadOpenMP}
	im.Set("triple", "nvptx64-nvidia-cuda")
	im.Set("arch", "sm_90")
	bin, err := offloadbinary.MarshalBinary(release.Default(), &im, cubin)
	check(err)
	host, err := os.ReadFile("../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o")
	check(err)
	hf, err := elfobj.Read(bytes.NewReader(host), int64(len(host)))
	check(err)
	o, err := hf.Object()
	check(err)
	check(fatobj.Embed(o, io.NewSectionReader(bytes.NewReader(bin), 0, int64(len(bin)))))
	var out bytes.Buffer
	_, err = elfobj.Write(&out, o)
	check(err)
	f, err := fatobj.NewFile("fat.o", bytes.NewReader(out.Bytes()), int64(out.Len()), nil)
	check(err)
	for _, im := range f.Images() {
		fmt.Println(im)
	}
	// Output:
	// fat.o: openmp image [0] for x86_64-unknown-linux-gnu (arch "generic")
	// fat.o: openmp image [1] for nvptx64-nvidia-cuda (arch "sm_90")
}

// Read the offload entries of a program clang-19 linked for an NVIDIA GPU,
// and tell each one's role (kernel, global, link, indirect, ...).
func ExampleObject_entryRoles() {
	f, err := fatobj.Open("../offload/testdata/nvidia/openmp-llvm19/vadd-linked-by-clang19", nil)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	for _, o := range f.Objects {
		for _, e := range o.Entries {
			fmt.Printf("%s %s %q (%d bytes)\n", e.Section, e.Role(), e.Name, e.Size)
		}
	}
	// Output:
	// omp_offloading_entries kernel "__omp_offloading_fe00_5101ea_main_l10" (0 bytes)
}

// Say which LLVM releases made each of a set of objects, and whether one
// release can link them all: clang-15's 32-byte entries and clang-22's
// 56-byte ones cannot meet.
func ExampleObject_MadeBy() {
	all := release.Known()
	for _, path := range []string{
		"../offload/testdata/llvm/host-objects/openmp-x86-llvm15.o",
		"../offload/testdata/llvm/host-objects/openmp-x86-llvm16.o",
		"../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o",
	} {
		f, err := fatobj.Open(path, nil)
		if err != nil {
			panic(err)
		}
		for _, o := range f.Objects {
			made, err := o.Made()
			if err != nil {
				panic(err)
			}
			fmt.Println(o.Name, "made by", made)
			all &= made
		}
		f.Close()
	}
	fmt.Println("one release makes them all:", all)
	// Output:
	// ../offload/testdata/llvm/host-objects/openmp-x86-llvm15.o made by LLVM 15-18
	// ../offload/testdata/llvm/host-objects/openmp-x86-llvm16.o made by LLVM 15-18
	// ../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o made by LLVM 21-22
	// one release makes them all: no LLVM release
}

// Convert a static library of clang-19's objects into LLVM 22's formats,
// and check what comes out.
func ExampleConvertFile() {
	var lib bytes.Buffer
	if err := ar.WriteGNU(&lib, []ar.NewMember{member("k.o", "../offload/testdata/llvm/host-objects/openmp-x86-llvm19.o")}); err != nil {
		panic(err)
	}
	in, err := fatobj.NewFile("libk.a", bytes.NewReader(lib.Bytes()), int64(lib.Len()), nil)
	if err != nil {
		panic(err)
	}
	to, _ := release.Lookup(22)
	var out bytes.Buffer
	results, err := fatobj.ConvertFile(&out, in, nil, to)
	if err != nil {
		panic(err)
	}
	for _, r := range results {
		fmt.Println(r.Name, "made by", r.Made, "converted from", r.From)
	}
	conv, err := fatobj.NewFile("libk22.a", bytes.NewReader(out.Bytes()), int64(out.Len()), nil)
	if err != nil {
		panic(err)
	}
	reports, err := fatobj.Check(conv.Objects)
	if err != nil {
		panic(err)
	}
	for _, r := range reports {
		made, _ := r.Object.Made()
		fmt.Println(r.Object.Name, "made by", made, "findings:", len(r.Findings))
	}
	// Output:
	// libk.a(k.o) made by LLVM 19-20 converted from LLVM 19
	// libk22.a(k.o) made by LLVM 21-22 findings: 0
}

// List an object as JSON, as `goffload list --json` prints it: an
// Object, or a File of several, marshals as its Listing.
func ExampleObject_MarshalJSON() {
	f, err := fatobj.Open("../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o", nil)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	b, err := json.Marshal(f.Objects[0])
	if err != nil {
		panic(err)
	}
	var l fatobj.Listing
	if err := json.Unmarshal(b, &l); err != nil {
		panic(err)
	}
	fmt.Println(l.Format, l.MadeBy, len(b), "bytes of JSON")
	for _, e := range l.Entries {
		fmt.Println(e.Role, e.Name)
	}
	im, _ := json.Marshal(l.Images[0].Strings)
	fmt.Println(string(im))
	// Output:
	// elf LLVM 21-22 1100 bytes of JSON
	// global gvar
	// link lvar_decl_tgt_ref_ptr
	// kernel __omp_offloading_fe00_986021_foo_l10
	// {"arch":"generic","triple":"x86_64-unknown-linux-gnu"}
}
