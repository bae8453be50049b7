package coffobj_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/tooltest"
)

// sample is an x86-64 object with one of each thing the writer makes:
// code calling an undefined function, data pointing at a static symbol, a
// long section name, a `$`-grouped section, a COMDAT section with its
// leader and an associative one, uninitialized data, a weak external, a
// .file symbol and linker directives.
func sample() *coffobj.Object {
	o := &coffobj.Object{Machine: coffobj.MachineAMD64}
	text := &coffobj.Section{Name: ".text", Characteristics: coffobj.IMAGE_SCN_CNT_CODE | coffobj.IMAGE_SCN_MEM_EXECUTE | coffobj.IMAGE_SCN_MEM_READ, Align: 16,
		// sub $40,%rsp; call ext; add $40,%rsp; ret
		Data: []byte{0x48, 0x83, 0xec, 0x28, 0xe8, 0, 0, 0, 0, 0x48, 0x83, 0xc4, 0x28, 0xc3}}
	data := &coffobj.Section{Name: ".data", Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ | coffobj.IMAGE_SCN_MEM_WRITE, Align: 8,
		Data: make([]byte, 16)}
	long := &coffobj.Section{Name: ".rdata.a_long_name", Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ, Align: 4,
		Data: []byte("abcd1234")}
	grouped := &coffobj.Section{Name: "llvm_offload_entries$OE", Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ, Align: 8,
		Data: make([]byte, 8)}
	comdat := &coffobj.Section{Name: ".rdata", Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ, Align: 4,
		Data: []byte{1, 2, 3, 4}, Selection: 2}
	assoc := &coffobj.Section{Name: ".rdata$assoc", Characteristics: coffobj.IMAGE_SCN_CNT_INITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ, Align: 1,
		Data: []byte{5}, Selection: 5, Associative: comdat}
	bss := &coffobj.Section{Name: ".bss", Characteristics: coffobj.IMAGE_SCN_CNT_UNINITIALIZED_DATA | coffobj.IMAGE_SCN_MEM_READ | coffobj.IMAGE_SCN_MEM_WRITE, Align: 4, Size: 12}

	o.AddSection(text, nil)
	o.AddSection(data, nil)
	o.AddSection(long, nil)
	o.AddSection(grouped, nil)
	leader := &coffobj.Symbol{Name: "comdat_leader_symbol", Section: comdat, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
	o.AddSection(comdat, leader)
	o.AddSection(assoc, nil)
	o.AddSection(bss, nil)
	o.Sections = append(o.Sections, coffobj.Directives("/EXPORT:entry", "/INCLUDE:comdat_leader_symbol"))

	entry := &coffobj.Symbol{Name: "entry", Section: text, Type: 0x20, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
	ext := &coffobj.Symbol{Name: "external_function", Type: 0x20, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
	local := &coffobj.Symbol{Name: "local", Section: long, Value: 4, StorageClass: coffobj.IMAGE_SYM_CLASS_STATIC}
	table := &coffobj.Symbol{Name: "table", Section: data, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
	defaultSym := &coffobj.Symbol{Name: "weak.default", Section: bss, Value: 4, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL}
	weak := &coffobj.Symbol{Name: "weak_one", StorageClass: coffobj.IMAGE_SYM_CLASS_WEAK_EXTERNAL,
		Weak: &coffobj.WeakExternal{Default: defaultSym, Search: coffobj.IMAGE_WEAK_EXTERN_SEARCH_ALIAS}}
	file := &coffobj.Symbol{Name: ".file", Number: coffobj.IMAGE_SYM_DEBUG, StorageClass: coffobj.IMAGE_SYM_CLASS_FILE, File: "a_source_file_name_longer_than_18.c"}
	o.Symbols = append(o.Symbols, entry, ext, local, table, defaultSym, weak, file)
	text.Relocs = []coffobj.Reloc{{Offset: 5, Type: coffobj.IMAGE_REL_AMD64_REL32, Symbol: ext}}
	data.Relocs = []coffobj.Reloc{
		{Offset: 0, Type: coffobj.IMAGE_REL_AMD64_ADDR64, Symbol: local},
		{Offset: 8, Type: coffobj.IMAGE_REL_AMD64_ADDR64, Symbol: weak},
	}
	return o
}

func write(t *testing.T, o *coffobj.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := coffobj.Write(&b, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWriteReadsBackInLLVM checks the sample against llvm-readobj: every
// section, symbol, aux record and relocation as written.
func TestWriteReadsBackInLLVM(t *testing.T) {
	readobj := tooltest.Tool(t, "llvm-readobj", 22)
	path := filepath.Join(t.TempDir(), "s.obj")
	if err := os.WriteFile(path, write(t, sample()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(readobj, "--sections", "--symbols", "--relocs", "--section-data", path).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"Format: COFF-x86-64",
		"Name: .rdata.a_long_name (2F",
		"Name: llvm_offload_entries$OE (2F",
		"IMAGE_SCN_LNK_COMDAT (0x1000)",
		"Selection: Any (0x2)",
		"Selection: Associative (0x5)",
		"AssocSection: .rdata (5)",
		"0x5 IMAGE_REL_AMD64_REL32 external_function",
		"0x0 IMAGE_REL_AMD64_ADDR64 local",
		"0x8 IMAGE_REL_AMD64_ADDR64 weak_one",
		"Linked: weak.default (",
		"Search: Alias (0x3)",
		"FileName: a_source_file_name_longer_than_18.c",
		"| /EXPORT:entry /|",
		"IMAGE_SCN_LNK_INFO (0x200)",
		"RawDataSize: 12", // .bss
		"Checksum: 0x",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("llvm-readobj does not show %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "warning") || strings.Contains(text, "error") {
		t.Errorf("llvm-readobj complains:\n%s", text)
	}
}

// TestWriteChecksumsAreLLVMs writes the sections of a clang-made object
// back and compares the checksums of the section definitions with
// clang's: the JamCRC that LLVM's WinCOFFObjectWriter computes.
func TestWriteChecksumsAreLLVMs(t *testing.T) {
	obj := clangObject(t, "c", "int table[4] = {1, 2, 3, 4}; int f(int x) { return table[x] * 7; }", "--target=x86_64-pc-windows-msvc")
	f := readFile(t, obj)
	o, err := f.Object()
	if err != nil {
		t.Fatal(err)
	}
	back := readFile(t, write(t, o))
	want, got := checksums(t, f), checksums(t, back)
	if len(want) == 0 {
		t.Fatal("no section definitions in clang's object")
	}
	for name, sum := range want {
		if got[name] != sum {
			t.Errorf("section %s: checksum %#x, clang's %#x", name, got[name], sum)
		}
	}
}

func checksums(t *testing.T, f *coffobj.File) map[string]uint32 {
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint32{}
	for _, s := range syms {
		if d, ok := s.SectionDefinition(); ok {
			out[s.Name] = d.Checksum
		}
	}
	return out
}

func readFile(t *testing.T, b []byte) *coffobj.File {
	t.Helper()
	f, err := coffobj.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// clangObject compiles src (in language lang) with clang-22 and args and
// returns the object.
func clangObject(t *testing.T, lang, src string, args ...string) []byte {
	t.Helper()
	clang := tooltest.Tool(t, "clang", 22)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in."+lang), filepath.Join(dir, "out.obj")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := append(append([]string{}, args...), "-c", in, "-o", out)
	if msg, err := exec.Command(clang, argv...).CombinedOutput(); err != nil {
		t.Fatalf("clang %v: %v\n%s", argv, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWriteLinksWithLLD links the sample into a DLL with lld-link and
// checks that the linker resolved it: the exported entry, the COMDAT kept,
// the data's pointers at the addresses of their symbols.
func TestWriteLinksWithLLD(t *testing.T) {
	lld := tooltest.Tool(t, "lld-link", 22)
	dir := t.TempDir()
	obj, ext, dll := filepath.Join(dir, "s.obj"), filepath.Join(dir, "ext.obj"), filepath.Join(dir, "s.dll")
	if err := os.WriteFile(obj, write(t, sample()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ext, write(t, externalFunction()), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(lld, "/dll", "/noentry", "/nodefaultlib", "/out:"+dll, obj, ext).CombinedOutput(); err != nil {
		t.Fatalf("lld-link: %v\n%s", err, msg)
	}
	checkLinked(t, dll)
}

// TestWriteLinksWithMinGW links the sample with the MinGW-w64 GNU linker.
func TestWriteLinksWithMinGW(t *testing.T) {
	ld := tooltest.Program(t, "x86_64-w64-mingw32-ld")
	dir := t.TempDir()
	obj, ext, dll := filepath.Join(dir, "s.obj"), filepath.Join(dir, "ext.obj"), filepath.Join(dir, "s.dll")
	if err := os.WriteFile(obj, write(t, sample()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ext, write(t, externalFunction()), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(ld, "--shared", "-e", "0", "-o", dll, obj, ext).CombinedOutput(); err != nil {
		t.Fatalf("ld: %v\n%s", err, msg)
	}
	checkLinked(t, dll)
}

// externalFunction is an object defining external_function (ret).
func externalFunction() *coffobj.Object {
	o := &coffobj.Object{Machine: coffobj.MachineAMD64}
	text := &coffobj.Section{Name: ".text", Characteristics: coffobj.IMAGE_SCN_CNT_CODE | coffobj.IMAGE_SCN_MEM_EXECUTE | coffobj.IMAGE_SCN_MEM_READ, Align: 16, Data: []byte{0xc3}}
	o.AddSection(text, nil)
	o.Symbols = append(o.Symbols, &coffobj.Symbol{Name: "external_function", Section: text, Type: 0x20, StorageClass: coffobj.IMAGE_SYM_CLASS_EXTERNAL})
	return o
}

// checkLinked reads the linked DLL: its .data holds the address of local
// (.rdata.a_long_name+4: "1234") and of weak_one's default in .bss.
func checkLinked(t *testing.T, dll string) {
	t.Helper()
	b, err := os.ReadFile(dll)
	if err != nil {
		t.Fatal(err)
	}
	f := readFile(t, b)
	if !f.Image {
		t.Fatal("the DLL does not read as a PE image")
	}
	data := f.Section(".data")
	if data == nil {
		t.Fatalf("no .data in the DLL: %v", names(f))
	}
	d, err := data.Data()
	if err != nil || len(d) < 16 {
		t.Fatalf(".data: %d bytes, %v", len(d), err)
	}
	base := imageBase(t, b)
	p := binary.LittleEndian.Uint64(d) - base
	var found bool
	for _, s := range f.Sections {
		if uint64(s.VirtualAddress) <= p && p+4 <= uint64(s.VirtualAddress)+uint64(s.FileSize()) {
			sd, _ := s.Data()
			got := string(sd[p-uint64(s.VirtualAddress):][:4])
			if got != "1234" {
				t.Errorf("the pointer to local leads to %q in %s, want \"1234\"", got, s.Name)
			}
			found = true
		}
	}
	if !found {
		t.Errorf("the pointer to local (RVA %#x) is in no section with bytes: %v", p, names(f))
	}
	if w := binary.LittleEndian.Uint64(d[8:]); w == 0 {
		t.Errorf("the pointer to weak_one was not relocated")
	}
}

func imageBase(t *testing.T, b []byte) uint64 {
	off := binary.LittleEndian.Uint32(b[0x3c:]) + 4 + 20
	if binary.LittleEndian.Uint16(b[off:]) != 0x20b {
		t.Fatal("not a PE32+ image")
	}
	return binary.LittleEndian.Uint64(b[off+24:])
}

func names(f *coffobj.File) []string {
	var out []string
	for _, s := range f.Sections {
		out = append(out, s.Name)
	}
	return out
}
