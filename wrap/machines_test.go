package wrap

import (
	"bytes"
	"debug/elf"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/template"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// crossMachine is one host machine of the wrapper object: its triple for llc
// and wrap.OpenMP, and the GNU toolchain and qemu-user that link and run a
// program for it.
type crossMachine struct {
	name   string
	triple string // as clang spells it
	gnu    string // the GNU triple: cross gcc prefix and sysroot /usr/<gnu>
	cc     string // the gcc driver
	qemu   string // qemu-user, "" to run natively (x86-64 on an x86-64 host)
}

var crossMachines = []crossMachine{
	{"x86_64", "x86_64-unknown-linux-gnu", "x86_64-linux-gnu", "gcc", ""},
	{"aarch64", "aarch64-unknown-linux-gnu", "aarch64-linux-gnu", "aarch64-linux-gnu-gcc", "qemu-aarch64"},
	{"ppc64le", "powerpc64le-unknown-linux-gnu", "powerpc64le-linux-gnu", "powerpc64le-linux-gnu-gcc", "qemu-ppc64le"},
	{"riscv64", "riscv64-unknown-linux-gnu", "riscv64-linux-gnu", "riscv64-linux-gnu-gcc", "qemu-riscv64"},
}

// crossBinary is one OffloadBinary of the tests, with the image it holds.
type crossBinary struct {
	image  []byte // the device image
	binary []byte // the OffloadBinary around it
	layout offloadbinary.Layout
}

// crossBinaries returns n OffloadBinaries holding made-up device images of
// sizes that are not multiples of 8 (so that a binary ends in padding, and
// ImageEnd in LLVM 19 is not the binary's end).
func crossBinaries(t *testing.T, r *release.Release, n int) []crossBinary {
	t.Helper()
	sizes := []int{1001, 333, 75}
	var out []crossBinary
	x := uint32(0x9e3779b9)
	for i := 0; i < n; i++ {
		img := make([]byte, sizes[i%len(sizes)])
		for j := range img {
			x = x*1664525 + 1013904223
			img[j] = byte(x >> 24)
		}
		im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "")
		bin, err := offloadbinary.MarshalBinary(r, &im, img)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, crossBinary{image: img, binary: bin, layout: im.Layout(uint64(len(img)))})
	}
	return out
}

// wrapBinaries returns the bytes of the object wrap.OpenMP makes of bins.
func wrapBinaries(t *testing.T, r *release.Release, triple string, bins []crossBinary) []byte {
	t.Helper()
	var bs []Binary
	for _, b := range bins {
		wb, err := FromBinary(bytes.NewReader(b.binary), int64(len(b.binary)))
		if err != nil {
			t.Fatal(err)
		}
		if wb.ImageOffset != b.layout.ImageOffset || wb.ImageSize != b.layout.ImageSize {
			t.Fatalf("FromBinary: image at %d+%d, want %d+%d", wb.ImageOffset, wb.ImageSize, b.layout.ImageOffset, b.layout.ImageSize)
		}
		bs = append(bs, wb)
	}
	o, err := OpenMP(Options{Release: r, Triple: triple}, bs)
	if err != nil {
		t.Fatal(err)
	}
	return writeObject(t, o)
}

