package stubs_test

import (
	"debug/elf"
	"fmt"

	"github.com/goffload/goffload/wrap/internal/stubs"
)

func ExampleGPU() {
	c, err := stubs.GPU(elf.EM_X86_64, stubs.GPUOptions{LLVM: 22, Kind: stubs.HIP})
	if err != nil {
		panic(err)
	}
	for _, f := range c.Funcs {
		fmt.Printf("%s at %#x, %d bytes\n", f.Name, f.Offset, f.Size)
	}
	for _, r := range c.Relocs[:4] {
		fmt.Printf("%#x %v %s%+d -> %s%s\n", r.Offset, r.Type, stubs.GPUTargetName(r.Target), r.Addend, c.Symbols[r.Target], c.ViaSection[r.Target])
	}
	fmt.Println("jump table:", len(c.JumpTable.Relocs), "entries in .rodata, align", c.JumpTable.Align)
	// Output:
	// .hip.fatbin_reg at 0x0, 42 bytes
	// .hip.fatbin_unreg at 0x30, 15 bytes
	// .hip.globals_reg at 0x40, 284 bytes
	// 0x4 R_X86_64_PC32 FatbinWrapper-4 -> .hipFatBinSegment
	// 0x9 R_X86_64_PLT32 RegisterFatBinary-4 -> __hipRegisterFatBinary
	// 0x10 R_X86_64_PC32 BinaryHandle-4 -> .bss
	// 0x24 R_X86_64_PLT32 Atexit-4 -> atexit
	// jump table: 4 entries in .rodata, align 4
}
