package stubs

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/internal/tooltest"
)

// machines are the host machines, with the triple llc is given for each.
var machines = []struct {
	name    string
	machine elf.Machine
	triple  string
}{
	{"x86_64", elf.EM_X86_64, "x86_64-unknown-linux-gnu"},
	{"aarch64", elf.EM_AARCH64, "aarch64-unknown-linux-gnu"},
	{"ppc64le", elf.EM_PPC64, "powerpc64le-unknown-linux-gnu"},
	{"riscv64", elf.EM_RISCV, "riscv64-unknown-linux-gnu"},
}

// decodeGolden is the code as golang.org/x/arch decodes it (GNU syntax),
// checked by eye against `llvm-objdump-19 -d` of llc's objects.
var decodeGolden = []struct {
	machine elf.Machine
	llvm    int
	atexit  bool
	text    string
}{
	{elf.EM_X86_64, 19, true, `
0x0000: push %rax
0x0001: lea (%rip),%rdi
0x0008: callq 0xd
0x000d: lea 0xc(%rip),%rdi
0x0014: callq 0x19
0x0019: pop %rax
0x001a: retq
0x001b: nopl (%rax,%rax,1)
0x0020: push %rax
0x0021: lea (%rip),%rdi
0x0028: callq 0x2d
0x002d: pop %rax
0x002e: retq`},
	{elf.EM_X86_64, 19, false, `
0x0000: push %rax
0x0001: lea (%rip),%rdi
0x0008: callq 0xd
0x000d: pop %rax
0x000e: retq
0x000f: nop
0x0010: push %rax
0x0011: lea (%rip),%rdi
0x0018: callq 0x1d
0x001d: pop %rax
0x001e: retq`},
	{elf.EM_AARCH64, 19, true, `
0x0000: str x30, [sp,#-16]!
0x0004: adrp x0, .+0x0
0x0008: add x0, x0, #0x0
0x000c: bl .+0x0
0x0010: adrp x0, .+0x0
0x0014: add x0, x0, #0x0
0x0018: bl .+0x0
0x001c: ldr x30, [sp],#16
0x0020: ret
0x0024: str x30, [sp,#-16]!
0x0028: adrp x0, .+0x0
0x002c: add x0, x0, #0x0
0x0030: bl .+0x0
0x0034: ldr x30, [sp],#16
0x0038: ret`},
	{elf.EM_AARCH64, 19, false, `
0x0000: str x30, [sp,#-16]!
0x0004: adrp x0, .+0x0
0x0008: add x0, x0, #0x0
0x000c: bl .+0x0
0x0010: ldr x30, [sp],#16
0x0014: ret
0x0018: str x30, [sp,#-16]!
0x001c: adrp x0, .+0x0
0x0020: add x0, x0, #0x0
0x0024: bl .+0x0
0x0028: ldr x30, [sp],#16
0x002c: ret`},
	{elf.EM_PPC64, 19, true, `
0x0000: addis r2,r12,0
0x0004: addi r2,r2,0
0x0008: mflr r0
0x000c: stdu r1,-32(r1)
0x0010: std r0,48(r1)
0x0014: addis r3,r2,0
0x0018: addi r3,r3,0
0x001c: bl .+0x0
0x0020: nop
0x0024: addis r3,r2,0
0x0028: addi r3,r3,0
0x002c: bl .+0x0
0x0030: nop
0x0034: addi r1,r1,32
0x0038: ld r0,16(r1)
0x003c: mtlr r0
0x0040: blr
0x0044: .long 0x0
0x0048: .long 0x0
0x004c: .long 0x0
0x0050: addis r2,r12,0
0x0054: addi r2,r2,0
0x0058: mflr r0
0x005c: stdu r1,-32(r1)
0x0060: std r0,48(r1)
0x0064: addis r3,r2,0
0x0068: addi r3,r3,0
0x006c: bl .+0x0
0x0070: nop
0x0074: addi r1,r1,32
0x0078: ld r0,16(r1)
0x007c: mtlr r0
0x0080: blr
0x0084: .long 0x0
0x0088: .long 0x0
0x008c: .long 0x0`},
	// LLVM 13 (static: movabs, llvm-objdump-14's `movabsq $0, %rdi`) and
	// 14's ppc64le (a 96-byte frame), checked against llvm-objdump-14 -d of
	// clang-13/14 -cc1's objects.
	{elf.EM_X86_64, 13, false, `
0x0000: push %rax
0x0001: mov $0x0,%rdi
0x000b: callq 0x10
0x0010: pop %rax
0x0011: retq
0x0012: nopw %cs:(%rax,%rax,1)
0x001c: nopl (%rax)
0x0020: push %rax
0x0021: mov $0x0,%rdi
0x002b: callq 0x30
0x0030: pop %rax
0x0031: retq`},
	{elf.EM_PPC64, 14, false, `
0x0000: addis r2,r12,0
0x0004: addi r2,r2,0
0x0008: mflr r0
0x000c: std r0,16(r1)
0x0010: stdu r1,-96(r1)
0x0014: addis r3,r2,0
0x0018: addi r3,r3,0
0x001c: bl .+0x0
0x0020: nop
0x0024: addi r1,r1,96
0x0028: ld r0,16(r1)
0x002c: mtlr r0
0x0030: blr
0x0034: .long 0x0
0x0038: .long 0x0
0x003c: .long 0x0
0x0040: addis r2,r12,0
0x0044: addi r2,r2,0
0x0048: mflr r0
0x004c: std r0,16(r1)
0x0050: stdu r1,-96(r1)
0x0054: addis r3,r2,0
0x0058: addi r3,r3,0
0x005c: bl .+0x0
0x0060: nop
0x0064: addi r1,r1,96
0x0068: ld r0,16(r1)
0x006c: mtlr r0
0x0070: blr
0x0074: .long 0x0
0x0078: .long 0x0
0x007c: .long 0x0`},
	{elf.EM_PPC64, 19, false, `
0x0000: addis r2,r12,0
0x0004: addi r2,r2,0
0x0008: mflr r0
0x000c: stdu r1,-32(r1)
0x0010: std r0,48(r1)
0x0014: addis r3,r2,0
0x0018: addi r3,r3,0
0x001c: bl .+0x0
0x0020: nop
0x0024: addi r1,r1,32
0x0028: ld r0,16(r1)
0x002c: mtlr r0
0x0030: blr
0x0034: .long 0x0
0x0038: .long 0x0
0x003c: .long 0x0
0x0040: addis r2,r12,0
0x0044: addi r2,r2,0
0x0048: mflr r0
0x004c: stdu r1,-32(r1)
0x0050: std r0,48(r1)
0x0054: addis r3,r2,0
0x0058: addi r3,r3,0
0x005c: bl .+0x0
0x0060: nop
0x0064: addi r1,r1,32
0x0068: ld r0,16(r1)
0x006c: mtlr r0
0x0070: blr
0x0074: .long 0x0
0x0078: .long 0x0
0x007c: .long 0x0`},
	// LLVM 15 stores LR before it allocates the frame.
	{elf.EM_PPC64, 15, false, `
0x0000: addis r2,r12,0
0x0004: addi r2,r2,0
0x0008: mflr r0
0x000c: std r0,16(r1)
0x0010: stdu r1,-32(r1)
0x0014: addis r3,r2,0
0x0018: addi r3,r3,0
0x001c: bl .+0x0
0x0020: nop
0x0024: addi r1,r1,32
0x0028: ld r0,16(r1)
0x002c: mtlr r0
0x0030: blr
0x0034: .long 0x0
0x0038: .long 0x0
0x003c: .long 0x0
0x0040: addis r2,r12,0
0x0044: addi r2,r2,0
0x0048: mflr r0
0x004c: std r0,16(r1)
0x0050: stdu r1,-32(r1)
0x0054: addis r3,r2,0
0x0058: addi r3,r3,0
0x005c: bl .+0x0
0x0060: nop
0x0064: addi r1,r1,32
0x0068: ld r0,16(r1)
0x006c: mtlr r0
0x0070: blr
0x0074: .long 0x0
0x0078: .long 0x0
0x007c: .long 0x0`},
	// LLVM 22 merges device_images and the descriptor: the descriptor is
	// 32 bytes into the merged block.
	{elf.EM_PPC64, 22, true, `
0x0000: addis r2,r12,0
0x0004: addi r2,r2,0
0x0008: mflr r0
0x000c: stdu r1,-32(r1)
0x0010: std r0,48(r1)
0x0014: addis r3,r2,0
0x0018: addi r3,r3,0
0x001c: addi r3,r3,32
0x0020: bl .+0x0
0x0024: nop
0x0028: addis r3,r2,0
0x002c: addi r3,r3,0
0x0030: bl .+0x0
0x0034: nop
0x0038: addi r1,r1,32
0x003c: ld r0,16(r1)
0x0040: mtlr r0
0x0044: blr
0x0048: .long 0x0
0x004c: .long 0x0
0x0050: .long 0x0
0x0054: nop
0x0058: nop
0x005c: nop
0x0060: addis r2,r12,0
0x0064: addi r2,r2,0
0x0068: mflr r0
0x006c: stdu r1,-32(r1)
0x0070: std r0,48(r1)
0x0074: addis r3,r2,0
0x0078: addi r3,r3,0
0x007c: addi r3,r3,32
0x0080: bl .+0x0
0x0084: nop
0x0088: addi r1,r1,32
0x008c: ld r0,16(r1)
0x0090: mtlr r0
0x0094: blr
0x0098: .long 0x0
0x009c: .long 0x0
0x00a0: .long 0x0`},
	{elf.EM_RISCV, 19, true, `
0x0000: addi x2,x2,-16
0x0004: sd x1,8(x2)
0x0008: auipc x10,0x0
0x000c: mv x10,x10
0x0010: auipc x1,0x0
0x0014: jalr x1
0x0018: auipc x10,0x0
0x001c: addi x10,x10,28
0x0020: auipc x1,0x0
0x0024: jalr x1
0x0028: ld x1,8(x2)
0x002c: addi x2,x2,16
0x0030: ret
0x0034: addi x2,x2,-16
0x0038: sd x1,8(x2)
0x003c: auipc x10,0x0
0x0040: mv x10,x10
0x0044: auipc x1,0x0
0x0048: jalr x1
0x004c: ld x1,8(x2)
0x0050: addi x2,x2,16
0x0054: ret`},
	{elf.EM_RISCV, 19, false, `
0x0000: addi x2,x2,-16
0x0004: sd x1,8(x2)
0x0008: auipc x10,0x0
0x000c: mv x10,x10
0x0010: auipc x1,0x0
0x0014: jalr x1
0x0018: ld x1,8(x2)
0x001c: addi x2,x2,16
0x0020: ret
0x0024: addi x2,x2,-16
0x0028: sd x1,8(x2)
0x002c: auipc x10,0x0
0x0030: mv x10,x10
0x0034: auipc x1,0x0
0x0038: jalr x1
0x003c: ld x1,8(x2)
0x0040: addi x2,x2,16
0x0044: ret`},
}

