package elfobj

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
)

func readFile(t *testing.T, path string) (*File, []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f, data
}

// TestSymbolsKeepTrueIndices: the null symbol is at 0 and every symbol at the
// index relocations use; debug/elf agrees one index lower.
func TestSymbolsKeepTrueIndices(t *testing.T) {
	f, data := readFile(t, hostObject("22"))
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != len(want)+1 || syms[0] != (FileSymbol{}) {
		t.Fatalf("%d symbols, debug/elf has %d without the null one", len(syms), len(want))
	}
	for i, w := range want {
		s := syms[i+1]
		if s.Index != i+1 || s.Name != w.Name || s.Info != w.Info || s.Other != w.Other || s.Section != w.Section || s.Value != w.Value || s.Size != w.Size {
			t.Errorf("symbol %d: %+v, debug/elf %+v", i+1, s, w)
		}
	}
}

type relocLine struct {
	offset uint64
	typ    string
	sym    string
	addend int64
}

// readelfRelocs runs `llvm-readelf -r --wide` once on all files and parses
// what it prints of each: relocation section name to its relocations.
func readelfRelocs(t *testing.T, readelf string, files ...string) map[string]map[string][]relocLine {
	t.Helper()
	all := map[string]map[string][]relocLine{}
	for file, out := range readelfFiles(t, readelf, []string{"-r", "--wide"}, files...) {
		all[file] = parseRelocs(out)
	}
	return all
}

// parseRelocs parses what `llvm-readelf -r --wide` prints of one file.
func parseRelocs(out string) map[string][]relocLine {
	m := map[string][]relocLine{}
	var cur string
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "Relocation section '"); ok {
			cur = rest[:strings.IndexByte(rest, '\'')]
			m[cur] = []relocLine{}
			continue
		}
		fs := strings.Fields(line)
		if cur == "" || len(fs) < 3 || fs[0] == "Offset" {
			continue
		}
		off, err1 := strconv.ParseUint(fs[0], 16, 64)
		info, err2 := strconv.ParseUint(fs[1], 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		r := relocLine{offset: off, typ: fs[2]}
		rest := fs[3:]
		if info>>32 != 0 && len(rest) >= 2 {
			r.sym, _, _ = strings.Cut(rest[1], "@")
			rest = rest[2:]
		}
		sign := int64(1)
		if len(rest) == 2 && rest[0] == "-" {
			sign = -1
		}
		if len(rest) > 0 {
			v, _ := strconv.ParseUint(rest[len(rest)-1], 16, 64)
			r.addend = sign * int64(v)
		}
		m[cur] = append(m[cur], r)
	}
	return m
}

// readelfTypeNames are LLVM's names of types that debug/elf spells otherwise.
var readelfTypeNames = map[string]string{"R_X86_64_JMP_SLOT": "R_X86_64_JUMP_SLOT"}

func checkRelocs(t *testing.T, f *File, name string, got []FileReloc, want []relocLine) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d relocations, llvm-readelf shows %d", name, len(got), len(want))
	}
	for i, r := range got {
		sym := ""
		if r.Symbol != nil {
			sym = r.Symbol.Name
			if r.Symbol.Type() == elf.STT_SECTION && int(r.Symbol.Section) < len(f.Sections) {
				sym = f.Sections[r.Symbol.Section].Name
			}
		}
		typ := RelocTypeOf(f.Machine, r.Type).String()
		if alias, ok := readelfTypeNames[typ]; ok {
			typ = alias
		}
		if w := want[i]; r.Offset != w.offset || typ != w.typ || sym != w.sym || r.Addend != w.addend {
			t.Errorf("%s %d: %#x %s %q %+d; llvm-readelf: %#x %s %q %+d", name, i, r.Offset, typ, sym, r.Addend, w.offset, w.typ, w.sym, w.addend)
		}
	}
}

