package entries

import (
	"testing"

	"github.com/goffload/goffload/offload"
)

// TestDeviceImagesOfFatbins: the device code of the CUDA and HIP wrappers
// counts as images of their kind: the code object of the HIP fatbin with
// its symbols, the CUDA fatbinary unread.
func TestDeviceImagesOfFatbins(t *testing.T) {
	for _, c := range []struct {
		file    string
		kind    offload.OffloadKind
		symbols bool
	}{
		{"hip-wrapper-llvm19.o", offload.OffloadHIP, true},
		{"hip-wrapper-llvm22.o", offload.OffloadHIP, true},
		{"cuda-wrapper-llvm19.o", offload.OffloadCUDA, false},
		{"cuda-wrapper-llvm22.o", offload.OffloadCUDA, false},
	} {
		imgs, err := DeviceImages(readFile(t, llvmTestdata("wrapper", c.file)), offload.Default())
		if err != nil {
			t.Fatal(err)
		}
		if len(imgs) != 1 || imgs[0].OffloadKind != c.kind || (imgs[0].Symbols != nil) != c.symbols || (imgs[0].Skipped == "") != c.symbols {
			t.Errorf("%s: images %+v", c.file, imgs)
		}
	}
}
