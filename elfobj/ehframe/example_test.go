package ehframe_test

import (
	"debug/elf"
	"fmt"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
)

// Build the .eh_frame of a function that pushes one register, with the CIE
// that LLVM uses on x86-64.
func ExampleBuild() {
	text := &elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 16,
		Data: []byte{0x50, 0x58, 0xc3}} // push %rax; pop %rax; ret
	textSym := &elfobj.Symbol{Type: elf.STT_SECTION, Bind: elf.STB_LOCAL, Section: text}
	fi, _ := ehframe.FrameInfoFor(elf.EM_X86_64)
	fmt.Println(fi.CodeAlign, fi.DataAlign, fi.RAReg, fi.Initial)
	eh, err := ehframe.Build(elf.EM_X86_64, elf.ELFDATA2LSB, fi, []ehframe.FDE{{
		Symbol: textSym, Addend: 0, Size: 3,
		CFI: ehframe.CFI{ehframe.AdvanceLoc(1), ehframe.DefCFAOffset(16), ehframe.AdvanceLoc(1), ehframe.DefCFAOffset(8)},
	}})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s type %#x %v align %d size %d\n", eh.Name, uint32(eh.Type), eh.Flags, eh.Addralign, len(eh.Data))
	fmt.Printf("CIE % x\n", eh.Data[:24])
	fmt.Printf("FDE % x\n", eh.Data[24:])
	r := eh.Relocs[0]
	fmt.Println(r.Offset, r.Type, r.Symbol.Section.Name, r.Addend)
	// Output:
	// 1 -8 16 [DW_CFA_def_cfa: reg7 +8 DW_CFA_offset: reg16 -8]
	// .eh_frame type 0x70000001 SHF_ALLOC align 8 size 48
	// CIE 14 00 00 00 00 00 00 00 01 7a 52 00 01 78 10 01 1b 0c 07 08 90 01 00 00
	// FDE 14 00 00 00 1c 00 00 00 00 00 00 00 03 00 00 00 00 41 0e 10 41 0e 08 00
	// 32 R_X86_64_PC32 .text 0
}
