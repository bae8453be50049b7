package offloadbinary_test

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// Write an OffloadBinary as clang-offload-packager of LLVM 19 does, and read it back.
func ExampleMarshalBinary() {
	r, _ := release.Lookup(19)
	img := offloadbinary.Image{
		Kind:        offload.ImageObject,
		OffloadKind: offload.OffloadHIP,
		Strings:     []offloadbinary.KeyValue{{Key: "triple", Value: "amdgcn-amd-amdhsa"}, {Key: "arch", Value: "gfx90a"}},
	}
	bin, err := offloadbinary.MarshalBinary(r, &img, []byte("device code"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("% x ...\n", bin[:16])
	bins, _ := offloadbinary.ReadAllBytes(bin, &offloadbinary.ReadOptions{Release: r})
	im := bins[0].Images[0]
	fmt.Println(len(bin), im.Kind, im.OffloadKind, im.OffloadKindCode, im.Triple(), im.Arch(), im.ImageOffset, im.ImageSize)
	// Output:
	// 10 ff 10 ad 01 00 00 00 a0 00 00 00 00 00 00 00 ...
	// 160 elf hip 3 amdgcn-amd-amdhsa gfx90a 144 11
}

// The packager's string order is the iteration order of its hash tables, which
// changed between releases.
func ExampleParseImageArg() {
	for _, major := range []int{15, 22} {
		r, _ := release.Lookup(major)
		imgs, _ := offloadbinary.ParseImageArg(r, "file=k.o,triple=nvptx64-nvidia-cuda,arch=sm_70,kind=openmp,feature=+ptx63")
		fmt.Println(major, imgs[0].File, imgs[0].Image.Kind, imgs[0].Image.OffloadKind, imgs[0].Image.Strings)
	}
	// Output:
	// 15 k.o elf openmp [{triple nvptx64-nvidia-cuda} {feature +ptx63} {arch sm_70}]
	// 22 k.o elf openmp [{feature +ptx63} {arch sm_70} {triple nvptx64-nvidia-cuda}]
}

// Package images from memory, as `clang-offload-packager -o out --image=...` does.
func ExamplePackage() {
	files := map[string][]byte{"kernel.cubin": []byte("CUBIN")}
	open := func(name string) (io.Reader, int64, error) {
		data, ok := files[name]
		if !ok {
			return nil, 0, os.ErrNotExist
		}
		return bytes.NewReader(data), int64(len(data)), nil
	}
	var out bytes.Buffer
	n, err := offloadbinary.Package(release.Default(), &out, []string{"file=kernel.cubin,triple=nvptx64-nvidia-cuda,arch=sm_90,kind=cuda"}, open)
	fmt.Println(n, err)
	// Output:
	// 152 <nil>
}

func ExampleReadAll() {
	f, err := os.Open("../offload/testdata/llvm/packager/multi-llvm22.bin")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	bins, err := offloadbinary.ReadAll(f, st.Size(), nil)
	if err != nil {
		panic(err)
	}
	for _, b := range bins {
		for _, im := range b.Images {
			fmt.Printf("%#x %s %s %s %s\n", b.Offset, im.Kind, im.Triple(), im.Arch(), im.OffloadKind)
		}
	}
	// Output:
	// 0x0 <none> nvptx64-nvidia-cuda sm_70 openmp
	// 0xf0 elf amdgcn-amd-amdhsa gfx90a hip
}
