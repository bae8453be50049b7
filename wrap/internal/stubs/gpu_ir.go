package stubs

import (
	"fmt"
	"strings"

	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// gpuImage is the fatbinary in the modules the tests compile: the fake one
// of the clang-linker-wrapper fixtures (20 bytes, so that .nv_fatbin gets
// the x86-64 alignment of globals larger than 16 bytes).
const gpuImage = "FAKEFATBIN-fatbinary"

// gpuIR is the CUDA or HIP wrapper module of LLVM release llvm as
// clang-linker-wrapper writes it, with image as the fatbinary. For 19 and 22 it
// is the module that release's clang-linker-wrapper writes (--save-temps; its
// objects are offload/testdata/llvm/wrapper/{cuda,hip}-wrapper-llvm{19,22}.o)
// but for the ModuleID, the target triple (llc is given one) and the image; for
// 17 it follows the source of clang-linker-wrapper's OffloadWrapper.cpp of that
// release, for 18, 20 and 21 the description in
// docs/registration.md#globals-reg.
func gpuIR(llvm int, kind GPUKind, image string) string {
	rel, err := release.Lookup(llvm)
	if err != nil || rel.Wrapper.GPU == release.GPURegistrationNone {
		panic(fmt.Sprintf("gpuIR: no CUDA/HIP wrapper module of LLVM %d", llvm))
	}
	style := rel.Wrapper.GPU
	p := kind.prefix()
	sec := offload.EntriesSection(rel, kind.offloadKind())
	entry := "%struct.__tgt_offload_entry"
	entryType := "{ ptr, ptr, i64, i32, i32 }"
	switch style {
	case release.GPURegistrationWholeFlags:
		entry = "%__tgt_offload_entry"
	case release.GPURegistrationKindCheck:
		entryType = "{ i64, i16, i16, i32, ptr, ptr, i64, i64, ptr }"
	}
	fatbinSec, segment, magic := ".nv_fatbin", ".nvFatBinSegment", 1180844977
	if kind == HIP {
		fatbinSec, segment, magic = ".hip_fatbin", ".hipFatBinSegment", 1212764230
	}
	prio := rel.Wrapper.CtorPriority
	r := strings.NewReplacer("$p", p, "$E", entry, "$S", sec)

	var b strings.Builder
	w := func(format string, args ...any) { b.WriteString(r.Replace(fmt.Sprintf(format, args...))) }
	w("source_filename = \"offload.wrapper.module\"\n\n")
	w("$E = type %s\n%%fatbin_wrapper = type { i32, i32, ptr, ptr }\n\n", entryType)
	image = fmt.Sprintf("[%d x i8] c\"%s\"", len(image), irString(image))
	if style == release.GPURegistrationWholeFlags {
		// LLVM 17 creates the image, the wrapper and a hidden dummy entry
		// first, then the handle, then __start_/__stop_.
		w("@.fatbin_image = internal constant %s, section %q\n", image, fatbinSec)
		w("@.fatbin_wrapper = internal constant %%fatbin_wrapper { i32 %d, i32 1, ptr @.fatbin_image, ptr null }, section %q, align 8\n", magic, segment)
		w("@__dummy.$p_offloading.entry = hidden constant [0 x $E] zeroinitializer, section \"$S\"\n")
		w("@.$p.binary_handle = internal global ptr null\n")
		w("@__start_$S = external hidden constant [0 x $E]\n@__stop_$S = external hidden constant [0 x $E]\n")
	} else {
		align := ""
		if style == release.GPURegistrationKindCheck {
			align = ", align 8"
		}
		w("@__start_$S = external hidden constant [0 x $E]\n@__stop_$S = external hidden constant [0 x $E]\n")
		w("@__dummy.$S = internal constant [0 x $E] zeroinitializer, section \"$S\"%s\n", align)
		w("@llvm.compiler.used = appending global [1 x ptr] [ptr @__dummy.$S], section \"llvm.metadata\"\n")
		w("@.fatbin_image = internal constant %s, section %q\n", image, fatbinSec)
		w("@.fatbin_wrapper = internal constant %%fatbin_wrapper { i32 %d, i32 1, ptr @.fatbin_image, ptr null }, section %q, align 8\n", magic, segment)
		w("@.$p.binary_handle = internal global ptr null\n")
	}
	w("@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 %d, ptr @.$p.fatbin_reg, ptr null }]\n\n", prio)

	w("define internal void @.$p.fatbin_reg() section \".text.startup\" {\nentry:\n")
	w("  %%0 = call ptr @__$pRegisterFatBinary(ptr @.fatbin_wrapper)\n")
	w("  store ptr %%0, ptr @.$p.binary_handle, align 8\n")
	w("  call void @.$p.globals_reg(ptr %%0)\n")
	if kind == CUDA {
		w("  call void @__cudaRegisterFatBinaryEnd(ptr %%0)\n")
	}
	w("  %%1 = call i32 @atexit(ptr @.$p.fatbin_unreg)\n  ret void\n}\n\n")
	w("define internal void @.$p.fatbin_unreg() section \".text.startup\" {\nentry:\n")
	w("  %%0 = load ptr, ptr @.$p.binary_handle, align 8\n")
	w("  call void @__$pUnregisterFatBinary(ptr %%0)\n  ret void\n}\n\n")
	w("declare ptr @__$pRegisterFatBinary(ptr)\n\n")
	w("declare void @__cudaRegisterFatBinaryEnd(ptr)\n\n")
	w("declare void @__$pUnregisterFatBinary(ptr)\n\n")
	w("declare i32 @atexit(ptr)\n\n")
	w("declare i32 @__$pRegisterFunction(ptr, ptr, ptr, ptr, i32, ptr, ptr, ptr, ptr, ptr)\n\n")
	w("declare void @__$pRegisterVar(ptr, ptr, ptr, ptr, i32, i64, i32, i32)\n\n")
	if style == release.GPURegistrationKindCheck {
		w("declare void @__$pRegisterManagedVar(ptr, ptr, ptr, ptr, i64, i32)\n\n")
	}
	if style != release.GPURegistrationWholeFlags {
		w("declare void @__$pRegisterSurface(ptr, ptr, ptr, ptr, i32, i32)\n\n")
		w("declare void @__$pRegisterTexture(ptr, ptr, ptr, ptr, i32, i32, i32)\n\n")
	}
	b.WriteString(r.Replace(gpuGlobalsReg(style, kind)))
	return b.String()
}

// gpuGlobalsReg is the body of .<p>.globals_reg in the module of style s.
func gpuGlobalsReg(s release.GPURegistration, kind GPUKind) string {
	var b strings.Builder
	w := func(lines ...string) {
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	w("define internal void @.$p.globals_reg(ptr %0) section \".text.startup\" {",
		"entry:",
		"  %1 = icmp ne ptr @__start_$S, @__stop_$S",
		"  br i1 %1, label %while.entry, label %while.end",
		"")
	surface, texture := "", ""
	switch s {
	case release.GPURegistrationWholeFlags:
		w("while.entry:",
			"  %entry1 = phi ptr [ @__start_$S, %entry ], [ %8, %if.end ]",
			"  %2 = getelementptr inbounds $E, ptr %entry1, i64 0, i32 0",
			"  %addr = load ptr, ptr %2, align 8",
			"  %3 = getelementptr inbounds $E, ptr %entry1, i64 0, i32 1",
			"  %name = load ptr, ptr %3, align 8",
			"  %4 = getelementptr inbounds $E, ptr %entry1, i64 0, i32 2",
			"  %size = load i64, ptr %4, align 4",
			"  %5 = getelementptr inbounds $E, ptr %entry1, i64 0, i32 3",
			"  %flag = load i32, ptr %5, align 4",
			"  %6 = icmp eq i64 %size, 0",
			"  br i1 %6, label %if.then, label %if.else",
			"",
			"if.then:",
			"  %7 = call i32 @__$pRegisterFunction(ptr %0, ptr %addr, ptr %name, ptr %name, i32 -1, ptr null, ptr null, ptr null, ptr null, ptr null)",
			"  br label %if.end",
			"",
			"if.else:",
			"  switch i32 %flag, label %if.end [",
			"    i32 0, label %sw.global",
			"    i32 1, label %sw.managed",
			"    i32 2, label %sw.surface",
			"    i32 3, label %sw.texture",
			"  ]",
			"",
			"sw.global:",
			"  call void @__$pRegisterVar(ptr %0, ptr %addr, ptr %name, ptr %name, i32 0, i64 %size, i32 0, i32 0)",
			"  br label %if.end",
			"")
	case release.GPURegistrationFlagBits:
		w("while.entry:",
			"  %entry1 = phi ptr [ @__start_$S, %entry ], [ %12, %if.end ]",
			"  %2 = getelementptr inbounds $E, ptr %entry1, i64 0, i32 0",
			"  %addr = load ptr, ptr %2, align 8",
			"  %3 = getelementptr inbounds $E, ptr %entry1, i64 0, i32 1",
			"  %name = load ptr, ptr %3, align 8",
			"  %4 = getelementptr inbounds $E, ptr %entry1, i64 0, i32 2",
			"  %size = load i64, ptr %4, align 4",
			"  %5 = getelementptr inbounds $E, ptr %entry1, i64 0, i32 3",
			"  %flags = load i32, ptr %5, align 4",
			"  %6 = getelementptr inbounds $E, ptr %entry1, i64 0, i32 4",
			"  %textype = load i32, ptr %6, align 4",
			"  %type = and i32 %flags, 7",
			"  %7 = and i32 %flags, 8",
			"  %extern = lshr i32 %7, 3",
			"  %8 = and i32 %flags, 16",
			"  %constant = lshr i32 %8, 4",
			"  %9 = and i32 %flags, 32",
			"  %normalized = lshr i32 %9, 5",
			"  %10 = icmp eq i64 %size, 0",
			"  br i1 %10, label %if.then, label %if.else",
			"",
			"if.then:",
			"  %11 = call i32 @__$pRegisterFunction(ptr %0, ptr %addr, ptr %name, ptr %name, i32 -1, ptr null, ptr null, ptr null, ptr null, ptr null)",
			"  br label %if.end",
			"")
		surface, texture = "%textype", "%textype"
	case release.GPURegistrationKindCheck:
		w("while.entry:",
			"  %entry1 = phi ptr [ @__start_$S, %entry ], [ %16, %if.end ]",
			"  %2 = getelementptr inbounds $E, ptr %entry1, i32 0, i32 4",
			"  %addr = load ptr, ptr %2, align 8",
			"  %3 = getelementptr inbounds $E, ptr %entry1, i32 0, i32 8",
			"  %aux_addr = load ptr, ptr %3, align 8",
			"  %4 = getelementptr inbounds $E, ptr %entry1, i32 0, i32 2",
			"  %kind = load i16, ptr %4, align 2",
			"  %5 = getelementptr inbounds $E, ptr %entry1, i32 0, i32 5",
			"  %name = load ptr, ptr %5, align 8",
			"  %6 = getelementptr inbounds $E, ptr %entry1, i32 0, i32 6",
			"  %size = load i64, ptr %6, align 4",
			"  %7 = getelementptr inbounds $E, ptr %entry1, i32 0, i32 3",
			"  %flags = load i32, ptr %7, align 4",
			"  %8 = getelementptr inbounds $E, ptr %entry1, i32 0, i32 7",
			"  %data = load i64, ptr %8, align 4",
			"  %9 = trunc i64 %data to i32",
			"  %type = and i32 %flags, 7",
			"  %10 = and i32 %flags, 8",
			"  %extern = lshr i32 %10, 3",
			"  %11 = and i32 %flags, 16",
			"  %constant = lshr i32 %11, 4",
			"  %12 = and i32 %flags, 32",
			"  %normalized = lshr i32 %12, 5",
			fmt.Sprintf("  %%13 = icmp eq i16 %%kind, %d", map[GPUKind]int{CUDA: 2, HIP: 4}[kind]),
			"  br i1 %13, label %if.kind, label %if.end",
			"",
			"if.kind:",
			"  %14 = icmp eq i64 %size, 0",
			"  br i1 %14, label %if.then, label %if.else",
			"",
			"if.then:",
			"  %15 = call i32 @__$pRegisterFunction(ptr %0, ptr %addr, ptr %name, ptr %name, i32 -1, ptr null, ptr null, ptr null, ptr null, ptr null)",
			"  br label %if.end",
			"")
		surface, texture = "%9", "%9"
	}
	if s != release.GPURegistrationWholeFlags {
		w("if.else:",
			"  switch i32 %type, label %if.end [",
			"    i32 0, label %sw.global",
			"    i32 1, label %sw.managed",
			"    i32 2, label %sw.surface",
			"    i32 3, label %sw.texture",
			"  ]",
			"",
			"sw.global:",
			"  call void @__$pRegisterVar(ptr %0, ptr %addr, ptr %name, ptr %name, i32 %extern, i64 %size, i32 %constant, i32 0)",
			"  br label %if.end",
			"")
	}
	w("sw.managed:")
	if s == release.GPURegistrationKindCheck {
		w("  call void @__$pRegisterManagedVar(ptr %0, ptr %aux_addr, ptr %addr, ptr %name, i64 %size, i32 %9)")
	}
	w("  br label %if.end", "", "sw.surface:")
	if s != release.GPURegistrationWholeFlags && kind == HIP {
		w("  call void @__$pRegisterSurface(ptr %0, ptr %addr, ptr %name, ptr %name, i32 " + surface + ", i32 %extern)")
	}
	w("  br label %if.end", "", "sw.texture:")
	if s != release.GPURegistrationWholeFlags && kind == HIP {
		w("  call void @__$pRegisterTexture(ptr %0, ptr %addr, ptr %name, ptr %name, i32 " + texture + ", i32 %normalized, i32 %extern)")
	}
	w("  br label %if.end", "", "if.end:")
	switch s {
	case release.GPURegistrationWholeFlags:
		w("  %8 = getelementptr inbounds $E, ptr %entry1, i64 1",
			"  %9 = icmp eq ptr %8, @__stop_$S",
			"  br i1 %9, label %while.end, label %while.entry")
	case release.GPURegistrationFlagBits:
		w("  %12 = getelementptr inbounds $E, ptr %entry1, i64 1",
			"  %13 = icmp eq ptr %12, @__stop_$S",
			"  br i1 %13, label %while.end, label %while.entry")
	case release.GPURegistrationKindCheck:
		w("  %16 = getelementptr inbounds $E, ptr %entry1, i64 1",
			"  %17 = icmp eq ptr %16, @__stop_$S",
			"  br i1 %17, label %while.end, label %while.entry")
	}
	w("", "while.end:", "  ret void", "}")
	return b.String()
}

// irString escapes s for an LLVM IR c"..." constant: bytes other than
// printable ASCII, '"', '\' and '$' (which the module's placeholders
// start with) become \XX.
func irString(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != '$' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\%02X", c)
		}
	}
	return b.String()
}

