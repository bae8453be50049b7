package bitcode

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/google/go-cmp/cmp"
)

// embeddedOf returns the embedded objects of the file at path.
func embeddedOf(t *testing.T, path string) ([]Embedded, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return EmbeddedObjects(bytes.NewReader(data), int64(len(data)))
}

func packagerBinary(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "offload", "testdata", "llvm", "packager", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func le(w int, vals ...uint64) []byte {
	var b []byte
	for _, v := range vals {
		b = appendLE(b, v, w)
	}
	return b
}

// TestEmbeddedObjectsOfFixtures reads the modules of testdata, made by
// llvm-as-19 from the .ll beside them, whose comments say what LLVM reads.
func TestEmbeddedObjectsOfFixtures(t *testing.T) {
	single, multi := packagerBinary(t, "single-llvm22.bin"), packagerBinary(t, "multi-llvm22.bin")
	test := func(s string) []byte { return []byte(s) }
	for _, c := range []struct {
		file string
		want []Embedded
	}{
		{"embedded.bc", []Embedded{
			{"bin.single", OffloadingSection, single},
			{"lto.junk", ".llvm.lto", test("junk")},
			{"bin.multi", OffloadingSection, multi},
			{"bin.single", OffloadingSection, single},
		}},
		{"elements.bc", []Embedded{
			{"str", ".test", test("\x01\x00\xff")},
			{"cstr6", ".test", test("hello\x00")},
			{"cstr7", ".test", test("Hello, World!\x00")},
			{"cstr8", ".test", test("\xc3\xa9\x00")},
			{"i16s", ".test", le(2, 1, 0xfffe)},
			{"i32s", ".test", le(4, 1, 0xfffffffe)},
			{"i64s", ".test", le(8, 1, 0xfffffffffffffffe)},
			{"halfs", ".test", le(2, 0x3c00, 0xc000)},
			{"bfloats", ".test", le(2, 0x3f80)},
			{"floats", ".test", le(4, 0x3f800000, 0xc0000000)},
			{"doubles", ".test", le(8, 0x3ff8000000000000)},
			{"vec", ".test", test("\x01\x02\x03\x04")},
		}},
		{"debuginfo.bc", []Embedded{{"llvm.embedded.object", OffloadingSection, single}}},
		{"darwin.bc", []Embedded{{"llvm.embedded.object", OffloadingSection, single}}},
	} {
		got, err := embeddedOf(t, filepath.Join("testdata", c.file))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: want (-), got (+):\n%s", c.file, diff)
		}
	}
	// An object listed twice is decoded once.
	got, _ := embeddedOf(t, filepath.Join("testdata", "embedded.bc"))
	if len(got) == 4 && &got[0].Data[0] != &got[3].Data[0] {
		t.Error("the object listed twice was decoded twice")
	}
	if head, _ := os.ReadFile(filepath.Join("testdata", "darwin.bc")); binary.LittleEndian.Uint32(head) != wrapperMagic {
		t.Error("darwin.bc is not in a bitcode wrapper")
	}
}

// TestEmbeddedObjectsRefusesWhatLLVMCannotRead: a global of
// .llvm.offloading without an initializer (on which llvm-offload-binary-22
// crashes) is invalid; a debug-information node as an operand, whose
// operands goffload does not lay out as LLVM does, is unsupported.
func TestEmbeddedObjectsRefusesWhatLLVMCannotRead(t *testing.T) {
	for file, want := range map[string]error{"declaration.bc": goffload.ErrInvalid, "dinode.bc": goffload.ErrUnsupported} {
		got, err := embeddedOf(t, filepath.Join("testdata", file))
		var fe *goffload.FormatError
		if got != nil || !errors.Is(err, want) || !errors.As(err, &fe) || fe.Offset <= 0 {
			t.Errorf("%s: %v, %v (want an error matching %v at its offset)", file, got, err, want)
		}
	}
}

// TestEmbeddedObjectsOfCutFiles: a module cut anywhere inside its blocks is
// an error matching ErrTruncated (and ErrInvalid), with its offset.
func TestEmbeddedObjectsOfCutFiles(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "embedded.bc"))
	if err != nil {
		t.Fatal(err)
	}
	for cut := 5; cut < len(data)-200; cut += 7 {
		got, err := EmbeddedObjects(bytes.NewReader(data[:cut]), int64(cut))
		var fe *goffload.FormatError
		if got != nil || !errors.Is(err, goffload.ErrTruncated) || !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > int64(cut) {
			t.Errorf("cut at %d: %v, %v", cut, got, err)
		}
	}
}

