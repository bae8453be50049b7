package bundle_test

import (
	"bytes"
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/release"
)

// A HIP fatbin as clang-linker-wrapper 22 has clang-offload-bundler write it,
// read back.
func Example() {
	r, err := release.Lookup(22)
	if err != nil {
		log.Fatal(err)
	}
	code := "\x7fELF...gfx90a code object..."
	var fatbin bytes.Buffer
	err = bundle.WriteHIPFatbin(&fatbin, r, []bundle.CodeObject{
		{TargetID: "gfx90a:xnack+", Data: io.NewSectionReader(strings.NewReader(code), 0, int64(len(code)))},
	})
	if err != nil {
		log.Fatal(err)
	}

	b, err := bundle.Read(bytes.NewReader(fatbin.Bytes()), int64(fatbin.Len()))
	if err != nil {
		log.Fatal(err)
	}
	for i, e := range b.Entries {
		data, _ := io.ReadAll(b.Open(i))
		fmt.Printf("%-40s offset %d, %d bytes %q\n", e.ID, e.Offset, e.Size, data)
	}
	// Output:
	// host-x86_64-unknown-linux-gnu-           offset 4096, 0 bytes ""
	// hip-amdgcn-amd-amdhsa--gfx90a:xnack+     offset 4096, 28 bytes "\x7fELF...gfx90a code object..."
}

// Entries at 8-byte offsets, host last, as
// `clang-offload-bundler -type=o -bundle-align=8 -targets=openmp-x86_64-unknown-linux-gnu,host-x86_64-unknown-linux-gnu`
// writes them for a non-object host input.
func ExampleEntryOffsets() {
	inputs := []bundle.Input{
		{ID: "openmp-x86_64-unknown-linux-gnu-", Data: io.NewSectionReader(strings.NewReader("device"), 0, 6)},
		{ID: "host-x86_64-unknown-linux-gnu-", Data: io.NewSectionReader(strings.NewReader("host"), 0, 4)},
	}
	entries, size, err := bundle.EntryOffsets(8, inputs)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range entries {
		fmt.Println(e.ID, e.Offset, e.Size)
	}
	fmt.Println("bundle size", size)
	// Output:
	// openmp-x86_64-unknown-linux-gnu- 144 6
	// host-x86_64-unknown-linux-gnu- 152 4
	// bundle size 156
}
