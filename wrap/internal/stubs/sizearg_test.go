package stubs

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/elfobj"
)

// sizeShape names the instructions AArch64 materialises v with, as
// arm64MovImm chooses them ("movz", "orr+movk", ...).
func sizeShape(v uint64) string {
	if v == 0 {
		return "xzr"
	}
	width := 64
	if v>>32 == 0 {
		width = 32
	}
	var ops []string
	for _, in := range expandMovImm(v, width) {
		ops = append(ops, [...]string{"movz", "movn", "movk", "orr", "and"}[in.op])
	}
	return strings.Join(ops, "+")
}

// sizeArgSizes are the sizes the size-passing code is compared with llc's
// for: chosen by hand for x86-64's three forms and for the edges of
// AArch64's, then random ones until every AArch64 shape that sizes below
// 2^48 can take has occurred.
func sizeArgSizes(t *testing.T) []uint64 {
	sizes := []uint64{0, 1, 80, 0xffff, 0x10000, 0x10008, 0x12345678, 0x7fffffff, 0x80000000, 0xaaaaaaaa,
		0xffff0000, 0xffff1234, 0xffffffff, 1 << 32, 0x123456788, 0xffff00000000, 0x300000000, 0x400000008,
		0xffffffffffff, 0x5555555555, 0x0000ff00ff00ff00}
	// (MOVN with two MOVKs needs two chunks of ones and two more to set:
	// none is zero, so the value is 2^48 or more.)
	want := []string{"xzr", "movz", "movn", "orr", "movz+movk", "movn+movk", "orr+movk", "orr+orr", "orr+and", "movz+movk+movk"}
	seen := map[string]bool{}
	for _, s := range sizes {
		seen[sizeShape(s)] = true
	}
	rng := rand.New(rand.NewSource(1))
	var logical []uint64
	for v := range logicalTable64() {
		if v>>48 == 0 {
			logical = append(logical, v)
		}
	}
	// Map order is random: sort for a deterministic choice.
	slices.Sort(logical)
	for try := 0; try < 200000 && len(seen) < len(want); try++ {
		a, b := logical[rng.Intn(len(logical))], logical[rng.Intn(len(logical))]
		var v uint64
		switch try % 3 {
		case 0:
			v = rng.Uint64() >> (16 + rng.Intn(40))
		case 1:
			v = a | b
		case 2:
			v = a & b &^ (uint64(0xffff) << (16 * rng.Intn(3)))
		}
		v &= 1<<48 - 1
		if sh := sizeShape(v); !seen[sh] {
			seen[sh] = true
			sizes = append(sizes, v)
		}
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("no size below 2^48 found that AArch64 sets with %s", w)
		}
	}
	// And a spread of ordinary ones.
	for i := 0; i < 40; i++ {
		sizes = append(sizes, rng.Uint64()>>(16+rng.Intn(48)))
	}
	return sizes
}

func logicalTable64() map[uint64]uint32 {
	logicalOnce.Do(buildLogical)
	return logical64
}

// sizeArgIR is a module of one reg/unreg pair per size, each pair the
// functions of the SYCL module of LLVM main after 23 (reg calls the
// register function with the binary and the size, then atexit(unreg);
// unreg calls the unregister function with both), named reg.N and unreg.N.
// The callees keep the OpenMP names that Target.Symbol gives. (llc emits
// the internal functions that nothing refers to; @llvm.used would give each
// a retained section of its own.)
func sizeArgIR(sizes []uint64) string {
	var b strings.Builder
	b.WriteString("source_filename = \"offload.wrapper.module\"\n\n")
	b.WriteString("@bin = internal unnamed_addr constant [80 x i8] zeroinitializer, section \".llvm.offloading\"\n\n")
	for i, s := range sizes {
		fmt.Fprintf(&b, "define internal void @reg.%d() section \".text.startup\" {\nentry:\n", i)
		fmt.Fprintf(&b, "  call void @__tgt_register_lib(ptr @bin, i64 %d)\n  %%0 = call i32 @atexit(ptr @unreg.%d)\n  ret void\n}\n\n", s, i)
		fmt.Fprintf(&b, "define internal void @unreg.%d() section \".text.startup\" {\nentry:\n", i)
		fmt.Fprintf(&b, "  call void @__tgt_unregister_lib(ptr @bin, i64 %d)\n  ret void\n}\n\n", s)
	}
	b.WriteString("declare void @__tgt_register_lib(ptr, i64)\ndeclare i32 @atexit(ptr)\ndeclare void @__tgt_unregister_lib(ptr, i64)\n")
	return b.String()
}