// cString decodes the contents of an LLVM IR c"..." string.
func cString(s string) []byte {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == '\\' {
			b = append(b, '\\')
			i++
			continue
		}
		if s[i] == '\\' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b = append(b, byte(v))
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return b
}

// disassembled returns, for each of bcs, the initializers of the globals of
// type [N x i8] that llvm-dis prints of it, by name: what LLVM's own reader
// decodes. One llvm-dis reads them all, each written to its .ll beside it.
func disassembled(t *testing.T, llvmDis string, bcs ...string) []map[string][]byte {
	t.Helper()
	if len(bcs) == 0 {
		return nil
	}
	free := tooltest.Slot()
	out, err := exec.Command(llvmDis, bcs...).CombinedOutput()
	free()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	re := regexp.MustCompile(`(?m)^@([\w.]+) = .*\[\d+ x i8\] c"([^"]*)"`)
	var all []map[string][]byte
	for _, bc := range bcs {
		out, err := os.ReadFile(strings.TrimSuffix(bc, ".bc") + ".ll")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]byte{}
		for _, m := range re.FindAllStringSubmatch(string(out), -1) {
			got[m[1]] = cString(m[2])
		}
		all = append(all, got)
	}
	return all
}

// TestEmbeddedObjectsOfFixturesMatchLLVM assembles the .ll fixtures again
// with llvm-as-19 and checks that they read as the .bc fixtures do, and
// that the bytes of each i8 array read are those llvm-dis-19 prints.
func TestEmbeddedObjectsOfFixturesMatchLLVM(t *testing.T) {
	llvmAs, llvmDis := tooltest.Tool(t, "llvm-as", 19), tooltest.Tool(t, "llvm-dis", 19)
	lls, _ := filepath.Glob(filepath.Join("testdata", "*.ll"))
	if len(lls) < 6 {
		t.Fatalf("fixtures %v", lls)
	}
	dir := t.TempDir()
	var bcs []string
	var read [][]Embedded
	for _, ll := range lls {
		bc := filepath.Join(dir, strings.TrimSuffix(filepath.Base(ll), ".ll")+".bc")
		if out, err := exec.Command(llvmAs, ll, "-o", bc).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		want, wantErr := embeddedOf(t, strings.TrimSuffix(ll, ".ll")+".bc")
		got, err := embeddedOf(t, bc)
		if diff := cmp.Diff(want, got); diff != "" || (err == nil) != (wantErr == nil) {
			t.Errorf("%s: the fixture (-) and llvm-as-19's (+) read differently (%v, %v):\n%s", ll, wantErr, err, diff)
		}
		bcs, read = append(bcs, bc), append(read, got)
	}
	for i, dis := range disassembled(t, llvmDis, bcs...) {
		for _, e := range read[i] {
			if d, ok := dis[e.Global]; ok && !bytes.Equal(d, e.Data) {
				t.Errorf("%s: @%s: llvm-dis prints %q, goffload reads %q", lls[i], e.Global, d, e.Data)
			}
		}
	}
}

