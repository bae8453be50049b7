package stubs_test

import (
	"debug/elf"
	"fmt"

	"github.com/goffload/goffload/wrap/internal/stubs"
)

func ExampleOpenMP() {
	c, err := stubs.OpenMP(elf.EM_X86_64, true)
	if err != nil {
		panic(err)
	}
	for _, f := range c.Funcs {
		fmt.Printf("%s at %#x, %d bytes: % x\n", f.Name, f.Offset, f.Size, c.Text[f.Offset:f.Offset+f.Size])
	}
	for _, r := range c.Relocs {
		fmt.Printf("%#x %v %v%+d\n", r.Offset, r.Type, r.Target, r.Addend)
	}
	fmt.Println("descriptor at .data.rel.ro +", c.DescriptorOffset, "via section symbol:", c.DescriptorViaSection)
	// Output:
	// .omp_offloading.descriptor_reg at 0x0, 27 bytes: 50 48 8d 3d 00 00 00 00 e8 00 00 00 00 48 8d 3d 0c 00 00 00 e8 00 00 00 00 58 c3
	// .omp_offloading.descriptor_unreg at 0x20, 15 bytes: 50 48 8d 3d 00 00 00 00 e8 00 00 00 00 58 c3
	// 0x4 R_X86_64_PC32 Descriptor-4
	// 0x9 R_X86_64_PLT32 RegisterLib-4
	// 0x15 R_X86_64_PLT32 Atexit-4
	// 0x24 R_X86_64_PC32 Descriptor-4
	// 0x29 R_X86_64_PLT32 UnregisterLib-4
	// descriptor at .data.rel.ro + 32 via section symbol: true
}
