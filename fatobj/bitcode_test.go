package fatobj

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

func bitcodeTestdata(name string) string { return filepath.Join("..", "bitcode", "testdata", name) }

func member(name string, data []byte) ar.NewMember {
	return ar.NewMember{Name: name, Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))}
}

func readTestFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenBitcode reads the binaries embedded in a bitcode module as
// LLVM's extractFromBitcode does (embedded.bc: the binary of packager
// single-llvm22.bin twice, and the two of multi-llvm22.bin), as images
// whose bytes are not in place in the file.
func TestOpenBitcode(t *testing.T) {
	f := openFile(t, bitcodeTestdata("embedded.bc"), nil)
	if f.Format != FormatBitcode || len(f.Objects) != 1 {
		t.Fatalf("%v, %d objects", f.Format, len(f.Objects))
	}
	o := f.Objects[0]
	if o.ELF != nil || o.Format != FormatBitcode || len(o.Binaries) != 4 || len(o.Images) != 4 {
		t.Fatalf("ELF %v, %v, %d binaries, %d images", o.ELF, o.Format, len(o.Binaries), len(o.Images))
	}
	globals := []string{"bin.single", "bin.multi", "bin.multi", "bin.single"}
	for i, b := range o.Binaries {
		if b.Global != globals[i] || b.Section != Section || b.FileOffset != -1 {
			t.Errorf("binary %d: @%s %q at %d", i, b.Global, b.Section, b.FileOffset)
		}
	}
	single, _ := offloadbinary.ReadAllBytes(readTestFile(t, llvmTestdata("packager", "single-llvm22.bin")), nil)
	want, _ := single[0].Open(0)
	wantBytes, _ := io.ReadAll(want)
	for i, im := range o.Images {
		if im.Source != SourceBitcode || im.Offset != -1 || im.Section != Section || im.Number() != string(rune('0'+i)) {
			t.Errorf("image %d: %v at %d in %q, number %s", i, im.Source, im.Offset, im.Section, im.Number())
		}
		r, err := im.Reader()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(r)
		if (i == 0 || i == 3) && !bytes.Equal(got, wantBytes) || int64(len(got)) != im.Size {
			t.Errorf("image %d: % x", i, got)
		}
	}
	if syms, err := o.BitcodeSymbols(); err == nil || syms != nil {
		t.Errorf("llvm-as writes no symbol table: %v, %v", syms, err)
	}
	// In an archive, beside an ELF fat object; in a bitcode wrapper.
	lib := archive(t, member("fat.o", readTestFile(t, llvmTestdata("host-objects", "openmp-x86-llvm22.o"))),
		member("embedded.o", readTestFile(t, bitcodeTestdata("embedded.bc"))),
		member("darwin.o", readTestFile(t, bitcodeTestdata("darwin.bc"))),
		member("symbols.o", readTestFile(t, bitcodeTestdata("x86_64-clang19.bc"))))
	g, err := NewFile("lib.a", bytes.NewReader(lib), int64(len(lib)), nil)
	if err != nil {
		t.Fatal(err)
	}
	var formats []string
	for _, o := range g.Objects {
		formats = append(formats, o.Member+":"+o.Format.String()+":"+string(rune('0'+len(o.Images))))
	}
	if got := strings.Join(formats, " "); got != "fat.o:elf:1 embedded.o:bitcode:4 darwin.o:bitcode:1 symbols.o:bitcode:0" {
		t.Errorf("members %s", got)
	}
	if syms, err := g.Objects[3].BitcodeSymbols(); err != nil || len(syms) != 4 {
		t.Errorf("symbols of a clang-19 bitcode member: %v, %v", syms, err)
	}
	if syms, err := g.Objects[0].BitcodeSymbols(); syms != nil || err != nil {
		t.Errorf("symbols of an ELF object: %v, %v", syms, err)
	}
}

// TestOpenBitcodeErrors: a bitcode member LLVM cannot read fails the file,
// naming the member, with the offset of the error in the archive.
func TestOpenBitcodeErrors(t *testing.T) {
	decl := readTestFile(t, bitcodeTestdata("declaration.bc"))
	lib := archive(t, member("ok.o", readTestFile(t, bitcodeTestdata("debuginfo.bc"))), member("decl.o", decl))
	_, err := NewFile("lib.a", bytes.NewReader(lib), int64(len(lib)), nil)
	var fe *goffload.FormatError
	if !errors.Is(err, goffload.ErrInvalid) || !strings.Contains(err.Error(), "decl.o") || !errors.As(err, &fe) ||
		fe.Offset <= int64(bytes.Index(lib, decl)) || fe.Offset >= int64(len(lib)) {
		t.Errorf("%v", err)
	}
	// Device code that is no OffloadBinary, as LLVM refuses it.
	_, err = Open(bitcodeTestdata("junk.bc"), nil)
	if !errors.Is(err, goffload.ErrInvalid) || !strings.Contains(err.Error(), "global @llvm.embedded.object") || !errors.As(err, &fe) || fe.Offset != -1 {
		t.Errorf("%v", err)
	}
}

