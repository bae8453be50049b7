package entries_test

import (
	"bytes"
	"fmt"
	"os"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/release"
)

// Read the offload entries of a fat object that clang-22 made, and which
// releases its formats say made it.
func ExampleRead() {
	data, err := os.ReadFile("../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o")
	if err != nil {
		panic(err)
	}
	f, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		panic(err)
	}
	ents, err := entries.Read(f, release.Default())
	if err != nil {
		panic(err)
	}
	for _, e := range ents {
		fmt.Println(e.Section, e.Layout, e.Kind, e.Name)
	}
	origin, err := entries.Mixing(f, release.Default())
	if err != nil {
		panic(err)
	}
	fmt.Println("made by", origin.Made())
	// Output:
	// llvm_offload_entries v1 openmp gvar
	// llvm_offload_entries v1 openmp lvar_decl_tgt_ref_ptr
	// llvm_offload_entries v1 openmp __omp_offloading_fe00_986021_foo_l10
	// made by LLVM 21-22
}
