package fatobj_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/release"
)

// Convert an object that clang-14 compiled (its OpenMP device code in a
// bundle, requires in a constructor) into what clang-22's driver links.
func ExampleConvert() {
	data, err := os.ReadFile("testdata/convert/omp-llvm14.o")
	if err != nil {
		panic(err)
	}
	f, err := fatobj.NewFile("omp-llvm14.o", bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		panic(err)
	}
	from, made, err := f.Objects[0].MadeBy()
	if err != nil {
		panic(err)
	}
	o, err := f.Objects[0].ELF.Object()
	if err != nil {
		panic(err)
	}
	to, _ := release.Lookup(22)
	conv, err := fatobj.Convert(o, from, to)
	if err != nil {
		panic(err)
	}
	fmt.Println("made by", made)
	for _, c := range conv.Changes {
		fmt.Println(c)
	}
	var out bytes.Buffer
	if _, err := elfobj.Write(&out, o); err != nil {
		panic(err)
	}
	// Output:
	// made by LLVM 13-14
	// __CLANG_OFFLOAD_BUNDLE__openmp-x86_64-pc-linux-gnu: device object: section omp_offloading_entries: llvm_offload_entries, 1 legacy entries -> 1 v1
	// __CLANG_OFFLOAD_BUNDLE__openmp-x86_64-pc-linux-gnu: device object: 1 name-string symbols: .omp_offloading.entry_name -> .offloading.entry_name
	// bundle openmp-x86_64-pc-linux-gnu: an OffloadBinary in .llvm.offloading (elf, triple x86_64-pc-linux-gnu, arch "generic")
	// section omp_offloading_entries: llvm_offload_entries, 3 legacy entries -> 3 v1
	// .init_array.0: .omp_offloading.requires_reg no longer runs
	// llvm_offload_entries: requires entry ".requires" with flags unified_shared_memory
	// 3 name-string symbols: .omp_offloading.entry_name -> .offloading.entry_name
}