// TestEmbeddedObjectsOfClang compiles an OpenMP target region with
// clang-19 and clang-22 -flto, -flto=thin (also with -g) and
// -ffat-lto-objects: the one object of each bitcode file is the
// .llvm.offloading section of the fat object (the same device code), and
// what llvm-dis prints of @llvm.embedded.object. The modes × the releases
// are a matrix of which the default run compiles a sample
// ([tooltest.Sampled]: each mode and each release once); every cell when
// exhaustive.
func TestEmbeddedObjectsOfClang(t *testing.T) {
	majors := []int{19, 22}
	// In the order whose default sample shares a fat object: -flto and
	// -flto=thin of one release.
	modes := [][]string{{"-flto"}, {"-flto", "-g"}, {"-flto=thin"}}
	for j, major := range majors {
		t.Run("llvm"+strconv.Itoa(major), func(t *testing.T) {
			t.Parallel()
			clang, llvmDis := tooltest.Tool(t, "clang", major), tooltest.Tool(t, "llvm-dis", major)
			dir := t.TempDir()
			src, _ := filepath.Abs(filepath.Join("testdata", "omp.c"))
			compile := func(out string, flags ...string) string {
				t.Helper()
				p := filepath.Join(dir, out)
				args := append([]string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-c", "-o", p, src}, flags...)
				free := tooltest.Slot()
				msg, err := exec.Command(clang, args...).CombinedOutput()
				free()
				if err != nil {
					t.Fatalf("%v\n%s", err, msg)
				}
				return p
			}
			// The device code of a fat object, compiled with the same flags
			// (once for the modes of the same flags but -flto's).
			fat := map[string][]byte{}
			section := func(flags ...string) []byte {
				t.Helper()
				name := "fat" + strings.Join(flags, "") + ".o"
				if b, ok := fat[name]; ok {
					return b
				}
				f, err := elf.Open(compile(name, append([]string{"-flto", "-ffat-lto-objects"}, flags...)...))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				sec := f.Section(".llvm.offloading")
				if sec == nil || f.Section(".llvm.lto") == nil {
					t.Fatal("the fat object has no .llvm.offloading or no .llvm.lto")
				}
				b, err := sec.Data()
				if err != nil || len(b) == 0 {
					t.Fatal(err)
				}
				fat[name] = b
				return b
			}
			var bcs []string
			var read [][]byte
			var ran, unsampled [][]string
			for i, mode := range modes {
				if !tooltest.Sampled(i, j, len(modes), len(majors)) {
					unsampled = append(unsampled, mode)
					continue
				}
				want := section(mode[1:]...)
				bc := compile(strings.Join(mode, "")+".bc", mode...)
				got, err := embeddedOf(t, bc)
				if err != nil || len(got) != 1 {
					t.Fatalf("%v: %v, %v", mode, got, err)
				}
				if e := got[0]; e.Global != "llvm.embedded.object" || e.Section != OffloadingSection || !bytes.Equal(e.Data, want) {
					t.Errorf("%v: @%s %s %d bytes, want the %d of the fat object's .llvm.offloading", mode, e.Global, e.Section, len(e.Data), len(want))
				}
				bcs, read, ran = append(bcs, bc), append(read, got[0].Data), append(ran, mode)
			}
			for i, dis := range disassembled(t, llvmDis, bcs...) {
				if d := dis["llvm.embedded.object"]; !bytes.Equal(d, read[i]) {
					t.Errorf("%v: llvm-dis prints %d bytes, goffload reads %d", ran[i], len(d), len(read[i]))
				}
			}
			if len(unsampled) > 0 {
				t.Logf("modes %v not in the default sample (%s=1 compiles them)", unsampled, tooltest.ExhaustiveEnv)
			}
		})
	}
}

// TestEmbeddedObjectsRefusesSeveralModules: LLVM reads the device code of
// a bitcode file of one module only ("Failed to create module"), so a file
// llvm-cat -b made of two is refused, as unsupported.
func TestEmbeddedObjectsRefusesSeveralModules(t *testing.T) {
	cat, tool := tooltest.Tool(t, "llvm-cat", 19), tooltest.Tool(t, "llvm-offload-binary", 22)
	two := filepath.Join(t.TempDir(), "two.bc")
	if out, err := exec.Command(cat, "-b", "-o", two, filepath.Join("testdata", "debuginfo.bc"), filepath.Join("testdata", "embedded.bc")).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cmd := exec.Command(tool, two, "--image=kind=openmp")
	cmd.Dir = t.TempDir()
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "Failed to create module") {
		t.Errorf("llvm-offload-binary-22 read the two modules: %v\n%s", err, out)
	}
	got, err := embeddedOf(t, two)
	if got != nil || !errors.Is(err, goffload.ErrUnsupported) || !strings.Contains(err.Error(), "2 modules") {
		t.Errorf("%v, %v", got, err)
	}
}

