package offload

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/goffload/goffload"
)

func TestDeviceImageFieldOffsets(t *testing.T) {
	d := DeviceImage{ImageStart: 0x11, ImageEnd: 0x22, EntriesBegin: 0x33, EntriesEnd: 0x44}
	b := d.Encode(binary.LittleEndian)
	if len(b) != DeviceImageSize {
		t.Fatalf("%d bytes, want %d", len(b), DeviceImageSize)
	}
	for off, want := range map[int]uint64{
		DeviceImageStartOffset:        0x11,
		DeviceImageEndOffset:          0x22,
		DeviceImageEntriesBeginOffset: 0x33,
		DeviceImageEntriesEndOffset:   0x44,
	} {
		if got := binary.LittleEndian.Uint64(b[off:]); got != want {
			t.Errorf("pointer at %d = %#x, want %#x", off, got, want)
		}
	}
}

func TestBinDescEncode(t *testing.T) {
	d := BinDesc{NumDeviceImages: 1, DeviceImages: 0x1000, HostEntriesBegin: 0x2000, HostEntriesEnd: 0x2038}
	tests := []struct {
		order binary.ByteOrder
		want  string
	}{
		{binary.LittleEndian, "01000000 00000000 0010000000000000 0020000000000000 3820000000000000"},
		{binary.BigEndian, "00000001 00000000 0000000000001000 0000000000002000 0000000000002038"},
	}
	for _, tt := range tests {
		got := d.Encode(tt.order)
		if want := hexBytes(t, tt.want); !bytes.Equal(got, want) {
			t.Errorf("%v: Encode = %x, want %x", tt.order, got, want)
		}
		if back, err := DecodeBinDesc(tt.order, got); err != nil || back != d {
			t.Errorf("%v: DecodeBinDesc = %+v, %v; want %+v", tt.order, back, err, d)
		}
	}
	for off, want := range map[int]uint64{
		BinDescDeviceImagesOffset:     0x1000,
		BinDescHostEntriesBeginOffset: 0x2000,
		BinDescHostEntriesEndOffset:   0x2038,
	} {
		if got := binary.LittleEndian.Uint64(d.Encode(binary.LittleEndian)[off:]); got != want {
			t.Errorf("pointer at %d = %#x, want %#x", off, got, want)
		}
	}
}

func TestDeviceImageBinDescRoundTrip(t *testing.T) {
	images := []DeviceImage{{}, {1, 2, 3, 4}, {^uint64(0), ^uint64(0) - 1, 1 << 63, 7}}
	descs := []BinDesc{{}, {NumDeviceImages: -1, DeviceImages: ^uint64(0)}, {NumDeviceImages: 1 << 30, HostEntriesEnd: 9}}
	for _, bo := range entryByteOrders {
		for _, d := range images {
			got, err := DecodeDeviceImage(bo.order, d.AppendEncode([]byte{}, bo.order))
			if err != nil || got != d {
				t.Errorf("%s: DeviceImage round trip = %+v, %v; want %+v", bo.name, got, err, d)
			}
		}
		for _, d := range descs {
			b := d.Encode(bo.order)
			if len(b) != BinDescSize {
				t.Fatalf("%s: %d bytes, want %d", bo.name, len(b), BinDescSize)
			}
			got, err := DecodeBinDesc(bo.order, b)
			if err != nil || got != d {
				t.Errorf("%s: BinDesc round trip = %+v, %v; want %+v", bo.name, got, err, d)
			}
		}
	}
}

func TestDecodeRuntimeStructsShortBufferIsTruncated(t *testing.T) {
	b := make([]byte, 32)
	for n := 0; n < 32; n++ {
		if _, err := DecodeDeviceImage(binary.LittleEndian, b[:n]); !errors.Is(err, goffload.ErrTruncated) {
			t.Fatalf("DecodeDeviceImage(%d bytes): err = %v", n, err)
		}
		if _, err := DecodeBinDesc(binary.LittleEndian, b[:n]); !errors.Is(err, goffload.ErrTruncated) {
			t.Fatalf("DecodeBinDesc(%d bytes): err = %v", n, err)
		}
	}
}

