package ar

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
)

// TestWriteGNU writes an archive of objects that cc compiles, with a long
// name and an odd-sized member, reads it back, and links a program with it.
func TestWriteGNU(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		tooltest.Missing(t, "cc not found")
	}
	arTool, err := exec.LookPath("ar")
	if err != nil {
		tooltest.Missing(t, "ar not found")
	}
	dir := t.TempDir()
	srcs := map[string]string{
		"one.c":                          "int one(void) { return 1; }\n",
		"a_long_member_name_for_table.c": "int two(void) { return 2; }\nint three(void) { return 3; }\n",
	}
	var members []NewMember
	for _, name := range []string{"one.c", "a_long_member_name_for_table.c"} {
		src := filepath.Join(dir, name)
		if err := os.WriteFile(src, []byte(srcs[name]), 0o644); err != nil {
			t.Fatal(err)
		}
		obj := strings.TrimSuffix(src, ".c") + ".o"
		if msg, err := exec.Command(cc, "-c", src, "-o", obj).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, msg)
		}
		data, _ := os.ReadFile(obj)
		syms := []string{"one"}
		if name != "one.c" {
			syms = []string{"two", "three"}
		}
		members = append(members, NewMember{Name: filepath.Base(obj), Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data))), Symbols: syms})
	}
	odd := []byte("odd")
	members = append(members, NewMember{Name: "odd.txt", Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader(odd), 0, 3)})
	var buf bytes.Buffer
	if err := WriteGNU(&buf, members); err != nil {
		t.Fatal(err)
	}
	a, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := a.Symbols()
	if err != nil || len(syms) != 3 || a.Index() != IndexSysV {
		t.Fatalf("symbols %v, %v, index %v", syms, err, a.Index())
	}
	for _, s := range syms {
		want := map[string]string{"one": "one.o", "two": "a_long_member_name_for_table.o", "three": "a_long_member_name_for_table.o"}[s.Name]
		if got := a.Members()[s.Member].Name; got != want {
			t.Errorf("symbol %s in %s, want %s", s.Name, got, want)
		}
	}
	lib := filepath.Join(dir, "libx.a")
	if err := os.WriteFile(lib, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := binutilsCommand(arTool, "t", lib).CombinedOutput()
	if err != nil || string(list) != "one.o\na_long_member_name_for_table.o\nodd.txt\n" {
		t.Errorf("ar t: %v\n%s", err, list)
	}
	main := filepath.Join(dir, "main.c")
	os.WriteFile(main, []byte("int one(void), three(void);\nint main(void) { return one() + three() == 4 ? 0 : 1; }\n"), 0o644)
	exe := filepath.Join(dir, "main")
	if msg, err := exec.Command(cc, main, "-L"+dir, "-lx", "-o", exe).CombinedOutput(); err != nil {
		t.Fatalf("link against the archive: %v\n%s", err, msg)
	}
	if err := exec.Command(exe).Run(); err != nil {
		t.Errorf("program: %v", err)
	}
}

// TestWriteGNUMatchesLLVMAr writes the archive that llvm-ar makes of the
// same files (deterministic: dates and owners 0), byte for byte: the symbol
// index and long-name table padded as LLVM pads them, an odd-sized member.
func TestWriteGNUMatchesLLVMAr(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		tooltest.Missing(t, "cc not found")
	}
	llvmAr := tooltest.Tool(t, "llvm-ar", 19)
	dir := t.TempDir()
	files := []struct{ name, src string }{
		{"one.o", "int one(void) { return 1; }\n"},
		{"a_long_member_name_for_table.o", "int two(void) { return 2; }\nint three(void) { return 3; }\n"},
		{"odd.txt", ""},
		{"x.o", "int four_x;\n"},
	}
	syms := map[string][]string{"one.o": {"one"}, "a_long_member_name_for_table.o": {"two", "three"}, "x.o": {"four_x"}}
	var members []NewMember
	var names []string
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if f.src == "" {
			os.WriteFile(path, []byte("odd"), 0o644)
		} else {
			src := path + ".c"
			os.WriteFile(src, []byte(f.src), 0o644)
			if msg, err := exec.Command(cc, "-c", src, "-o", path).CombinedOutput(); err != nil {
				t.Fatalf("%v\n%s", err, msg)
			}
		}
		data, _ := os.ReadFile(path)
		st, _ := os.Stat(path)
		members = append(members, NewMember{Name: f.name, Mode: uint32(st.Mode().Perm()), Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data))), Symbols: syms[f.name]})
		names = append(names, f.name)
	}
	lib := filepath.Join(dir, "llvm.a")
	cmd := exec.Command(llvmAr, append([]string{"rcs", lib}, names...)...)
	cmd.Dir = dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	want, _ := os.ReadFile(lib)
	var got bytes.Buffer
	if err := WriteGNU(&got, members); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("WriteGNU differs from llvm-ar: %d and %d bytes", got.Len(), len(want))
	}
}
