package nvfatbin_test

import (
	"debug/elf"
	"fmt"
	"io"
	"log"

	"github.com/goffload/goffload/nvfatbin"
)

// List the cubins and PTX of a whole-program CUDA object's .nv_fatbin as
// cuobjdump -lelf -lptx does.
func Example() {
	const input = "../offload/testdata/nvidia/cuda-llvm22/vadd.o"
	ef, err := elf.Open(input)
	if err != nil {
		log.Fatal(err)
	}
	defer ef.Close()
	s := ef.Section(".nv_fatbin")
	f, err := nvfatbin.Read(s.Open().(io.ReaderAt), int64(s.Size))
	if err != nil {
		log.Fatal(err)
	}
	n := map[nvfatbin.Kind]int{}
	for _, e := range f.Entries {
		n[e.Kind]++
		fmt.Printf("%s %s %d bytes: %s\n", e.Kind, e.Arch(), e.Size, e.CuobjdumpName(input, n[e.Kind]))
	}
	// Output:
	// elf sm_90 3976 bytes: vadd.1.sm_90.cubin
}
