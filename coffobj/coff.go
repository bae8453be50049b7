package coffobj

import (
	"debug/pe"
	"fmt"
	"strconv"
)

// Values of the COFF format that debug/pe lacks, named in its style (the
// spelling of Microsoft's winnt.h, as LLVM's llvm/BinaryFormat/COFF.h keeps
// it).
const (
	// IMAGE_SCN_LNK_INFO marks a section of comments or linker options
	// (.drectve).
	IMAGE_SCN_LNK_INFO uint32 = 0x00000200
	// IMAGE_SCN_LNK_REMOVE marks a section that the linker does not put in
	// the image (LLVM's .llvm.offloading, .llvm_addrsig).
	IMAGE_SCN_LNK_REMOVE uint32 = 0x00000800
	// IMAGE_SCN_LNK_NRELOC_OVFL: the section has more than 65535
	// relocations; the first one's address holds their number plus one.
	IMAGE_SCN_LNK_NRELOC_OVFL uint32 = 0x01000000
	// IMAGE_SCN_ALIGN_MASK holds the alignment of an object's section:
	// n in bits 20-23 for 2^(n-1) bytes, 0 for the default.
	IMAGE_SCN_ALIGN_MASK uint32 = 0x00F00000

	// Section numbers of symbols that no section defines.
	IMAGE_SYM_UNDEFINED int16 = 0
	IMAGE_SYM_ABSOLUTE  int16 = -1
	IMAGE_SYM_DEBUG     int16 = -2

	// IMAGE_SYM_DTYPE_FUNCTION<<4 is the Type of a function symbol (0x20).
	IMAGE_SYM_DTYPE_FUNCTION uint16 = 2
	// IMAGE_WEAK_EXTERN_SEARCH_ALIAS is the search kind of a weak external
	// that aliases its default (what clang makes of __attribute__((weak))
	// definitions and aliases).
	IMAGE_WEAK_EXTERN_SEARCH_NOLIBRARY uint32 = 1
	IMAGE_WEAK_EXTERN_SEARCH_LIBRARY   uint32 = 2
	IMAGE_WEAK_EXTERN_SEARCH_ALIAS     uint32 = 3
)

// Machines that [Write] makes objects for (debug/pe's values).
const (
	MachineAMD64 = pe.IMAGE_FILE_MACHINE_AMD64
	MachineARM64 = pe.IMAGE_FILE_MACHINE_ARM64
)

// StorageClass is a symbol's storage class (IMAGE_SYM_CLASS_*).
type StorageClass uint8

const (
	IMAGE_SYM_CLASS_NULL            StorageClass = 0
	IMAGE_SYM_CLASS_AUTOMATIC       StorageClass = 1
	IMAGE_SYM_CLASS_EXTERNAL        StorageClass = 2
	IMAGE_SYM_CLASS_STATIC          StorageClass = 3
	IMAGE_SYM_CLASS_EXTERNAL_DEF    StorageClass = 5
	IMAGE_SYM_CLASS_LABEL           StorageClass = 6
	IMAGE_SYM_CLASS_FUNCTION        StorageClass = 101
	IMAGE_SYM_CLASS_FILE            StorageClass = 103
	IMAGE_SYM_CLASS_SECTION         StorageClass = 104
	IMAGE_SYM_CLASS_WEAK_EXTERNAL   StorageClass = 105
	IMAGE_SYM_CLASS_CLR_TOKEN       StorageClass = 107
	IMAGE_SYM_CLASS_END_OF_FUNCTION StorageClass = 255
)

var classNames = map[StorageClass]string{
	IMAGE_SYM_CLASS_NULL: "IMAGE_SYM_CLASS_NULL", IMAGE_SYM_CLASS_AUTOMATIC: "IMAGE_SYM_CLASS_AUTOMATIC",
	IMAGE_SYM_CLASS_EXTERNAL: "IMAGE_SYM_CLASS_EXTERNAL", IMAGE_SYM_CLASS_STATIC: "IMAGE_SYM_CLASS_STATIC",
	IMAGE_SYM_CLASS_EXTERNAL_DEF: "IMAGE_SYM_CLASS_EXTERNAL_DEF", IMAGE_SYM_CLASS_LABEL: "IMAGE_SYM_CLASS_LABEL",
	IMAGE_SYM_CLASS_FUNCTION: "IMAGE_SYM_CLASS_FUNCTION", IMAGE_SYM_CLASS_FILE: "IMAGE_SYM_CLASS_FILE",
	IMAGE_SYM_CLASS_SECTION: "IMAGE_SYM_CLASS_SECTION", IMAGE_SYM_CLASS_WEAK_EXTERNAL: "IMAGE_SYM_CLASS_WEAK_EXTERNAL",
	IMAGE_SYM_CLASS_CLR_TOKEN: "IMAGE_SYM_CLASS_CLR_TOKEN", IMAGE_SYM_CLASS_END_OF_FUNCTION: "IMAGE_SYM_CLASS_END_OF_FUNCTION",
}

