package offload_test

import (
	"encoding/binary"
	"fmt"

	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// The requires entry that clang 22 writes for
// `#pragma omp requires unified_shared_memory`.
func ExampleEntry_Raw() {
	r, _ := release.Lookup(22)
	e := offload.Entry{
		Kind:  offload.OffloadOpenMP,
		Flags: uint32(offload.OMPEntryRequires),
		Name:  ".requires", // LLVM 21 and later name the requires entry so
		Data:  uint64(offload.RequiresUnifiedSharedMemory),
	}
	raw, err := e.Raw(r)
	if err != nil {
		panic(err)
	}
	b, _ := offload.LayoutOf(r).Encode(binary.LittleEndian, raw)
	for off := 0; off < len(b); off += 8 {
		fmt.Printf("%2d: % x\n", off, b[off:off+8])
	}
	fmt.Println("name pointer at", offload.LayoutOf(r).NameOffset())
	// Output:
	//  0: 00 00 00 00 00 00 00 00
	//  8: 01 00 01 00 10 00 00 00
	// 16: 00 00 00 00 00 00 00 00
	// 24: 00 00 00 00 00 00 00 00
	// 32: 00 00 00 00 00 00 00 00
	// 40: 08 00 00 00 00 00 00 00
	// 48: 00 00 00 00 00 00 00 00
	// name pointer at 24
}

func ExampleEntryLayout_Decode() {
	// The second entry of LLVM 19's omp_offloading_entries in
	// testdata/llvm/host-objects/openmp-x86-llvm19.o:
	// `declare target link(lvar)`.
	b := []byte{
		0, 0, 0, 0, 0, 0, 0, 0, // addr (relocated)
		0, 0, 0, 0, 0, 0, 0, 0, // name (relocated)
		8, 0, 0, 0, 0, 0, 0, 0, // size
		1, 0, 0, 0, // flags
		0, 0, 0, 0, // reserved
	}
	layout, _ := offload.DetectEntryLayout("omp_offloading_entries")
	raw, err := layout.Decode(binary.LittleEndian, b)
	if err != nil {
		panic(err)
	}
	fmt.Println(layout, raw.Size, offload.OpenMPFlags(raw.Flags))
	// Output: legacy 8 link
}

func ExampleOpenMPFlags_String() {
	fmt.Println(offload.OpenMPFlags(0))
	fmt.Println(offload.OMPEntryLink | offload.OMPEntryIndirect)
	fmt.Println(offload.OMPEntryRequires | 0x40)
	f, _ := offload.ParseOpenMPFlags("link+indirect")
	fmt.Printf("%#x\n", uint32(f))
	// Output:
	// 0
	// link+indirect
	// requires+0x40
	// 0x9
}

func ExampleGPUFlags_String() {
	f := offload.GPUManaged | offload.GPUExtern
	fmt.Println(f, f.Type())
	fmt.Println(offload.GPUTexture | offload.GPUNormalized)
	fmt.Println(offload.GPUConstant)
	// Output:
	// managed+extern managed
	// texture+normalized
	// global+constant
}

// The ident_t that clang passes to __tgt_target_kernel.
func ExampleNewIdent() {
	id := offload.NewIdent(offload.IdentKMPC, offload.DefaultSourceLocation)
	fmt.Println(id.Flags, id.Reserved3)
	fmt.Printf("% x\n", id.Encode(binary.LittleEndian))
	fmt.Println("psource pointer at", offload.IdentPSourceOffset)
	// Output:
	// KMPC 22
	// 00 00 00 00 02 00 00 00 00 00 00 00 16 00 00 00 00 00 00 00 00 00 00 00
	// psource pointer at 16
}

func ExampleParseSourceLocation() {
	loc, err := offload.ParseSourceLocation(";id.c;foo;2;1;;")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s:%d:%d in %s\n", loc.File, loc.Line, loc.Column, loc.Function)
	_, err = offload.ParseSourceLocation(";id.c;foo;2;;")
	fmt.Println(err != nil)
	// Output:
	// id.c:2:1 in foo
	// true
}

func ExampleIndirectTable_Lookup() {
	t := offload.BuildIndirectTable([]offload.IndirectPair{
		{Host: 0x401200, Device: 0x7000_2000},
		{Host: 0x401000, Device: 0x7000_1000},
	})
	fmt.Printf("%x\n", t)
	dev, ok := t.Lookup(0x401200)
	fmt.Printf("%#x %v\n", dev, ok)
	dev, ok = t.Lookup(0x401100)
	fmt.Printf("%#x %v\n", dev, ok)
	// Output:
	// [{401000 70001000} {401200 70002000}]
	// 0x70002000 true
	// 0x0 false
}
