package offloadbinary

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

const shtLLVMOffloading = elf.SectionType(0x6fff4c0b)

// offloadingSection returns the SHT_LLVM_OFFLOADING section of an object that
// LLVM made, and the section's flags.
func offloadingSection(t *testing.T, rel string) ([]byte, elf.SectionFlag) {
	t.Helper()
	f, err := elf.Open(filepath.Join("..", "offload", "testdata", "llvm", rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type == shtLLVMOffloading {
			data, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			return data, s.Flags
		}
	}
	t.Fatalf("%s has no SHT_LLVM_OFFLOADING section", rel)
	return nil, 0
}

// TestRewriteEmbeddedBinaries reads the binaries that the releases embedded in
// objects and writes them again from their parts: the packager's (host
// objects, through the driver's --image argument) and clang-linker-wrapper's
// (wrapper objects, through LinkedImage) come out byte for byte.
func TestRewriteEmbeddedBinaries(t *testing.T) {
	for _, major := range []int{15, 16, 19, 22} {
		r := mustRelease(t, major)
		arch := r.Packager.OpenMPHostArch
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			host, flags := offloadingSection(t, fmt.Sprintf("host-objects/openmp-x86-llvm%d.o", major))
			if flags != elf.SectionFlag(0x80000000) {
				t.Errorf("host .llvm.offloading flags %v, want SHF_EXCLUDE", flags)
			}
			image := checkOneBinary(t, r, host)
			// The driver runs: clang-offload-packager --image=file=<tmp>.o,triple=...,arch=...,kind=openmp
			var buf bytes.Buffer
			arg := "file=dev.o,triple=x86_64-unknown-linux-gnu,arch=" + arch + ",kind=openmp"
			if _, err := Package(r, &buf, []string{arg}, memFiles(map[string][]byte{"dev.o": image})); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), host) {
				t.Errorf("packaged host binary differs at byte %d", firstDiff(buf.Bytes(), host))
			}

			wrapped, flags := offloadingSection(t, fmt.Sprintf("wrapper/openmp-wrapper-llvm%d.o", major))
			if flags != elf.SHF_ALLOC {
				t.Errorf("wrapper .llvm.offloading flags %v, want SHF_ALLOC", flags)
			}
			linked := checkOneBinary(t, r, wrapped)
			// The wrapper of 22 writes an empty arch although the input said "generic".
			im := LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "")
			got, err := MarshalBinary(r, &im, linked)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, wrapped) {
				t.Errorf("linked binary differs at byte %d", firstDiff(got, wrapped))
			}
		})
	}
}

// checkOneBinary reads the single binary of a section and returns its image.
func checkOneBinary(t *testing.T, r *release.Release, section []byte) []byte {
	t.Helper()
	bins, err := ReadAllBytes(section, &ReadOptions{Release: r})
	if err != nil {
		t.Fatal(err)
	}
	if len(bins) != 1 || len(bins[0].Images) != 1 {
		t.Fatalf("%d binaries", len(bins))
	}
	rd, err := bins[0].Open(0)
	if err != nil {
		t.Fatal(err)
	}
	image, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(image, []byte("\x7fELF")) {
		t.Errorf("image is not an ELF object")
	}
	return image
}

func firstDiff(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