// TestSizeArgMatchesLLC compiles reg/unreg pairs that pass sizes of every
// form with llc-22 for x86-64 and AArch64 and compares each pair's bytes
// (padding included) and relocations with the Code for that size.
func TestSizeArgMatchesLLC(t *testing.T) {
	t.Parallel()
	llc := llcOf(t, 22)
	sizes := sizeArgSizes(t)
	dir := t.TempDir()
	if d := os.Getenv("SIZEARG_KEEP"); d != "" {
		dir = d
	}
	ir := filepath.Join(dir, "sizes.ll")
	if err := os.WriteFile(ir, []byte(sizeArgIR(sizes)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range machines[:2] {
		t.Run(m.name, func(t *testing.T) {
			obj := filepath.Join(dir, m.name+".o")
			run(t, llc, "-mtriple="+m.triple, "-relocation-model=pic", "-filetype=obj", ir, "-o", obj)
			f, err := elf.Open(obj)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			text, err := f.Section(".text.startup").Data()
			if err != nil {
				t.Fatal(err)
			}
			syms, err := f.Symbols()
			if err != nil {
				t.Fatal(err)
			}
			at := map[string]uint64{}
			for _, s := range syms {
				at[s.Name] = s.Value
			}
			rels := relocations(t, f, ".rela.text.startup")
			for i, size := range sizes {
				c, err := OpenMPWith(m.machine, Options{LLVM: 22, Atexit: true, SizeArg: true, Size: size})
				if err != nil {
					t.Fatal(err)
				}
				start := at[fmt.Sprintf("reg.%d", i)]
				if unreg := at[fmt.Sprintf("unreg.%d", i)]; unreg-start != c.Funcs[1].Offset {
					t.Errorf("size %#x: unreg at +%#x, want +%#x", size, unreg-start, c.Funcs[1].Offset)
					continue
				}
				if got := text[start : start+uint64(len(c.Text))]; !bytes.Equal(got, c.Text) {
					t.Errorf("size %#x (%s): llc\n%x\nours\n%x", size, sizeShape(size), got, c.Text)
				}
				var got, want []string
				for _, r := range rels {
					if r.off < start || r.off >= start+uint64(len(c.Text)) {
						continue
					}
					s := syms[r.sym-1]
					name := s.Name
					if elf.ST_TYPE(s.Info) == elf.STT_SECTION {
						name = f.Sections[s.Section].Name
					}
					addend := r.addend
					if name == ".text.startup" {
						addend -= int64(start)
					}
					got = append(got, fmt.Sprintf("%#x %v %s%+d", r.off-start, elfobj.RelocTypeOf(f.Machine, r.typ), name, addend))
				}
				for _, r := range c.Relocs {
					name, addend := r.Target.Symbol(), r.Addend
					switch r.Target {
					case Descriptor:
						name = ".llvm.offloading"
					case Unreg:
						name, addend = ".text.startup", addend+int64(c.Funcs[1].Offset)
					}
					want = append(want, fmt.Sprintf("%#x %v %s%+d", r.Offset, r.Type, name, addend))
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("size %#x: relocations\nllc  %q\nours %q", size, got, want)
				}
			}
		})
	}
}

// TestSizeArgRefused: sizes go to x86-64 and AArch64 code only, not static
// code, and on AArch64 below 2^48.
func TestSizeArgRefused(t *testing.T) {
	for _, c := range []struct {
		m elf.Machine
		o Options
	}{
		{elf.EM_PPC64, Options{LLVM: 22, SizeArg: true, Size: 8}},
		{elf.EM_RISCV, Options{LLVM: 22, SizeArg: true, Size: 8}},
		{elf.EM_X86_64, Options{LLVM: 13, Static: true, SizeArg: true, Size: 8}},
		{elf.EM_AARCH64, Options{LLVM: 22, SizeArg: true, Size: 1 << 48}},
	} {
		if code, err := OpenMPWith(c.m, c.o); code != nil || !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("%v %+v: %v, %v; want goffload.ErrUnsupported", c.m, c.o, code, err)
		}
	}
	if _, err := OpenMPWith(elf.EM_X86_64, Options{LLVM: 22, SizeArg: true, Size: 1 << 60}); err != nil {
		t.Errorf("x86-64, size 2^60: %v", err)
	}
}
