package fatobj_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// List the device images and offload entries of an object that clang-22
// compiled with -fopenmp-targets=x86_64-unknown-linux-gnu. Open reads
// archives, executables, shared objects, OffloadBinaries and bundle files
// alike.
func ExampleOpen() {
	f, err := fatobj.Open("../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o", nil)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	for _, o := range f.Objects {
		made, _ := o.Made()
		fmt.Printf("%s: %s, made by %v, read as %v\n", o.Name, o.Format, made, o.Release)
		for _, im := range o.Images {
			fmt.Printf("image [%s] %s %s %s %q: %d bytes at %#x in %s\n", im.Number(), im.OffloadKind, im.Kind, im.Triple(), im.Arch(), im.Size, im.Offset, im.Section)
		}
		for _, e := range o.Entries {
			fmt.Printf("entry %s[%d] %s %q\n", e.Section, e.Index, e.Kind, e.Name)
		}
	}
	// Output:
	// ../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o: elf, made by LLVM 21-22, read as LLVM 22
	// image [0] openmp elf x86_64-unknown-linux-gnu "generic": 2192 bytes at 0x3a8 in .llvm.offloading
	// entry llvm_offload_entries[0] openmp "gvar"
	// entry llvm_offload_entries[1] openmp "lvar_decl_tgt_ref_ptr"
	// entry llvm_offload_entries[2] openmp "__omp_offloading_fe00_986021_foo_l10"
}

// Read device code from memory: here an OffloadBinary of LLVM 19 made on
// the spot, as clang-offload-packager would write it.
func ExampleNewFile() {
	r, _ := release.Lookup(19)
	im := offloadbinary.Image{Kind: offload.ImageCubin, OffloadKind: offload.OffloadCUDA}
	im.Set("triple", "nvptx64-nvidia-cuda")
	im.Set("arch", "sm_90")
	bin, err := offloadbinary.MarshalBinary(r, &im, []byte("CUBIN"))
	if err != nil {
		panic(err)
	}
	f, err := fatobj.NewFile("kernel.bin", bytes.NewReader(bin), int64(len(bin)), nil)
	if err != nil {
		panic(err)
	}
	for _, im := range f.Images() {
		rd, err := im.Reader()
		if err != nil {
			panic(err)
		}
		data, err := io.ReadAll(rd)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v: %s %q\n", im, im.Kind, data)
	}
	// Output:
	// kernel.bin: cuda image [0] for nvptx64-nvidia-cuda (arch "sm_90"): cubin "CUBIN"
}

// Plan which files extracting the device images of a fat object writes,
// named as clang-offload-packager names them; Extraction.Write would then
// write them into a folder.
func ExamplePlanExtract() {
	f, err := fatobj.Open("../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o", nil)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	for _, raw := range []bool{false, true} {
		x, err := fatobj.PlanExtract([]*fatobj.File{f}, &fatobj.ExtractOptions{
			Filter: fatobj.Filter{Strings: map[string]string{"triple": "x86_64-unknown-linux-gnu"}},
			Raw:    raw,
		})
		if err != nil {
			panic(err)
		}
		for _, xf := range x.Files {
			fmt.Println(xf.Name, xf.Size)
		}
	}
	// Output:
	// openmp-x86-llvm22-x86_64-unknown-linux-gnu-generic.0.offload 2344
	// openmp-x86-llvm22-x86_64-unknown-linux-gnu-generic.0.o 2192
}

// Check the objects of one link: each is consistent, but clang-15's
// 32-byte entries and clang-22's 56-byte ones cannot be linked together.
func ExampleCheck() {
	var objs []*fatobj.Object
	for _, path := range []string{
		"../offload/testdata/llvm/host-objects/openmp-x86-llvm15.o",
		"../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o",
	} {
		f, err := fatobj.Open(path, nil)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		objs = append(objs, f.Objects...)
	}
	reports, err := fatobj.Check(objs)
	if err != nil {
		panic(err)
	}
	for _, r := range reports {
		fmt.Printf("%s: %d entries, %d images, %d missing\n", r.Object.Name, len(r.Object.Entries), len(r.Images), len(r.Missing))
		for _, finding := range r.Findings {
			if finding.Other != "" {
				fmt.Println(" ", finding.Kind, "with", finding.Other)
			} else {
				fmt.Println(" ", finding.Kind)
			}
		}
	}
	// Output:
	// ../offload/testdata/llvm/host-objects/openmp-x86-llvm15.o: 3 entries, 1 images, 0 missing
	// ../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o: 3 entries, 1 images, 0 missing
	//   mixed-entry-layouts with ../offload/testdata/llvm/host-objects/openmp-x86-llvm15.o
}

// Find, before running it, the device images of a program that LLVM 19's
// libomptarget will not load: here a cubin of CUDA 13, in a program clang 19
// linked, which that runtime refused on an NVIDIA H200. LLVM 22's loads it.
func ExampleCheckWith() {
	f, err := fatobj.Open("../offload/testdata/nvidia/openmp-llvm19/vadd-linked-by-clang19", nil)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	for _, major := range []int{19, 22} {
		rt, err := release.Lookup(major)
		if err != nil {
			panic(err)
		}
		reports, err := fatobj.CheckWith(f.Objects, &fatobj.CheckOptions{Runtime: rt})
		if err != nil {
			panic(err)
		}
		fmt.Printf("libomptarget %d: %d findings\n", major, len(reports[0].Findings))
		for _, finding := range reports[0].Findings {
			fmt.Println(" ", finding.Kind, finding.Releases)
		}
	}
	// Output:
	// libomptarget 19: 1 findings
	//   runtime-refuses-image LLVM 19
	// libomptarget 22: 0 findings
}

// Make a fat object for an AArch64 host, as clang -fembed-offload-object
// does, from an OffloadBinary in memory, and read it back.
func ExampleEmbed() {
	im := offloadbinary.Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadHIP}
	im.Set("triple", "amdgcn-amd-amdhsa")
	im.Set("arch", "gfx90a")
	bin, err := offloadbinary.MarshalBinary(release.Default(), &im, []byte("\x7fELF code object"))
	if err != nil {
		panic(err)
	}
	o, err := elfobj.ForTriple("aarch64-unknown-linux-gnu")
	if err != nil {
		panic(err)
	}
	if err := fatobj.Embed(o, io.NewSectionReader(bytes.NewReader(bin), 0, int64(len(bin)))); err != nil {
		panic(err)
	}
	var out bytes.Buffer
	if _, err := elfobj.Write(&out, o); err != nil {
		panic(err)
	}
	f, err := fatobj.NewFile("fat.o", bytes.NewReader(out.Bytes()), int64(out.Len()), nil)
	if err != nil {
		panic(err)
	}
	for _, im := range f.Images() {
		fmt.Println(im)
		fmt.Println(im.Section, im.Size, "bytes")
	}
	// Output:
	// fat.o: hip image [0] for amdgcn-amd-amdhsa (arch "gfx90a")
	// .llvm.offloading 16 bytes
}