// TestEmbeddedObjectsOfSyntheticModules reads modules written bit by bit,
// in encodings LLVM 19 and 22 read but no longer write, and with the
// mistakes the reader must report.
func TestEmbeddedObjectsOfSyntheticModules(t *testing.T) {
	payload := []byte("\x10\xff\x10\xad payload")
	one := []Embedded{{"obj", OffloadingSection, payload}}
	debugRecord := func(w *bitWriter) uint64 {
		w.record(16, 0, 1, 1) // METADATA_FILE: [distinct, filename, directory]
		w.record(7, 0, 1, 2, 2, 0)
		return 2
	}
	for _, c := range []struct {
		name string
		m    synthModule
		want []Embedded
		err  error
	}{
		{"version 2", synthModule{version: 2}, one, nil},
		{"version 1, names in the symbol table", synthModule{version: 1}, one, nil},
		{"the section a METADATA_STRING_OLD", synthModule{version: 2, oldString: true}, one, nil},
		{"debug information numbered first", synthModule{version: 2, metadata: debugRecord}, one, nil},
		{"listed twice", synthModule{version: 2, named: func(n uint64) []uint64 { return []uint64{n, n} }}, append(one, one...), nil},
		{"an unknown metadata record first", synthModule{version: 2, metadata: func(w *bitWriter) uint64 {
			w.record(60, 1)
			return 0
		}}, nil, goffload.ErrUnsupported},
		{"an unknown metadata record last", synthModule{version: 2, after: func(w *bitWriter) {
			w.enter(blockMetadata, 3)
			w.record(60, 1)
			w.end()
		}}, one, nil},
		{"a named operand no record defines", synthModule{version: 2, named: func(n uint64) []uint64 { return []uint64{n + 1} }}, nil, goffload.ErrInvalid},
		{"a named operand that is a string", synthModule{version: 2, named: func(uint64) []uint64 { return []uint64{0} }}, nil, goffload.ErrInvalid},
		{"a module version of the future", synthModule{version: 3}, nil, goffload.ErrUnsupported},
	} {
		m := c.m
		m.payload, m.section = payload, OffloadingSection
		data := m.bytes()
		got, err := EmbeddedObjects(bytes.NewReader(data), int64(len(data)))
		if diff := cmp.Diff(c.want, got); diff != "" || c.err == nil && err != nil || c.err != nil && !errors.Is(err, c.err) {
			t.Errorf("%s: %v (want %v)\n%s", c.name, err, c.err, diff)
		}
	}
}

// TestEmbeddedObjectsOfConstantsLLVMFolds: an AGGREGATE of integers is a
// ConstantDataSequential once LLVM reads it, so is an integer of vector
// type (a splat); an aggregate holding an undef is not.
func TestEmbeddedObjectsOfConstantsLLVMFolds(t *testing.T) {
	// Types 3: <4 x i8>; constants 2 to 5: i8 1, 2, 3, undef; 6 on: the
	// aggregate or splat the global's initializer is made to refer to.
	vec := func(w *bitWriter) { w.record(typeVector, 4, synthI8) }
	elems := func(last uint64) func(w *bitWriter) {
		return func(w *bitWriter) {
			w.record(cstSetType, synthI8)
			w.record(cstInteger, 2) // 1, sign-rotated
			w.record(cstInteger, 4)
			w.record(cstInteger, 6)
			w.record(cstUndef)
			w.record(cstSetType, synthArray)
			w.record(cstAggregate, 2, 3, 4, last)
			w.record(cstSetType, 3)
			w.record(cstInteger, 14) // splat 7
		}
	}
	for _, c := range []struct {
		name  string
		init  uint64 // value ID + 1
		typ   uint64 // the global's
		types func(*bitWriter)
		last  uint64
		want  []byte
	}{
		{"aggregate of integers", 7, synthArray, vec, 2, []byte{1, 2, 3, 1}},
		{"aggregate with an undef", 7, synthArray, vec, 5, nil},
		{"splat", 8, 3, vec, 2, []byte{7, 7, 7, 7}},
	} {
		m := synthModule{version: 2, payload: []byte("four"), section: OffloadingSection, numTypes: 1, types: c.types,
			constants: elems(c.last), init: c.init, globalType: c.typ}
		data := m.bytes()
		got, err := EmbeddedObjects(bytes.NewReader(data), int64(len(data)))
		var want []Embedded
		if c.want != nil {
			want = []Embedded{{"obj", OffloadingSection, c.want}}
		}
		if diff := cmp.Diff(want, got); diff != "" || err != nil {
			t.Errorf("%s: %v\n%s", c.name, err, diff)
		}
	}
}

// Producer reads the IDENTIFICATION_BLOCK's string, as llvm-bcanalyzer
// -dump shows it (STRING 'LLVM19.1.7').
func TestProducer(t *testing.T) {
	for _, name := range []string{"embedded.bc", "debuginfo.bc", "darwin.bc"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		p, err := Producer(bytes.NewReader(b), int64(len(b)))
		if err != nil || !strings.HasPrefix(p, "LLVM19.") {
			t.Errorf("%s: producer %q, %v; want LLVM19.x (llvm-as-19 wrote it)", name, p, err)
		}
		if bcanalyzer := tooltest.Find("llvm-bcanalyzer", 19); bcanalyzer != "" {
			out, err := exec.Command(bcanalyzer, "-dump", filepath.Join("testdata", name)).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "'"+p+"'") {
				t.Errorf("%s: llvm-bcanalyzer-19 -dump does not show %q (%v)", name, p, err)
			}
		}
	}
}