// TestStripAndConvertBitcode: goffload does not rewrite bitcode. A strip
// that keeps every target of a bitcode object copies it; one that would
// drop some, and a conversion of one with device code, are unsupported.
func TestStripAndConvertBitcode(t *testing.T) {
	data := readTestFile(t, bitcodeTestdata("embedded.bc"))
	f, err := NewFile("embedded.bc", bytes.NewReader(data), int64(len(data)), nil)
	if err != nil {
		t.Fatal(err)
	}
	all := []Target{{Triple: "nvptx64-nvidia-cuda"}, {Triple: "amdgcn-amd-amdhsa"}}
	var out bytes.Buffer
	res, err := StripFile(&out, f, all)
	if err != nil || !bytes.Equal(out.Bytes(), data) || len(res) != 1 || res[0].Kept != 4 {
		t.Errorf("strip keeping all: %v, %+v, %d bytes", err, res, out.Len())
	}
	out.Reset()
	if _, err := StripFile(&out, f, all[:1]); !errors.Is(err, goffload.ErrUnsupported) || out.Len() != 0 {
		t.Errorf("strip dropping a target: %v", err)
	}
	if _, err := ConvertFile(&out, f, nil, release.Default()); !errors.Is(err, goffload.ErrUnsupported) || out.Len() != 0 {
		t.Errorf("convert: %v", err)
	}
	// Bitcode without device code converts as it is.
	plain := readTestFile(t, bitcodeTestdata("x86_64-clang19.bc"))
	g, err := NewFile("s.bc", bytes.NewReader(plain), int64(len(plain)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertFile(&out, g, nil, release.Default()); err != nil || !bytes.Equal(out.Bytes(), plain) {
		t.Errorf("convert of bitcode without device code: %v", err)
	}
	// In an archive: the bitcode member is kept as it is, or refused.
	lib := archive(t, member("fat.o", readTestFile(t, llvmTestdata("host-objects", "openmp-x86-llvm22.o"))), member("embedded.o", data))
	a, err := NewFile("lib.a", bytes.NewReader(lib), int64(len(lib)), nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	keep := append(all, Target{Triple: a.Objects[0].Images[0].Triple()})
	if _, err := StripFile(&out, a, keep); err != nil || !bytes.Contains(out.Bytes(), data) {
		t.Errorf("strip of an archive keeping all: %v", err)
	}
	out.Reset()
	if _, err := StripFile(&out, a, keep[1:]); !errors.Is(err, goffload.ErrUnsupported) || !strings.Contains(err.Error(), "embedded.o") || out.Len() != 0 {
		t.Errorf("strip of an archive dropping a bitcode member's target: %v", err)
	}
	if _, err := ConvertFile(&out, a, nil, release.Default()); !errors.Is(err, goffload.ErrUnsupported) || out.Len() != 0 {
		t.Errorf("convert of an archive: %v", err)
	}
}

// TestExtractBitcodeMatchesOffloadBinary: the images goffload extracts from
// bitcode modules and an archive of them are those llvm-offload-binary-22
// extracts, byte for byte, as many and in the same order (by name). The
// inputs × the selections are a matrix whose default sample
// ([tooltest.Sampled]) runs each input and each selection once; every cell
// when exhaustive.
func TestExtractBitcodeMatchesOffloadBinary(t *testing.T) {
	tool := tooltest.Tool(t, "llvm-offload-binary", 22)
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib.a")
	os.WriteFile(lib, archive(t, member("embedded.o", readTestFile(t, bitcodeTestdata("embedded.bc"))),
		member("debuginfo.o", readTestFile(t, bitcodeTestdata("debuginfo.bc"))),
		member("darwin.o", readTestFile(t, bitcodeTestdata("darwin.bc")))), 0o644)
	// In an order that gives each cell of the default sample something to
	// extract (darwin.bc has no HIP image).
	inputs := []string{bitcodeTestdata("darwin.bc"), bitcodeTestdata("embedded.bc"), lib}
	selections := []struct {
		tool   string
		filter Filter
	}{
		{"--image=kind=openmp", Filter{Kind: "openmp"}},
		{"--image=kind=hip", Filter{Kind: "hip"}},
		{"--image=triple=amdgcn-amd-amdhsa,arch=gfx90a", Filter{Strings: map[string]string{"triple": "amdgcn-amd-amdhsa", "arch": "gfx90a"}}},
	}
	for i, in := range inputs {
		f := openFile(t, in, nil)
		for j, sel := range selections {
			if !tooltest.Sampled(i, j, len(inputs), len(selections)) {
				continue
			}
			want, got := filepath.Join(dir, "want"), filepath.Join(dir, "got")
			os.RemoveAll(want)
			os.RemoveAll(got)
			os.MkdirAll(want, 0o755)
			abs, _ := filepath.Abs(in)
			cmd := exec.Command(tool, abs, sel.tool)
			cmd.Dir = want
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", in, sel.tool, err, out)
			}
			x, err := PlanExtract([]*File{f}, &ExtractOptions{Raw: true, Filter: sel.filter})
			if err != nil {
				t.Fatal(err)
			}
			if err := x.Write(got); err != nil {
				t.Fatal(err)
			}
			if w, g := listDir(t, want), listDir(t, got); w != g {
				t.Errorf("%s %s:\nllvm-offload-binary %s\ngoffload            %s", in, sel.tool, w, g)
			}
		}
	}
}

// listDir names the files of dir with their contents.
func listDir(t *testing.T, dir string) string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Name()+"="+string(data))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
