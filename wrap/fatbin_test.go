package wrap

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
)

// ccob makes a compressed bundle of version 1 (zlib) around the zlib stream
// of data, declaring usize uncompressed bytes.
func ccob(t *testing.T, data []byte, usize uint32) []byte {
	t.Helper()
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	b := append([]byte("CCOB"), 1, 0, 0, 0) // version 1, zlib
	b = binary.LittleEndian.AppendUint32(b, usize)
	b = binary.LittleEndian.AppendUint64(b, 0) // the hash, which nobody checks
	return append(b, z.Bytes()...)
}

func readFile(t *testing.T, parts ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// cudaHeader is a fatbinary header of the given fields.
func cudaHeader(version, hsize uint16, fatSize uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, cudaFatbinMagic)
	b = binary.LittleEndian.AppendUint16(b, version)
	b = binary.LittleEndian.AppendUint16(b, hsize)
	return binary.LittleEndian.AppendUint64(b, fatSize)
}

// TestGPURefusesWhatTheRuntimeWouldNotRead feeds GPU inputs that are no
// fatbin of the kind (or a broken one), each refused with ErrNotFatbin and
// a message saying what it is, and real ones, accepted.
func TestGPURefusesWhatTheRuntimeWouldNotRead(t *testing.T) {
	cuda, hip := offload.OffloadCUDA, offload.OffloadHIP
	elfFile := readFile(t, "..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm19.o")
	ofb := readFile(t, "..", "offload", "testdata", "llvm", "packager", "single-llvm22.bin")
	bundled := tooltest.HIPFatbin()
	compressed := readFile(t, "..", "bundle", "testdata", "hip-fatbin-llvm22-zstd-v3.ccob")
	hostOnly := bytes.Replace(bundled, []byte("hip-amdgcn-amd-amdhsa--gfx90a"), []byte("host-amdgcn-amd-amdhsa-gfx90a"), 1)
	endsEarly := ccob(t, bundled[:len(bundled)-24], uint32(len(bundled)))
	// The gfx90a entry's size, after the magic, the count, the host entry
	// (24 bytes and its 30-byte ID) and the gfx90a entry's offset.
	emptyDevice := append([]byte{}, bundled...)
	binary.LittleEndian.PutUint64(emptyDevice[24+8+24+30+8:], 0)
	for _, c := range []struct {
		name string
		kind offload.OffloadKind
		data []byte
		says string // "" for an input that is accepted
	}{
		{"cuda/fatbinary", cuda, tooltest.CUDAFatbinary(), ""},
		{"cuda/fatbinary-and-more", cuda, append(tooltest.CUDAFatbinary(), "more"...), ""},
		{"cuda/big-header", cuda, append(cudaHeader(1, 24, 4), "12345678FAKE"...), ""},
		{"cuda/empty", cuda, nil, "an empty file"},
		{"cuda/text", cuda, []byte("root:x:0:0:root:/root:/bin/bash\n"), "text"},
		{"cuda/zeros", cuda, make([]byte, 4096), "start with zeros"},
		{"cuda/elf", cuda, elfFile, "an ELF file"},
		{"cuda/offload-binary", cuda, ofb, "an offload binary"},
		{"cuda/bundle", cuda, bundled, "a clang offload bundle"},
		{"cuda/compressed-bundle", cuda, compressed, "a compressed clang offload bundle"},
		{"cuda/short-header", cuda, cudaHeader(1, 16, 0)[:12], "shorter than its 16-byte header"},
		{"cuda/version-2", cuda, append(cudaHeader(2, 16, 4), "FAKE"...), "version 2"},
		{"cuda/header-8", cuda, append(cudaHeader(1, 8, 4), "FAKE"...), "header of 8 bytes"},
		{"cuda/header-past-end", cuda, append(cudaHeader(1, 400, 0), "FAKE"...), "after its 400-byte header"},
		{"cuda/data-past-end", cuda, append(cudaHeader(1, 16, 5), "FAKE"...), "5 bytes after its 16-byte header"},
		{"cuda/data-wraps", cuda, append(cudaHeader(1, 16, 1<<64-8), "FAKE"...), "after its 16-byte header"},

		{"hip/bundle", hip, bundled, ""},
		{"hip/wrapper-bundle", hip, readFile(t, "..", "bundle", "testdata", "hip-fatbin-clang-linker-wrapper-llvm19.bundle"), ""},
		{"hip/compressed-zstd", hip, compressed, ""},
		{"hip/compressed-zlib", hip, ccob(t, bundled, uint32(len(bundled))), ""},
		{"hip/empty", hip, nil, "an empty file"},
		{"hip/text", hip, []byte("root:x:0:0:root:/root:/bin/bash\n"), "text"},
		{"hip/zeros", hip, make([]byte, 100), "start with zeros"},
		{"hip/elf", hip, elfFile, "an ELF file"},
		{"hip/offload-binary", hip, ofb, "an offload binary"},
		{"hip/cuda-fatbinary", hip, tooltest.CUDAFatbinary(), "a CUDA fatbinary"},
		{"hip/bundle-cut", hip, bundled[:len(bundled)-1], "unexpected end of data"},
		{"hip/host-only", hip, hostOnly, "no device code"},
		{"hip/empty-device-entry", hip, emptyDevice, "no device code"},
		{"hip/compressed-cut", hip, compressed[:len(compressed)/2], "compressed HIP fatbin"},
		{"hip/compressed-too-large", hip, ccob(t, bundled, 40), "too large"},
		{"hip/compressed-not-a-bundle", hip, ccob(t, []byte(strings.Repeat("hello, world ", 10)), 130), "not an offload bundle"},
		{"hip/compressed-cut-header", hip, ccob(t, []byte("hello, world"), 12), "unexpected end of data"},
		{"hip/compressed-ends-early", hip, endsEarly, "its entries at 167"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := GPU(Options{Release: lookupRelease(t, 22), Triple: "x86_64-unknown-linux-gnu"}, c.kind, io.NewSectionReader(bytes.NewReader(c.data), 0, int64(len(c.data))))
			if c.says == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %v, want an error saying %q", err, c.says)
			}
			if !errors.Is(err, ErrNotFatbin) {
				t.Errorf("%v does not match ErrNotFatbin", err)
			}
		})
	}
}

// TestGPURefusesReadersThatLie: a fatbin whose reader holds fewer bytes than
// its size, or none, is an error.
func TestGPURefusesReadersThatLie(t *testing.T) {
	fb := tooltest.CUDAFatbinary()
	for _, f := range []*io.SectionReader{io.NewSectionReader(bytes.NewReader(fb[:10]), 0, int64(len(fb))), nil} {
		if _, err := GPU(Options{Triple: "x86_64-unknown-linux-gnu"}, offload.OffloadCUDA, f); err == nil {
			t.Errorf("%v: accepted", f)
		}
	}
}
