package wrap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
)

// ErrNotFatbin: the device code given to [GPU] is not what the CUDA or HIP
// runtime reads at start-up, which would fail there (or worse) instead of at
// build time.
var ErrNotFatbin = errors.New("not a fatbin")

// cudaFatbinMagic starts the header of a fatbinary that NVIDIA's fatbinary
// writes and __cudaRegisterFatBinary reads: magic, version 1, header size,
// then the 64-bit size of what follows the header.
const (
	cudaFatbinMagic      = 0xBA55ED50
	cudaFatbinHeaderSize = 16
)

// checkFatbin checks fb as the runtime of kind would read it.
func checkFatbin(kind offload.OffloadKind, fb fatbin) error {
	if fb.Size < 0 || (fb.R == nil && fb.Size > 0) {
		return fmt.Errorf("wrap: fatbin of %d bytes from %T", fb.Size, fb.R)
	}
	var head [32]byte
	n := min(int64(len(head)), fb.Size)
	if n > 0 {
		if m, err := fb.R.ReadAt(head[:n], 0); int64(m) < n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("wrap: reading the fatbin: %d of %d bytes: %w", m, n, err)
		}
	}
	if kind == offload.OffloadCUDA {
		return checkCUDA(head[:n], fb.Size)
	}
	return checkHIP(head[:n], fb)
}

// checkCUDA checks the fatbinary header at the start of head, the first bytes
// of size: magic, version 1, a header of 16 bytes or more, and the data it
// declares inside the input.
func checkCUDA(head []byte, size int64) error {
	le := binary.LittleEndian
	if len(head) >= 4 && le.Uint32(head) == cudaFatbinMagic && len(head) < cudaFatbinHeaderSize {
		return fmt.Errorf("wrap: CUDA fatbinary of %d bytes, shorter than its %d-byte header: %w", size, cudaFatbinHeaderSize, ErrNotFatbin)
	}
	if len(head) < cudaFatbinHeaderSize || le.Uint32(head) != cudaFatbinMagic {
		return fmt.Errorf("wrap: %s, not a CUDA fatbinary (what NVIDIA's fatbinary makes): %w", describe(head, size), ErrNotFatbin)
	}
	version, hsize, fatSize := le.Uint16(head[4:]), uint64(le.Uint16(head[6:])), le.Uint64(head[8:])
	switch {
	case version != 1:
		return fmt.Errorf("wrap: CUDA fatbinary version %d, want 1: %w", version, ErrNotFatbin)
	case hsize < cudaFatbinHeaderSize:
		return fmt.Errorf("wrap: CUDA fatbinary header of %d bytes, less than %d: %w", hsize, cudaFatbinHeaderSize, ErrNotFatbin)
	case hsize > uint64(size) || fatSize > uint64(size)-hsize:
		return fmt.Errorf("wrap: CUDA fatbinary of %d bytes after its %d-byte header in %d bytes: %w", fatSize, hsize, size, ErrNotFatbin)
	}
	return nil
}

// checkHIP checks fb as the HIP runtime reads a fatbin: an uncompressed
// offload bundle with device code (an entry other than the host's that is
// not empty), or a compressed bundle whose stream decompresses completely,
// within the size its header declares, into such a bundle.
func checkHIP(head []byte, fb fatbin) error {
	var entries []bundle.Entry
	switch {
	case bytes.HasPrefix(head, []byte(bundle.Magic)):
		b, err := bundle.Read(fb.R, fb.Size)
		if err != nil {
			return notFatbin("HIP fatbin", err)
		}
		entries = b.Entries
	case bytes.HasPrefix(head, []byte(bundle.CompressedMagic)):
		var err error
		if entries, err = checkCompressed(fb); err != nil {
			return notFatbin("compressed HIP fatbin", err)
		}
	default:
		return fmt.Errorf("wrap: %s, not a HIP fatbin (a clang offload bundle): %w", describe(head, fb.Size), ErrNotFatbin)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.ID, "host-") && e.Size > 0 {
			return nil
		}
	}
	return fmt.Errorf("wrap: HIP fatbin of %d entries holds no device code: %w", len(entries), ErrNotFatbin)
}

// notFatbin adds ErrNotFatbin to an error of package bundle about the input
// (not, say, a failing disk).
func notFatbin(what string, err error) error {
	var fe *goffload.FormatError
	if errors.As(err, &fe) && !errors.Is(err, ErrNotFatbin) {
		return fmt.Errorf("wrap: %s: %w: %w", what, err, ErrNotFatbin)
	}
	return fmt.Errorf("wrap: %s: %w", what, err)
}

// checkCompressed decompresses the compressed bundle fb to nowhere, which
// the header's UncompressedSize bounds, and returns the entries of the bundle
// it holds, each of whose data must have been decompressed.
func checkCompressed(fb fatbin) ([]bundle.Entry, error) {
	c, err := bundle.ReadCompressed(fb.R, fb.Size)
	if err != nil {
		return nil, err
	}
	entries, err := c.Entries()
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(io.Discard, c.Open())
	if err != nil {
		return nil, err
	}
	if end := (&bundle.Bundle{Entries: entries}).End(); uint64(n) < end {
		return nil, &goffload.FormatError{Format: "decompressed bundle", Offset: -1, Field: fmt.Sprintf("data ends at %d, its entries at %d", n, end), Err: ErrNotFatbin}
	}
	return entries, nil
}

// describe says what the input of size bytes that starts with head is, for
// an error message.
func describe(head []byte, size int64) string {
	le := binary.LittleEndian
	switch {
	case size == 0:
		return "an empty file"
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "an ELF file"
	case bytes.HasPrefix(head, offloadbinary.Magic[:]):
		return "an offload binary"
	case bytes.HasPrefix(head, []byte(bundle.Magic)):
		return "a clang offload bundle (a HIP fatbin)"
	case bytes.HasPrefix(head, []byte(bundle.CompressedMagic)):
		return "a compressed clang offload bundle (a HIP fatbin)"
	case len(head) >= 4 && le.Uint32(head) == cudaFatbinMagic:
		return "a CUDA fatbinary"
	case len(bytes.Trim(head, "\x00")) == 0:
		return fmt.Sprintf("%d bytes that start with zeros", size)
	case isText(head):
		return "text"
	}
	return fmt.Sprintf("%d bytes of unknown data (% x...)", size, head[:min(len(head), 8)])
}

func isText(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\n' && c != '\r' && c != '\t' {
			return false
		}
	}
	return true
}
