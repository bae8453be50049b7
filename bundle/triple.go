package bundle

import "strings"

// The bundlers compare triples as llvm::Triple does: each of the four
// components parsed into LLVM's enumeration of known names, an unknown name
// (and an empty one) standing for "unknown". These tables hold the names LLVM
// knows (llvm/lib/TargetParser/Triple.cpp); two triples whose components map
// to the same entries are the same triple to the bundler.

// archNames maps an architecture name to its canonical one.
var archNames = map[string]string{}

func init() {
	for canon, names := range map[string][]string{
		"x86":            {"i386", "i486", "i586", "i686", "i786", "i886", "i986"},
		"x86_64":         {"amd64", "x86_64", "x86_64h"},
		"ppc":            {"powerpc", "powerpcspe", "ppc", "ppc32"},
		"ppcle":          {"powerpcle", "ppcle", "ppc32le"},
		"ppc64":          {"powerpc64", "ppu", "ppc64"},
		"ppc64le":        {"powerpc64le", "ppc64le"},
		"arm":            {"xscale", "arm"},
		"armeb":          {"xscaleeb", "armeb"},
		"aarch64":        {"aarch64", "arm64", "arm64e", "arm64ec"},
		"aarch64_be":     {"aarch64_be"},
		"aarch64_32":     {"aarch64_32", "arm64_32"},
		"thumb":          {"thumb"},
		"thumbeb":        {"thumbeb"},
		"mips":           {"mips", "mipseb", "mipsallegrex", "mipsisa32r6", "mipsr6"},
		"mipsel":         {"mipsel", "mipsallegrexel", "mipsisa32r6el", "mipsr6el"},
		"mips64":         {"mips64", "mips64eb", "mipsn32", "mipsisa64r6", "mips64r6", "mipsn32r6"},
		"mips64el":       {"mips64el", "mipsn32el", "mipsisa64r6el", "mips64r6el", "mipsn32r6el"},
		"systemz":        {"s390x", "systemz"},
		"sparcv9":        {"sparcv9", "sparc64"},
		"spirv":          {"spirv", "spirv1.5", "spirv1.6"},
		"spirv32":        {"spirv32", "spirv32v1.0", "spirv32v1.1", "spirv32v1.2", "spirv32v1.3", "spirv32v1.4", "spirv32v1.5", "spirv32v1.6"},
		"spirv64":        {"spirv64", "spirv64v1.0", "spirv64v1.1", "spirv64v1.2", "spirv64v1.3", "spirv64v1.4", "spirv64v1.5", "spirv64v1.6"},
		"dxil":           {"dxil", "dxilv1.0", "dxilv1.1", "dxilv1.2", "dxilv1.3", "dxilv1.4", "dxilv1.5", "dxilv1.6", "dxilv1.7", "dxilv1.8"},
		"arc":            {"arc"},
		"avr":            {"avr"},
		"m68k":           {"m68k"},
		"msp430":         {"msp430"},
		"r600":           {"r600"},
		"amdgcn":         {"amdgcn"},
		"riscv32":        {"riscv32"},
		"riscv64":        {"riscv64"},
		"hexagon":        {"hexagon"},
		"sparc":          {"sparc"},
		"sparcel":        {"sparcel"},
		"tce":            {"tce"},
		"tcele":          {"tcele"},
		"xcore":          {"xcore"},
		"nvptx":          {"nvptx"},
		"nvptx64":        {"nvptx64"},
		"amdil":          {"amdil"},
		"amdil64":        {"amdil64"},
		"hsail":          {"hsail"},
		"hsail64":        {"hsail64"},
		"spir":           {"spir"},
		"spir64":         {"spir64"},
		"lanai":          {"lanai"},
		"renderscript32": {"renderscript32"},
		"renderscript64": {"renderscript64"},
		"shave":          {"shave"},
		"ve":             {"ve"},
		"wasm32":         {"wasm32"},
		"wasm64":         {"wasm64"},
		"csky":           {"csky"},
		"loongarch32":    {"loongarch32"},
		"loongarch64":    {"loongarch64"},
		"xtensa":         {"xtensa"},
		"pe":             {"pe"},
	} {
		for _, n := range names {
			archNames[n] = canon
		}
	}
}

// vendorNames maps a vendor name to its canonical one.
var vendorNames = map[string]string{
	"apple": "apple", "pc": "pc", "scei": "scei", "sie": "scei", "fsl": "fsl", "ibm": "ibm", "img": "img",
	"mti": "mti", "nvidia": "nvidia", "csr": "csr", "amd": "amd", "mesa": "mesa", "suse": "suse",
	"oe": "oe", "intel": "intel",
}

