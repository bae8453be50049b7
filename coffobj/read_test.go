package coffobj_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/tooltest"
)

// hipSource is a HIP kernel and a device global that compile without the
// HIP headers.
const hipSource = `#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
typedef struct { unsigned x, y, z; } dim3;
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long long, void*);
extern "C" int hipConfigureCall(dim3, dim3, unsigned long long, void*);
__global__ void kern(int *p) { *p = 1; }
__device__ int devvar;
`

// hipObject is what clang-22 makes of hipSource for a Windows host with the
// new offload driver: .llvm.offloading and llvm_offload_entries$OE.
func hipObject(t *testing.T) []byte {
	return clangObject(t, "hip", hipSource, "--target=x86_64-pc-windows-msvc", "-x", "hip", "--offload-new-driver",
		"--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-fgpu-rdc")
}

// readobj returns llvm-readobj's view of b, the file offsets and the
// string table offsets of names left out.
func readobj(t *testing.T, b []byte) string {
	t.Helper()
	tool := tooltest.Tool(t, "llvm-readobj", 22)
	path := filepath.Join(t.TempDir(), "x.obj")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "--file-headers", "--sections", "--symbols", "--relocs", "--section-data", path).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s := strings.ReplaceAll(string(out), path, "x.obj")
	s = regexp.MustCompile(`(?m)^(\s*(PointerTo\w+|PointerToSymbolTable):).*$`).ReplaceAllString(s, "$1")
	return regexp.MustCompile(`(?m)^(\s*Name: \S+) \(2F[0-9A-F ]*\)$`).ReplaceAllString(s, "$1 (string table)")
}

// TestObjectRoundTrip loads clang's objects and writes them back: every
// section, symbol, aux record and relocation reads the same in
// llvm-readobj, but for file offsets.
func TestObjectRoundTrip(t *testing.T) {
	for name, obj := range map[string]func(*testing.T) []byte{
		"hip":   hipObject,
		"c":     func(t *testing.T) []byte { return clangObject(t, "c", cSource, "--target=x86_64-pc-windows-msvc") },
		"arm64": func(t *testing.T) []byte { return clangObject(t, "c", cSource, "--target=aarch64-pc-windows-msvc") },
		"mingw": func(t *testing.T) []byte { return clangObject(t, "c", cSource, "--target=x86_64-w64-windows-gnu") },
	} {
		t.Run(name, func(t *testing.T) {
			b := obj(t)
			o, err := readFile(t, b).Object()
			if err != nil {
				t.Fatal(err)
			}
			back := write(t, o)
			if want, got := readobj(t, b), readobj(t, back); want != got {
				t.Errorf("written back, the object reads differently:\n--- clang's\n%s\n--- written\n%s", want, got)
			}
		})
	}
}

// cSource has COMDAT (inline function, selectany), weak and static data.
const cSource = `
__declspec(selectany) int any = 3;
inline int twice(int x) { return 2 * x; }
static int counter;
__attribute__((weak)) int weakfn(void) { return 1; }
int use(int x) { counter++; return twice(x) + any + weakfn(); }
#pragma comment(linker, "/include:use")
`

// TestReadSections reads clang's HIP object: names from the string table,
// `$` kept, characteristics and alignment, relocations resolved.
func TestReadSections(t *testing.T) {
	f := readFile(t, hipObject(t))
	if f.Image || f.Machine != coffobj.MachineAMD64 {
		t.Fatalf("Image %v, Machine %#x", f.Image, f.Machine)
	}
	off := f.Section(".llvm.offloading")
	if off == nil {
		t.Fatalf("no .llvm.offloading: %v", names(f))
	}
	if off.Characteristics != coffobj.IMAGE_SCN_LNK_REMOVE|coffobj.IMAGE_SCN_MEM_DISCARDABLE|0x400000 || off.Align() != 8 {
		t.Errorf(".llvm.offloading: characteristics %#x, align %d", off.Characteristics, off.Align())
	}
	d, err := off.Data()
	if err != nil || !bytes.HasPrefix(d, []byte{0x10, 0xff, 0x10, 0xad}) {
		t.Errorf(".llvm.offloading does not start with the OffloadBinary magic: % x, %v", d[:min(4, len(d))], err)
	}
	ents := f.Section("llvm_offload_entries$OE")
	if ents == nil {
		t.Fatalf("no llvm_offload_entries$OE: %v", names(f))
	}
	rels, err := f.Relocations(ents)
	if err != nil || len(rels) == 0 {
		t.Fatalf("relocations of the entries: %v, %v", rels, err)
	}
	for _, r := range rels {
		if r.Symbol == nil || r.Type != uint16(coffobj.IMAGE_REL_AMD64_ADDR64) {
			t.Errorf("relocation %+v", r)
		}
	}
}

