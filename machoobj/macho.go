package machoobj

import (
	"debug/macho"
	"encoding/binary"
)

// Values of the Mach-O format, named as Apple's <mach-o/loader.h>,
// <mach-o/nlist.h> and <mach-o/reloc.h> (and LLVM's
// llvm/BinaryFormat/MachO.h) name them, for what debug/macho lacks.
const (
	// MH_OBJECT is the file type of a relocatable object.
	MH_OBJECT = uint32(macho.TypeObj)
	// MH_SUBSECTIONS_VIA_SYMBOLS: the object's sections can be divided at
	// its symbols (what LLVM sets for .subsections_via_symbols, which clang
	// always emits on Darwin).
	MH_SUBSECTIONS_VIA_SYMBOLS uint32 = 0x2000

	CPU_SUBTYPE_X86_64_ALL uint32 = 3
	CPU_SUBTYPE_ARM64_ALL  uint32 = 0

	LC_SEGMENT_64               uint32 = 0x19
	LC_SYMTAB                   uint32 = 0x2
	LC_DYSYMTAB                 uint32 = 0xb
	LC_VERSION_MIN_MACOSX       uint32 = 0x24
	LC_VERSION_MIN_IPHONEOS     uint32 = 0x25
	LC_VERSION_MIN_TVOS         uint32 = 0x2f
	LC_VERSION_MIN_WATCHOS      uint32 = 0x30
	LC_BUILD_VERSION            uint32 = 0x32
	LC_DATA_IN_CODE             uint32 = 0x29
	LC_LINKER_OPTIMIZATION_HINT uint32 = 0x2e
	LC_LINKER_OPTION            uint32 = 0x2d

	// Section types (the low byte of a section's flags) of sections with
	// no bytes in the file.
	S_ZEROFILL                       uint32 = 0x1
	S_GB_ZEROFILL                    uint32 = 0xc
	S_THREAD_LOCAL_ZEROFILL          uint32 = 0x12
	SECTION_TYPE                     uint32 = 0xff
	S_REGULAR                        uint32 = 0x0
	S_CSTRING_LITERALS               uint32 = 0x2
	S_MOD_INIT_FUNC_POINTERS         uint32 = 0x9
	S_ATTR_PURE_INSTRUCTIONS         uint32 = 0x80000000
	S_ATTR_NO_DEAD_STRIP             uint32 = 0x10000000
	S_ATTR_LIVE_SUPPORT              uint32 = 0x08000000
	S_ATTR_DEBUG                     uint32 = 0x02000000
	S_ATTR_SOME_INSTRUCTIONS         uint32 = 0x00000400
	S_NON_LAZY_SYMBOL_POINTER        uint32 = 0x6
	S_LAZY_SYMBOL_POINTERS           uint32 = 0x7
	S_SYMBOL_STUBS                   uint32 = 0x8
	S_THREAD_LOCAL_VARIABLE_POINTERS uint32 = 0x14
	S_LAZY_DYLIB_SYMBOL_POINTERS     uint32 = 0x10

	// Symbol types (n_type).
	N_STAB uint8 = 0xe0
	N_PEXT uint8 = 0x10
	N_TYPE uint8 = 0x0e
	N_EXT  uint8 = 0x01
	N_UNDF uint8 = 0x0
	N_ABS  uint8 = 0x2
	N_SECT uint8 = 0xe
	N_INDR uint8 = 0xa

	// Indirect symbol table entries that name no symbol.
	INDIRECT_SYMBOL_LOCAL uint32 = 0x80000000
	INDIRECT_SYMBOL_ABS   uint32 = 0x40000000

	// PLATFORM_MACOS and the others are LC_BUILD_VERSION's platforms.
	PLATFORM_MACOS   uint32 = 1
	PLATFORM_IOS     uint32 = 2
	PLATFORM_TVOS    uint32 = 3
	PLATFORM_WATCHOS uint32 = 4
	PLATFORM_XROS    uint32 = 11
)

// CPUs this package writes objects for (debug/macho's values).
const (
	CpuAmd64 = macho.CpuAmd64
	CpuArm64 = macho.CpuArm64
)

// Sizes of the records of a 64-bit Mach-O file.
const (
	headerSize   = 32
	segmentSize  = 72
	sectionSize  = 80
	symtabSize   = 24
	dysymtabSize = 80
	nlistSize    = 16
	relocSize    = 8
	diceSize     = 8
	linkeditSize = 16 // LC_DATA_IN_CODE, LC_LINKER_OPTIMIZATION_HINT
	buildSize    = 24 // LC_BUILD_VERSION without tools
	versionSize  = 16 // LC_VERSION_MIN_*
	magic64      = macho.Magic64
	maxSections  = 255 // n_sect is a byte
)

var le = binary.LittleEndian

// virtual reports whether a section of these flags has no bytes in the
// file (zero-fill).
func virtual(flags uint32) bool {
	switch flags & SECTION_TYPE {
	case S_ZEROFILL, S_GB_ZEROFILL, S_THREAD_LOCAL_ZEROFILL:
		return true
	}
	return false
}

// name16 returns the 16-byte field s, NUL padded.
func name16(s string) [16]byte {
	var b [16]byte
	copy(b[:], s)
	return b
}

// cstr16 returns the name in a 16-byte field: up to its first NUL.
func cstr16(b []byte) string {
	for i, c := range b[:16] {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b[:16])
}