func TestDecodeDeviceImages(t *testing.T) {
	want := []DeviceImage{{1, 2, 3, 4}, {5, 6, 7, 8}}
	var b []byte
	for _, d := range want {
		b = d.AppendEncode(b, binary.BigEndian)
	}
	got, err := DecodeDeviceImages(binary.BigEndian, b, 2)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("DecodeDeviceImages = %+v, %v; want %+v", got, err, want)
	}
	if got, err := DecodeDeviceImages(binary.BigEndian, b, 0); err != nil || len(got) != 0 {
		t.Errorf("DecodeDeviceImages(0) = %+v, %v", got, err)
	}
	// A count from untrusted data must not allocate before the bounds check.
	for _, n := range []int{3, 1 << 40, -1} {
		if _, err := DecodeDeviceImages(binary.BigEndian, b, n); err == nil {
			t.Errorf("DecodeDeviceImages(%d from %d bytes): no error", n, len(b))
		}
	}
}

// TestRuntimeStructsMatchRealWrappers checks the offsets against the wrapper
// objects that clang-linker-wrapper 15, 19 and 22 made: `.data.rel.ro` holds
// the device image array at 0 and the descriptor at 0x20, with relocations
// for every pointer (docs/registration.md#openmp-object).
func TestRuntimeStructsMatchRealWrappers(t *testing.T) {
	for _, major := range []int{15, 19, 22} {
		t.Run("llvm"+strconv.Itoa(major), func(t *testing.T) {
			r := releaseRow(t, major)
			f := openFixtureELF(t, filepath.Join("wrapper", "openmp-wrapper-llvm"+strconv.Itoa(major)+".o"))
			_, data := elfSectionData(t, f, ".data.rel.ro")
			const descOff = DeviceImageSize // one image, then the descriptor
			images, err := DecodeDeviceImages(f.ByteOrder, data, 1)
			if err != nil {
				t.Fatal(err)
			}
			desc, err := DecodeBinDesc(f.ByteOrder, data[descOff:])
			if err != nil {
				t.Fatal(err)
			}
			if images[0] != (DeviceImage{}) || desc != (BinDesc{NumDeviceImages: 1}) {
				t.Errorf("image %+v, descriptor %+v; want pointers 0 and one image", images[0], desc)
			}
			start, stop := "__start_"+r.Entries.OpenMP, "__stop_"+r.Entries.OpenMP
			want := map[uint64]string{
				DeviceImageStartOffset:                  ".llvm.offloading",
				DeviceImageEndOffset:                    ".llvm.offloading",
				DeviceImageEntriesBeginOffset:           start,
				DeviceImageEntriesEndOffset:             stop,
				descOff + BinDescDeviceImagesOffset:     ".data.rel.ro",
				descOff + BinDescHostEntriesBeginOffset: start,
				descOff + BinDescHostEntriesEndOffset:   stop,
			}
			rels := elfRelocations(t, f, ".data.rel.ro")
			if len(rels) != len(want) {
				t.Errorf("%d relocations, want %d", len(rels), len(want))
			}
			for _, rel := range rels {
				if sym, ok := want[rel.off]; !ok || rel.sym != sym {
					t.Errorf("relocation at %#x against %s, want %q", rel.off, rel.sym, sym)
				}
			}
		})
	}
}

func TestBuildIndirectTableSortsACopy(t *testing.T) {
	pairs := []IndirectPair{{0x30, 3}, {0x10, 1}, {0x20, 2}, {0x10, 9}}
	orig := slices.Clone(pairs)
	got := BuildIndirectTable(pairs)
	want := IndirectTable{{0x10, 1}, {0x10, 9}, {0x20, 2}, {0x30, 3}}
	if !slices.Equal(got, want) {
		t.Errorf("BuildIndirectTable = %+v, want %+v", got, want)
	}
	if !slices.Equal(pairs, orig) {
		t.Errorf("BuildIndirectTable changed its input: %+v", pairs)
	}
	if got := BuildIndirectTable(nil); len(got) != 0 {
		t.Errorf("BuildIndirectTable(nil) = %+v", got)
	}
}

func TestBuildIndirectTableDoesNotDependOnOrder(t *testing.T) {
	var pairs []IndirectPair
	for i := range 100 {
		pairs = append(pairs, IndirectPair{Host: uint64(i*7919%1000) * 16, Device: uint64(i)})
	}
	want := BuildIndirectTable(pairs)
	rng := rand.New(rand.NewSource(1))
	for range 10 {
		rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		if got := BuildIndirectTable(pairs); !slices.Equal(got, want) {
			t.Fatalf("table depends on input order")
		}
	}
}

