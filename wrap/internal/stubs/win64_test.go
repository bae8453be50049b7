package stubs

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/tooltest"
)

// winOpenMPIR is LLVM 22's OpenMP wrapper module for a COFF host (the
// module of clang-linker-wrapper-22 --save-temps for
// x86_64-w64-windows-gnu) with one zero-filled image of 256 bytes.
const winOpenMPIR = `source_filename = "offload.wrapper.module"

%struct.__tgt_offload_entry = type { i64, i16, i16, i32, ptr, ptr, i64, i64, ptr }
%__tgt_device_image = type { ptr, ptr, ptr, ptr }
%__tgt_bin_desc = type { i32, ptr, ptr, ptr }

@__start_llvm_offload_entries = weak_odr hidden constant [0 x %struct.__tgt_offload_entry] zeroinitializer, section "llvm_offload_entries$OA"
@__stop_llvm_offload_entries = weak_odr hidden constant [0 x %struct.__tgt_offload_entry] zeroinitializer, section "llvm_offload_entries$OZ"
@.omp_offloading.device_image = internal unnamed_addr constant [256 x i8] zeroinitializer, section ".llvm.offloading", align 8
@.omp_offloading.device_images = internal unnamed_addr constant [1 x %__tgt_device_image] [%__tgt_device_image { ptr getelementptr ([256 x i8], ptr @.omp_offloading.device_image, i64 0, i64 144), ptr getelementptr ([256 x i8], ptr @.omp_offloading.device_image, i64 0, i64 256), ptr @__start_llvm_offload_entries, ptr @__stop_llvm_offload_entries }]
@.omp_offloading.descriptor = internal constant %__tgt_bin_desc { i32 1, ptr @.omp_offloading.device_images, ptr @__start_llvm_offload_entries, ptr @__stop_llvm_offload_entries }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 101, ptr @.omp_offloading.descriptor_reg, ptr null }]

define internal void @.omp_offloading.descriptor_reg() section ".text.startup" {
entry:
  call void @__tgt_register_lib(ptr @.omp_offloading.descriptor)
  %0 = call i32 @atexit(ptr @.omp_offloading.descriptor_unreg)
  ret void
}

declare void @__tgt_register_lib(ptr)

declare i32 @atexit(ptr)

define internal void @.omp_offloading.descriptor_unreg() section ".text.startup" {
entry:
  call void @__tgt_unregister_lib(ptr @.omp_offloading.descriptor)
  ret void
}

declare void @__tgt_unregister_lib(ptr)
`

// winOpenMPIRFor is winOpenMPIR as the wrapper of release llvm writes it:
// 22's and 23's; from 24 with a zeroed sentinel entry in each bound's
// section, aligned 8, and the entries beginning after __start_'s
// (llvm-project #215390; for OpenMP's EntriesBegin and HostEntriesBegin
// inferred).
func winOpenMPIRFor(llvm int) string {
	if llvm < 24 {
		return winOpenMPIR
	}
	const entry = "%struct.__tgt_offload_entry"
	ir := strings.ReplaceAll(winOpenMPIR, "[0 x "+entry+"] zeroinitializer, section \"llvm_offload_entries$OA\"",
		"[1 x "+entry+"] zeroinitializer, section \"llvm_offload_entries$OA\", align 8")
	ir = strings.ReplaceAll(ir, "[0 x "+entry+"] zeroinitializer, section \"llvm_offload_entries$OZ\"",
		"[1 x "+entry+"] zeroinitializer, section \"llvm_offload_entries$OZ\", align 8")
	return strings.ReplaceAll(ir, "ptr @__start_llvm_offload_entries,",
		"ptr getelementptr inbounds ([1 x "+entry+"], ptr @__start_llvm_offload_entries, i32 0, i32 1),")
}