// TestReadImage reads a DLL that lld-link made: its sections by name, and
// their bytes without the file alignment's padding.
func TestReadImage(t *testing.T) {
	lld := tooltest.Tool(t, "lld-link", 22)
	dir := t.TempDir()
	obj, dll := filepath.Join(dir, "s.obj"), filepath.Join(dir, "s.dll")
	o := externalFunction()
	o.AddSection(&coffobj.Section{Name: ".rdata", Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ, Align: 1, Data: []byte("seven b")}, nil)
	o.Sections = append(o.Sections, coffobj.Directives("/EXPORT:external_function"))
	if err := os.WriteFile(obj, write(t, o), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(lld, "/dll", "/noentry", "/nodefaultlib", "/out:"+dll, obj).CombinedOutput(); err != nil {
		t.Fatalf("lld-link: %v\n%s", err, msg)
	}
	b, _ := os.ReadFile(dll)
	f := readFile(t, b)
	s := f.Section(".rdata")
	if !f.Image || s == nil {
		t.Fatalf("Image %v, sections %v", f.Image, names(f))
	}
	d, err := s.Data()
	if err != nil || !bytes.Contains(d, []byte("seven b")) || int64(len(d)) != int64(s.VirtualSize) {
		t.Errorf(".rdata: %q (%d bytes, VirtualSize %d), %v", d, len(d), s.VirtualSize, err)
	}
}

// TestReadErrors: malformed input gives the module's errors, with where.
func TestReadErrors(t *testing.T) {
	good := write(t, sample())
	set := func(b []byte, off int, v uint32, size int) []byte {
		b = bytes.Clone(b)
		switch size {
		case 2:
			binary.LittleEndian.PutUint16(b[off:], uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(b[off:], v)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want error
		msg  string
	}{
		{"empty", nil, goffload.ErrTruncated, "coff: input shorter than its size at byte 0x0"},
		{"cut header", good[:10], goffload.ErrTruncated, "at byte 0xa"},
		{"cut section table", good[:100], goffload.ErrTruncated, "section headers at 0x14 past the end"},
		{"bigobj", set(set(good, 0, 0, 2), 2, 0xFFFF, 2), goffload.ErrUnsupported, "big object"},
		{"section past the end", set(good, 20+16, 1<<30, 4), goffload.ErrTruncated, "section 1: 1073741824 bytes"},
		{"relocations past the end", set(good, 20+32, 0xFFFE, 2), goffload.ErrTruncated, "section 1: 65534 relocations"},
		{"symbol table past the end", set(good, 12, 1<<28, 4), goffload.ErrTruncated, "symbol table of"},
		{"bad long name", set(good, 20+40*2, '/'|'x'<<8, 2), goffload.ErrInvalid, "section name"},
		{"bad PE signature", append([]byte("MZ"), make([]byte, 100)...), goffload.ErrInvalid, "bad PE signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := coffobj.Read(bytes.NewReader(tc.in), int64(len(tc.in)))
			if !errors.Is(err, tc.want) || !errors.Is(err, goffload.ErrInvalid) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v, want %v with %q", err, tc.want, tc.msg)
			}
			var fe *goffload.FormatError
			if !errors.As(err, &fe) || fe.Format != "coff" {
				t.Errorf("%v is not a coff FormatError", err)
			}
		})
	}
}

// TestReadLimits: names and relocations shared to multiply are refused.
func TestReadLimits(t *testing.T) {
	// 3000 sections named by one 4000-byte string: 12 MB of names from 124 KB.
	o := &coffobj.Object{Machine: coffobj.MachineAMD64}
	name := strings.Repeat("n", 4000)
	for range 3000 {
		o.Sections = append(o.Sections, &coffobj.Section{Name: name, Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA})
	}
	b := write(t, o)
	if _, err := coffobj.Read(bytes.NewReader(b), int64(len(b))); !errors.Is(err, goffload.ErrLimit) {
		t.Errorf("shared section names: got %v, want ErrLimit", err)
	}
	// Every section's relocations at the same place.
	b = write(t, sample())
	f := readFile(t, b)
	s := f.Section(".data")
	for i := range f.Sections {
		at := 20 + 40*i
		binary.LittleEndian.PutUint32(b[at+24:], s.PointerToRelocations)
		binary.LittleEndian.PutUint16(b[at+32:], uint16((len(b)-int(s.PointerToRelocations))/10))
	}
	if _, err := coffobj.Read(bytes.NewReader(b), int64(len(b))); !errors.Is(err, goffload.ErrLimit) {
		t.Errorf("shared relocations: got %v, want ErrLimit", err)
	}
}