// The wrapper modules, as LLVM's wrapOpenMPBinaries builds them
// (docs/registration.md#openmp-module; the IR of clang-linker-wrapper
// --save-temps with the image bytes given): one
// `.omp_offloading.device_image[.N]` global per binary, in order, then the
// [N x %__tgt_device_image] array and the descriptor.
var (
	// crossIR19 is the LLVM 19 module: ImageStart and ImageEnd bound the
	// image inside the binary, a local dummy kept by llvm.compiler.used, the
	// constructor at priority 101 registering unreg with atexit.
	crossIR19 = template.Must(template.New("ir19").Parse(`; ModuleID = 'offload.wrapper.module'
source_filename = "offload.wrapper.module"
target triple = "{{.Triple}}"

%struct.__tgt_offload_entry = type { ptr, ptr, i64, i32, i32 }
%__tgt_device_image = type { ptr, ptr, ptr, ptr }
%__tgt_bin_desc = type { i32, ptr, ptr, ptr }

@__start_omp_offloading_entries = external hidden constant [0 x %struct.__tgt_offload_entry]
@__stop_omp_offloading_entries = external hidden constant [0 x %struct.__tgt_offload_entry]
@__dummy.omp_offloading_entries = internal constant [0 x %struct.__tgt_offload_entry] zeroinitializer, section "omp_offloading_entries"
@llvm.compiler.used = appending global [1 x ptr] [ptr @__dummy.omp_offloading_entries], section "llvm.metadata"
{{range .Images}}@{{.Name}} = internal unnamed_addr constant [{{.Size}} x i8] c"{{.Blob}}", section ".llvm.offloading", align 8
{{end}}@.omp_offloading.device_images = internal unnamed_addr constant [{{len .Images}} x %__tgt_device_image] [
{{- range $i, $im := .Images}}{{if $i}}, {{end}}%__tgt_device_image { ptr getelementptr ([{{.Size}} x i8], ptr @{{.Name}}, i64 0, i64 {{.Start}}), ptr getelementptr ([{{.Size}} x i8], ptr @{{.Name}}, i64 0, i64 {{.End}}), ptr @__start_omp_offloading_entries, ptr @__stop_omp_offloading_entries }{{end -}}
]
@.omp_offloading.descriptor = internal constant %__tgt_bin_desc { i32 {{len .Images}}, ptr @.omp_offloading.device_images, ptr @__start_omp_offloading_entries, ptr @__stop_omp_offloading_entries }
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
`))

	// crossIR15 is the LLVM 15 module: ImageStart and ImageEnd bound the
	// whole binary, a hidden global dummy, constructor and destructor at
	// priority 1.
	crossIR15 = template.Must(template.New("ir15").Parse(`; ModuleID = 'offload.wrapper.module'
source_filename = "offload.wrapper.module"
target triple = "{{.Triple}}"

%__tgt_offload_entry = type { ptr, ptr, i64, i32, i32 }
%__tgt_device_image = type { ptr, ptr, ptr, ptr }
%__tgt_bin_desc = type { i32, ptr, ptr, ptr }

@__start_omp_offloading_entries = external hidden constant %__tgt_offload_entry
@__stop_omp_offloading_entries = external hidden constant %__tgt_offload_entry
@__dummy.omp_offloading.entry = hidden constant [0 x %__tgt_offload_entry] zeroinitializer, section "omp_offloading_entries"
{{range .Images}}@{{.Name}} = internal unnamed_addr constant [{{.Size}} x i8] c"{{.Blob}}", section ".llvm.offloading", align 8
{{end}}@.omp_offloading.device_images = internal unnamed_addr constant [{{len .Images}} x %__tgt_device_image] [
{{- range $i, $im := .Images}}{{if $i}}, {{end}}%__tgt_device_image { ptr @{{.Name}}, ptr getelementptr inbounds ([{{.Size}} x i8], ptr @{{.Name}}, i64 1, i64 0), ptr @__start_omp_offloading_entries, ptr @__stop_omp_offloading_entries }{{end -}}
]
@.omp_offloading.descriptor = internal constant %__tgt_bin_desc { i32 {{len .Images}}, ptr @.omp_offloading.device_images, ptr @__start_omp_offloading_entries, ptr @__stop_omp_offloading_entries }
@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 1, ptr @.omp_offloading.descriptor_reg, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 1, ptr @.omp_offloading.descriptor_unreg, ptr null }]

define internal void @.omp_offloading.descriptor_reg() section ".text.startup" {
entry:
  call void @__tgt_register_lib(ptr @.omp_offloading.descriptor)
  ret void
}

declare void @__tgt_register_lib(ptr)

define internal void @.omp_offloading.descriptor_unreg() section ".text.startup" {
entry:
  call void @__tgt_unregister_lib(ptr @.omp_offloading.descriptor)
  ret void
}

declare void @__tgt_unregister_lib(ptr)
`))
)

