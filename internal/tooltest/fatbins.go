package tooltest

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// CUDAFatbinary returns the smallest fatbinary that the CUDA runtime reads (and
// wrap.GPU accepts): its 16-byte header, little-endian magic 0xBA55ED50,
// version 1, header size 16 and 4 bytes of payload, then the payload "FAKE". It
// is 20 bytes long like the stand-in "FAKEFATBIN-fatbinary" of the CUDA wrapper
// objects in offload/testdata/llvm/wrapper that it replaces, so that .nv_fatbin
// keeps its alignment.
func CUDAFatbinary() []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0xBA55ED50)
	b = binary.LittleEndian.AppendUint16(b, 1)
	b = binary.LittleEndian.AppendUint16(b, 16)
	b = binary.LittleEndian.AppendUint64(b, 4)
	return append(b, "FAKE"...)
}

// HIPFatbin returns a small HIP fatbin that wrap.GPU accepts: an
// uncompressed clang offload bundle (align 8) of an empty host entry and a
// gfx90a entry holding the 24 bytes "\x7fELF fake gfx90a object".
func HIPFatbin() []byte {
	ids := []string{"host-x86_64-unknown-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx90a"}
	data := []string{"", "\x7fELF fake gfx90a object"}
	le := binary.LittleEndian
	end := uint64(24 + 8)
	for _, id := range ids {
		end += 24 + uint64(len(id))
	}
	end = (end + 7) &^ 7
	b := le.AppendUint64([]byte("__CLANG_OFFLOAD_BUNDLE__"), uint64(len(ids)))
	for i, id := range ids {
		b = le.AppendUint64(b, end)
		b = le.AppendUint64(b, uint64(len(data[i])))
		b = le.AppendUint64(b, uint64(len(id)))
		b = append(b, id...)
		end += uint64(len(data[i]))
	}
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return append(b, strings.Join(data, "")...)
}

// shPrintf returns a printf command of sh that writes b.
func shPrintf(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		fmt.Fprintf(&s, "\\%03o", c)
	}
	return "printf '" + s.String() + "'"
}
