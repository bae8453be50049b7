package goffload_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/offloadbinary"
)

// Tell malformed input from other failures, and say where it is, whichever
// package read it.
func ExampleFormatError() {
	data := append(offloadbinary.Magic[:], make([]byte, 92)...) // version 0
	_, err := offloadbinary.ReadAllBytes(data, nil)
	var fe *goffload.FormatError
	if errors.As(err, &fe) {
		fmt.Printf("%s: field %s at byte %d, value %v\n", fe.Format, fe.Field, fe.Offset, fe.Value)
	}
	fmt.Println(errors.Is(err, goffload.ErrInvalid), errors.Is(err, goffload.ErrTruncated))
	// Output:
	// offload binary: field Version at byte 4, value 0
	// true false
}

// Report where a file ends too soon: here an object clang-22 made, cut
// after 300 bytes, opened as any input is.
func ExampleFormatError_truncated() {
	data, err := os.ReadFile("offload/testdata/llvm/host-objects/openmp-x86-llvm22.o")
	if err != nil {
		panic(err)
	}
	_, err = fatobj.NewFile("cut.o", bytes.NewReader(data[:300]), 300, nil)
	var fe *goffload.FormatError
	if errors.As(err, &fe) {
		fmt.Printf("format %s, byte %d: %s\n", fe.Format, fe.Offset, fe.Field)
	}
	fmt.Println(errors.Is(err, goffload.ErrTruncated))
	// Output:
	// format elf, byte 40: section header table of 22 entries at 0x12c0 past the end of the file (300 bytes)
	// true
}
