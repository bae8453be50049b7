package concat

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

func sample() (*ReaderAt, []byte) {
	var c ReaderAt
	c.AddBytes([]byte("header"))
	c.AddZeros(3)
	c.Add(strings.NewReader("..image bytes.."), 2, 11)
	c.AddBytes(nil)
	c.AddZeros(0)
	c.Add(strings.NewReader("tail"), 0, 4)
	return &c, []byte("header\x00\x00\x00image bytestail")
}

// TestReadAtEveryRange reads every range of a concatenation and compares
// with the bytes it stands for.
func TestReadAtEveryRange(t *testing.T) {
	c, want := sample()
	if c.Size() != int64(len(want)) {
		t.Fatalf("size %d, want %d", c.Size(), len(want))
	}
	for off := 0; off <= len(want)+2; off++ {
		for n := 0; off+n <= len(want)+2; n++ {
			p := make([]byte, n)
			got, err := c.ReadAt(p, int64(off))
			end := min(off+n, len(want))
			wantN := max(end-off, 0)
			if got != wantN || !bytes.Equal(p[:got], want[min(off, len(want)):end]) {
				t.Fatalf("ReadAt(%d bytes at %d) = %d %q, want %d", n, off, got, p[:got], wantN)
			}
			if (got < n) != (err == io.EOF) || (got == n && err != nil) {
				t.Fatalf("ReadAt(%d bytes at %d): error %v with %d bytes", n, off, err, got)
			}
		}
	}
	if err := iotest.TestReader(c.Section(), want); err != nil {
		t.Error(err)
	}
}

// TestReadAtConcurrently: readers share nothing.
func TestReadAtConcurrently(t *testing.T) {
	c, want := sample()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				got, err := io.ReadAll(c.Section())
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("got %q, %v", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestShortPart: a part shorter than it was added as is an unexpected EOF;
// a failing part gives its error.
func TestShortPart(t *testing.T) {
	var c ReaderAt
	c.AddBytes([]byte("ab"))
	c.Add(strings.NewReader("cd"), 0, 5)
	if n, err := c.ReadAt(make([]byte, 7), 0); n != 4 || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short part: %d, %v", n, err)
	}
	fire := errors.New("disk on fire")
	var d ReaderAt
	d.Add(failing{fire}, 0, 10)
	if _, err := d.ReadAt(make([]byte, 3), 1); !errors.Is(err, fire) {
		t.Errorf("failing part: %v", err)
	}
}

type failing struct{ err error }

func (f failing) ReadAt([]byte, int64) (int, error) { return 0, f.err }