// wrapperModule returns the wrapper module of release major (15, 16 or 19)
// for bins on triple.
func wrapperModule(t *testing.T, major int, triple string, bins []crossBinary) string {
	t.Helper()
	type image struct {
		Name             string
		Size, Start, End uint64
		Blob             string
	}
	data := struct {
		Triple string
		Images []image
	}{Triple: triple}
	for i, b := range bins {
		name := ".omp_offloading.device_image"
		if i > 0 {
			name += fmt.Sprintf(".%d", i)
		}
		var blob strings.Builder
		for _, c := range b.binary {
			fmt.Fprintf(&blob, "\\%02X", c)
		}
		data.Images = append(data.Images, image{Name: name, Size: uint64(len(b.binary)), Start: b.layout.ImageOffset,
			End: b.layout.ImageOffset + b.layout.ImageSize, Blob: blob.String()})
	}
	tmpl := crossIR19
	if major <= 16 {
		tmpl = crossIR15
	}
	var buf strings.Builder
	if err := tmpl.Execute(&buf, data); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// runLLC compiles a wrapper module as clang-linker-wrapper does
// (docs/registration.md#wrapper-module): PIC, CPU and features empty, no IR
// passes.
func runLLC(t *testing.T, llc, triple, module string) []byte {
	t.Helper()
	data, err := os.ReadFile(compileLLC(t, llc, module, "-mtriple="+triple, "-relocation-model=pic", "-filetype=obj"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// allowance is a difference from LLVM's object that a comparison accepts:
// the lines of LLVM's view that it matches, and why they may differ.
type allowance struct {
	why   string
	match func(line string) bool
}

// compareAllowing compares the views as compareViews does, accepting the
// lines of LLVM's view that differ from ours where an allowance matches
// them. An allowance that no differing line needs is logged (a fixed bug
// leaves one behind).
func compareAllowing(t *testing.T, theirs, ours objectView, as []allowance) {
	t.Helper()
	allowed := map[string]string{}
	used := make([]bool, len(as))
	for _, part := range [][2][]string{{theirs.sections, ours.sections}, {theirs.symbols, ours.symbols}, {theirs.relocs, ours.relocs}} {
		for i := 0; i < max(len(part[0]), len(part[1])); i++ {
			var w, g string
			if i < len(part[0]) {
				w = part[0][i]
			}
			if i < len(part[1]) {
				g = part[1][i]
			}
			if w == g {
				continue
			}
			for j, a := range as {
				if a.match(w) {
					allowed[w], used[j] = a.why, true
					break
				}
			}
		}
	}
	compareViews(t, theirs, ours, allowed)
	for j, a := range as {
		if !used[j] {
			t.Logf("no difference needs the allowance %q", a.why)
		}
	}
}

// The allowances of the comparisons.
var (
	// allowSymbolIndices: the bytes of a relocation section hold symbol
	// indices, which follow the symbol order that another allowance
	// accepts; the relocations are compared by symbol name as well.
	allowSymbolIndices = allowance{
		why:   "symbol indices in relocation bytes follow the symbol order allowed above (the relocations are compared by name too)",
		match: func(l string) bool { return strings.HasPrefix(l, ".rela") && strings.Contains(l, " SHT_RELA ") },
	}
	// allowRISCVEHFrame15: llc 15 and 16 describe the riscv64 FDEs with
	// relocations (internal/stubs' documentation: pc_range and each
	// advance_loc are R_RISCV_ADD32/SUB32 and SET6/SUB6 pairs between
	// unnamed local symbols at the function's instructions), which
	// ehframe.Build cannot write; wrap.OpenMP writes the resolved
	// values. The code has no R_RISCV_RELAX, so no linker changes those
	// distances and both unwind the same. riscvWithoutRelaxation removes
	// the unnamed symbols and the pair relocations from LLVM's view first.
	allowRISCVEHFrame15 = []allowance{
		{why: "LLVM 15/16 riscv64 .eh_frame holds 0 in pc_range and advance_loc, resolved by ADD32/SUB32, SET6/SUB6 pairs; ours holds the values",
			match: func(l string) bool { return strings.HasPrefix(l, ".eh_frame ") }},
		{why: "LLVM 15/16 riscv64 .rela.eh_frame has the ADD/SUB/SET pairs besides pc_begin's R_RISCV_32_PCREL",
			match: func(l string) bool { return strings.HasPrefix(l, ".rela.eh_frame SHT_RELA ") }},
		{why: "LLVM 15/16 riscv64 .symtab has the unnamed local symbols of the ADD/SUB/SET pairs",
			match: func(l string) bool { return strings.HasPrefix(l, ".symtab ") }},
	}
)

// riscvWithoutRelaxation returns LLVM's view of a riscv64 object of llc 15 or
// 16 without the unnamed local symbols and the R_RISCV_ADD32/SUB32/SET6/SUB6
// relocations of .eh_frame (see allowRISCVEHFrame15), and with pc_begin
// relocated against the function symbol at the unnamed symbol's address.
func riscvWithoutRelaxation(t *testing.T, f *elfobj.File) objectView {
	t.Helper()
	v := view(t, f)
	var syms []string
	for _, s := range v.symbols {
		if !strings.HasPrefix(s, `"" STT_NOTYPE STB_LOCAL `) {
			syms = append(syms, s)
		}
	}
	v.symbols = syms
	funcs := map[uint64]string{} // .text.startup offset → function
	fs, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fs {
		if s.Type() == elf.STT_FUNC {
			funcs[s.Value] = s.Name
		}
	}
	rs := f.Section(".rela.eh_frame")
	if rs == nil {
		t.Fatal("no .rela.eh_frame")
	}
	rels, err := f.Relocations(rs)
	if err != nil {
		t.Fatal(err)
	}
	var relocs []string
	for _, l := range v.relocs {
		if !strings.HasPrefix(l, ".rela.eh_frame ") {
			relocs = append(relocs, l)
		}
	}
	for _, r := range rels {
		if elf.R_RISCV(r.Type) != elf.R_RISCV_32_PCREL {
			continue
		}
		name := ""
		if r.Symbol != nil {
			name = r.Symbol.Name
			if name == "" {
				name = funcs[r.Symbol.Value]
			}
		}
		relocs = append(relocs, fmt.Sprintf("%s %#x %v %s%+d", rs.Name, r.Offset, elfobj.RelocTypeOf(f.Machine, r.Type), name, r.Addend))
	}
	v.relocs = relocs
	return v
}

// llcPairs are the columns of TestOpenMPMatchesLLC: a module's release and
// the llc that compiles it, in the order that puts in its default sample
// (pair i on machine i of crossMachines, with i%2+1 images) llc-15's
// relaxation pairs on riscv64 and llc-19's code for the LLVM 15 module on
// aarch64 (its allowances).
var llcPairs = []struct{ module, llc int }{{19, 19}, {15, 19}, {16, 16}, {15, 15}}

// TestOpenMPMatchesLLC compiles wrapper modules for one and two images with
// llc for each host machine and compares the object with the one that
// wrap.OpenMP writes (sections with their bytes, symbols, relocations: see
// view):
//
//   - the LLVM 19 module with llc-19, against release 19;
//   - the LLVM 15 module with llc-15 and llc-16 where they are installed (CI
//     has neither), against releases 15 and 16 (whose modules are the same);
//   - the LLVM 15 module with llc-19, against release 15, whose code is
//     llc-15's: the differences are those of internal/stubs' table of code
//     generators (allowed below; riscv64 differs in too many symbols for a
//     line-by-line comparison and is left to internal/stubs' TestMatchesLLC),
//     and against release 15 with llc-19's code generator (a copy of the
//     release row with Major 19), which must match.
//
// Every accepted difference is an allowance with its reason; e_flags are not
// in the view (riscv64: LLVM writes 0, wrap.OpenMP 5 so that it links).
//
// The default run compiles 4 of the 32 modules: a tooltest.Sample of
// crossMachines × llcPairs (each machine one pair, each pair on one
// machine), with one image on x86-64 and ppc64le and two on aarch64 and
// riscv64 (see llcPairs).
func TestOpenMPMatchesLLC(t *testing.T) {
	t.Parallel()
	llc19 := tooltest.Tool(t, "llc", 19)
	for i, m := range crossMachines {
		for j, c := range llcPairs {
			for _, n := range []int{1, 2} {
				t.Run(fmt.Sprintf("%s/module%d/llc%d/images=%d", m.name, c.module, c.llc, n), func(t *testing.T) {
					tooltest.Sample(t, i, j, len(crossMachines), len(llcPairs))
					if !tooltest.Exhaustive() && n != i%2+1 {
						t.Skipf("not in the default sample: %s takes %d images there (%s=1 runs every cell)", m.name, i%2+1, tooltest.ExhaustiveEnv)
					}
					t.Parallel()
					llc := llc19
					if c.llc != 19 {
						// As internal/stubs' tests: CI does not install llc-15 and llc-16.
						if llc = tooltest.Find("llc", c.llc); llc == "" {
							t.Skipf("llc of LLVM %d not found (looked in $PATH and %v)", c.llc, tooltest.Dirs(c.llc))
						}
					}
					r := lookupRelease(t, c.module)
					bins := crossBinaries(t, r, n)
					f := readObject(t, runLLC(t, llc, m.triple, wrapperModule(t, c.module, m.triple, bins)))
					theirs := view(t, f)
					// The first allowance that matches a line gives the reason.
					var as []allowance
					if c.llc == c.module {
						switch {
						case m.name == "riscv64" && c.llc <= 16:
							theirs = riscvWithoutRelaxation(t, f)
							as = append(as, allowRISCVEHFrame15...)
							as = append(as, allowSymbolIndices)
						}
					}
					if c.llc == c.module {
						compareAllowing(t, theirs, view(t, readObject(t, wrapBinaries(t, r, m.triple, bins))), as)
						return
					}

					// The LLVM 15 module compiled by llc-19.
					r19 := *r
					r19.Major = c.llc
					t.Run("codegen19", func(t *testing.T) {
						compareAllowing(t, theirs, view(t, readObject(t, wrapBinaries(t, &r19, m.triple, bins))), as)
					})
					t.Run("codegen15", func(t *testing.T) {
						switch m.name {
						case "aarch64":
							as = append(as,
								allowance{why: "llc-19 names the AArch64 mapping symbols `$x` and `$d`, llc-15 `$x.0`, `$d.1`, `$d.2`, ... (internal/stubs: arm64MappingSuffix)",
									match: func(l string) bool { return strings.HasPrefix(l, `"$x" `) || strings.HasPrefix(l, `"$d" `) }},
								allowance{why: "the string table holds `$x`, `$d` against `$x.0`, `$d.N`",
									match: func(l string) bool { return strings.HasPrefix(l, ".strtab ") }})
						case "ppc64le":
							as = append(as, allowance{why: "llc-15 stores LR before `stdu` (std 0,16(1)), llc-19 after (std 0,48(1)) (internal/stubs: ppc64SaveLRFirst)",
								match: func(l string) bool { return strings.HasPrefix(l, ".text.startup ") }})
						case "riscv64":
							t.Skip("llc-19 writes `.L0 `, `$x`, `$d` and `.Lpcrel_hiN` symbols that llc-15 does not (or names otherwise) and the rv64i2p1 attribute: " +
								"symbols shift, so a line-by-line comparison says nothing; internal/stubs' TestMatchesLLC compares these with llc-15 and llc-19")
						}
						compareAllowing(t, theirs, view(t, readObject(t, wrapBinaries(t, r, m.triple, bins))), as)
					})
				})
			}
		}
	}
}

// crossTools returns the C compiler for m and the command that runs its
// programs (empty: natively), or ends the test when one is missing.
func crossTools(t *testing.T, m crossMachine) (cc string, run []string) {
	t.Helper()
	if m.qemu == "" && runtime.GOARCH != "amd64" {
		t.Skipf("%s programs run natively only on an x86-64 host, not %s", m.name, runtime.GOARCH)
	}
	look := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			tooltest.Missing(t, fmt.Sprintf("%s not found in $PATH", name))
		}
		return p
	}
	cc = look(m.cc)
	if m.qemu != "" {
		sysroot := "/usr/" + m.gnu
		if _, err := os.Stat(sysroot); err != nil {
			tooltest.Missing(t, fmt.Sprintf("no %s C library for qemu -L in %s", m.name, sysroot))
		}
		run = []string{look(m.qemu), "-L", sysroot}
	}
	return cc, run
}

// crossEntries are the entries of the programs: a target region (its ID
// symbol defined by entries.Write), a `declare target` variable and a
// `declare target link` reference pointer (both defined in runtime.c), and
// the requires entry of LLVM 19 (unified_shared_memory in the 32-byte
// entry's reserved field).
func crossEntries(t *testing.T, r *release.Release) []offload.Entry {
	t.Helper()
	ents := []offload.Entry{
		entries.KernelEntry("__omp_offloading_fe00_1_goffload_kernel_l7"),
		{Kind: offload.OffloadOpenMP, Name: "goffload_var", Size: 16, Address: offload.SymbolRef{Symbol: "goffload_var"}},
		{Kind: offload.OffloadOpenMP, Name: "goffload_var_decl_tgt_ref_ptr", Flags: uint32(offload.OMPEntryLink), Size: 8,
			Address: offload.SymbolRef{Symbol: "goffload_var_decl_tgt_ref_ptr"}},
	}
	if e, err := entries.RequiresEntry(r, offload.RequiresUnifiedSharedMemory); err == nil {
		ents = append(ents, e)
	}
	return ents
}

// entriesObject returns an object of the host of triple that holds only ents,
// as entries.Write writes them for release r.
func entriesObject(t *testing.T, r *release.Release, triple string, ents []offload.Entry) []byte {
	t.Helper()
	o, err := elfobj.ForTriple(triple)
	if err != nil {
		t.Fatal(err)
	}
	if err := entries.Write(o, r, ents); err != nil {
		t.Fatal(err)
	}
	o.Sections = append(o.Sections, &elfobj.Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS, Addralign: 1})
	return writeObject(t, o)
}

// expectedRun is what runtime.c prints for a program of release r's wrapper of
// bins and the entries ents: ImageStart to ImageEnd is the device image in LLVM
// 19 (docs/registration.md#image-bounds) and the whole OffloadBinary in LLVM
// 15.
func expectedRun(r *release.Release, bins []crossBinary, ents []offload.Entry) string {
	addrs := map[string]string{
		entries.RegionID("__omp_offloading_fe00_1_goffload_kernel_l7"): "region_id",
		"goffload_var": "goffload_var", "goffload_var_decl_tgt_ref_ptr": "goffload_var_decl_tgt_ref_ptr",
	}
	var list strings.Builder
	fmt.Fprintf(&list, "%d entries\n", len(ents))
	for _, e := range ents {
		addr := "null"
		if !e.Address.IsNull() {
			addr = addrs[e.Address.Symbol]
		}
		fmt.Fprintf(&list, "  name=%q addr=%s size=%d flags=0x%x data=%d\n", e.Name, addr, e.Size, e.Flags, int32(e.Data))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "register: %d images\n", len(bins))
	for i, bin := range bins {
		img := bin.image
		if r.Major == 15 {
			img = bin.binary
		}
		h := fnv.New64a()
		h.Write(img)
		fmt.Fprintf(&b, "image %d: %d bytes fnv1a=%016x head=%x aligned8=yes\n", i, len(img), h.Sum64(), img[:4])
		fmt.Fprintf(&b, "image %d entries: %s", i, list.String())
	}
	fmt.Fprintf(&b, "host entries: %s", list.String())
	fmt.Fprintf(&b, "main\nunregister: %d images, same descriptor\n", len(bins))
	return b.String()
}

// runIn runs a command in dir and returns its standard output and error;
// failing to run it, or a non-zero exit, ends the test.
func runIn(t *testing.T, dir string, argv ...string) (stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &o, &e
	done := tooltest.Slot()
	err := cmd.Run()
	done()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", strings.Join(argv, " "), err, o.String(), e.String())
	}
	return o.String(), e.String()
}