// TestRelocationsAsReadelf compares the relocations of LLVM-made objects,
// resolved to symbols, with llvm-readelf -r.
func TestRelocationsAsReadelf(t *testing.T) {
	readelf := tooltest.Tool(t, "llvm-readelf", 19)
	paths := []string{hostObject("15"), hostObject("22"),
		filepath.Join("..", "offload", "testdata", "llvm", "wrapper", "openmp-wrapper-llvm19.o")}
	all := readelfRelocs(t, readelf, paths...)
	for _, path := range paths {
		f, _ := readFile(t, path)
		want := all[path]
		n := 0
		for _, s := range f.SectionsByType(elf.SHT_RELA) {
			got, err := f.Relocations(s)
			if err != nil {
				t.Fatal(err)
			}
			checkRelocs(t, f, filepath.Base(path)+":"+s.Name, got, want[s.Name])
			n++
		}
		if n != len(want) || n == 0 {
			t.Errorf("%s: %d relocation sections, llvm-readelf shows %d", path, n, len(want))
		}
	}
}

// TestDynamicRelocationsAsReadelf links a PIE, an executable and a shared
// object (see dynBuild) and compares their dynamic relocations with
// llvm-readelf -r, run once for the three.
func TestDynamicRelocationsAsReadelf(t *testing.T) {
	readelf := tooltest.Tool(t, "llvm-readelf", 19)
	cases := []struct {
		name string
		typ  elf.Type
	}{{"pie", elf.ET_DYN}, {"nopie", elf.ET_EXEC}, {"so", elf.ET_DYN}}
	var outs []string
	for _, c := range cases {
		outs = append(outs, dynBuild(t, c.name))
	}
	all := readelfRelocs(t, readelf, outs...)
	for i, c := range cases {
		out := outs[i]
		f, _ := readFile(t, out)
		if f.Type != c.typ {
			t.Errorf("%s: type %v", c.name, f.Type)
		}
		got, err := f.DynamicRelocations()
		if err != nil {
			t.Fatal(err)
		}
		want := all[out]
		var alloc []relocLine
		for _, s := range f.Sections[1:] {
			if s.Flags&elf.SHF_ALLOC != 0 {
				alloc = append(alloc, want[s.Name]...)
			}
		}
		if len(got) == 0 {
			t.Errorf("%s: no dynamic relocations", c.name)
		}
		checkRelocs(t, f, c.name, got, alloc)
		if syms, err := f.DynamicSymbols(); err != nil || len(syms) < 2 || syms[0] != (FileSymbol{}) {
			t.Errorf("%s: dynamic symbols %d, %v", c.name, len(syms), err)
		}
	}
}

// TestReadMalformed cuts and corrupts an object: every result is an object or
// an error, never a panic, and a section past the end is an goffload.ErrInvalid error.
func TestReadMalformed(t *testing.T) {
	_, data := readFile(t, hostObject("19"))
	for n := 0; n < len(data); n += 7 {
		if f, err := Read(bytes.NewReader(data[:n]), int64(n)); err == nil {
			exercise(f)
		}
	}
	shoff := int(le64(data[0x28:]))
	bad := bytes.Clone(data)
	// Section 1's sh_size: far past the end.
	copy(bad[shoff+64+32:], []byte{0, 0, 0, 0, 0, 0, 0, 0x10})
	if _, err := Read(bytes.NewReader(bad), int64(len(bad))); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("section past the end: %v, want goffload.ErrInvalid", err)
	}
}

func le64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// exercise calls every reader of f and, for a relocatable object, loads it
// and writes it back; it returns the first error, or a *writeBackError when
// an object that was written cannot be read again.
func exercise(f *File) error {
	if _, err := f.Symbols(); err != nil {
		return err
	}
	if _, err := f.DynamicSymbols(); err != nil {
		return err
	}
	if _, err := f.Needed(); err != nil {
		return err
	}
	for _, s := range f.Sections[1:] {
		if s.Type == elf.SHT_RELA || s.Type == elf.SHT_REL {
			if _, err := f.Relocations(s); err != nil {
				return err
			}
		}
	}
	if f.Type != elf.ET_REL {
		return nil
	}
	o, err := f.Object()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if _, err := Write(&buf, o); err != nil {
		return err
	}
	g, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err == nil {
		_, err = g.Object()
	}
	if err != nil {
		return &writeBackError{err}
	}
	return nil
}

