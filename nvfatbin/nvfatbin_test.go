package nvfatbin

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
)

func nvidia(parts ...string) string {
	return filepath.Join(append([]string{"..", "offload", "testdata", "nvidia"}, parts...)...)
}

// listing is what cuobjdump -lelf -lptx prints for the entries of input.
func listing(f *File, input string) string {
	var b strings.Builder
	n := map[Kind]int{}
	for _, e := range f.Entries {
		n[e.Kind]++
		label := "ELF"
		if e.Kind == KindPTX {
			label = "PTX"
		}
		fmt.Fprintf(&b, "%s file %4d: %s\n", label, n[e.Kind], e.CuobjdumpName(input, n[e.Kind]))
	}
	return b.String()
}

// cuobjdumpELF is the fixture's cuobjdump listing without its notes.
func cuobjdumpELF(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.HasPrefix(line, "ELF file") || strings.HasPrefix(line, "PTX file") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestReadFatbinaryOutput reads the fat binary CUDA 13's fatbinary made in
// clang-linker-wrapper 22's -fgpu-rdc link: one sm_90 cubin, the image
// nvlink linked byte for byte, named as cuobjdump names it.
func TestReadFatbinaryOutput(t *testing.T) {
	path := nvidia("cuda-llvm22", "link-rdc", "rdc.fatbin")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Entries) != 1 {
		t.Fatalf("%d entries, want 1", len(f.Entries))
	}
	e := f.Entries[0]
	if e.Kind != KindELF || e.Arch() != "sm_90" || e.Compressed() || e.Flags&Flag64Bit == 0 {
		t.Errorf("entry %+v: want an uncompressed 64-bit sm_90 ELF", e)
	}
	r, err := e.Open()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	want, err := os.ReadFile(nvidia("cuda-llvm22", "link-rdc", "rdc.nvptx64.sm_90.img"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the cubin is %d bytes, not nvlink's image (%d bytes)", len(got), len(want))
	}
	if l, w := listing(f, path), cuobjdumpELF(t, path+".cuobjdump.txt"); l != w {
		t.Errorf("listing\n%s\ncuobjdump\n%s", l, w)
	}
}

// TestReadNVFatbinSection reads the .nv_fatbin section of clang-22's
// whole-program CUDA object: its cubin is an ELF for sm_90 (NVIDIA's OS/ABI
// 0x41), listed as cuobjdump lists the object.
func TestReadNVFatbinSection(t *testing.T) {
	path := nvidia("cuda-llvm22", "vadd.o")
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	s := ef.Section(".nv_fatbin")
	if s == nil {
		t.Fatal("no .nv_fatbin")
	}
	f, err := Read(s.Open().(io.ReaderAt), int64(s.Size))
	if err != nil {
		t.Fatal(err)
	}
	if l, w := listing(f, path), cuobjdumpELF(t, path+".cuobjdump.txt"); l != w || w == "" {
		t.Errorf("listing\n%s\ncuobjdump\n%s", l, w)
	}
	r, err := f.Entries[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	var h [8]byte
	r.ReadAt(h[:], 0)
	if !bytes.Equal(h[:4], []byte("\x7fELF")) || h[7] != 0x41 {
		t.Errorf("cubin starts %q, want an ELF of OS/ABI 0x41", h)
	}
}

// fatbin builds a fat binary of the entries (kind, sm, payload).
func fatbin(entries ...struct {
	kind    Kind
	sm      int
	payload string
}) []byte {
	var body []byte
	le := binary.LittleEndian
	for _, e := range entries {
		h := make([]byte, entryHeaderSize)
		le.PutUint16(h[0:], uint16(e.kind))
		le.PutUint16(h[2:], 0x101)
		le.PutUint32(h[4:], entryHeaderSize)
		le.PutUint64(h[8:], uint64(len(e.payload)))
		le.PutUint32(h[28:], uint32(e.sm))
		le.PutUint64(h[40:], Flag64Bit|FlagLinux)
		body = append(append(body, h...), e.payload...)
	}
	b := le.AppendUint32(nil, Magic)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, headerSize)
	b = le.AppendUint64(b, uint64(len(body)))
	return append(b, body...)
}

type ent = struct {
	kind    Kind
	sm      int
	payload string
}

// TestReadSeveral: PTX and cubins for several GPUs, in two fat binaries one
// after another with padding; counted per kind as cuobjdump counts them.
func TestReadSeveral(t *testing.T) {
	a := fatbin(ent{KindPTX, 80, ".version 8.0\n"}, ent{KindELF, 80, "\x7fELF80"})
	for len(a)%8 != 0 {
		a = append(a, 0)
	}
	data := append(a, fatbin(ent{KindELF, 90, "\x7fELF90"})...)
	data = append(data, make([]byte, 16)...)
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := "PTX file    1: app.1.sm_80.ptx\nELF file    1: app.1.sm_80.cubin\nELF file    2: app.2.sm_90.cubin\n"
	if got := listing(f, "dir/app.o"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if f.Entries[2].Fatbin != 1 {
		t.Errorf("third entry in fat binary %d, want 1", f.Entries[2].Fatbin)
	}
	r, _ := f.Entries[0].Open()
	if b, _ := io.ReadAll(r); string(b) != ".version 8.0\n" {
		t.Errorf("PTX %q", b)
	}
}

// TestReadErrors: every malformed input is ErrInvalid, a size past the end
// ErrTruncated too, and a compressed payload is not opened.
func TestReadErrors(t *testing.T) {
	good := fatbin(ent{KindELF, 90, "\x7fELF"})
	le := binary.LittleEndian
	set := func(off int, v uint64, n int) []byte {
		b := bytes.Clone(good)
		switch n {
		case 2:
			le.PutUint16(b[off:], uint16(v))
		case 4:
			le.PutUint32(b[off:], uint32(v))
		default:
			le.PutUint64(b[off:], v)
		}
		return b
	}
	for _, c := range []struct {
		name string
		data []byte
		want error
	}{
		{"magic", set(0, 0x12345678, 4), goffload.ErrInvalid},
		{"version", set(4, 2, 2), goffload.ErrUnsupported},
		{"header size", set(6, 8, 2), goffload.ErrInvalid},
		{"fat size", set(8, 1<<40, 8), goffload.ErrTruncated},
		{"cut header", good[:10], goffload.ErrTruncated},
		{"cut entry", good[:len(good)-1], goffload.ErrTruncated},
		{"entry kind", set(16, 7, 2), goffload.ErrUnsupported},
		{"entry header size", set(20, 1<<20, 4), goffload.ErrTruncated},
		{"entry size", set(24, 1<<40, 8), goffload.ErrTruncated},
		{"entry name", set(48, 1000, 4), goffload.ErrInvalid},
		{"fat size smaller than an entry", set(8, 20, 8), goffload.ErrTruncated},
	} {
		if c.name == "entry name" {
			le.PutUint32(c.data[52:], 4)
		}
		if c.name == "fat size smaller than an entry" {
			c.data = c.data[:36]
		}
		_, err := Read(bytes.NewReader(c.data), int64(len(c.data)))
		if !errors.Is(err, c.want) || !errors.Is(err, goffload.ErrInvalid) && c.want != goffload.ErrUnsupported {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	f, err := Read(bytes.NewReader(set(56, FlagCompress, 8)), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Entries[0].Open(); !errors.Is(err, goffload.ErrUnsupported) {
		t.Errorf("compressed payload opened: %v", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(fatbin(ent{KindELF, 90, "\x7fELF"}))
	f.Add(fatbin(ent{KindPTX, 80, "ptx"}, ent{KindELF, 80, "elf"}))
	if data, err := os.ReadFile(nvidia("cuda-llvm22", "link-rdc", "rdc.fatbin")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tooltest.CheckAllocs(t, len(b), tooltest.AllocsPerByte, tooltest.AllocsFixed, func() {
			file, err := Read(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				if !errors.Is(err, goffload.ErrInvalid) {
					t.Fatalf("error %v does not match ErrInvalid", err)
				}
				return
			}
			if len(file.Entries) > len(b)/entryHeaderSize {
				t.Fatalf("%d entries in %d bytes", len(file.Entries), len(b))
			}
			for _, e := range file.Entries {
				if e.Offset < 0 || e.Size < 0 || e.Offset+e.Size > int64(len(b)) {
					t.Fatalf("entry at %d size %d outside %d bytes", e.Offset, e.Size, len(b))
				}
			}
		})
	})
}