func TestIndirectTableLookup(t *testing.T) {
	table := BuildIndirectTable([]IndirectPair{
		{0x401200, 0x7f0000001000},
		{0x401000, 0x7f0000000000},
		{0x401100, 0x7f0000000800},
		{0x401100, 0x7f0000009999}, // duplicate host address: the first pair wins
		{0, 0xdead},
	})
	tests := []struct {
		host   uint64
		device uint64
		ok     bool
	}{
		{0x401000, 0x7f0000000000, true},
		{0x401100, 0x7f0000000800, true},
		{0x401200, 0x7f0000001000, true},
		{0, 0xdead, true},
		{0x400fff, 0, false}, // between pairs
		{0x401001, 0, false},
		{0x401201, 0, false}, // above the last
		{^uint64(0), 0, false},
	}
	for _, tt := range tests {
		device, ok := table.Lookup(tt.host)
		if device != tt.device || ok != tt.ok {
			t.Errorf("Lookup(%#x) = %#x, %v; want %#x, %v", tt.host, device, ok, tt.device, tt.ok)
		}
	}
	if device, ok := IndirectTable(nil).Lookup(0x401000); ok || device != 0 {
		t.Errorf("empty table: Lookup = %#x, %v", device, ok)
	}
}

func TestIndirectTableEncodeDecode(t *testing.T) {
	table := BuildIndirectTable([]IndirectPair{{0x20, 0xB}, {0x10, 0xA}})
	tests := []struct {
		order binary.ByteOrder
		want  string
	}{
		{binary.LittleEndian, "1000000000000000 0a00000000000000 2000000000000000 0b00000000000000"},
		{binary.BigEndian, "0000000000000010 000000000000000a 0000000000000020 000000000000000b"},
	}
	for _, tt := range tests {
		b := table.Encode(tt.order)
		if want := hexBytes(t, tt.want); !bytes.Equal(b, want) {
			t.Errorf("%v: Encode = %x, want %x", tt.order, b, want)
		}
		got, err := DecodeIndirectTable(tt.order, b)
		if err != nil || !slices.Equal(got, table) {
			t.Errorf("%v: DecodeIndirectTable = %+v, %v; want %+v", tt.order, got, err, table)
		}
		if _, err := DecodeIndirectTable(tt.order, b[:len(b)-3]); !errors.Is(err, goffload.ErrTruncated) {
			t.Errorf("%v: partial pair: err = %v, want goffload.ErrTruncated", tt.order, err)
		}
	}
	unsorted := IndirectTable{{0x20, 1}, {0x10, 2}}.Encode(binary.LittleEndian)
	if _, err := DecodeIndirectTable(binary.LittleEndian, unsorted); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("unsorted table: err = %v, want goffload.ErrInvalid", err)
	}
	if got, err := DecodeIndirectTable(binary.LittleEndian, nil); err != nil || len(got) != 0 {
		t.Errorf("empty table: %+v, %v", got, err)
	}
}

func FuzzDecodeRuntimeStructs(f *testing.F) {
	f.Add(make([]byte, 32), 1)
	f.Add([]byte{1, 2, 3}, -1)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		checkAllocated(t, len(b), decodeFuzzPerByte, decodeFuzzFixed, func() {
			for _, bo := range entryByteOrders {
				if d, err := DecodeDeviceImage(bo.order, b); err == nil && !bytes.Equal(d.Encode(bo.order), b[:DeviceImageSize]) {
					t.Fatalf("DeviceImage %x re-encodes differently", b[:DeviceImageSize])
				}
				if d, err := DecodeBinDesc(bo.order, b); err == nil {
					if _, err := DecodeBinDesc(bo.order, d.Encode(bo.order)); err != nil {
						t.Fatal(err)
					}
				}
				if imgs, err := DecodeDeviceImages(bo.order, b, n); err == nil && len(imgs) != n {
					t.Fatalf("DecodeDeviceImages(%d) gave %d", n, len(imgs))
				}
				if tab, err := DecodeIndirectTable(bo.order, b); err == nil && !bytes.Equal(tab.Encode(bo.order), b) {
					t.Fatalf("indirect table %x re-encodes differently", b)
				}
				if _, _, err := DecodeIdent(bo.order, b); (err == nil) != (len(b) >= IdentSize) {
					t.Fatalf("DecodeIdent(%d bytes): %v", len(b), err)
				}
			}
		})
	})
}