func (c StorageClass) String() string {
	if s, ok := classNames[c]; ok {
		return s
	}
	return "StorageClass(" + strconv.Itoa(int(c)) + ")"
}

// GoString returns the constant's Go name.
func (c StorageClass) GoString() string {
	if s, ok := classNames[c]; ok {
		return "coffobj." + s
	}
	return "coffobj.StorageClass(" + strconv.Itoa(int(c)) + ")"
}

// Selection is how the linker picks one of the COMDAT sections of the same
// name (IMAGE_COMDAT_SELECT_*, debug/pe's values); 0 for a section that is
// not COMDAT.
type Selection uint8

var selectionNames = [...]string{"0", "IMAGE_COMDAT_SELECT_NODUPLICATES", "IMAGE_COMDAT_SELECT_ANY",
	"IMAGE_COMDAT_SELECT_SAME_SIZE", "IMAGE_COMDAT_SELECT_EXACT_MATCH", "IMAGE_COMDAT_SELECT_ASSOCIATIVE",
	"IMAGE_COMDAT_SELECT_LARGEST"}

func (s Selection) String() string {
	if int(s) < len(selectionNames) {
		return selectionNames[s]
	}
	return "Selection(" + strconv.Itoa(int(s)) + ")"
}

// RelocType is a relocation type for the object's machine: a [RelocAMD64],
// a [RelocARM64] or a [RawReloc].
type RelocType interface {
	fmt.Stringer
	GoString() string
}

// RelocAMD64 is a relocation type of x86-64 (IMAGE_REL_AMD64_*).
type RelocAMD64 uint16

const (
	IMAGE_REL_AMD64_ABSOLUTE RelocAMD64 = 0x00
	IMAGE_REL_AMD64_ADDR64   RelocAMD64 = 0x01
	IMAGE_REL_AMD64_ADDR32   RelocAMD64 = 0x02
	IMAGE_REL_AMD64_ADDR32NB RelocAMD64 = 0x03
	IMAGE_REL_AMD64_REL32    RelocAMD64 = 0x04
	IMAGE_REL_AMD64_REL32_1  RelocAMD64 = 0x05
	IMAGE_REL_AMD64_REL32_2  RelocAMD64 = 0x06
	IMAGE_REL_AMD64_REL32_3  RelocAMD64 = 0x07
	IMAGE_REL_AMD64_REL32_4  RelocAMD64 = 0x08
	IMAGE_REL_AMD64_REL32_5  RelocAMD64 = 0x09
	IMAGE_REL_AMD64_SECTION  RelocAMD64 = 0x0A
	IMAGE_REL_AMD64_SECREL   RelocAMD64 = 0x0B
	IMAGE_REL_AMD64_SECREL7  RelocAMD64 = 0x0C
	IMAGE_REL_AMD64_TOKEN    RelocAMD64 = 0x0D
	IMAGE_REL_AMD64_SREL32   RelocAMD64 = 0x0E
	IMAGE_REL_AMD64_PAIR     RelocAMD64 = 0x0F
	IMAGE_REL_AMD64_SSPAN32  RelocAMD64 = 0x10
)

var amd64Names = [...]string{"IMAGE_REL_AMD64_ABSOLUTE", "IMAGE_REL_AMD64_ADDR64", "IMAGE_REL_AMD64_ADDR32",
	"IMAGE_REL_AMD64_ADDR32NB", "IMAGE_REL_AMD64_REL32", "IMAGE_REL_AMD64_REL32_1", "IMAGE_REL_AMD64_REL32_2",
	"IMAGE_REL_AMD64_REL32_3", "IMAGE_REL_AMD64_REL32_4", "IMAGE_REL_AMD64_REL32_5", "IMAGE_REL_AMD64_SECTION",
	"IMAGE_REL_AMD64_SECREL", "IMAGE_REL_AMD64_SECREL7", "IMAGE_REL_AMD64_TOKEN", "IMAGE_REL_AMD64_SREL32",
	"IMAGE_REL_AMD64_PAIR", "IMAGE_REL_AMD64_SSPAN32"}

func (r RelocAMD64) String() string {
	if int(r) < len(amd64Names) {
		return amd64Names[r]
	}
	return "RelocAMD64(" + strconv.Itoa(int(r)) + ")"
}

// GoString returns the constant's Go name.
func (r RelocAMD64) GoString() string { return "coffobj." + r.String() }

// RelocARM64 is a relocation type of AArch64 (IMAGE_REL_ARM64_*).
type RelocARM64 uint16

