package main

import (
	"github.com/goffload/goffload/internal/infile"
)

// elfMagic starts every ELF file.
var elfMagic = []byte("\x7fELF")

// openSized opens path for reading: a regular file, never a FIFO or a
// device, read through a pool that bounds the open descriptors.
func openSized(path string) (*infile.File, error) { return infile.Open(path) }