// qemuCases are the releases and numbers of images of
// TestOpenMPRunsUnderQEMU, in the order that gives its default sample
// (tooltest.Sample: case i on machine i) both releases on two machines
// each: LLVM 19's unregistration through atexit on x86-64 and ppc64le,
// LLVM 15's through .fini_array on aarch64 and riscv64.
var qemuCases = []struct{ major, n int }{{19, 1}, {15, 1}, {19, 2}, {15, 2}}

// TestOpenMPRunsUnderQEMU links programs for each host machine with its GNU
// toolchain from the wrapper object of wrap.OpenMP (release 19 with one and
// two images, release 15 with one and two: unregistration through
// .fini_array instead of atexit), an entries object of entries.Write and
// testdata/qemu/runtime.c, a stand-in for libomptarget that prints the
// descriptor it is given. It runs them (under qemu-user but for x86-64) and
// compares what they print with what the test embedded: the image bytes
// between ImageStart and ImageEnd, the entries, unregistration at exit.
// The default run links and runs 4 of the 16 programs, one a machine (see
// qemuCases).
func TestOpenMPRunsUnderQEMU(t *testing.T) {
	if testing.Short() {
		t.Skip("links and runs programs")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "qemu", "runtime.c"))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range crossMachines {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			cc, run := crossTools(t, m)
			dir := t.TempDir()
			runIn(t, dir, cc, "-c", "-O1", "-Wall", "-Werror", src, "-o", "runtime.o")
			for j, c := range qemuCases {
				t.Run(fmt.Sprintf("llvm%d/images=%d", c.major, c.n), func(t *testing.T) {
					tooltest.Sample(t, i, j, len(crossMachines), len(qemuCases))
					r := lookupRelease(t, c.major)
					bins := crossBinaries(t, r, c.n)
					ents := crossEntries(t, r)
					name := fmt.Sprintf("llvm%d-%d", c.major, c.n)
					wrapper, ents0 := name+"-wrapper.o", name+"-entries.o"
					obj := wrapBinaries(t, r, m.triple, bins)
					if err := os.WriteFile(filepath.Join(dir, wrapper), obj, 0o644); err != nil {
						t.Fatal(err)
					}
					// LLVM 19 registers unreg with atexit, LLVM 15 in .fini_array.1.
					f := readObject(t, obj)
					syms, err := f.Symbols()
					if err != nil {
						t.Fatal(err)
					}
					atexit := slices.ContainsFunc(syms, func(s elfobj.FileSymbol) bool { return s.Name == "atexit" })
					if fini := f.Section(".fini_array.1") != nil; atexit != (c.major == 19) || fini != (c.major == 15) {
						t.Errorf("the wrapper object of %v: atexit %v, .fini_array.1 %v", r, atexit, fini)
					}
					if err := os.WriteFile(filepath.Join(dir, ents0), entriesObject(t, r, m.triple, ents), 0o644); err != nil {
						t.Fatal(err)
					}
					if o, e := runIn(t, dir, cc, "runtime.o", wrapper, ents0, "-o", name); o != "" || e != "" {
						t.Errorf("%s printed:\n%s%s", cc, o, e)
					}
					got, stderr := runIn(t, dir, append(run, filepath.Join(dir, name))...)
					if want := expectedRun(r, bins, ents); got != want || stderr != "" {
						t.Errorf("%s printed\n%s(stderr %q), want\n%s", name, got, stderr, want)
					}
					if c.major == 19 && c.n == 2 {
						t.Logf("%s printed:\n%s", name, got)
					}
				})
			}
		})
	}
}