const (
	IMAGE_REL_ARM64_ABSOLUTE       RelocARM64 = 0x00
	IMAGE_REL_ARM64_ADDR32         RelocARM64 = 0x01
	IMAGE_REL_ARM64_ADDR32NB       RelocARM64 = 0x02
	IMAGE_REL_ARM64_BRANCH26       RelocARM64 = 0x03
	IMAGE_REL_ARM64_PAGEBASE_REL21 RelocARM64 = 0x04
	IMAGE_REL_ARM64_REL21          RelocARM64 = 0x05
	IMAGE_REL_ARM64_PAGEOFFSET_12A RelocARM64 = 0x06
	IMAGE_REL_ARM64_PAGEOFFSET_12L RelocARM64 = 0x07
	IMAGE_REL_ARM64_SECREL         RelocARM64 = 0x08
	IMAGE_REL_ARM64_SECREL_LOW12A  RelocARM64 = 0x09
	IMAGE_REL_ARM64_SECREL_HIGH12A RelocARM64 = 0x0A
	IMAGE_REL_ARM64_SECREL_LOW12L  RelocARM64 = 0x0B
	IMAGE_REL_ARM64_TOKEN          RelocARM64 = 0x0C
	IMAGE_REL_ARM64_SECTION        RelocARM64 = 0x0D
	IMAGE_REL_ARM64_ADDR64         RelocARM64 = 0x0E
	IMAGE_REL_ARM64_BRANCH19       RelocARM64 = 0x0F
	IMAGE_REL_ARM64_BRANCH14       RelocARM64 = 0x10
	IMAGE_REL_ARM64_REL32          RelocARM64 = 0x11
)

var arm64Names = [...]string{"IMAGE_REL_ARM64_ABSOLUTE", "IMAGE_REL_ARM64_ADDR32", "IMAGE_REL_ARM64_ADDR32NB",
	"IMAGE_REL_ARM64_BRANCH26", "IMAGE_REL_ARM64_PAGEBASE_REL21", "IMAGE_REL_ARM64_REL21",
	"IMAGE_REL_ARM64_PAGEOFFSET_12A", "IMAGE_REL_ARM64_PAGEOFFSET_12L", "IMAGE_REL_ARM64_SECREL",
	"IMAGE_REL_ARM64_SECREL_LOW12A", "IMAGE_REL_ARM64_SECREL_HIGH12A", "IMAGE_REL_ARM64_SECREL_LOW12L",
	"IMAGE_REL_ARM64_TOKEN", "IMAGE_REL_ARM64_SECTION", "IMAGE_REL_ARM64_ADDR64", "IMAGE_REL_ARM64_BRANCH19",
	"IMAGE_REL_ARM64_BRANCH14", "IMAGE_REL_ARM64_REL32"}

func (r RelocARM64) String() string {
	if int(r) < len(arm64Names) {
		return arm64Names[r]
	}
	return "RelocARM64(" + strconv.Itoa(int(r)) + ")"
}

// GoString returns the constant's Go name.
func (r RelocARM64) GoString() string { return "coffobj." + r.String() }

// RawReloc is a relocation type by number, for a machine whose types this
// package does not name.
type RawReloc uint16

func (r RawReloc) String() string   { return "RawReloc(" + strconv.Itoa(int(r)) + ")" }
func (r RawReloc) GoString() string { return "coffobj.RawReloc(" + strconv.Itoa(int(r)) + ")" }

// relocCode returns the number of relocation type t on machine m.
func relocCode(m uint16, t RelocType) (uint16, error) {
	switch v := t.(type) {
	case RawReloc:
		return uint16(v), nil
	case RelocAMD64:
		if m != MachineAMD64 {
			return 0, fmt.Errorf("relocation type %v on machine %#x", t, m)
		}
		return uint16(v), nil
	case RelocARM64:
		if m != MachineARM64 {
			return 0, fmt.Errorf("relocation type %v on machine %#x", t, m)
		}
		return uint16(v), nil
	case nil:
		return 0, fmt.Errorf("no relocation type")
	}
	return 0, fmt.Errorf("relocation type %#v: not a type of x86-64 or AArch64", t)
}

// RelocTypeOf returns the typed relocation type of code on machine m.
func RelocTypeOf(m uint16, code uint16) RelocType {
	switch m {
	case MachineAMD64:
		return RelocAMD64(code)
	case MachineARM64:
		return RelocARM64(code)
	}
	return RawReloc(code)
}

// alignBits returns the IMAGE_SCN_ALIGN_* bits of alignment a (0 for none),
// or false when a is not a power of two up to 8192.
func alignBits(a uint32) (uint32, bool) {
	if a == 0 {
		return 0, true
	}
	for n := uint32(1); n <= 14; n++ {
		if a == 1<<(n-1) {
			return n << 20, true
		}
	}
	return 0, false
}

// alignOf returns the alignment that characteristics c give, 0 for none.
func alignOf(c uint32) uint32 {
	n := (c & IMAGE_SCN_ALIGN_MASK) >> 20
	if n == 0 || n > 14 {
		return 0
	}
	return 1 << (n - 1)
}
