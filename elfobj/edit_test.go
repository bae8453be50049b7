package elfobj

import (
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

func loadObject(t *testing.T, path string) *Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.Object()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func writeObject(t *testing.T, o *Object, path string) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func hostObject(major string) string {
	return filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm"+major+".o")
}

// TestRemoveAndEmbedOffloading drops the device image from a host object and
// puts it back, as a build tool that moves images between objects does: the
// object without it has no image for llvm-objdump, and the object with it
// again links with clang-19 and offloads under libomptarget 19.
func TestRemoveAndEmbedOffloading(t *testing.T) {
	o := loadObject(t, hostObject("19"))
	off := o.Section(".llvm.offloading")
	if off == nil || off.Type != SHT_LLVM_OFFLOADING || off.Flags != SHF_EXCLUDE {
		t.Fatalf("no .llvm.offloading of type SHT_LLVM_OFFLOADING with SHF_EXCLUDE: %+v", off)
	}
	image, err := io.ReadAll(io.NewSectionReader(off.Reader, 0, off.Size))
	if err != nil {
		t.Fatal(err)
	}
	n, nsym := len(o.Sections), len(o.Symbols)
	if err := o.RemoveSection(off); err != nil {
		t.Fatal(err)
	}
	if len(o.Sections) != n-1 || len(o.Symbols) != nsym {
		t.Errorf("removed %d sections and %d symbols, want 1 and 0", n-len(o.Sections), nsym-len(o.Symbols))
	}
	dir := t.TempDir()
	stripped := filepath.Join(dir, "host.o")
	writeObject(t, o, stripped)
	objdump := tooltest.Tool(t, "llvm-objdump", 19)
	listing, err := exec.Command(objdump, "--offloading", stripped).CombinedOutput()
	if err != nil || strings.Contains(string(listing), "OFFLOADING IMAGE") {
		t.Errorf("llvm-objdump --offloading: %v\n%s", err, listing)
	}

	o.AddSection(&Section{Name: ".llvm.offloading", Type: SHT_LLVM_OFFLOADING, Flags: SHF_EXCLUDE, Addralign: 8, Data: image}, false)
	fat := filepath.Join(dir, "fat.o")
	writeObject(t, o, fat)
	if testing.Short() {
		return
	}
	runOpenMP(t, fat, dir)
}

// TestEmbedOffloading adds an OffloadBinary to an object as clang
// -fembed-offload-object does; llvm-objdump finds it.
func TestEmbedOffloading(t *testing.T) {
	objdump := tooltest.Tool(t, "llvm-objdump", 19)
	o := loadObject(t, hostObject("19"))
	if err := o.RemoveSection(o.Section(".llvm.offloading")); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(filepath.Join("..", "offload", "testdata", "llvm", "packager", "multi-llvm19.bin"))
	if err != nil {
		t.Fatal(err)
	}
	o.AddSection(&Section{Name: ".llvm.offloading", Type: SHT_LLVM_OFFLOADING, Flags: SHF_EXCLUDE, Addralign: 8, Data: bin}, false)
	out := filepath.Join(t.TempDir(), "fat.o")
	writeObject(t, o, out)
	listing, err := exec.Command(objdump, "--offloading", out).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, listing)
	}
	if !strings.Contains(string(listing), "OFFLOADING IMAGE [1]:\nkind            elf\narch            gfx90a") {
		t.Errorf("llvm-objdump --offloading printed\n%s", listing)
	}
}

// TestRenameEntries renames the entries section and its encapsulation symbols
// as the relocatable link of LLVM 19 does with llvm-objcopy
// (docs/registration.md#relocatable-link).
func TestRenameEntries(t *testing.T) {
	readelf := tooltest.Tool(t, "llvm-readelf", 19)
	o := loadObject(t, filepath.Join("..", "offload", "testdata", "llvm", "wrapper", "openmp-wrapper-llvm19.o"))
	host := loadObject(t, hostObject("19"))
	const suffix = "_dda59a650c241c86"
	sec := host.Section("omp_offloading_entries")
	if sec == nil || host.RelocationSection(sec) == nil {
		t.Fatal("host object has no omp_offloading_entries with relocations")
	}
	host.RenameSection(sec, sec.Name+suffix)
	for _, sym := range []string{"__start_omp_offloading_entries", "__stop_omp_offloading_entries"} {
		if n := o.RenameSymbols(sym, sym+suffix); n != 1 {
			t.Errorf("%d symbols named %s", n, sym)
		}
	}
	dir := t.TempDir()
	hostOut, wrapOut := filepath.Join(dir, "host.o"), filepath.Join(dir, "wrap.o")
	writeObject(t, host, hostOut)
	writeObject(t, o, wrapOut)
	// One llvm-readelf -S -s for both: the section headers of the host
	// object (what it prints before its symbol tables), the symbols of the
	// wrapper's.
	outs := readelfFiles(t, readelf, []string{"-S", "-s"}, hostOut, wrapOut)
	sections, _, _ := strings.Cut(outs[hostOut], "Symbol table '")
	_, symbols, _ := strings.Cut(outs[wrapOut], "Symbol table '")
	for _, want := range []string{"omp_offloading_entries" + suffix, ".relaomp_offloading_entries" + suffix} {
		if !strings.Contains(sections, want+" ") {
			t.Errorf("no section %s:\n%s", want, sections)
		}
	}
	if !strings.Contains(symbols, "__start_omp_offloading_entries"+suffix) {
		t.Errorf("no renamed symbol:\n%s", symbols)
	}
}

func TestRemoveSectionInUse(t *testing.T) {
	o := loadObject(t, hostObject("22"))
	text := o.Section(".text")
	before := len(o.Sections)
	if err := o.RemoveSection(text); !errors.Is(err, ErrInUse) {
		t.Errorf("removing .text: %v, want ErrInUse", err)
	}
	if len(o.Sections) != before {
		t.Errorf("a failed removal changed the object")
	}
	if err := o.RemoveSection(&Section{Name: "x"}); err == nil {
		t.Errorf("removing a foreign section succeeded")
	}
}

// TestRemoveGroupMember removes the members of a COMDAT group one by one; the
// group goes with the last.
func TestRemoveGroupMember(t *testing.T) {
	text := &Section{Name: ".text.f", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR | elf.SHF_GROUP, Data: []byte{0xc3}}
	data := &Section{Name: ".data.f", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE | elf.SHF_GROUP, Data: make([]byte, 8)}
	sig := &Symbol{Name: "f", Type: elf.STT_FUNC, Bind: elf.STB_WEAK, Section: text, Size: 1}
	group := &Section{Name: ".group", Type: elf.SHT_GROUP, Addralign: 4, Entsize: 4, Group: &Group{Signature: sig, Flags: GRP_COMDAT, Members: []*Section{text, data}}}
	o := &Object{Data: elf.ELFDATA2LSB, Machine: elf.EM_X86_64, Sections: []*Section{group, text, data}, Symbols: []*Symbol{sig}}
	if err := o.RemoveSection(data); err != nil {
		t.Fatal(err)
	}
	if len(o.Sections) != 2 || len(group.Group.Members) != 1 {
		t.Fatalf("after removing .data.f: %d sections, %d members", len(o.Sections), len(group.Group.Members))
	}
	if err := o.RemoveSection(text); !errors.Is(err, ErrInUse) {
		t.Errorf("removing the section of the signature symbol: %v, want ErrInUse", err)
	}
	var buf bytes.Buffer
	if _, err := Write(&buf, o); err != nil {
		t.Fatal(err)
	}
}
