package wrap_test

import (
	"bytes"
	"fmt"
	"io"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
	"github.com/goffload/goffload/wrap"
)

// Wrap an OpenMP device image as clang-linker-wrapper of LLVM 22 does: the
// object registers it with libomptarget when the program starts.
func ExampleOpenMP() {
	r, _ := release.Lookup(22)
	image := []byte("a device image linked for x86-64")
	bin, err := wrap.FromImage(r, offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", ""),
		io.NewSectionReader(bytes.NewReader(image), 0, int64(len(image))))
	if err != nil {
		panic(err)
	}
	o, err := wrap.OpenMP(wrap.Options{Release: r}, []wrap.Binary{bin}) // zero Triple: x86-64 Linux
	if err != nil {
		panic(err)
	}
	for _, s := range o.Sections {
		if s.Name == ".llvm.offloading" || s.Name == "omp_offloading_entries" || s.Name == ".init_array.101" {
			fmt.Println(s.Name)
		}
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		panic(err)
	}
	fmt.Println(buf.Len() > 0)
	// Output:
	// .llvm.offloading
	// .init_array.101
	// true
}

// Read the binaries of a file as release 19 reads them, ready to wrap.
func ExampleReadBinaries() {
	r, _ := release.Lookup(19)
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "")
	data, _ := offloadbinary.MarshalBinary(r, &im, []byte("image"))
	bins, err := wrap.ReadBinaries(io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data))), r)
	fmt.Println(len(bins), bins[0].ImageSize, err)
	_, err = wrap.ReadBinaries(io.NewSectionReader(bytes.NewReader([]byte("not a binary")), 0, 12), r)
	fmt.Println(err)
	// Output:
	// 1 5 <nil>
	// offload binary: buffer size 0xc at byte 0x0: invalid data
}
