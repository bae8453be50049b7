package fatobj

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/internal/tooltest"
)

// coffEmbedBinary is an OffloadBinary of two images made by
// clang-offload-packager-19.
var coffEmbedBinary = filepath.Join("..", "offload", "testdata", "llvm", "packager", "multi-llvm19.bin")

// TestEmbedCOFFAsClang: embedding into what clang-22 compiles for a Windows
// host gives, byte for byte, what clang-22 makes with
// -fembed-offload-object, for MSVC and MinGW hosts, x86-64 and AArch64,
// with DWARF debug information and without. (Not with CodeView: its
// LF_BUILDINFO record holds the compiler's command line, which names the
// flag.) The triples × the two kinds of debug information are a matrix
// whose default sample ([tooltest.Sample]) compiles each triple once and
// each kind at least once; every cell when exhaustive.
func TestEmbedCOFFAsClang(t *testing.T) {
	t.Parallel()
	clang := tooltest.Tool(t, "clang", 22)
	src, err := filepath.Abs(filepath.Join("testdata", "coff", "host.c"))
	if err != nil {
		t.Fatal(err)
	}
	bin, err := filepath.Abs(coffEmbedBinary)
	if err != nil {
		t.Fatal(err)
	}
	triples, debug := []string{"x86_64-pc-windows-msvc", "x86_64-w64-windows-gnu", "aarch64-pc-windows-msvc"}, []string{"-g0", "-gdwarf"}
	for i, triple := range triples {
		for j, g := range debug {
			t.Run(triple+g, func(t *testing.T) {
				tooltest.Sample(t, i, j, len(triples), len(debug))
				t.Parallel()
				dir := t.TempDir()
				compile := func(sub string, extra ...string) []byte {
					d := filepath.Join(dir, sub)
					if err := os.Mkdir(d, 0o755); err != nil {
						t.Fatal(err)
					}
					// The same name in each folder: CodeView records it.
					args := append([]string{"--target=" + triple, g, "-O1", "-mno-incremental-linker-compatible", "-fdebug-compilation-dir=.", "-c", src, "-o", "h.o"}, extra...)
					if err := runTool(d, clang, args...); err != nil {
						t.Fatal(err)
					}
					b, err := os.ReadFile(filepath.Join(d, "h.o"))
					if err != nil {
						t.Fatal(err)
					}
					return b
				}
				plain := compile("plain")
				want := compile("embed", "-Xclang", "-fembed-offload-object="+bin)
				f, err := coffobj.Read(bytes.NewReader(plain), int64(len(plain)))
				if err != nil {
					t.Fatal(err)
				}
				o, err := f.Object()
				if err != nil {
					t.Fatal(err)
				}
				if err := EmbedCOFF(o, sectionOf(t, bin)); err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if _, err := coffobj.Write(&got, o); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					gotPath := filepath.Join(dir, "got.o")
					os.WriteFile(gotPath, got.Bytes(), 0o644)
					t.Errorf("embedded object differs from clang's (%d bytes, clang's %d)%s", got.Len(), len(want),
						readobjDiff(t, gotPath, filepath.Join(dir, "embed", "h.o")))
				}
			})
		}
	}
}

// readobjDiff returns the first lines where llvm-readobj-22 prints the two
// objects differently, or "".
func readobjDiff(t *testing.T, a, b string) string {
	readobj := tooltest.Find("llvm-readobj", 22)
	if readobj == "" {
		return ""
	}
	dump := func(p string) []string {
		out, _ := exec.Command(readobj, "--file-headers", "--sections", "--symbols", "--relocations", "--section-data", p).CombinedOutput()
		return strings.Split(strings.ReplaceAll(string(out), p, "OBJ"), "\n")
	}
	x, y := dump(a), dump(b)
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] != y[i] {
			return fmt.Sprintf("\nfirst difference at line %d:\n  %s\n  ours:  %s\n  clang: %s", i+1, strings.Join(x[max(0, i-8):i], "\n  "), x[i], y[i])
		}
	}
	return ""
}

