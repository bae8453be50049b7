package ar_test

import (
	"bytes"
	"fmt"
	"io"
	"log"

	"github.com/goffload/goffload/ar"
)

func Example() {
	// An archive as `ar rcD` writes it: one member, "hello.txt", of 6 bytes.
	data := []byte("!<arch>\n" +
		"hello.txt/      0           0     0     644     6         `\n" +
		"hello\n")
	a, err := ar.Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Kind(), a.Index())
	for _, m := range a.Members() {
		r, err := a.Open(m) // a section of data, not a copy
		if err != nil {
			log.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		fmt.Printf("%s at byte %d: %d bytes, mode %o: %q\n", m.Name, m.DataOffset, m.Size, m.Mode, b)
	}
	// Output:
	// GNU none
	// hello.txt at byte 68: 6 bytes, mode 644: "hello\n"
}
