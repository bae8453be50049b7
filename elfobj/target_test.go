package elfobj

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
)

// header64 returns the ELF64 header of a file of machine m with flags and
// EI_ABIVERSION abi, little-endian unless be.
func header64(m elf.Machine, flags uint32, abi byte, be bool) []byte {
	b := make([]byte, HeaderSize)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS], b[elf.EI_DATA], b[elf.EI_VERSION], b[elf.EI_ABIVERSION] = byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1, abi
	var bo binary.ByteOrder = binary.LittleEndian
	if be {
		b[elf.EI_DATA], bo = byte(elf.ELFDATA2MSB), binary.BigEndian
	}
	bo.PutUint16(b[16:], uint16(elf.ET_DYN))
	bo.PutUint16(b[18:], uint16(m))
	bo.PutUint32(b[20:], 1)
	bo.PutUint32(b[48:], flags)
	bo.PutUint16(b[52:], HeaderSize)
	return b
}

// TestTarget: the triple and processor of each kind of header, as
// clang-linker-wrapper 19 and 22 named them for --override-image (measured
// on files of each machine; the cubins are the CUDA 13 fixture's with their
// ABI version and flags changed).
func TestTarget(t *testing.T) {
	for _, c := range []struct {
		hdr         []byte
		triple, cpu string
	}{
		{header64(elf.EM_X86_64, 0, 0, false), "x86_64--", ""},
		{header64(elf.EM_AARCH64, 0, 0, false), "aarch64--", ""},
		{header64(elf.EM_AARCH64, 0, 0, true), "aarch64_be--", ""},
		{header64(elf.EM_PPC64, 2, 0, false), "powerpc64le--", "future"},
		{header64(elf.EM_RISCV, 5, 0, false), "riscv64--", ""},
		{header64(elf.EM_AMDGPU, 0x53f, 3, false), "amdgcn-amd-amdhsa", "gfx90a"},
		{header64(elf.EM_AMDGPU, 0x551, 4, false), "amdgcn-amd-amdhsa", "gfx9-generic"},
		{header64(EMCUDA, 0x5a055a, 7, false), "nvptx64-nvidia-amdpal", "sm_90"},
		{header64(EMCUDA, 0x5a0d5a, 7, false), "nvptx64-nvidia-amdpal", "sm_90a"},
		{header64(EMCUDA, 0x6005a04, 8, false), "nvptx64-nvidia-amdpal", "sm_90a"},
		{header64(EMCUDA, 0x6005004, 8, false), "nvptx64-nvidia-amdpal", "sm_80"},
	} {
		h, err := ReadHeader(bytes.NewReader(c.hdr))
		if err != nil {
			t.Fatal(err)
		}
		triple, cpu, err := h.Target()
		if err != nil || triple != c.triple || cpu != c.cpu {
			t.Errorf("%v %#x (ABI %d): %q %q %v, want %q %q", h.Machine, h.Flags, h.ABIVersion, triple, cpu, err, c.triple, c.cpu)
		}
	}
	if _, _, err := (Header{Class: elf.ELFCLASS64, Machine: elf.EM_S390}).Target(); !errors.Is(err, goffload.ErrUnsupported) {
		t.Errorf("s390x: %v, want ErrUnsupported", err)
	}
	if _, err := ReadHeader(bytes.NewReader([]byte("!<arch>\n"))); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("an archive: %v, want ErrInvalid", err)
	}
	if _, err := ReadHeader(bytes.NewReader(header64(elf.EM_X86_64, 0, 0, false)[:40])); !errors.Is(err, goffload.ErrTruncated) {
		t.Errorf("a header cut short: %v, want ErrTruncated", err)
	}
}

// TestAMDGPUProcessorsAsReadelf: the processor of every EF_AMDGPU_MACH of
// an amdgcn code object is the one llvm-readelf-22 prints, and one is named
// exactly where it names one.
func TestAMDGPUProcessorsAsReadelf(t *testing.T) {
	readelf := tooltest.Tool(t, "llvm-readelf", 22)
	dir := t.TempDir()
	var files []string
	for m := uint32(0x20); m < 0x100; m++ {
		f := filepath.Join(dir, fmt.Sprintf("mach%02x.o", m))
		if err := os.WriteFile(f, header64(elf.EM_AMDGPU, 0x500|m, 3, false), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out, err := exec.Command(readelf, append([]string{"-h"}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("llvm-readelf-22 -h: %v\n%s", err, out)
	}
	flags := regexp.MustCompile(`(?m)^File: .*mach([0-9a-f]{2})\.o$|^\s*Flags:\s*0x[0-9a-f]+(?:, ([a-z0-9-]+))?`)
	readelfNames := map[uint32]string{}
	var cur uint32
	for _, m := range flags.FindAllStringSubmatch(string(out), -1) {
		if m[1] != "" {
			fmt.Sscanf(m[1], "%x", &cur)
			continue
		}
		if m[2] != "" && m[2] != "xnack" && m[2] != "sramecc" {
			readelfNames[cur] = m[2]
		}
	}
	if len(readelfNames) < 50 {
		t.Fatalf("llvm-readelf-22 named %d processors, want 50 or more:\n%.2000s", len(readelfNames), out)
	}
	for m := uint32(0x20); m < 0x100; m++ {
		if got, want := amdgpuProcessors[m], readelfNames[m]; got != want {
			t.Errorf("EF_AMDGPU_MACH %#x: %q, llvm-readelf-22 says %q", m, got, want)
		}
	}
}
