package bundle

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload"

	"github.com/goffload/goffload/internal/tooltest"
)

// FuzzRead feeds Read and ReadCompressed arbitrary input: a bundle or an
// error, never a panic; every entry it reads lies inside the input, writing
// the entries again reads back the same, and reading the headers allocates
// within tooltest.CheckAllocs's bound.
func FuzzRead(f *testing.F) {
	for _, pat := range []string{"testdata/*.bundle", "testdata/*.ccob"} {
		files, _ := filepath.Glob(pat)
		for _, name := range files {
			if b, err := os.ReadFile(name); err == nil {
				f.Add(b)
			}
		}
	}
	h := entryHeader(200, 0, hostID, uint64(len(hostID)))
	f.Add(craft(2, h, entryHeader(200, 5, devID, uint64(len(devID)))))
	f.Add(craft(3, h, entryHeader(200, 5, devID, uint64(len(devID))), entryHeader(201, 3, devID, uint64(len(devID)))))
	f.Add(headerOnly(2))
	small := craft(1, entryHeader(200, 5, devID, uint64(len(devID))))
	hash, _ := Hash(bytes.NewReader(small))
	for _, v := range []uint16{1, 2, 3} {
		f.Add(ccob(v, MethodZlib, zlibCompress(small), uint64(len(small)), hash))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The headers, a compressed bundle's included, are read within the
		// budget; what a compressed bundle inflates to is bounded by its
		// declared size (checkCompressed reads 16 MiB of it at most). A
		// zstd decoder allocates the window its frame declares, bounded
		// apart (MaxWindow, 128 MiB by default): here 1 MiB, which the
		// fixed part of the budget holds.
		tooltest.CheckAllocs(t, len(data), tooltest.AllocsPerByte, tooltest.AllocsFixed, func() {
			if _, err := Read(bytes.NewReader(data), int64(len(data))); errors.Is(err, ErrCompressed) {
				if c, err := ReadCompressed(bytes.NewReader(data), int64(len(data))); err == nil {
					c.MaxWindow = 1 << 20
					c.Entries()
				}
			}
		})
		checkRead(t, data, true)
	})
}

func checkRead(t *testing.T, data []byte, decompress bool) {
	b, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		var fe *goffload.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("Read error %v is not a goffload.FormatError", err)
		}
		if errors.Is(err, ErrCompressed) && decompress {
			checkCompressed(t, data)
		}
		return
	}
	ids := map[string]bool{}
	var inputs []Input
	for i, e := range b.Entries {
		if e.Offset == 0 || e.Offset > uint64(len(data)) || e.Size > uint64(len(data))-e.Offset {
			t.Fatalf("entry %d %+v outside the %d-byte input", i, e, len(data))
		}
		d, err := io.ReadAll(b.Open(i))
		if err != nil || uint64(len(d)) != e.Size {
			t.Fatalf("entry %d: read %d of %d bytes: %v", i, len(d), e.Size, err)
		}
		if j := b.Find(e.ID); j < i {
			t.Fatalf("Find(%q) = %d, not the last of entry %d", e.ID, j, i)
		}
		if !ids[e.ID] {
			ids[e.ID] = true
			inputs = append(inputs, Input{ID: e.ID, Data: io.NewSectionReader(bytes.NewReader(d), 0, int64(len(d)))})
		}
	}
	var out bytes.Buffer
	if err := Write(&out, 1, inputs); err != nil {
		t.Fatal(err)
	}
	again := mustRead(t, out.Bytes())
	if len(again.Entries) != len(inputs) {
		t.Fatalf("wrote %d entries, read %d", len(inputs), len(again.Entries))
	}
	for i, e := range again.Entries {
		if e.ID != inputs[i].ID || e.Size != uint64(inputs[i].size()) {
			t.Fatalf("entry %d read back as %+v", i, e)
		}
	}
}

func checkCompressed(t *testing.T, data []byte) {
	c, err := ReadCompressed(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		var fe *goffload.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("ReadCompressed error %v is not a goffload.FormatError", err)
		}
		return
	}
	c.MaxWindow = 1 << 20
	const limit = 16 << 20
	out, err := io.ReadAll(io.LimitReader(c.Open(), limit))
	if err != nil {
		var fe *goffload.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("decompression error %v is not a goffload.FormatError", err)
		}
		return
	}
	if uint64(len(out)) > c.UncompressedSize {
		t.Fatalf("decompressed %d bytes, more than the declared %d", len(out), c.UncompressedSize)
	}
	if len(out) < limit {
		checkRead(t, out, false)
		// Entries reads what Read reads of the decompressed bundle, and more
		// where an entry lies past the data but within the declared size.
		if b, err := Read(bytes.NewReader(out), int64(len(out))); err == nil {
			ents, err := c.Entries()
			if err != nil {
				t.Fatalf("Read reads the decompressed bundle, Entries fails: %v", err)
			}
			if len(ents) != len(b.Entries) {
				t.Fatalf("Entries gives %d entries, Read %d", len(ents), len(b.Entries))
			}
		}
	}
}
