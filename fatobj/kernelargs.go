package fatobj

import (
	"debug/elf"
	"fmt"

	"github.com/goffload/goffload/elfobj"
)

const (
	targetKernel     = "__tgt_target_kernel"
	kernelArgsShim   = ".goffload.tgt_target_kernel.v1"
	kernelArgsShimAt = ".text.goffload.kernel_args"
)

// kernelArgsShimX86 is the x86-64 code of a function that takes the
// arguments of __tgt_target_kernel with a version-1 __tgt_kernel_arguments
// (LLVM 15: 64 bytes), copies them into a version-2 one on its stack
// (LLVM 16: 104 bytes, with no flags, NumTeams {num_teams, 0, 0},
// ThreadLimit {thread_limit, 0, 0} and no dynamic group memory, as clang-16
// fills them) and calls __tgt_target_kernel with it. The call's rel32 is at
// kernelArgsShimCall.
var kernelArgsShimX86 = []byte{
	0x41, 0x83, 0x39, 0x01, // cmp dword [r9], 1 (Version)
	0x75, 0x69, // jne direct: any other version goes as it is
	0x48, 0x83, 0xec, 0x78, // sub rsp, 0x78 (104 bytes, rsp 16-aligned at the call)
	0x41, 0x0f, 0x10, 0x01, // movups xmm0, [r9]
	0x0f, 0x11, 0x04, 0x24, // movups [rsp], xmm0
	0x41, 0x0f, 0x10, 0x41, 0x10, // movups xmm0, [r9+16]
	0x0f, 0x11, 0x44, 0x24, 0x10, // movups [rsp+16], xmm0
	0x41, 0x0f, 0x10, 0x41, 0x20, // movups xmm0, [r9+32]
	0x0f, 0x11, 0x44, 0x24, 0x20, // movups [rsp+32], xmm0
	0x41, 0x0f, 0x10, 0x41, 0x30, // movups xmm0, [r9+48]
	0x0f, 0x11, 0x44, 0x24, 0x30, // movups [rsp+48], xmm0
	0xc7, 0x04, 0x24, 0x02, 0x00, 0x00, 0x00, // mov dword [rsp], 2 (Version)
	0x48, 0xc7, 0x44, 0x24, 0x40, 0x00, 0x00, 0x00, 0x00, // mov qword [rsp+64], 0 (Flags)
	0x89, 0x54, 0x24, 0x48, // mov [rsp+72], edx (NumTeams[0])
	0x48, 0xc7, 0x44, 0x24, 0x4c, 0x00, 0x00, 0x00, 0x00, // mov qword [rsp+76], 0 (NumTeams[1..2])
	0x89, 0x4c, 0x24, 0x54, // mov [rsp+84], ecx (ThreadLimit[0])
	0x48, 0xc7, 0x44, 0x24, 0x58, 0x00, 0x00, 0x00, 0x00, // mov qword [rsp+88], 0 (ThreadLimit[1..2])
	0xc7, 0x44, 0x24, 0x60, 0x00, 0x00, 0x00, 0x00, // mov dword [rsp+96], 0 (DynCGroupMem)
	0x49, 0x89, 0xe1, // mov r9, rsp
	0xe8, 0x00, 0x00, 0x00, 0x00, // call __tgt_target_kernel
	0x48, 0x83, 0xc4, 0x78, // add rsp, 0x78
	0xc3,                         // ret
	0xe9, 0x00, 0x00, 0x00, 0x00, // direct: jmp __tgt_target_kernel
}

// kernelArgsShimCall and kernelArgsShimJump are the offsets of the rel32 of
// the call and of the jump in kernelArgsShimX86.
const (
	kernelArgsShimCall = 102
	kernelArgsShimJump = 112
)

// kernelArgs makes the host code of LLVM 15, which gives __tgt_target_kernel
// a version-1 argument struct, call a function of the object that passes
// a version-2 one instead (a struct of another version goes through as it
// is, so that an object that may be 15's or 16's is safe): libomptarget 19 and 22 misread version 1 (they
// read the Flags after its end), and the program crashes in its first
// target region. Only x86-64 code is given the function; other machines
// are refused.
func (c *converter) kernelArgs() error {
	if c.from.Link.KernelArgsVersion != 1 || c.to.Link.KernelArgsVersion <= 1 {
		return nil
	}
	callee := c.o.Symbol(targetKernel)
	if callee == nil || callee.Section != nil {
		return nil
	}
	if c.o.Machine != elf.EM_X86_64 {
		return fmt.Errorf("%w: %s: LLVM %d's host code passes version-1 kernel arguments, which %v's runtime misreads; goffload rewrites the calls on x86-64 only", ErrConvert, targetKernel, c.from.Major, c.to)
	}
	code := &elfobj.Section{Name: kernelArgsShimAt, Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR,
		Addralign: 16, Data: append([]byte(nil), kernelArgsShimX86...)}
	shim := &elfobj.Symbol{Name: kernelArgsShim, Type: elf.STT_FUNC, Bind: elf.STB_LOCAL, Section: code,
		Size: uint64(len(kernelArgsShimX86))}
	n := 0
	for _, s := range c.o.Sections {
		for i := range s.Relocs {
			if s.Relocs[i].Symbol == callee {
				s.Relocs[i].Symbol = shim
				n++
			}
		}
	}
	if n == 0 {
		return nil
	}
	c.o.AddSection(code, false)
	code.Relocs = []elfobj.Reloc{
		{Offset: kernelArgsShimCall, Type: elf.R_X86_64_PLT32, Symbol: callee, Addend: -4},
		{Offset: kernelArgsShimJump, Type: elf.R_X86_64_PLT32, Symbol: callee, Addend: -4},
	}
	c.o.Symbols = append(c.o.Symbols, shim)
	c.conv.note("%d calls of %s: through %s, which passes version-2 kernel arguments", n, targetKernel, kernelArgsShim)
	return nil
}