func TestDecodeMatchesGolden(t *testing.T) {
	for _, g := range decodeGolden {
		t.Run(fmt.Sprintf("%v/llvm%d/atexit=%v", g.machine, g.llvm, g.atexit), func(t *testing.T) {
			c := openMP(t, g.machine, Options{LLVM: g.llvm, Atexit: g.atexit, Static: g.llvm == 13})
			got, err := disassemble(g.machine, c.Text)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Split(strings.TrimSpace(g.text), "\n")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("instructions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEveryVariantDecodes decodes the code of every release, IR style and
// machine, and checks what holds for all of them: relocations and labels
// inside the text, functions in order and aligned, CFI that elfobj encodes.
func TestEveryVariantDecodes(t *testing.T) {
	for _, m := range machines {
		for llvm := 13; llvm <= 22; llvm++ {
			if ms := codegens[llvm].machines; ms != nil && !slices.Contains(ms, m.machine) {
				continue
			}
			for _, atexit := range []bool{false, true} {
				c := openMP(t, m.machine, Options{LLVM: llvm, Atexit: atexit, Static: llvm == 13})
				name := fmt.Sprintf("%s/llvm%d/atexit=%v", m.name, llvm, atexit)
				if _, err := disassemble(m.machine, c.Text); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				checkShape(t, name, m.machine, c, atexit)
			}
		}
	}
}

func checkShape(t *testing.T, name string, m elf.Machine, c *Code, atexit bool) {
	t.Helper()
	if len(c.Funcs) != 2 || c.Funcs[0].Name != RegName || c.Funcs[1].Name != UnregName {
		t.Fatalf("%s: functions %+v", name, c.Funcs)
	}
	reg, unreg := c.Funcs[0], c.Funcs[1]
	if reg.Offset != 0 || unreg.Offset%c.Align != 0 || unreg.Offset < reg.Size || unreg.Offset+unreg.Size != uint64(len(c.Text)) {
		t.Errorf("%s: reg %#x+%#x, unreg %#x+%#x, align %d, text %#x", name, reg.Offset, reg.Size, unreg.Offset, unreg.Size, c.Align, len(c.Text))
	}
	calls := map[Target]int{}
	for _, r := range c.Relocs {
		if r.Offset+4 > uint64(len(c.Text)) {
			t.Errorf("%s: relocation %+v outside the text", name, r)
		}
		if r.Type == elf.R_X86_64_PLT32 || r.Type == elf.R_AARCH64_CALL26 || r.Type == elf.R_PPC64_REL24 || r.Type == elf.R_RISCV_CALL_PLT {
			calls[r.Target]++
		}
	}
	want := map[Target]int{RegisterLib: 1, UnregisterLib: 1}
	if atexit {
		want[Atexit] = 1
	}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("%s: calls (-want +got):\n%s", name, diff)
	}
	fi, err := ehframe.FrameInfoFor(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := buildEHFrame(m, fi, c); err != nil {
		t.Errorf("%s: %v", name, err)
	}
}

func TestOpenMPIsLLVM19(t *testing.T) {
	for _, m := range machines {
		for _, atexit := range []bool{false, true} {
			got, err := OpenMP(m.machine, atexit)
			if err != nil {
				t.Fatal(err)
			}
			want := openMP(t, m.machine, Options{LLVM: 19, Atexit: atexit, Images: 1})
			if diff := cmp.Diff(want, got, cfiEqual); diff != "" {
				t.Errorf("%s atexit=%v: OpenMP differs from LLVM 19 with one image:\n%s", m.name, atexit, diff)
			}
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		m elf.Machine
		o Options
	}{
		{elf.EM_386, Options{}},
		{elf.EM_MIPS, Options{}},
		{elf.EM_X86_64, Options{LLVM: 12}},
		{elf.EM_X86_64, Options{LLVM: 25}},
		{elf.EM_RISCV, Options{LLVM: 14}},   // clang-14 compiles it rv64gc: not measured
		{elf.EM_AARCH64, Options{LLVM: 13}}, // static code on x86-64 only
		{elf.EM_PPC64, Options{LLVM: 13}},
		{elf.EM_AARCH64, Options{LLVM: 19, Static: true}},
	} {
		c, err := OpenMPWith(tc.m, tc.o)
		if c != nil || !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("OpenMPWith(%v, %+v) = %v, %v; want an error wrapping goffload.ErrUnsupported", tc.m, tc.o, c, err)
		}
	}
	// 23 and 24 (main after 23) are inferred as 22's code generator.
	for m := range arches {
		c22, err22 := OpenMPWith(m, Options{LLVM: 22, Atexit: true})
		for _, v := range []int{23, 24} {
			c, err := OpenMPWith(m, Options{LLVM: v, Atexit: true})
			if err22 != nil || err != nil || !bytes.Equal(c22.Text, c.Text) {
				t.Errorf("%v: LLVM %d's code is not 22's (%v, %v)", m, v, err22, err)
			}
		}
	}
	if c, err := OpenMPWith(elf.EM_X86_64, Options{Images: -1}); c != nil || err == nil {
		t.Errorf("-1 images: %v, %v", c, err)
	}
}

// TestCodeIsFresh checks that a caller changing one Code changes no other.
func TestCodeIsFresh(t *testing.T) {
	for _, m := range machines {
		a := openMP(t, m.machine, Options{Atexit: true})
		want := openMP(t, m.machine, Options{Atexit: true})
		a.Text[0] ^= 0xff
		a.Relocs[0].Addend++
		a.Funcs[0].CFI[0] = ehframe.Restore(1)
		if len(a.Attributes) > 0 {
			a.Attributes[0] = 0
		}
		if diff := cmp.Diff(want, openMP(t, m.machine, Options{Atexit: true}), cfiEqual); diff != "" {
			t.Errorf("%s: changing one result changed the next:\n%s", m.name, diff)
		}
	}
}

// TestRISCVAttributes pins the attributes section that llc writes for empty
// features (llvm-readelf -A: stack_align 16, arch rv64i2p1).
func TestRISCVAttributes(t *testing.T) {
	c := openMP(t, elf.EM_RISCV, Options{})
	want := []byte("A\x1b\x00\x00\x00riscv\x00\x01\x11\x00\x00\x00\x04\x10\x05rv64i2p1\x00")
	if !bytes.Equal(c.Attributes, want) {
		t.Errorf("attributes\n got %q\nwant %q", c.Attributes, want)
	}
	if c.Flags != 0 {
		t.Errorf("e_flags %#x, want 0 (lp64, no RVC)", c.Flags)
	}
}

// cfiEqual compares call-frame instructions, whose fields are unexported.
var cfiEqual = cmp.Comparer(func(a, b ehframe.CFIOp) bool { return a == b })

func openMP(t *testing.T, m elf.Machine, o Options) *Code {
	t.Helper()
	c, err := OpenMPWith(m, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMatchesLLC compiles the wrapper module with llc of LLVM 15, 16, 19 and
// 22 for every machine, both IR styles and one or two images, and compares
// llc's .text.startup, its relocations, symbols, labels, e_flags and
// .riscv.attributes, and its .eh_frame (bytes, and as llvm-dwarfdump prints
// it) with the Code for that release. LLVM 19 and 22 are required under
// OFFLOAD_REQUIRE_TOOLS; llc of 15 and 16 (Debian's llvm-15 and llvm-16, which
// CI does not install by name) skip when missing.
//
// Its matrix has a row for each release and machine and a column for each
// of the four modules (IR style × images); module v sits in column
// (v - release) mod 4 of the release's rows, so that the default sample
// (tooltest.Sampled: column = machine) is a Latin square: each release
// compiles every module, on every machine one, and each machine every
// module. llc runs in parallel, llvm-dwarfdump once for all the objects.
func TestMatchesLLC(t *testing.T) {
	t.Parallel()
	dwarfdump := tooltest.Tool(t, "llvm-dwarfdump", 19)
	releases := []int{15, 16, 19, 22}
	type cell struct {
		llvm, row, col int
		m              int // index in machines
		atexit         bool
		images         int
		code           *Code
		obj, ours      string
		err            error
	}
	rows, cols := len(releases)*len(machines), 4
	var cells, todo []*cell
	for r, llvm := range releases {
		llc := tooltest.Find("llc", llvm) // a missing one: the release's subtest says why
		for mi := range machines {
			for v := range cols {
				c := &cell{llvm: llvm, row: r*len(machines) + mi, col: (v - r%cols + cols) % cols, m: mi, atexit: v/2 == 1, images: v%2 + 1}
				cells = append(cells, c)
				if llc != "" && tooltest.Sampled(c.row, c.col, rows, cols) {
					todo = append(todo, c)
				}
			}
		}
	}
	inParallel(len(todo), func(i int) {
		c := todo[i]
		m := machines[c.m]
		if c.code, c.err = OpenMPWith(m.machine, Options{LLVM: c.llvm, Atexit: c.atexit, Images: c.images}); c.err != nil {
			return
		}
		if c.obj, c.err = llcObject(tooltest.Find("llc", c.llvm), m.triple, wrapperIR(c.atexit, c.images)); c.err != nil {
			return
		}
		c.ours, c.err = ehFrameObject(m.machine, c.code)
	})
	var paths []string
	for _, c := range todo {
		paths = append(paths, c.obj, c.ours)
	}
	fdes := dwarfdumpFDEs(t, dwarfdump, paths)
	for _, llvm := range releases {
		t.Run(fmt.Sprintf("llvm%d", llvm), func(t *testing.T) {
			llcOf(t, llvm)
			for _, c := range cells {
				if c.llvm != llvm {
					continue
				}
				m := machines[c.m]
				t.Run(fmt.Sprintf("%s/atexit=%v/images=%d", m.name, c.atexit, c.images), func(t *testing.T) {
					tooltest.Sample(t, c.row, c.col, rows, cols)
					if c.err != nil {
						t.Fatal(c.err)
					}
					if !c.code.Measured {
						t.Errorf("Measured is false for a measured release")
					}
					compareObject(t, c.obj, m.machine, c.code)
					compareEHFrame(t, fdes[c.obj], fdes[c.ours], c.obj, m.machine, c.code)
				})
			}
		})
	}
}

// TestMatchesClangLinkerWrapper compares the x86-64 code with the wrapper
// objects that the clang-linker-wrapper of LLVM 15, 16, 19 and 22 wrote.
func TestMatchesClangLinkerWrapper(t *testing.T) {
	for _, llvm := range []int{15, 16, 19, 22} {
		t.Run(fmt.Sprintf("llvm%d", llvm), func(t *testing.T) {
			obj := filepath.Join("..", "..", "..", "offload", "testdata", "llvm", "wrapper", fmt.Sprintf("openmp-wrapper-llvm%d.o", llvm))
			c := openMP(t, elf.EM_X86_64, Options{LLVM: llvm, Atexit: llvm >= 19})
			compareObject(t, obj, elf.EM_X86_64, c)
			f, err := elf.Open(obj)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			compareEHFrameBytes(t, f, elf.EM_X86_64, c)
		})
	}
}

// TestMatchesClangOldDriver compiles the module that clang-offload-wrapper
// of LLVM 13 and 14 writes for one and two images with `clang -cc1
// -emit-obj` as the driver of that release runs it (from clang -###), for
// every machine that release has code for, and compares the object with the
// Code as TestMatchesLLC does. Its matrix has a row for each release and
// machine and a column for each number of images; the default sample
// (tooltest.Sampled) compiles one number of images for each row, both
// numbers on x86-64 (13 one, 14 two). The compiles run in parallel,
// llvm-dwarfdump once for all the objects.
func TestMatchesClangOldDriver(t *testing.T) {
	t.Parallel()
	dwarfdump := tooltest.Tool(t, "llvm-dwarfdump", 19)
	type cell struct {
		llvm, m, images, row int
		code                 *Code
		obj, ours            string
		err                  error
	}
	type row struct{ llvm, m int }
	var rowsOf []row
	for _, llvm := range []int{13, 14} {
		for mi, m := range machines {
			if slices.Contains(codegens[llvm].machines, m.machine) {
				rowsOf = append(rowsOf, row{llvm, mi})
			}
		}
	}
	images := []int{1, 2}
	var cells, todo []*cell
	links := map[row]*tooltest.OldDriverLink{}
	for i, r := range rowsOf {
		for j, n := range images {
			c := &cell{llvm: r.llvm, m: r.m, images: n, row: i}
			cells = append(cells, c)
			if tooltest.Sampled(i, j, len(rowsOf), len(images)) {
				if links[r] == nil {
					links[r] = tooltest.OldDriverCommands(t, r.llvm, machines[r.m].triple)
				}
				todo = append(todo, c)
			}
		}
	}
	dir := t.TempDir()
	inParallel(len(todo), func(i int) {
		c := todo[i]
		m := machines[c.m]
		link := links[row{c.llvm, c.m}]
		cdir := filepath.Join(dir, fmt.Sprint(i))
		if c.err = os.Mkdir(cdir, 0o755); c.err != nil {
			return
		}
		var files []string
		for i := range c.images {
			img := bytes.Repeat([]byte{0x7f, 'E', 'L', 'F', 0, byte(i)}, 50+7*i) // interior NULs: not a C string
			files = append(files, filepath.Join(cdir, fmt.Sprintf("img%d", i)))
			if c.err = os.WriteFile(files[i], img, 0o644); c.err != nil {
				return
			}
		}
		bc, obj := filepath.Join(cdir, "w.bc"), filepath.Join(cdir, "w.o")
		wrap := link.WrapArgs(bc, files...)
		if _, c.err = runTool(wrap[0], wrap[1:]...); c.err != nil {
			return
		}
		cc := link.CompileArgs(bc, obj)
		if _, c.err = runTool(cc[0], cc[1:]...); c.err != nil {
			return
		}
		c.obj = obj
		if c.code, c.err = OpenMPWith(m.machine, Options{LLVM: c.llvm, Static: c.llvm == 13, Images: c.images}); c.err != nil { // clang-13 compiles static
			return
		}
		c.ours, c.err = ehFrameObject(m.machine, c.code)
	})
	var paths []string
	for _, c := range todo {
		paths = append(paths, c.obj, c.ours)
	}
	fdes := dwarfdumpFDEs(t, dwarfdump, paths)
	for _, c := range cells {
		m := machines[c.m]
		t.Run(fmt.Sprintf("llvm%d/%s/images=%d", c.llvm, m.name, c.images), func(t *testing.T) {
			tooltest.Sample(t, c.row, c.images-1, len(rowsOf), len(images))
			if c.err != nil {
				t.Fatal(c.err)
			}
			if !c.code.Measured {
				t.Errorf("Measured is false for a measured release")
			}
			compareObject(t, c.obj, m.machine, c.code)
			compareEHFrame(t, fdes[c.obj], fdes[c.ours], c.obj, m.machine, c.code)
			f, err := elf.Open(c.obj)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			for _, s := range f.Sections {
				if s.Type == elf.SHT_RELA && (s.Flags&0x40 != 0) != c.code.InfoLink {
					t.Errorf("%s: flags %v, Code.InfoLink %v", s.Name, s.Flags, c.code.InfoLink)
				}
			}
		})
	}
}

// llcOf returns llc of release llvm; see TestMatchesLLC for which are required.
func llcOf(t *testing.T, llvm int) string {
	t.Helper()
	if llvm == 19 || llvm == 22 {
		return tooltest.Tool(t, "llc", llvm)
	}
	p := tooltest.Find("llc", llvm)
	if p == "" {
		t.Skipf("llc of LLVM %d not found (looked in $PATH and %v)", llvm, tooltest.Dirs(llvm))
	}
	return p
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// wrapperIR is the OpenMP wrapper module as clang-linker-wrapper writes it
// (docs/registration.md#openmp-module), with images zero-filled images of 256
// bytes: the LLVM 19 form when atexit is true, the LLVM 15 form otherwise.
func wrapperIR(atexit bool, images int) string {
	var b strings.Builder
	b.WriteString("source_filename = \"offload.wrapper.module\"\n\n")
	entry := "%__tgt_offload_entry"
	if atexit {
		entry = "%struct.__tgt_offload_entry"
	}
	fmt.Fprintf(&b, "%s = type { ptr, ptr, i64, i32, i32 }\n", entry)
	b.WriteString("%__tgt_device_image = type { ptr, ptr, ptr, ptr }\n%__tgt_bin_desc = type { i32, ptr, ptr, ptr }\n\n")
	if atexit {
		fmt.Fprintf(&b, "@__start_omp_offloading_entries = external hidden constant [0 x %s]\n", entry)
		fmt.Fprintf(&b, "@__stop_omp_offloading_entries = external hidden constant [0 x %s]\n", entry)
		fmt.Fprintf(&b, "@__dummy.omp_offloading_entries = internal constant [0 x %s] zeroinitializer, section \"omp_offloading_entries\"\n", entry)
		b.WriteString("@llvm.compiler.used = appending global [1 x ptr] [ptr @__dummy.omp_offloading_entries], section \"llvm.metadata\"\n")
	} else {
		fmt.Fprintf(&b, "@__start_omp_offloading_entries = external hidden constant %s\n", entry)
		fmt.Fprintf(&b, "@__stop_omp_offloading_entries = external hidden constant %s\n", entry)
		fmt.Fprintf(&b, "@__dummy.omp_offloading.entry = hidden constant [0 x %s] zeroinitializer, section \"omp_offloading_entries\"\n", entry)
	}
	var descs []string
	for i := 0; i < images; i++ {
		img := "@.omp_offloading.device_image"
		if i > 0 {
			img += fmt.Sprintf(".%d", i)
		}
		fmt.Fprintf(&b, "%s = internal unnamed_addr constant [256 x i8] zeroinitializer, section \".llvm.offloading\", align 8\n", img)
		start, end := "ptr "+img, fmt.Sprintf("ptr getelementptr inbounds ([256 x i8], ptr %s, i64 1, i64 0)", img)
		if atexit {
			start = fmt.Sprintf("ptr getelementptr ([256 x i8], ptr %s, i64 0, i64 144)", img)
			end = fmt.Sprintf("ptr getelementptr ([256 x i8], ptr %s, i64 0, i64 256)", img)
		}
		descs = append(descs, fmt.Sprintf("%%__tgt_device_image { %s, %s, ptr @__start_omp_offloading_entries, ptr @__stop_omp_offloading_entries }", start, end))
	}
	fmt.Fprintf(&b, "@.omp_offloading.device_images = internal unnamed_addr constant [%d x %%__tgt_device_image] [%s]\n", images, strings.Join(descs, ", "))
	fmt.Fprintf(&b, "@.omp_offloading.descriptor = internal constant %%__tgt_bin_desc { i32 %d, ptr @.omp_offloading.device_images, ptr @__start_omp_offloading_entries, ptr @__stop_omp_offloading_entries }\n", images)
	if atexit {
		b.WriteString("@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @.omp_offloading.descriptor_reg, ptr null }]\n")
	} else {
		b.WriteString("@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 1, ptr @.omp_offloading.descriptor_reg, ptr null }]\n")
		b.WriteString("@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 1, ptr @.omp_offloading.descriptor_unreg, ptr null }]\n")
	}
	b.WriteString("\ndefine internal void @.omp_offloading.descriptor_reg() section \".text.startup\" {\nentry:\n")
	b.WriteString("  call void @__tgt_register_lib(ptr @.omp_offloading.descriptor)\n")
	if atexit {
		b.WriteString("  %0 = call i32 @atexit(ptr @.omp_offloading.descriptor_unreg)\n")
	}
	b.WriteString("  ret void\n}\n\ndeclare void @__tgt_register_lib(ptr)\n\n")
	if atexit {
		b.WriteString("declare i32 @atexit(ptr)\n\n")
	}
	b.WriteString("define internal void @.omp_offloading.descriptor_unreg() section \".text.startup\" {\nentry:\n")
	b.WriteString("  call void @__tgt_unregister_lib(ptr @.omp_offloading.descriptor)\n  ret void\n}\n\ndeclare void @__tgt_unregister_lib(ptr)\n")
	return b.String()
}

// fromObject is what a Code says, as read back from an object.
type fromObject struct {
	Text             []byte
	Align            uint64
	Funcs            []Func // without CFI
	Relocs           []Reloc
	Labels           []Label
	ViaSection       map[Target]bool
	DescriptorOffset uint64
	Flags            uint32
	Attributes       []byte
}

// expected is the fromObject that c predicts.
func expected(c *Code) fromObject {
	e := fromObject{Text: c.Text, Align: c.Align, Relocs: c.Relocs, Labels: c.Labels,
		ViaSection: map[Target]bool{}, DescriptorOffset: c.DescriptorOffset, Flags: c.Flags, Attributes: c.Attributes}
	for _, f := range c.Funcs {
		f.CFI = nil
		e.Funcs = append(e.Funcs, f)
	}
	for _, r := range c.Relocs {
		switch r.Target {
		case Descriptor:
			e.ViaSection[Descriptor] = c.DescriptorViaSection
		case Unreg:
			e.ViaSection[Unreg] = c.UnregViaSection
		}
	}
	return e
}

func compareObject(t *testing.T, path string, m elf.Machine, c *Code) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := readObject(t, f, m)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got.Flags = binary.LittleEndian.Uint32(raw[0x30:]) // e_flags, which debug/elf does not keep
	if diff := cmp.Diff(expected(c), got); diff != "" {
		t.Errorf("%s (-stubs +object):\n%s", path, diff)
	}
}

// readObject reads from f what the stub code determines (but e_flags),
// expressing the relocations as Targets relative to the descriptor and unreg.
func readObject(t *testing.T, f *elf.File, m elf.Machine) fromObject {
	t.Helper()
	if f.Machine != m {
		t.Fatalf("machine %v, want %v", f.Machine, m)
	}
	text := f.Section(".text.startup")
	if text == nil {
		t.Fatal("no .text.startup")
	}
	data, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	o := fromObject{Text: data, Align: text.Addralign, ViaSection: map[Target]bool{}}
	if a := f.Section(".riscv.attributes"); a != nil {
		if o.Attributes, err = a.Data(); err != nil {
			t.Fatal(err)
		}
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	textIndex := elf.SectionIndex(indexOf(f, text))
	addr := map[string]uint64{}
	for _, s := range syms {
		switch {
		case elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section == textIndex:
			o.Funcs = append(o.Funcs, Func{Name: s.Name, Offset: s.Value, Size: s.Size, Other: s.Other &^ 3})
			addr[s.Name] = s.Value
		case elf.ST_TYPE(s.Info) == elf.STT_NOTYPE && elf.ST_BIND(s.Info) == elf.STB_LOCAL && s.Section == textIndex && s.Name != "":
			o.Labels = append(o.Labels, Label{Name: s.Name, Offset: s.Value, Func: len(o.Funcs) - 1})
		case s.Name == ".omp_offloading.descriptor":
			o.DescriptorOffset = s.Value
			addr[s.Name] = s.Value
		case s.Name == ".omp_offloading.device_images":
			addr[s.Name] = s.Value
		}
	}
	if tables := descriptorSection(f, syms); tables == ".rodata" {
		// Static code (LLVM 13): the tables follow the images in .rodata;
		// DescriptorOffset is from the device images.
		o.DescriptorOffset -= addr[".omp_offloading.device_images"]
	}
	byName := map[string]Target{}
	for _, tg := range []Target{RegisterLib, UnregisterLib, Atexit, TOC} {
		byName[tg.Symbol()] = tg
	}
	for _, r := range relocations(t, f, ".rela.text.startup") {
		s := syms[r.sym-1]
		out := Reloc{Offset: r.off, Type: elfobj.RelocTypeOf(m, r.typ), Addend: r.addend}
		isSection := elf.ST_TYPE(s.Info) == elf.STT_SECTION
		name := s.Name
		if isSection {
			name = f.Sections[s.Section].Name
		}
		switch {
		case (name == ".data.rel.ro" || name == ".rodata") && isSection, name == ".omp_offloading.descriptor":
			out.Target = Descriptor
			if isSection {
				out.Addend -= int64(addr[".omp_offloading.descriptor"])
			}
		case name == ".text.startup" && isSection, name == UnregName:
			out.Target = Unreg
			if isSection {
				out.Addend -= int64(addr[UnregName])
			}
		case s.Section == textIndex && elf.ST_TYPE(s.Info) == elf.STT_NOTYPE:
			out.Target, out.Label, out.LabelOffset = LocalLabel, s.Name, s.Value
		default:
			tg, ok := byName[name]
			if !ok || s.Section != elf.SHN_UNDEF {
				t.Fatalf("relocation at %#x against %q (section %d): not a stub target", r.off, name, s.Section)
			}
			out.Target = tg
		}
		if out.Target == Descriptor || out.Target == Unreg {
			o.ViaSection[out.Target] = isSection
		}
		o.Relocs = append(o.Relocs, out)
	}
	return o
}

// descriptorSection is the name of the section of the descriptor.
func descriptorSection(f *elf.File, syms []elf.Symbol) string {
	for _, s := range syms {
		if s.Name == ".omp_offloading.descriptor" && int(s.Section) < len(f.Sections) {
			return f.Sections[s.Section].Name
		}
	}
	return ""
}

func indexOf(f *elf.File, s *elf.Section) int {
	for i, x := range f.Sections {
		if x == s {
			return i
		}
	}
	return -1
}

type rela struct {
	off    uint64
	sym    uint32
	typ    uint32
	addend int64
}

// relocations reads the SHT_RELA section name of f.
func relocations(t *testing.T, f *elf.File, name string) []rela {
	t.Helper()
	s := f.Section(name)
	if s == nil {
		return nil
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	var out []rela
	for ; len(b) >= 24; b = b[24:] {
		info := f.ByteOrder.Uint64(b[8:])
		out = append(out, rela{f.ByteOrder.Uint64(b), uint32(info >> 32), uint32(info), int64(f.ByteOrder.Uint64(b[16:]))})
	}
	return out
}

// buildEHFrame builds the .eh_frame of c with elfobj, each FDE against the
// section symbol of a .text.startup section it returns with it.
func buildEHFrame(m elf.Machine, fi ehframe.FrameInfo, c *Code) (*elfobj.Object, error) {
	text := &elfobj.Section{Name: ".text.startup", Type: elf.SHT_PROGBITS,
		Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: c.Align, Data: c.Text}
	sym := &elfobj.Symbol{Type: elf.STT_SECTION, Bind: elf.STB_LOCAL, Section: text}
	var fdes []ehframe.FDE
	for _, f := range c.Funcs {
		fdes = append(fdes, ehframe.FDE{Symbol: sym, Addend: int64(f.Offset), Size: f.Size, CFI: f.CFI})
	}
	eh, err := ehframe.Build(m, elf.ELFDATA2LSB, fi, fdes)
	if err != nil {
		return nil, err
	}
	return &elfobj.Object{Data: elf.ELFDATA2LSB, Machine: m, Flags: c.Flags,
		Sections: []*elfobj.Section{text, eh}, Symbols: []*elfobj.Symbol{sym}}, nil
}

// compareEHFrameBytes compares the .eh_frame of f with the one elfobj builds
// from c's CFI, byte for byte.
func compareEHFrameBytes(t *testing.T, f *elf.File, m elf.Machine, c *Code) {
	t.Helper()
	fi, err := ehframe.FrameInfoFor(m)
	if err != nil {
		t.Fatal(err)
	}
	o, err := buildEHFrame(m, fi, c)
	if err != nil {
		t.Fatal(err)
	}
	want, err := f.Section(".eh_frame").Data()
	if err != nil {
		t.Fatal(err)
	}
	if got := o.Sections[1].Data; !bytes.Equal(got, want) {
		t.Errorf(".eh_frame differs:\n got % x\nwant % x", got, want)
	}
}

// compareEHFrame compares the FDEs that llvm-dwarfdump prints for llc's
// object (want) with those it prints for an object holding c's code and an
// .eh_frame made from c's CFI (got, see ehFrameObject); where llc writes
// plain bytes (all but riscv64 before LLVM 19, which relocates pc_range and
// advances with ADD/SUB relocations) it also compares the bytes.
func compareEHFrame(t *testing.T, want, got []string, llcObj string, m elf.Machine, c *Code) {
	t.Helper()
	if len(want) != len(c.Funcs) {
		t.Fatalf("llvm-dwarfdump shows %d FDEs in llc's object, want %d", len(want), len(c.Funcs))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("llvm-dwarfdump --eh-frame FDEs (-llc +stubs):\n%s", diff)
	}
	f, err := elf.Open(llcObj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(relocations(t, f, ".rela.eh_frame")) == len(c.Funcs) {
		compareEHFrameBytes(t, f, m, c)
	}
}

// fdes returns the FDEs of llvm-dwarfdump --eh-frame output, each as its
// pc range, instructions (without padding) and unwind rows.
func fdes(out string) []string {
	var list []string
	var cur []string
	flush := func() {
		if cur != nil {
			list = append(list, strings.Join(cur, "\n"))
		}
		cur = nil
	}
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.Contains(l, " FDE "):
			flush()
			cur = []string{l[strings.Index(l, "pc="):]}
		case strings.Contains(l, " CIE"):
			flush()
		case cur == nil, l == "", l == "DW_CFA_nop:", strings.HasPrefix(l, "Format:"):
		default:
			cur = append(cur, l)
		}
	}
	flush()
	return list
}
