package offload

// The sections of a Mach-O (macOS) host's offloading, as LLVM main names
// them (docs/macho.md#device-code): a section is "segment,section".
const (
	// MachOEntriesSegment and MachOEntriesSection hold the offload entries
	// (getOffloadEntrySection in llvm/Frontend/Offloading/Utility.h), where
	// ELF and COFF have llvm_offload_entries.
	MachOEntriesSegment = "__LLVM"
	MachOEntriesSection = "offload_entries"
)

// MachOFatbinSections returns the Mach-O sections of kind k's fatbin and
// of its 24-byte wrapper, as clang and main's offload wrapper name them
// for macOS (__HIP,__hip_fatbin and __HIP,__fatbin; __NV_CUDA,__nv_fatbin
// and __NV_CUDA,__fatbin), or ok false for a kind without a fatbin.
func MachOFatbinSections(k OffloadKind) (fatbin, wrapper string, ok bool) {
	switch k {
	case OffloadHIP:
		return "__HIP,__hip_fatbin", "__HIP,__fatbin", true
	case OffloadCUDA:
		return "__NV_CUDA,__nv_fatbin", "__NV_CUDA,__fatbin", true
	}
	return "", "", false
}
