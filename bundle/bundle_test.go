package bundle

import (
	"bytes"
	"compress/zlib"
	"crypto/md5"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRead(t testing.TB, data []byte) *Bundle {
	t.Helper()
	b, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func entryData(t testing.TB, b *Bundle, i int) []byte {
	t.Helper()
	d, err := io.ReadAll(b.Open(i))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustWrite(t testing.TB, align uint64, inputs []Input) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, align, inputs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// inputsOf makes inputs of IDs and data.
func inputsOf(ids []string, data [][]byte) []Input {
	in := make([]Input, len(ids))
	for i := range ids {
		in[i] = Input{ID: ids[i], Data: io.NewSectionReader(bytes.NewReader(data[i]), 0, int64(len(data[i])))}
	}
	return in
}

// TestReadClangLinkerWrapperFatbins reads the .hip_fatbin sections that
// clang-linker-wrapper 19 and 22 wrote, and writes them again byte for byte.
func TestReadClangLinkerWrapperFatbins(t *testing.T) {
	for _, c := range []struct {
		release int
		want    []Entry
	}{
		{19, []Entry{{"host-x86_64-unknown-linux--", 4096, 0}, {"hip-amdgcn-amd-amdhsa--gfx90a", 4096, 5496}}},
		{22, []Entry{{"host-x86_64-unknown-linux-gnu-", 4096, 0}, {"hip-amdgcn-amd-amdhsa--gfx90a", 4096, 4968}}},
	} {
		t.Run(releaseName(c.release), func(t *testing.T) {
			data := readTestdata(t, "hip-fatbin-clang-linker-wrapper-"+releaseName(c.release)+".bundle")
			b := mustRead(t, data)
			if diff := cmp.Diff(c.want, b.Entries); diff != "" {
				t.Fatalf("entries (-want +got):\n%s", diff)
			}
			img := entryData(t, b, 1)
			if !bytes.HasPrefix(img, []byte("\x7fELF")) {
				t.Fatalf("the gfx90a entry is not an ELF code object: % x", img[:4])
			}
			r, err := release.Lookup(c.release)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := WriteHIPFatbin(&out, r, []CodeObject{{"gfx90a", io.NewSectionReader(bytes.NewReader(img), 0, int64(len(img)))}}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), data) {
				t.Fatalf("WriteHIPFatbin wrote %d bytes that differ from the wrapper's %d", out.Len(), len(data))
			}
			fb, err := HIPFatbin(r, []CodeObject{{"gfx90a", io.NewSectionReader(bytes.NewReader(img), 0, int64(len(img)))}})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(fb); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("HIPFatbin: %d bytes (%v) that differ from the wrapper's %d", len(got), err, len(data))
			}
		})
	}
}

func releaseName(n int) string { return "llvm" + string(rune('0'+n/10)) + string(rune('0'+n%10)) }

// TestDecompressBundlerOutput reads the compressed bundles that
// clang-offload-bundler 19 and 22 wrote (testdata/make.sh).
func TestDecompressBundlerOutput(t *testing.T) {
	img := entryData(t, mustRead(t, readTestdata(t, "hip-fatbin-clang-linker-wrapper-llvm22.bundle")), 1)
	for _, c := range []struct {
		file    string
		release int
		version uint16
	}{
		{"hip-fatbin-llvm19-zstd-v2.ccob", 19, 2},
		{"hip-fatbin-llvm22-zstd-v3.ccob", 22, 3},
		{"hip-fatbin-llvm22-zstd19-v2.ccob", 22, 2},
	} {
		t.Run(c.file, func(t *testing.T) {
			r, _ := release.Lookup(c.release)
			var want bytes.Buffer
			if err := WriteHIPFatbin(&want, r, []CodeObject{{"gfx90a", io.NewSectionReader(bytes.NewReader(img), 0, int64(len(img)))}}); err != nil {
				t.Fatal(err)
			}
			data := readTestdata(t, c.file)
			cb, err := ReadCompressed(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			h := md5.Sum(want.Bytes())
			wantHdr := CompressedHeader{Version: c.version, Method: MethodZstd, FileSize: uint64(len(data)),
				UncompressedSize: uint64(want.Len()), Hash: le.Uint64(h[:])}
			if diff := cmp.Diff(wantHdr, cb.CompressedHeader); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			var got bytes.Buffer
			if n, err := Decompress(&got, bytes.NewReader(data), int64(len(data))); err != nil || n != int64(want.Len()) {
				t.Fatalf("Decompress: %d bytes, %v", n, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatal("decompressed bundle differs from WriteHIPFatbin's")
			}
			if hash, _ := Hash(bytes.NewReader(got.Bytes())); hash != cb.Hash {
				t.Errorf("Hash = %#x, header has %#x", hash, cb.Hash)
			}
			if _, err := Read(bytes.NewReader(data), int64(len(data))); !errors.Is(err, ErrCompressed) {
				t.Errorf("Read of a compressed bundle: %v, want ErrCompressed", err)
			}
		})
	}
}

func TestWriteLayout(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 700) // 11200 bytes
	ids := []string{"host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx90a", "hip-amdgcn-amd-amdhsa--gfx1030"}
	for _, c := range []struct {
		name  string
		align uint64
		data  [][]byte
		want  []Entry
		size  uint64
	}{
		// Header: 32 + 3*24 + 30 + 29 + 30 = 193 bytes.
		{"align-1", 1, [][]byte{nil, []byte("abc"), big}, []Entry{{ids[0], 193, 0}, {ids[1], 193, 3}, {ids[2], 196, 11200}}, 11396},
		{"align-8", 8, [][]byte{[]byte("h"), []byte("abc"), big}, []Entry{{ids[0], 200, 1}, {ids[1], 208, 3}, {ids[2], 216, 11200}}, 11416},
		{"align-4096", 4096, [][]byte{nil, big, []byte("abc")}, []Entry{{ids[0], 4096, 0}, {ids[1], 4096, 11200}, {ids[2], 16384, 3}}, 16387},
		{"exact-multiple", 4096, [][]byte{big[:4096-193], big[:4096], nil}, []Entry{{ids[0], 4096, 3903}, {ids[1], 8192, 4096}, {ids[2], 12288, 0}}, 12288},
	} {
		t.Run(c.name, func(t *testing.T) {
			entries, size, err := EntryOffsets(c.align, inputsOf(ids, c.data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, entries); diff != "" || size != c.size {
				t.Fatalf("size %d, want %d; entries (-want +got):\n%s", size, c.size, diff)
			}
			out := mustWrite(t, c.align, inputsOf(ids, c.data))
			if uint64(len(out)) != c.size {
				t.Fatalf("wrote %d bytes, Layout says %d", len(out), c.size)
			}
			// NewReader reads the same bytes, again and from several
			// goroutines at once.
			r, err := NewReader(c.align, inputsOf(ids, c.data))
			if err != nil {
				t.Fatal(err)
			}
			got := tooltest.SameBytes(t, func(w io.Writer) error {
				_, err := io.Copy(w, io.NewSectionReader(r, 0, r.Size()))
				return err
			})
			if !bytes.Equal(got, out) {
				t.Fatalf("NewReader: %d bytes that differ from Write's %d", len(got), len(out))
			}
			b := mustRead(t, out)
			if diff := cmp.Diff(c.want, b.Entries); diff != "" {
				t.Fatalf("read back (-want +got):\n%s", diff)
			}
			end := uint64(193)
			for i, e := range b.Entries {
				if pad := out[end:e.Offset]; bytes.Count(pad, []byte{0}) != len(pad) {
					t.Errorf("padding before entry %d is not zero", i)
				}
				if !bytes.Equal(entryData(t, b, i), c.data[i]) {
					t.Errorf("entry %d data differs", i)
				}
				end = e.Offset + e.Size
			}
		})
	}
}

func TestWriteErrors(t *testing.T) {
	ok := func() []Input { return inputsOf([]string{"a", "b"}, [][]byte{nil, []byte("xyz")}) }
	short := ok()
	short[1].Data = io.NewSectionReader(bytes.NewReader([]byte("xyz")), 0, 4)
	dup := ok()
	dup[1].ID = "a"
	failing := ok()
	failing[1].Data = io.NewSectionReader(failingReaderAt{errors.New("disk on fire")}, 0, 3)
	for _, c := range []struct {
		name   string
		align  uint64
		inputs []Input
		is     error
	}{
		{"align-0", 0, ok(), nil},
		{"duplicate", 1, dup, ErrDuplicateID},
		{"short-input", 1, short, io.ErrUnexpectedEOF},
		{"read-error", 1, failing, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Write(io.Discard, c.align, c.inputs)
			if err == nil || (c.is != nil && !errors.Is(err, c.is)) {
				t.Fatalf("got %v, want an error matching %v", err, c.is)
			}
			// NewReader gives the error when made or when read.
			r, err := NewReader(c.align, c.inputs)
			if err == nil {
				_, err = io.Copy(io.Discard, r)
			}
			if err == nil || (c.is != nil && !errors.Is(err, c.is)) {
				t.Fatalf("NewReader: got %v, want an error matching %v", err, c.is)
			}
		})
	}
	if _, _, err := EntryOffsets(1<<63, inputsOf([]string{"a", "b"}, [][]byte{[]byte("x"), []byte("y")})); err == nil {
		t.Error("Layout of a bundle past 2^64 bytes: no error")
	}
}

type failingReaderAt struct{ err error }

func (f failingReaderAt) ReadAt([]byte, int64) (int, error) { return 0, f.err }

// entryHeader encodes one entry header of a test bundle.
func entryHeader(off, size uint64, id string, idLen uint64) []byte {
	b := le.AppendUint64(nil, off)
	b = le.AppendUint64(b, size)
	b = le.AppendUint64(b, idLen)
	return append(b, id...)
}

// craft makes a bundle of count and entry headers, padded with zeros to 200
// bytes, then "HELLO" at 200.
func craft(count uint64, entries ...[]byte) []byte {
	b := append([]byte(Magic), le.AppendUint64(nil, count)...)
	for _, e := range entries {
		b = append(b, e...)
	}
	if len(b) < 200 {
		b = append(b, make([]byte, 200-len(b))...)
	}
	return append(b, "HELLO"...)
}

// headerOnly makes a bundle of count entries that ends after the first
// entry's header, whose empty data is at the end.
func headerOnly(count uint64) []byte {
	b := append([]byte(Magic), le.AppendUint64(nil, count)...)
	return append(b, entryHeader(86, 0, hostID, uint64(len(hostID)))...)
}

const (
	hostID = "host-x86_64-unknown-linux-gnu-"
	devID  = "hip-amdgcn-amd-amdhsa--gfx90a"
)

// TestReadMalformed checks the headers that clang-offload-bundler 19 and 22
// do not unbundle (each was run; see TestReadAgreesWithBundler for the
// comparison on this machine's tools).
func TestReadMalformed(t *testing.T) {
	h := entryHeader(200, 0, hostID, uint64(len(hostID)))
	for _, c := range []struct {
		name  string
		data  []byte
		is    error
		off   int64
		field string
	}{
		{"empty", nil, ErrNotBundle, 0, "magic"},
		{"short-magic", []byte(Magic[:20]), ErrNotBundle, 0, "magic"},
		{"bad-magic", append([]byte("__CLANG_OFFLOAD_BUNDLX__"), make([]byte, 16)...), ErrNotBundle, 0, "magic"},
		{"ccob", []byte("CCOB\x02\x00\x01\x00"), ErrCompressed, 0, "magic"},
		{"short-ccob-is-not-compressed", []byte("CCOB\x02\x00\x01"), ErrNotBundle, 0, "magic"},
		{"no-count", []byte(Magic + "\x01\x00\x00"), goffload.ErrTruncated, 24, "entry count cut to 3 of 8 bytes"},
		{"count-past-end", headerOnly(2), goffload.ErrTruncated, 86, "entry 1 header cut to 0 of 24 bytes (count 2)"},
		{"huge-count", headerOnly(1 << 62), goffload.ErrTruncated, 86, "entry 1 header cut to 0 of 24 bytes (count 4611686018427387904)"},
		{"count-into-padding", craft(3, h, entryHeader(200, 5, devID, uint64(len(devID)))), goffload.ErrInvalid, 139, "entry 2 offset"},
		{"id-past-end", craft(2, h, entryHeader(200, 5, devID, 1<<40)), goffload.ErrTruncated, 102, "entry 1 ID length"},
		{"zero-offset-first", craft(2, entryHeader(0, 0, hostID, uint64(len(hostID))), entryHeader(200, 5, devID, uint64(len(devID)))), goffload.ErrInvalid, 32, "entry 0 offset"},
		{"zero-offset-second", craft(2, h, entryHeader(0, 5, devID, uint64(len(devID)))), goffload.ErrInvalid, 86, "entry 1 offset"},
		{"offset-past-end", craft(2, h, entryHeader(206, 0, devID, uint64(len(devID)))), goffload.ErrTruncated, 86, "entry 1 offset"},
		{"size-past-end", craft(2, h, entryHeader(200, 6, devID, uint64(len(devID)))), goffload.ErrTruncated, 94, "entry 1 size"},
		{"size-wraps", craft(2, h, entryHeader(200, 1<<64-100, devID, uint64(len(devID)))), goffload.ErrTruncated, 94, "entry 1 size"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := Read(bytes.NewReader(c.data), int64(len(c.data)))
			var fe *goffload.FormatError
			if !errors.Is(err, c.is) || !errors.As(err, &fe) {
				t.Fatalf("got %v, %v; want a goffload.FormatError matching %v", b, err, c.is)
			}
			if fe.Offset != c.off || fe.Field != c.field {
				t.Fatalf("error %q at %d in %q, want at %d in %q", err, fe.Offset, fe.Field, c.off, c.field)
			}
		})
	}
}

// TestReadAccepts checks headers that the bundlers unbundle although no
// bundler writes them.
func TestReadAccepts(t *testing.T) {
	h := entryHeader(200, 0, hostID, uint64(len(hostID)))
	for _, c := range []struct {
		name string
		data []byte
		want []Entry
	}{
		{"no-entries", craft(0), nil},
		{"trailing-bytes", append(craft(2, h, entryHeader(200, 5, devID, uint64(len(devID)))), "garbage"...),
			[]Entry{{hostID, 200, 0}, {devID, 200, 5}}},
		{"entry-over-header", craft(2, h, entryHeader(1, 24, devID, uint64(len(devID)))),
			[]Entry{{hostID, 200, 0}, {devID, 1, 24}}},
		{"entry-at-end", craft(1, entryHeader(205, 0, devID, uint64(len(devID)))), []Entry{{devID, 205, 0}}},
		{"fewer-than-present", craft(1, h, entryHeader(200, 5, devID, uint64(len(devID)))), []Entry{{hostID, 200, 0}}},
		{"empty-and-odd-ids", craft(2, entryHeader(200, 1, "", 0), entryHeader(201, 1, "x\x00y", 3)),
			[]Entry{{"", 200, 1}, {"x\x00y", 201, 1}}},
		{"duplicate-ids", craft(3, h, entryHeader(200, 5, devID, uint64(len(devID))), entryHeader(201, 3, devID, uint64(len(devID)))),
			[]Entry{{hostID, 200, 0}, {devID, 200, 5}, {devID, 201, 3}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := mustRead(t, c.data)
			if diff := cmp.Diff(c.want, b.Entries, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("entries (-want +got):\n%s", diff)
			}
		})
	}
	b := mustRead(t, craft(3, h, entryHeader(200, 5, devID, uint64(len(devID))), entryHeader(201, 3, devID, uint64(len(devID)))))
	if i := b.Find(devID); i != 2 || string(entryData(t, b, i)) != "ELL" {
		t.Errorf("Find(%q) = %d, want the last entry with the ID, as the bundler extracts", devID, i)
	}
	if i := b.Find("hip-amdgcn-amd-amdhsa--gfx1030"); i != -1 {
		t.Errorf("Find of a missing ID = %d", i)
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		hostID: true, devID: true, "host-x86_64-unknown-linux--": true, "openmp-x86_64-unknown-linux-gnu": true,
		"hip-amdgcn-amd-amdhsa-gfx90a": true, "hip-amdgcn-gfx90a": false, "": false, "host-x86_64-unknown-linux": false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestReleases(t *testing.T) {
	want := map[int][2]string{
		17: {"host-x86_64-unknown-linux--", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"},
		18: {"host-x86_64-unknown-linux--", "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+"},
		19: {"host-x86_64-unknown-linux--", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"},
		20: {"host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"},
		21: {"host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"},
		22: {"host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"},
		23: {"host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+"},
		24: {"host-x86_64-unknown-linux-gnu-", "hip-amdgpu9.0a-amd-amdhsa--gfx90a:xnack+"},
	}
	rs := HIPReleases()
	if len(rs) != len(want) {
		t.Fatalf("%d rows, want %d", len(rs), len(want))
	}
	for _, r := range rs {
		got := [2]string{r.Bundle.HIPFatbin.HostID, DeviceID(r, "gfx90a:xnack+")}
		if got != want[r.Major] {
			t.Errorf("LLVM %d: IDs %q, want %q", r.Major, got, want[r.Major])
		}
		if !ValidID(got[0]) || !ValidID(got[1]) {
			t.Errorf("LLVM %d: IDs %q that LLVM 20+ would not unbundle", r.Major, got)
		}
	}
	r16, _ := release.Lookup(16)
	if err := CheckRelease(r16); !errors.Is(err, goffload.ErrUnsupported) || !strings.Contains(err.Error(), "LLVM 17-24 has one") {
		t.Errorf("CheckRelease(16): %v", err)
	}
	if _, err := HIPFatbin(r16, nil); !errors.Is(err, goffload.ErrUnsupported) {
		t.Errorf("HIPFatbin(16): %v", err)
	}
}

// ccob encodes a compressed bundle of version v around a compressed stream.
func ccob(v uint16, m Method, stream []byte, usize uint64, hash uint64) []byte {
	b := append([]byte(CompressedMagic), le.AppendUint16(nil, v)...)
	b = le.AppendUint16(b, uint16(m))
	file := uint64(HeaderSize(v) + len(stream))
	switch v {
	case 1:
		b = le.AppendUint32(b, uint32(usize))
	case 2:
		b = le.AppendUint32(b, uint32(file))
		b = le.AppendUint32(b, uint32(usize))
	default:
		b = le.AppendUint64(b, file)
		b = le.AppendUint64(b, usize)
	}
	b = le.AppendUint64(b, hash)
	return append(b, stream...)
}

func zlibCompress(data []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

func TestCompressedZlib(t *testing.T) {
	bundle := readTestdata(t, "hip-fatbin-clang-linker-wrapper-llvm22.bundle")
	hash, _ := Hash(bytes.NewReader(bundle))
	z := zlibCompress(bundle)
	n := uint64(len(bundle))
	for _, c := range []struct {
		name string
		data []byte
		is   error // nil: decompresses to bundle
		off  int64
	}{
		{"v1", ccob(1, MethodZlib, z, n, hash), nil, 0},
		{"v2", ccob(2, MethodZlib, z, n, hash), nil, 0},
		{"v3", ccob(3, MethodZlib, z, n, hash), nil, 0},
		{"declared-larger", ccob(2, MethodZlib, z, n+100, hash), nil, 0},
		{"trailing-bytes", ccob(3, MethodZlib, append(append([]byte{}, z...), "xyz"...), n, hash), nil, 0},
		{"wrong-hash", ccob(2, MethodZlib, z, n, hash+1), nil, 0},
		{"declared-smaller", ccob(2, MethodZlib, z, n-1, hash), goffload.ErrInvalid, 12},
		{"declared-smaller-v3", ccob(3, MethodZlib, z, n-1, hash), goffload.ErrInvalid, 16},
		{"declared-smaller-v1", ccob(1, MethodZlib, z, n-1, hash), goffload.ErrInvalid, 8},
		{"truncated", ccob(2, MethodZlib, z[:len(z)/2], n, hash), goffload.ErrTruncated, -1},
		{"corrupt", ccob(2, MethodZlib, append([]byte{0x78, 0x9c, 0xff}, z[3:]...), n, hash), errCorrupt, -1},
		{"not-zlib", ccob(2, MethodZlib, []byte("plain text, no zlib header"), n, hash), errCorrupt, -1},
		{"unknown-version", ccob(4, MethodZlib, z, n, hash), goffload.ErrUnsupported, 4},
		{"version-0", ccob(0, MethodZlib, z, n, hash), goffload.ErrUnsupported, 4},
		{"unknown-method", ccob(2, 2, z, n, hash), goffload.ErrUnsupported, 6},
		{"short-header", ccob(3, MethodZlib, nil, n, hash)[:30], goffload.ErrTruncated, 30},
		{"not-ccob", bundle, ErrNotBundle, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := Decompress(&out, bytes.NewReader(c.data), int64(len(c.data)))
			if c.is == nil {
				if err != nil || !bytes.Equal(out.Bytes(), bundle) {
					t.Fatalf("got %d bytes, %v", out.Len(), err)
				}
				return
			}
			var fe *goffload.FormatError
			if !errors.Is(err, c.is) || !errors.As(err, &fe) {
				t.Fatalf("got %v, want a goffload.FormatError matching %v", err, c.is)
			}
			if c.off >= 0 && fe.Offset != c.off {
				t.Fatalf("error %q at %d, want at %d", err, fe.Offset, c.off)
			}
		})
	}
}

func TestMethodString(t *testing.T) {
	for m, want := range map[Method]string{MethodZlib: "zlib", MethodZstd: "zstd", 7: "Method(7)"} {
		if got := m.String(); got != want {
			t.Errorf("Method(%d).String() = %q, want %q", uint16(m), got, want)
		}
	}
}

func TestFormatErrorMessage(t *testing.T) {
	err := formatErr(86, "entry 1 offset", 0, goffload.ErrInvalid)
	if got, want := err.Error(), "offload bundle: entry 1 offset 0x0 at byte 0x56: invalid data"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !strings.Contains(formatErr(0, "magic", 0, ErrNotBundle).Error(), "not an offload bundle") {
		t.Error("ErrNotBundle text missing")
	}
}

// TestEndIsTheBundlersSize: the HIP fatbins of clang-linker-wrapper 19 and
// 22 end where their last entry ends, which is End.
func TestEndIsTheBundlersSize(t *testing.T) {
	for _, name := range []string{"hip-fatbin-clang-linker-wrapper-llvm19.bundle", "hip-fatbin-clang-linker-wrapper-llvm22.bundle"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		padded := append(append([]byte{}, data...), make([]byte, 100)...)
		b, err := Read(bytes.NewReader(padded), int64(len(padded)))
		if err != nil {
			t.Fatal(err)
		}
		if got := b.End(); got != uint64(len(data)) {
			t.Errorf("%s: End %d, want %d", name, got, len(data))
		}
	}
	if got := (&Bundle{}).End(); got != uint64(headerSize) {
		t.Errorf("no entries: End %d, want the header's %d", got, headerSize)
	}
}

// TestReadArgumentErrors: a nil reader or a negative size is an argument
// error (fs.ErrInvalid), not an input that is no bundle.
func TestReadArgumentErrors(t *testing.T) {
	data := ccob(2, MethodZlib, zlibCompress([]byte("x")), 1, 0)
	for _, c := range []struct {
		name string
		r    io.ReaderAt
		size int64
	}{
		{"nil reader", nil, 100},
		{"negative size", bytes.NewReader(data), -1},
	} {
		h, err := ReadCompressed(c.r, c.size)
		if h != nil || !errors.Is(err, fs.ErrInvalid) || errors.Is(err, ErrNotBundle) {
			t.Errorf("ReadCompressed, %s: %v, %v; want an argument error", c.name, h, err)
		}
		b, err := Read(c.r, c.size)
		if b != nil || !errors.Is(err, fs.ErrInvalid) || errors.Is(err, ErrNotBundle) {
			t.Errorf("Read, %s: %v, %v; want an argument error", c.name, b, err)
		}
		if _, err := Decompress(io.Discard, c.r, c.size); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Decompress, %s: %v; want an argument error", c.name, err)
		}
	}
}
