package bitcode_test

import (
	"fmt"
	"os"

	"github.com/goffload/goffload/bitcode"
	"github.com/goffload/goffload/offloadbinary"
)

// List the symbols that an archive's index would list for a bitcode file
// clang-19 made, as llvm-ar reads them from its IR symbol table.
func ExampleSymbols() {
	f, err := os.Open("testdata/x86_64-clang19.bc")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	syms, err := bitcode.Symbols(f, st.Size())
	if err != nil {
		panic(err)
	}
	for _, s := range syms {
		if s.ArchiveSymbol() {
			fmt.Println(s.Name)
		}
	}
	// Output:
	// exported
	// defined_global
	// weak_global
}

// List the device images of a bitcode host object, as `clang -flto -c`
// makes one: the OffloadBinaries its module embeds in section
// .llvm.offloading, read as llvm-offload-binary reads them. The module of
// testdata/embedded.bc lists the global @bin.single twice, and a node
// of another section, which LLVM's offloading tools do not read.
func ExampleEmbeddedObjects() {
	f, err := os.Open("testdata/embedded.bc")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	objs, err := bitcode.EmbeddedObjects(f, st.Size())
	if err != nil {
		panic(err)
	}
	for _, o := range objs {
		if o.Section != bitcode.OffloadingSection {
			fmt.Printf("@%s: section %s, %d bytes: not device code\n", o.Global, o.Section, len(o.Data))
			continue
		}
		bins, err := offloadbinary.ReadAllBytes(o.Data, nil)
		if err != nil {
			panic(err)
		}
		for _, b := range bins {
			for _, im := range b.Images {
				fmt.Printf("@%s: %v image for %s (arch %s), %d bytes\n", o.Global, im.OffloadKind, im.Triple(), im.Arch(), im.ImageSize)
			}
		}
	}
	// Output:
	// @bin.single: openmp image for nvptx64-nvidia-cuda (arch sm_70), 10 bytes
	// @lto.junk: section .llvm.lto, 4 bytes: not device code
	// @bin.multi: openmp image for nvptx64-nvidia-cuda (arch sm_70), 10 bytes
	// @bin.multi: hip image for amdgcn-amd-amdhsa (arch gfx90a), 16 bytes
	// @bin.single: openmp image for nvptx64-nvidia-cuda (arch sm_70), 10 bytes
}