type writeBackError struct{ err error }

func (e *writeBackError) Error() string { return "reading back what was written: " + e.err.Error() }

// FuzzRead: any input gives a file or an error, never a panic, whatever
// the writer writes from a loaded object reads back, and reading, loading,
// writing and reading back allocate within tooltest.CheckAllocs's bound.
func FuzzRead(f *testing.F) {
	for _, glob := range []string{"../offload/testdata/llvm/host-objects/*.o", "../offload/testdata/llvm/wrapper/*.o"} {
		files, _ := filepath.Glob(glob)
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var err error
		tooltest.CheckAllocs(t, len(data), tooltest.AllocsPerByte, tooltest.AllocsFixed, func() {
			var file *File
			if file, err = Read(bytes.NewReader(data), int64(len(data))); err == nil {
				err = exercise(file)
			}
		})
		var wb *writeBackError
		if errors.As(err, &wb) {
			t.Fatal(err)
		}
		// checkTables refuses first, at the field at fault, whatever
		// debug/elf would refuse.
		if _, rerr := Read(bytes.NewReader(data), int64(len(data))); rerr != nil && strings.Contains(rerr.Error(), "debug/elf refuses it") {
			t.Fatal(rerr)
		}
	})
}

// TestReadArgumentErrors: a nil reader or a negative size is the caller's
// mistake, an argument error, not malformed input.
func TestReadArgumentErrors(t *testing.T) {
	_, data := readFile(t, hostObject("19"))
	for _, c := range []struct {
		name string
		r    io.ReaderAt
		size int64
	}{
		{"nil reader", nil, 100},
		{"nil reader, size 0", nil, 0},
		{"negative size", bytes.NewReader(data), -1},
		{"very negative size", bytes.NewReader(data), -1 << 62},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Read(c.r, c.size)
			if f != nil || !errors.Is(err, fs.ErrInvalid) || errors.Is(err, goffload.ErrInvalid) {
				t.Errorf("Read: %v, %v; want an argument error (fs.ErrInvalid), not goffload.ErrInvalid", f, err)
			}
		})
	}
}

// TestReadCubinSharedMemory: a cubin of CUDA 13's ptxas whose .nv.shared.*
// section (type 0x7000000a) is 16 KiB that the file does not hold reads,
// that section empty, its size kept; a section of that type in an x86-64
// object is still checked against the file's end.
func TestReadCubinSharedMemory(t *testing.T) {
	f, data := readFile(t, filepath.Join("..", "offload", "testdata", "nvidia", "cuda-llvm22", "shared-rdc.sm_90.cubin"))
	var shared *FileSection
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".nv.shared.") {
			shared = s
		}
	}
	if shared == nil || shared.Type != cudaNoBits || shared.Size != 16384 || shared.Offset+shared.Size <= uint64(len(data)) {
		t.Fatalf(".nv.shared section %+v in a file of %d bytes", shared, len(data))
	}
	if b, err := shared.Data(); err != nil || len(b) != 0 {
		t.Errorf("Data = %d bytes, %v; want none", len(b), err)
	}
	if n, err := io.Copy(io.Discard, shared.Open()); err != nil || n != 0 {
		t.Errorf("Open read %d bytes, %v; want none", n, err)
	}
	// The same section header in an x86-64 file runs past its end.
	x86 := bytes.Clone(data)
	binary.LittleEndian.PutUint16(x86[18:], uint16(elf.EM_X86_64))
	if _, err := Read(bytes.NewReader(x86), int64(len(x86))); !errors.Is(err, goffload.ErrTruncated) || !strings.Contains(fmt.Sprint(err), ".nv.shared.") {
		t.Errorf("as x86-64: %v, want ErrTruncated", err)
	}
}