// TestWinCodeMatchesLLC compares WinOpenMP's and WinGPU's code with what
// llc-22 makes of the wrapper modules of LLVM 22 (clang-linker-wrapper-22's)
// and of 23 and 24 (as their sources build them) for both Windows triples:
// the bytes of .text.startup, its relocations (the symbol each names), the
// functions' symbols, .xdata, and the jump table in .rdata. The matrix of
// triples × modules runs its default sample (tooltest.Sampled: every
// module, for one triple or the other, half of them for each triple); llc
// runs in parallel.
func TestWinCodeMatchesLLC(t *testing.T) {
	t.Parallel()
	llc := tooltest.Tool(t, "llc", 22)
	triples := []string{"x86_64-pc-windows-msvc", "x86_64-w64-windows-gnu"}
	modules := []struct {
		name string
		ir   string
		code func() (*WinCode, error)
	}{
		{"openmp", winOpenMPIR, func() (*WinCode, error) { return WinOpenMP(22) }},
		{"cuda", GPUModuleIRCOFF(22, CUDA, gpuImage), func() (*WinCode, error) { return WinGPU(CUDA, 22) }},
		{"hip", GPUModuleIRCOFF(22, HIP, gpuImage), func() (*WinCode, error) { return WinGPU(HIP, 22) }},
		{"openmp-23", winOpenMPIRFor(23), func() (*WinCode, error) { return WinOpenMP(23) }},
		{"hip-23", GPUModuleIRCOFF(23, HIP, gpuImage), func() (*WinCode, error) { return WinGPU(HIP, 23) }},
		{"openmp-24", winOpenMPIRFor(24), func() (*WinCode, error) { return WinOpenMP(24) }},
		{"cuda-24", GPUModuleIRCOFF(24, CUDA, gpuImage), func() (*WinCode, error) { return WinGPU(CUDA, 24) }},
		{"hip-24", GPUModuleIRCOFF(24, HIP, gpuImage), func() (*WinCode, error) { return WinGPU(HIP, 24) }},
	}
	rows, cols := len(triples), len(modules)
	objs, errs := make([]string, rows*cols), make([]error, rows*cols)
	inParallel(rows*cols, func(k int) {
		if i, j := k/cols, k%cols; tooltest.Sampled(i, j, rows, cols) {
			objs[k], errs[k] = llcObject(llc, triples[i], modules[j].ir)
		}
	})
	for i, triple := range triples {
		for j, c := range modules {
			t.Run(triple+"/"+c.name, func(t *testing.T) {
				tooltest.Sample(t, i, j, rows, cols)
				if errs[i*cols+j] != nil {
					t.Fatal(errs[i*cols+j])
				}
				data, err := os.ReadFile(objs[i*cols+j])
				if err != nil {
					t.Fatal(err)
				}
				f, err := coffobj.Read(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				code, err := c.code()
				if err != nil {
					t.Fatal(err)
				}
				text := sectionData(t, f, ".text.startup")
				if !bytes.Equal(text, code.Text) {
					t.Errorf(".text.startup:\nllc  %x\nours %x", text, code.Text)
				}
				var xdata []byte
				for _, fn := range code.Funcs {
					xdata = append(xdata, fn.Unwind...)
				}
				if got := sectionData(t, f, ".xdata"); !bytes.Equal(got, xdata) {
					t.Errorf(".xdata:\nllc  %x\nours %x", got, xdata)
				}
				p, _, _ := strings.Cut(c.name, "-")
				local := map[Target]string{TextStartup: ".text.startup", JumpTable: ".rdata", FatbinWrapper: ".fatbin_wrapper",
					Descriptor: ".omp_offloading.descriptor", Unreg: ".omp_offloading.descriptor_unreg",
					BinaryHandle: "." + p + ".binary_handle", GlobalsReg: "." + p + ".globals_reg",
					FatbinUnreg: "." + p + ".fatbin_unreg"}
				name := func(r WinReloc) string {
					if s, ok := code.Symbols[r.Target]; ok {
						return s
					}
					return local[r.Target]
				}
				var want, got []string
				for _, sec := range []string{".text.startup", ".rdata"} {
					s := f.Section(sec)
					if s == nil {
						continue
					}
					rels, err := f.Relocations(s)
					if err != nil {
						t.Fatal(err)
					}
					for _, r := range rels {
						if r.Symbol.Name == ".omp_offloading.device_images" || r.Symbol.Name == "__start_llvm_offload_entries" && sec == ".rdata" ||
							r.Symbol.Name == "__stop_llvm_offload_entries" && sec == ".rdata" || r.Symbol.Name == ".omp_offloading.device_image" {
							continue // the OpenMP descriptor's data, not code
						}
						want = append(want, fmt.Sprintf("%s %#x %d %s", sec, r.Offset, r.Type, r.Symbol.Name))
					}
				}
				for _, r := range code.Relocs {
					got = append(got, fmt.Sprintf(".text.startup %#x %d %s", r.Offset, coffobj.IMAGE_REL_AMD64_REL32, name(r)))
				}
				if jt := code.JumpTable; jt != nil {
					if d := sectionData(t, f, ".rdata"); !bytes.Equal(d, jt.Data) {
						t.Errorf(".rdata: llc %x, ours %x", d, jt.Data)
					}
					for _, r := range jt.Relocs {
						got = append(got, fmt.Sprintf(".rdata %#x %d %s", r.Offset, coffobj.IMAGE_REL_AMD64_REL32, name(r)))
					}
				}
				if fmt.Sprint(want) != fmt.Sprint(got) {
					t.Errorf("relocations:\nllc  %q\nours %q", want, got)
				}
				syms, err := f.Symbols()
				if err != nil {
					t.Fatal(err)
				}
				for _, fn := range code.Funcs {
					found := false
					for _, s := range syms {
						found = found || s.Name == fn.Name && s.Value == uint32(fn.Offset) && s.Type == 0x20
					}
					if !found {
						t.Errorf("function %s at %#x: not in llc's symbols", fn.Name, fn.Offset)
					}
				}
			})
		}
	}
}

func sectionData(t *testing.T, f *coffobj.File, name string) []byte {
	t.Helper()
	s := f.Section(name)
	if s == nil {
		t.Fatalf("no section %s", name)
	}
	d, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return d
}