// GPUModuleIR is the CUDA or HIP wrapper module, as LLVM IR text, that
// clang-linker-wrapper of release llvm compiles around the fatbinary image
// (see gpuIR): what tests give llc to see the object LLVM makes.
func GPUModuleIR(llvm int, kind GPUKind, image string) string { return gpuIR(llvm, kind, image) }

// GPUModuleIRCOFF is the module of GPUModuleIR as clang-linker-wrapper of
// release llvm (22 to 24) writes it for a COFF host
// (docs/registration.md#windows): instead of the external __start_/__stop_
// symbols and the dummy entry kept by llvm.compiler.used, __start_ and
// __stop_ are weak_odr hidden arrays in the sections <entries>$OA and
// <entries>$OZ, which the COFF linker sorts around the entries'
// <entries>$OE: empty (22, 23), or from 24 one zeroed entry each, aligned
// 8, the loop then beginning one entry after __start_ (llvm-project
// #215390, as its regression test offload-wrapper-coff shows it).
func GPUModuleIRCOFF(llvm int, kind GPUKind, image string) string {
	rel, err := release.Lookup(llvm)
	if err != nil || rel.Wrapper.GPU != release.GPURegistrationKindCheck || rel.Wrapper.COFFBounds == release.COFFBoundsNone {
		panic(fmt.Sprintf("GPUModuleIRCOFF: no COFF wrapper module of LLVM %d", llvm))
	}
	sec := offload.EntriesSection(rel, kind.offloadKind())
	bound, begin, align := "[0 x %struct.__tgt_offload_entry] zeroinitializer", "@__start_"+sec, ""
	if rel.Wrapper.COFFBounds == release.COFFBoundsSentinel {
		bound = "[1 x %struct.__tgt_offload_entry] zeroinitializer"
		begin = "getelementptr inbounds ([1 x %struct.__tgt_offload_entry], ptr @__start_" + sec + ", i32 0, i32 1)"
		align = ", align 8"
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(gpuIR(llvm, kind, image), "\n") {
		switch {
		case strings.HasPrefix(l, "@__start_"):
			fmt.Fprintf(&b, "@__start_%s = weak_odr hidden constant %s, section \"%s$OA\"%s\n", sec, bound, sec, align)
		case strings.HasPrefix(l, "@__stop_"):
			fmt.Fprintf(&b, "@__stop_%s = weak_odr hidden constant %s, section \"%s$OZ\"%s\n", sec, bound, sec, align)
		case strings.HasPrefix(l, "@__dummy."), strings.HasPrefix(l, "@llvm.compiler.used"):
		case strings.HasPrefix(l, "  %1 = icmp ne ptr @__start_"+sec+", "):
			b.WriteString(strings.Replace(l, "ptr @__start_"+sec, "ptr "+begin, 1))
		case strings.HasPrefix(l, "  %entry1 = phi ptr [ @__start_"+sec+", %entry ]"):
			b.WriteString(strings.Replace(l, "@__start_"+sec, begin, 1))
		default:
			b.WriteString(l)
		}
	}
	return b.String()
}

// MachOCodeSection is the section of the wrapper module's functions for a
// Mach-O host (getStartupSection in main's OffloadWrapper.cpp,
// llvm-project #183991); its data's sections are offload's
// MachOEntriesSection and MachOFatbinSections.
const MachOCodeSection = "__TEXT,__StaticInit"

// MachOBound is the symbol that ld64 resolves to the start ("start") or
// end ("end") of the entries' section. The module names it with LLVM's
// \01 prefix, so the object's symbol has no Mach-O underscore.
func MachOBound(which string) string {
	return "section$" + which + "$" + offload.MachOEntriesSegment + "$" + offload.MachOEntriesSection
}

// GPUModuleIRMachO is the module of GPUModuleIR as LLVM main's offload
// wrapper writes it for a Mach-O host (x86_64-apple-macosx10.15.0,
// arm64-apple-macos; the HIP-MACHO checks of
// llvm/test/tools/llvm-offload-wrapper/offload-wrapper.ll): the bounds
// section$start$/section$end$ of __LLVM,offload_entries, which ld64 makes,
// a dummy entry array "__dummy.__LLVM,offload_entries" in that section
// kept by llvm.used, the fatbin in __HIP,__hip_fatbin (__NV_CUDA,__nv_fatbin),
// its wrapper in __HIP,__fatbin (__NV_CUDA,__fatbin), and the functions in
// __TEXT,__StaticInit.
func GPUModuleIRMachO(llvm int, kind GPUKind, image string) string {
	rel, err := release.Lookup(llvm)
	if err != nil || rel.Wrapper.GPU != release.GPURegistrationKindCheck {
		panic(fmt.Sprintf("GPUModuleIRMachO: no Mach-O wrapper module of LLVM %d", llvm))
	}
	sec := offload.EntriesSection(rel, kind.offloadKind())
	fatbin, wrapper, _ := offload.MachOFatbinSections(kind.offloadKind())
	fat, seg := `"`+fatbin+`"`, `"`+wrapper+`"`
	machoSec := offload.MachOEntriesSegment + "," + offload.MachOEntriesSection
	r := strings.NewReplacer(
		"@__start_"+sec, `@"\01`+MachOBound("start")+`"`,
		"@__stop_"+sec, `@"\01`+MachOBound("end")+`"`,
		"@__dummy."+sec, `@"__dummy.`+machoSec+`"`,
		"@llvm.compiler.used", "@llvm.used",
		`section "`+sec+`"`, `section "`+machoSec+`"`,
		`section ".nv_fatbin"`, "section "+fat, `section ".hip_fatbin"`, "section "+fat,
		`section ".nvFatBinSegment"`, "section "+seg, `section ".hipFatBinSegment"`, "section "+seg,
		`section ".text.startup"`, `section "`+MachOCodeSection+`"`)
	return r.Replace(gpuIR(llvm, kind, image))
}
