package stubs

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj/ehframe"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

// gpuMachines are the host machines there is CUDA and HIP code for.
var gpuMachines = machines[:2]

var gpuKinds = []GPUKind{CUDA, HIP}

func gpuCode(t *testing.T, m elf.Machine, o GPUOptions) *GPUCode {
	t.Helper()
	c, err := GPU(m, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// gpuLLC is the llc that stands for release llvm's code generator: its own
// for 19 and 22, the nearest measured one for the others (19 for 17, 18 and
// 20; 22 for 21).
func gpuLLC(llvm int) int {
	if llvm <= 20 {
		return 19
	}
	return 22
}

// TestGPUMatchesLLC compiles the wrapper module of every release 17–22 for
// CUDA and HIP with llc-19 and llc-22 for x86-64 and AArch64, and compares
// .text.startup, its relocations (as LLVM writes them: symbol or section
// symbol and addend), function symbols, mapping symbols, the jump table in
// .rodata and .eh_frame (bytes, and as llvm-dwarfdump prints it) with
// GPU's code. The llc that stands for the release (see gpuLLC) must agree,
// for every release, kind and machine; so must the other one, which shows
// that the choice between the two does not matter for these modules (by
// default for the sample, tooltest.Sampled, of releases × (kind, machine):
// a cell in every row and every column). llc runs in parallel, once for each
// module (releases that write the same module share the object),
// llvm-dwarfdump once for all the objects.
func TestGPUMatchesLLC(t *testing.T) {
	t.Parallel()
	dwarfdump := tooltest.Tool(t, "llvm-dwarfdump", 19)
	llcs := map[int]string{19: tooltest.Tool(t, "llc", 19), 22: tooltest.Tool(t, "llc", 22)}
	type cell struct {
		llvm, with, row, col int
		kind                 GPUKind
		m                    int // index in gpuMachines
		code                 *GPUCode
		obj, ours            string
		err                  error
	}
	rows, cols := 22-17+1, len(gpuKinds)*len(gpuMachines)
	var cells, todo []*cell
	for llvm := 17; llvm <= 22; llvm++ {
		for ki, kind := range gpuKinds {
			for mi := range gpuMachines {
				for _, with := range []int{gpuLLC(llvm), 41 - gpuLLC(llvm)} {
					c := &cell{llvm: llvm, with: with, row: llvm - 17, col: mi*len(gpuKinds) + ki, kind: kind, m: mi}
					cells = append(cells, c)
					if with == gpuLLC(llvm) || tooltest.Sampled(c.row, c.col, rows, cols) {
						todo = append(todo, c)
					}
				}
			}
		}
	}
	inParallel(len(todo), func(i int) {
		c := todo[i]
		m := gpuMachines[c.m]
		if c.code, c.err = GPU(m.machine, GPUOptions{LLVM: c.llvm, Kind: c.kind}); c.err != nil {
			return
		}
		if c.obj, c.err = llcObject(llcs[c.with], m.triple, gpuIR(c.llvm, c.kind, gpuImage)); c.err != nil {
			return
		}
		c.ours, c.err = ehFrameObject(m.machine, c.code.asCode())
	})
	var paths []string
	for _, c := range todo {
		paths = append(paths, c.obj, c.ours)
	}
	fdes := dwarfdumpFDEs(t, dwarfdump, paths)
	for _, c := range cells {
		m := gpuMachines[c.m]
		t.Run(fmt.Sprintf("llvm%d/%v/%s/llc%d", c.llvm, c.kind, m.name, c.with), func(t *testing.T) {
			if c.with != gpuLLC(c.llvm) {
				tooltest.Sample(t, c.row, c.col, rows, cols)
			}
			if c.err != nil {
				t.Fatal(c.err)
			}
			compareGPUObject(t, c.obj, m.machine, c.code)
			compareEHFrame(t, fdes[c.obj], fdes[c.ours], c.obj, m.machine, c.code.asCode())
		})
	}
}

// TestGPUMatchesClangLinkerWrapper compares the x86-64 code with the CUDA
// and HIP wrapper objects that the clang-linker-wrapper of LLVM 19 and 22
// wrote (offload/testdata/llvm/wrapper, docs/registration.md#cuda-hip).
func TestGPUMatchesClangLinkerWrapper(t *testing.T) {
	for _, llvm := range []int{19, 22} {
		for _, kind := range gpuKinds {
			t.Run(fmt.Sprintf("llvm%d/%v", llvm, kind), func(t *testing.T) {
				obj := filepath.Join("..", "..", "..", "offload", "testdata", "llvm", "wrapper", fmt.Sprintf("%s-wrapper-llvm%d.o", kind.prefix(), llvm))
				if _, err := os.Stat(obj); err != nil {
					tooltest.Missing(t, fmt.Sprintf("fixture %s: %v", obj, err))
				}
				c := gpuCode(t, elf.EM_X86_64, GPUOptions{LLVM: llvm, Kind: kind})
				compareGPUObject(t, obj, elf.EM_X86_64, c)
				f, err := elf.Open(obj)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				compareEHFrameBytes(t, f, elf.EM_X86_64, c.asCode())
			})
		}
	}
}

// compileGPU compiles ir with llc for triple, once for the package (see
// llcObject), and returns the object.
func compileGPU(t *testing.T, llc, triple, ir string) string {
	t.Helper()
	obj, err := llcObject(llc, triple, ir)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// asCode is c as a Code, for the .eh_frame helpers of the OpenMP tests.
func (c *GPUCode) asCode() *Code {
	return &Code{Text: c.Text, Align: c.Align, Funcs: c.Funcs}
}

// gpuReloc is a relocation as it is in an object: against a symbol, or
// against a section's symbol ("section .bss").
type gpuReloc struct {
	Offset uint64
	Type   string
	Symbol string
	Addend int64
}

// gpuObject is what a GPUCode says, as read back from an object.
type gpuObject struct {
	Text       []byte
	Align      uint64
	Funcs      []Func // without CFI
	Relocs     []gpuReloc
	Labels     []Label
	Rodata     []byte
	RodataAlgn uint64
	RodataRels []gpuReloc
}

// expectedGPU is the gpuObject that c predicts for machine m.
func expectedGPU(t *testing.T, m elf.Machine, c *GPUCode) gpuObject {
	t.Helper()
	o := gpuObject{Text: c.Text, Align: c.Align, Labels: c.Labels}
	for _, f := range c.Funcs {
		f.CFI = nil
		o.Funcs = append(o.Funcs, f)
	}
	o.Relocs = gpuRelocs(t, m, c, c.Relocs)
	if jt := c.JumpTable; jt != nil {
		o.Rodata, o.RodataAlgn, o.RodataRels = jt.Data, jt.Align, gpuRelocs(t, m, c, jt.Relocs)
	}
	return o
}

func gpuRelocs(t *testing.T, m elf.Machine, c *GPUCode, rs []Reloc) []gpuReloc {
	t.Helper()
	var out []gpuReloc
	for _, r := range rs {
		g := gpuReloc{Offset: r.Offset, Type: r.Type.String(), Addend: r.Addend}
		if sec, ok := c.ViaSection[r.Target]; ok {
			g.Symbol = "section " + sec
			if r.Target == FatbinUnreg {
				g.Addend += int64(c.Funcs[1].Offset)
			}
		} else if g.Symbol = c.Symbols[r.Target]; g.Symbol == "" {
			t.Fatalf("relocation %+v: target %s has neither symbol nor section", r, GPUTargetName(r.Target))
		}
		out = append(out, g)
	}
	return out
}

func compareGPUObject(t *testing.T, path string, m elf.Machine, c *GPUCode) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if diff := cmp.Diff(expectedGPU(t, m, c), readGPUObject(t, f, m)); diff != "" {
		t.Errorf("%s (-stubs +object):\n%s", path, diff)
	}
}

// readGPUObject reads from f what the code determines.
func readGPUObject(t *testing.T, f *elf.File, m elf.Machine) gpuObject {
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
	o := gpuObject{Text: data, Align: text.Addralign}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	textIndex := elf.SectionIndex(indexOf(f, text))
	for _, s := range syms {
		switch {
		case elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section == textIndex:
			o.Funcs = append(o.Funcs, Func{Name: s.Name, Offset: s.Value, Size: s.Size})
		case elf.ST_TYPE(s.Info) == elf.STT_NOTYPE && elf.ST_BIND(s.Info) == elf.STB_LOCAL && s.Section == textIndex:
			o.Labels = append(o.Labels, Label{Name: s.Name, Offset: s.Value, Func: len(o.Funcs) - 1})
		}
	}
	// Functions in address order, as GPUCode has them (.symtab has them
	// in order of first reference).
	for i := 1; i < len(o.Funcs); i++ {
		for j := i; j > 0 && o.Funcs[j].Offset < o.Funcs[j-1].Offset; j-- {
			o.Funcs[j], o.Funcs[j-1] = o.Funcs[j-1], o.Funcs[j]
		}
	}
	o.Relocs = readGPURelocs(t, f, m, syms, ".rela.text.startup")
	if ro := f.Section(".rodata"); ro != nil {
		if o.Rodata, err = ro.Data(); err != nil {
			t.Fatal(err)
		}
		o.RodataAlgn = ro.Addralign
		o.RodataRels = readGPURelocs(t, f, m, syms, ".rela.rodata")
	}
	return o
}

func readGPURelocs(t *testing.T, f *elf.File, m elf.Machine, syms []elf.Symbol, sec string) []gpuReloc {
	t.Helper()
	var out []gpuReloc
	for _, r := range relocations(t, f, sec) {
		s := syms[r.sym-1]
		name := s.Name
		if elf.ST_TYPE(s.Info) == elf.STT_SECTION {
			name = "section " + f.Sections[s.Section].Name
		}
		out = append(out, gpuReloc{Offset: r.off, Type: elfRelocName(m, r.typ), Symbol: name, Addend: r.addend})
	}
	return out
}

func elfRelocName(m elf.Machine, typ uint32) string {
	if m == elf.EM_AARCH64 {
		return elf.R_AARCH64(typ).String()
	}
	return elf.R_X86_64(typ).String()
}

// TestGPUEveryVariant checks what holds for the code of every release, kind
// and machine: it decodes, relocations are inside it and in order, the
// functions are in order, aligned and named, each runtime function is
// called once, and the CFI encodes.
func TestGPUEveryVariant(t *testing.T) {
	for _, m := range gpuMachines {
		for llvm := 17; llvm <= 22; llvm++ {
			for _, kind := range gpuKinds {
				c := gpuCode(t, m.machine, GPUOptions{LLVM: llvm, Kind: kind})
				name := fmt.Sprintf("%s/llvm%d/%v", m.name, llvm, kind)
				if _, err := disassemble(m.machine, c.Text); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				checkGPUShape(t, name, m.machine, c, llvm, kind)
			}
		}
	}
}

func checkGPUShape(t *testing.T, name string, m elf.Machine, c *GPUCode, llvm int, kind GPUKind) {
	t.Helper()
	p := "." + kind.prefix()
	want := []string{p + ".fatbin_reg", p + ".fatbin_unreg", p + ".globals_reg"}
	if len(c.Funcs) != 3 {
		t.Fatalf("%s: functions %+v", name, c.Funcs)
	}
	end := uint64(0)
	for i, f := range c.Funcs {
		if f.Name != want[i] || f.Offset%c.Align != 0 || f.Offset < end || f.Offset-end >= c.Align {
			t.Errorf("%s: function %d %s at %#x+%#x after %#x, align %d", name, i, f.Name, f.Offset, f.Size, end, c.Align)
		}
		end = f.Offset + f.Size
	}
	if end != uint64(len(c.Text)) {
		t.Errorf("%s: text %#x bytes, functions end at %#x", name, len(c.Text), end)
	}
	calls := map[Target]int{}
	last := uint64(0)
	for _, r := range c.Relocs {
		if r.Offset+4 > uint64(len(c.Text)) || r.Offset < last {
			t.Errorf("%s: relocation %+v outside the text or out of order", name, r)
		}
		last = r.Offset
		if r.Type == elf.R_X86_64_PLT32 || r.Type == elf.R_AARCH64_CALL26 {
			calls[r.Target]++
		}
	}
	wantCalls := map[Target]int{RegisterFatBinary: 1, Atexit: 1, UnregisterFatBinary: 1, RegisterFunction: 1, RegisterVar: 1}
	if kind == CUDA {
		wantCalls[RegisterFatBinaryEnd] = 1
	}
	if llvm >= 21 {
		wantCalls[RegisterManagedVar] = 1
	}
	if kind == HIP && llvm >= 18 {
		wantCalls[RegisterSurface], wantCalls[RegisterTexture] = 1, 1
	}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("%s: calls (-want +got):\n%s", name, diff)
	}
	if c.Measured != (llvm == 19 || llvm == 22) {
		t.Errorf("%s: Measured %v", name, c.Measured)
	}
	fi, err := elfobjFrameInfo(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := buildEHFrame(m, fi, c.asCode()); err != nil {
		t.Errorf("%s: %v", name, err)
	}
}

func TestGPUErrors(t *testing.T) {
	for _, tc := range []struct {
		m elf.Machine
		o GPUOptions
	}{
		{elf.EM_PPC64, GPUOptions{}},
		{elf.EM_RISCV, GPUOptions{}},
		{elf.EM_X86_64, GPUOptions{LLVM: 16}},
		{elf.EM_X86_64, GPUOptions{LLVM: 25}},
		{elf.EM_X86_64, GPUOptions{Kind: 2}},
	} {
		c, err := GPU(tc.m, tc.o)
		if c != nil || !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("GPU(%v, %+v) = %v, %v; want an error wrapping goffload.ErrUnsupported", tc.m, tc.o, c, err)
		}
	}
	// A release without the module names those with one, from the table.
	if _, err := GPU(elf.EM_X86_64, GPUOptions{LLVM: 16}); err == nil || !strings.HasSuffix(err.Error(), "(known: LLVM 17-24)") {
		t.Errorf("LLVM 16: %v, want the releases with a CUDA and HIP module, LLVM 17-24", err)
	}
}

func elfobjFrameInfo(m elf.Machine) (ehframe.FrameInfo, error) { return ehframe.FrameInfoFor(m) }

// TestGPUReleasesShareCode checks the table of releases: the releases of
// one wrapper module form give the same code.
func TestGPUReleasesShareCode(t *testing.T) {
	for _, m := range gpuMachines {
		for _, kind := range gpuKinds {
			for llvm := 17; llvm <= 22; llvm++ {
				got := gpuCode(t, m.machine, GPUOptions{LLVM: llvm, Kind: kind})
				rel, err := release.Lookup(llvm)
				if err != nil {
					t.Fatal(err)
				}
				rep := map[release.GPURegistration]int{release.GPURegistrationWholeFlags: 17, release.GPURegistrationFlagBits: 19, release.GPURegistrationKindCheck: 22}[rel.Wrapper.GPU]
				want := gpuCode(t, m.machine, GPUOptions{LLVM: rep, Kind: kind})
				got.Measured = want.Measured
				if diff := cmp.Diff(want, got, cfiEqual); diff != "" {
					t.Errorf("%s %v: LLVM %d differs from LLVM %d:\n%s", m.name, kind, llvm, rep, diff)
				}
			}
		}
	}
	if c := gpuCode(t, elf.EM_X86_64, GPUOptions{Kind: HIP}); !cmp.Equal(c, gpuCode(t, elf.EM_X86_64, GPUOptions{LLVM: 19, Kind: HIP}), cfiEqual) {
		t.Error("LLVM 0 is not LLVM 19")
	}
}

// TestGPUCodeIsFresh checks that a caller changing one GPUCode changes no
// other.
func TestGPUCodeIsFresh(t *testing.T) {
	for _, m := range gpuMachines {
		o := GPUOptions{LLVM: 22, Kind: HIP}
		a := gpuCode(t, m.machine, o)
		want := gpuCode(t, m.machine, o)
		a.Text[0] ^= 0xff
		a.Relocs[0].Addend++
		a.Funcs[2].CFI[0] = ehframe.Restore(1)
		a.Symbols[Atexit] = "exit"
		a.ViaSection[BinaryHandle] = ".data"
		if a.JumpTable != nil {
			a.JumpTable.Relocs[0].Addend++
			a.JumpTable.Data[0] = 1
		}
		if diff := cmp.Diff(want, gpuCode(t, m.machine, o), cfiEqual); diff != "" {
			t.Errorf("%s: changing one result changed the next:\n%s", m.name, diff)
		}
	}
}

// TestGPUFatbinAlignMatchesLLC compiles modules with images around the
// 16-byte threshold and compares the alignment of the fatbin section. Its
// matrix has a row for each llc and machine and a column for each image size
// and kind (column k: size k mod 5, kind k mod 2); the default sample
// (tooltest.Sampled) compiles every size and kind, each row's two or three
// of them. llc runs in parallel.
func TestGPUFatbinAlignMatchesLLC(t *testing.T) {
	t.Parallel()
	llvms, sizes := []int{19, 22}, []int{1, 8, 16, 17, 64}
	llcs := map[int]string{}
	for _, llvm := range llvms {
		llcs[llvm] = tooltest.Tool(t, "llc", llvm)
	}
	type cell struct {
		llvm, m, size, row, col int
		kind                    GPUKind
		obj                     string
		err                     error
	}
	rows, cols := len(llvms)*len(gpuMachines), len(sizes)*len(gpuKinds)
	var cells, todo []*cell
	for li, llvm := range llvms {
		for mi := range gpuMachines {
			for k := range cols {
				c := &cell{llvm: llvm, m: mi, size: sizes[k%len(sizes)], kind: gpuKinds[k%len(gpuKinds)], row: li*len(gpuMachines) + mi, col: k}
				cells = append(cells, c)
				if tooltest.Sampled(c.row, c.col, rows, cols) {
					todo = append(todo, c)
				}
			}
		}
	}
	inParallel(len(todo), func(i int) {
		c := todo[i]
		c.obj, c.err = llcObject(llcs[c.llvm], gpuMachines[c.m].triple, gpuIR(c.llvm, c.kind, strings.Repeat("x", c.size)))
	})
	for _, c := range cells {
		m := gpuMachines[c.m]
		t.Run(fmt.Sprintf("llc%d/%s/%v/%d", c.llvm, m.name, c.kind, c.size), func(t *testing.T) {
			tooltest.Sample(t, c.row, c.col, rows, cols)
			if c.err != nil {
				t.Fatal(c.err)
			}
			f, err := elf.Open(c.obj)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			sec := map[GPUKind]string{CUDA: ".nv_fatbin", HIP: ".hip_fatbin"}[c.kind]
			s := f.Section(sec)
			if s == nil {
				t.Fatalf("llc-%d: no section %s", c.llvm, sec)
			}
			if want := GPUFatbinAlign(m.machine, uint64(c.size)); s.Addralign != want {
				t.Errorf("llc-%d %s %v %d bytes: %s aligned to %d, GPUFatbinAlign says %d", c.llvm, m.name, c.kind, c.size, sec, s.Addralign, want)
			}
		})
	}
}

func TestGPUTargetName(t *testing.T) {
	for _, tc := range []struct {
		t    Target
		want string
	}{
		{Atexit, "Atexit"},
		{FatbinWrapper, "FatbinWrapper"},
		{RegisterTexture, "RegisterTexture"},
		{TextStartup, "TextStartup"},
		{TextStartup + 1, "Target(115)"},
	} {
		if got := GPUTargetName(tc.t); got != tc.want {
			t.Errorf("GPUTargetName(%d) = %q, want %q", int(tc.t), got, tc.want)
		}
	}
	for k, want := range map[GPUKind]string{CUDA: "CUDA", HIP: "HIP", 7: "GPUKind(7)"} {
		if k.String() != want {
			t.Errorf("GPUKind(%d).String() = %q, want %q", int(k), k.String(), want)
		}
	}
}