// osPrefixes and envPrefixes are matched as prefixes, in order (LLVM's
// StringSwitch::StartsWith): "linux-gnu" style names with versions
// ("macos10.15", "gnueabihf") parse by their start.
var osPrefixes = []struct{ prefix, canon string }{
	{"darwin", "darwin"}, {"dragonfly", "dragonfly"}, {"freebsd", "freebsd"}, {"fuchsia", "fuchsia"},
	{"ios", "ios"}, {"kfreebsd", "kfreebsd"}, {"linux", "linux"}, {"lv2", "lv2"}, {"macos", "macos"},
	{"netbsd", "netbsd"}, {"openbsd", "openbsd"}, {"solaris", "solaris"}, {"uefi", "uefi"},
	{"win32", "win32"}, {"windows", "win32"}, {"zos", "zos"}, {"haiku", "haiku"}, {"rtems", "rtems"},
	{"nacl", "nacl"}, {"aix", "aix"}, {"cuda", "cuda"}, {"nvcl", "nvcl"}, {"amdhsa", "amdhsa"},
	{"ps4", "ps4"}, {"ps5", "ps5"}, {"elfiamcu", "elfiamcu"}, {"tvos", "tvos"}, {"watchos", "watchos"},
	{"bridgeos", "bridgeos"}, {"driverkit", "driverkit"}, {"xros", "xros"}, {"visionos", "xros"},
	{"mesa3d", "mesa3d"}, {"amdpal", "amdpal"}, {"hermit", "hermit"}, {"hurd", "hurd"}, {"wasi", "wasi"},
	{"emscripten", "emscripten"}, {"shadermodel", "shadermodel"}, {"liteos", "liteos"},
	{"serenity", "serenity"}, {"vulkan", "vulkan"},
}

var envPrefixes = []struct{ prefix, canon string }{
	{"eabihf", "eabihf"}, {"eabi", "eabi"}, {"gnuabin32", "gnuabin32"}, {"gnuabi64", "gnuabi64"},
	{"gnueabihft64", "gnueabihft64"}, {"gnueabihf", "gnueabihf"}, {"gnueabit64", "gnueabit64"},
	{"gnueabi", "gnueabi"}, {"gnuf32", "gnuf32"}, {"gnuf64", "gnuf64"}, {"gnusf", "gnusf"},
	{"gnux32", "gnux32"}, {"gnu_ilp32", "gnu_ilp32"}, {"code16", "code16"}, {"gnut64", "gnut64"},
	{"gnu", "gnu"}, {"android", "android"}, {"muslabin32", "muslabin32"}, {"muslabi64", "muslabi64"},
	{"musleabihf", "musleabihf"}, {"musleabi", "musleabi"}, {"muslf32", "muslf32"}, {"muslsf", "muslsf"},
	{"muslx32", "muslx32"}, {"musl", "musl"}, {"msvc", "msvc"}, {"itanium", "itanium"},
	{"cygnus", "cygnus"}, {"coreclr", "coreclr"}, {"simulator", "simulator"}, {"macabi", "macabi"},
	{"pixel", "pixel"}, {"vertex", "vertex"}, {"geometry", "geometry"}, {"hull", "hull"},
	{"domain", "domain"}, {"compute", "compute"}, {"library", "library"},
	{"raygeneration", "raygeneration"}, {"intersection", "intersection"}, {"anyhit", "anyhit"},
	{"closesthit", "closesthit"}, {"miss", "miss"}, {"callable", "callable"}, {"mesh", "mesh"},
	{"amplification", "amplification"}, {"opencl", "opencl"}, {"ohos", "ohos"},
	{"pauthtest", "pauthtest"}, {"llvm", "llvm"},
}

func byPrefix(table []struct{ prefix, canon string }, s string) string {
	for _, e := range table {
		if strings.HasPrefix(s, e.prefix) {
			return e.canon
		}
	}
	return ""
}

// tripleKey is a triple as llvm::Triple compares it: architecture, vendor,
// OS and environment, "" where LLVM knows no such name.
type tripleKey struct{ arch, vendor, os, env string }

// parseTriple splits triple as llvm::Triple's constructor does (at most four
// components, the last taking the rest) and parses each component.
func parseTriple(triple string) tripleKey {
	c := strings.SplitN(triple, "-", 4)
	for len(c) < 4 {
		c = append(c, "")
	}
	arch := archNames[c[0]]
	if arch == "" && c[0] != "" {
		// Versioned ARM, Thumb and BPF names ("armv7a", "bpfel") parse by
		// their start; they are not offloading targets, and telling their
		// variants apart is left to LLVM.
		for _, p := range []string{"aarch64", "arm", "thumb", "bpf"} {
			if strings.HasPrefix(c[0], p) {
				arch = c[0]
			}
		}
	}
	return tripleKey{arch, vendorNames[c[1]], byPrefix(osPrefixes, c[2]), byPrefix(envPrefixes, c[3])}
}

// isAMDGPU reports whether the triple's architecture is amdgcn or r600.
func (k tripleKey) isAMDGPU() bool { return k.arch == "amdgcn" || k.arch == "r600" }
