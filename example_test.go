package goffload_test

import (
	"errors"
	"fmt"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/offload"
)

// Tell malformed input from other failures, and say where it is, whichever
// package read it.
func ExampleFormatError() {
	data := append(offload.Magic[:], make([]byte, 92)...) // version 0
	_, err := offload.ReadAllBytes(data, nil)
	var fe *goffload.FormatError
	if errors.As(err, &fe) {
		fmt.Printf("%s: field %s at byte %d, value %v\n", fe.Format, fe.Field, fe.Offset, fe.Value)
	}
	fmt.Println(errors.Is(err, goffload.ErrInvalid), errors.Is(err, goffload.ErrTruncated))
	// Output:
	// offload binary: field Version at byte 4, value 0
	// true false
}