func sectionOf(t *testing.T, path string) *io.SectionReader {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return io.NewSectionReader(bytes.NewReader(b), 0, int64(len(b)))
}

// TestEmbedCOFFNewHost: binaries embedded into a new host object for each
// Windows triple are listed by llvm-objdump-22 --offloading (one command
// for the three objects) as in the binary itself, and a second embedding
// appends to the section.
func TestEmbedCOFFNewHost(t *testing.T) {
	objdump := tooltest.Tool(t, "llvm-objdump", 22)
	bin, err := Open(coffEmbedBinary, nil)
	if err != nil {
		t.Fatal(err)
	}
	images := len(bin.Images())
	bin.Close()
	dir := t.TempDir()
	triples := []string{"x86_64-pc-windows-msvc", "x86_64-w64-windows-gnu", "aarch64-pc-windows-msvc"}
	var paths []string
	for i, triple := range triples {
		o, err := NewCOFFHostObject(triple)
		if err != nil {
			t.Fatal(err)
		}
		if err := EmbedCOFF(o, sectionOf(t, coffEmbedBinary)); err != nil {
			t.Fatal(err)
		}
		if err := EmbedCOFF(o, sectionOf(t, coffEmbedBinary)); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("fat%d.o", i))
		var b bytes.Buffer
		if _, err := coffobj.Write(&b, o); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
		f, err := NewFile("fat.o", bytes.NewReader(b.Bytes()), int64(b.Len()), nil)
		if err != nil {
			t.Fatalf("%s: %v", triple, err)
		}
		if f.Format != FormatCOFF || len(f.Images()) != 2*images {
			t.Errorf("%s: read back as %v with %d images, want coff with %d", triple, f.Format, len(f.Images()), 2*images)
		}
	}
	got, err := exec.Command(objdump, append([]string{"--offloading"}, paths...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	listings := objdumpListings(string(got), paths)
	for i, triple := range triples {
		if n := strings.Count(listings[i], "OFFLOADING IMAGE"); n != 2*images {
			t.Errorf("%s: llvm-objdump lists %d images, want %d:\n%s", triple, n, 2*images, got)
		}
	}
	if _, err := NewCOFFHostObject("x86_64-unknown-linux-gnu"); !errors.Is(err, goffload.ErrUnsupported) {
		t.Errorf("NewCOFFHostObject of a Linux triple: %v, want ErrUnsupported", err)
	}
}

// objdumpListings splits what one llvm-objdump prints of the objects at
// paths into each one's, after its line "PATH:\tfile format ..."; a path
// without one has "".
func objdumpListings(out string, paths []string) []string {
	listings := make([]string, len(paths))
	cur := -1
	next := 0
	for _, line := range strings.SplitAfter(out, "\n") {
		if next < len(paths) && strings.HasPrefix(line, paths[next]+":\tfile format ") {
			cur, next = next, next+1
			continue
		}
		if cur >= 0 {
			listings[cur] += line
		}
	}
	return listings
}

// Make a fat object for a Windows host, as clang -fembed-offload-object
// makes one for x86_64-pc-windows-msvc.
func ExampleEmbedCOFF() {
	bin, err := os.ReadFile(coffEmbedBinary)
	if err != nil {
		fmt.Println(err)
		return
	}
	o, err := NewCOFFHostObject("x86_64-pc-windows-msvc")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := EmbedCOFF(o, io.NewSectionReader(bytes.NewReader(bin), 0, int64(len(bin)))); err != nil {
		fmt.Println(err)
		return
	}
	var out bytes.Buffer
	if _, err := coffobj.Write(&out, o); err != nil {
		fmt.Println(err)
		return
	}
	f, err := NewFile("fat.obj", bytes.NewReader(out.Bytes()), int64(out.Len()), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range o.Sections {
		fmt.Printf("%s %#x\n", s.Name, s.Characteristics)
	}
	for _, im := range f.Images() {
		fmt.Println(im.Triple(), im.Arch())
	}
	// Output:
	// .text 0x60000020
	// .data 0xc0000040
	// .bss 0xc0000080
	// .llvm.offloading 0x2000800
	// nvptx64-nvidia-cuda sm_70
	// amdgcn-amd-amdhsa gfx90a
}

// TestStripCOFF: stripping a Windows host object keeps the binaries of the
// targets kept, which llvm-objdump-22 then lists alone; stripping all of
// them removes .llvm.offloading; an llvm-lib archive of such objects is
// stripped member by member; a PE image is refused.
func TestStripCOFF(t *testing.T) {
	objdump := tooltest.Tool(t, "llvm-objdump", 22)
	o, err := NewCOFFHostObject("x86_64-pc-windows-msvc")
	if err != nil {
		t.Fatal(err)
	}
	if err := EmbedCOFF(o, sectionOf(t, coffEmbedBinary)); err != nil {
		t.Fatal(err)
	}
	var fat bytes.Buffer
	if _, err := coffobj.Write(&fat, o); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	open := func(b []byte) *File {
		t.Helper()
		f, err := NewFile("fat.obj", bytes.NewReader(b), int64(len(b)), nil)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	keep := []Target{{Triple: "amdgcn-amd-amdhsa", Arch: "gfx90a"}}
	var out bytes.Buffer
	res, err := StripFile(&out, open(fat.Bytes()), keep)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Kept != 1 || res[0].Dropped != 1 {
		t.Errorf("StripFile did %v, want one object with 1 binary kept and 1 dropped", res)
	}
	path := filepath.Join(dir, "stripped.obj")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	listing, err := exec.Command(objdump, "--offloading", path).CombinedOutput()
	if err != nil || strings.Count(string(listing), "OFFLOADING IMAGE") != 1 || !strings.Contains(string(listing), "arch            gfx90a") {
		t.Errorf("llvm-objdump --offloading of the stripped object: %v\n%s", err, listing)
	}

	// Dropping every binary removes the section and its symbol.
	o2, err := NewCOFFHostObject("x86_64-pc-windows-msvc")
	if err != nil {
		t.Fatal(err)
	}
	if err := EmbedCOFF(o2, sectionOf(t, coffEmbedBinary)); err != nil {
		t.Fatal(err)
	}
	st, err := StripCOFF(o2, nil, []Target{{Triple: "x86_64-pc-linux-gnu"}})
	if err != nil || st.Kept != 0 || st.Dropped != 2 || o2.Section(Section) != nil || o2.Symbol(Section) != nil {
		t.Errorf("StripCOFF keeping nothing: %+v, %v; section left: %v", st, err, o2.Section(Section) != nil)
	}
	if _, err := StripCOFF(o2, nil, keep); err != ErrNoOffloading {
		t.Errorf("StripCOFF of an object without device code: %v, want ErrNoOffloading", err)
	}

	// An llvm-lib archive of two such objects.
	if lib := tooltest.Find("llvm-lib", 22); lib != "" {
		for _, n := range []string{"a.obj", "b.obj"} {
			os.WriteFile(filepath.Join(dir, n), fat.Bytes(), 0o644)
		}
		cmd := exec.Command(lib, "/out:fat.lib", "a.obj", "b.obj")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("llvm-lib: %v\n%s", err, b)
		}
		f, err := Open(filepath.Join(dir, "fat.lib"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out.Reset()
		res, err := StripFile(&out, f, keep)
		if err != nil || len(res) != 2 {
			t.Fatalf("StripFile of the archive: %v, %v", res, err)
		}
		path := filepath.Join(dir, "stripped.lib")
		os.WriteFile(path, out.Bytes(), 0o644)
		listing, err := exec.Command(objdump, "--offloading", path).CombinedOutput()
		if err != nil || strings.Count(string(listing), "OFFLOADING IMAGE") != 2 || strings.Contains(string(listing), "sm_70") {
			t.Errorf("llvm-objdump --offloading of the stripped archive: %v\n%s", err, listing)
		}
	} else if tooltest.Required() {
		t.Error("llvm-lib-22 not found")
	}
}
