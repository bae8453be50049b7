package amdgpu_test

import (
	"fmt"
	"log"
	"os"

	"github.com/goffload/goffload/amdgpu"
)

// A code object's version, target ID and kernels: here one clang-22 made
// for gfx908:xnack- (code object version 5).
func ExampleRead() {
	f, err := os.Open("testdata/gfx908-v5.co")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		log.Fatal(err)
	}
	co, err := amdgpu.Read(f, st.Size())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("version %d, %s\n", co.Version, co.TargetID())
	for _, k := range co.Kernels() {
		fmt.Printf("%s: %d VGPRs, %d bytes of LDS, wavefront %d\n", k.Name, k.VGPRCount, k.GroupSegmentFixedSize, k.WavefrontSize)
	}
	// Output:
	// version 5, gfx908:xnack-
	// _Z2k1Pi: 2 VGPRs, 0 bytes of LDS, wavefront 64
	// _Z2kkPi: 2 VGPRs, 256 bytes of LDS, wavefront 64
}
