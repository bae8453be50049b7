package entries

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// emNoneObject returns an EM_NONE object holding an OffloadBinary in
// .llvm.offloading, and an entries section too when entries is true.
func emNoneObject(t *testing.T, entries bool) []byte {
	t.Helper()
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "nvptx64-nvidia-cuda", "sm_70")
	bin, err := offloadbinary.MarshalBinary(release.Default(), &im, []byte("device code"))
	if err != nil {
		t.Fatal(err)
	}
	o := &elfobj.Object{Data: elf.ELFDATA2LSB, Machine: elf.EM_NONE}
	o.AddSection(&elfobj.Section{Name: ".llvm.offloading", Type: elfobj.SHT_LLVM_OFFLOADING, Flags: elfobj.SHF_EXCLUDE, Addralign: 8, Data: bin}, false)
	if entries {
		o.AddSection(&elfobj.Section{Name: "llvm_offload_entries", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addralign: 8, Data: make([]byte, 56)}, false)
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestEMNoneWithoutEntries: an EM_NONE object with an .llvm.offloading
// section and no entries section has no entries (fatobj's TestEMNoneImage
// finds its image, as llvm-objdump --offloading lists it); with an entries
// section, the machine that cannot decode them is an error.
func TestEMNoneWithoutEntries(t *testing.T) {
	data := emNoneObject(t, false)
	f, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if ents, err := Read(f, release.Default()); err != nil || len(ents) != 0 {
		t.Errorf("Read: %v, %v; want no entries and no error", ents, err)
	}

	withEntries := emNoneObject(t, true)
	g, err := elfobj.Read(bytes.NewReader(withEntries), int64(len(withEntries)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(g, release.Default()); err == nil || !strings.Contains(err.Error(), "EM_NONE") {
		t.Errorf("Read with an entries section on EM_NONE: %v, want an error naming the machine", err)
	}

	// The oracle: llvm-objdump lists the same image.
	objdump := tooltest.Tool(t, "llvm-objdump", 19)
	path := filepath.Join(t.TempDir(), "none.o")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "--offloading", path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "sm_70") {
		t.Errorf("llvm-objdump-19 --offloading: %v\n%s", err, out)
	}
}
