package main

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/internal/tooltest/measure"
	"github.com/goffload/goffload/nvfatbin"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// The table of hostile inputs: every subcommand that reads a file is run, as
// its own process, on every input below. Whatever the input, goffload must
// exit 0 or 1 (never panic), print one line naming the user's path when it
// fails, change nothing but its output (-o) and leave no temporary file,
// within the budget of its input's size (see checkRun). New readers and
// subcommands join the table: add the input to hostileInputs (or a
// generator to hostileInputSources), the command to hostileCommands.

// The budget of one run, linear in the size of its input: peak memory at
// most budgetRSS plus budgetRSSPerByte per input byte, CPU time (user and
// system, which a loaded machine does not inflate as it does wall time) at
// most budgetCPU plus budgetCPUPerByte per byte, and output (standard
// output, standard error and the files written) at most budgetOutput plus
// budgetOutputPerByte per byte, plus what an input's format legitimately
// inflates to (hostileInput.inflates) under goffload's documented limits.
// docs/hostile-input.md states the same budget.
//
// An input of 1 MB may so take 64 MiB and 2 s. Measured on the table
// (GOFFLOAD_HOSTILE_STATS), 5,387 runs of inputs up to 66 KB: at most
// 17 MiB (the extraction of 64 MiB of zeros inflated), 0.40 s of CPU (a
// 30 KB thin archive naming one archive of 600 members 500 times) and, but
// for the inflated, 72 KB of output (strip, embed --into and convert of
// the 6 KB object of elfobj's fuzz corpus whose section has a huge
// alignment: the output is padded to it).
const (
	budgetRSS           = 32 << 20 // bytes
	budgetRSSPerByte    = 32
	budgetCPU           = time.Second
	budgetCPUPerByte    = time.Microsecond
	budgetOutput        = 1 << 20 // bytes
	budgetOutputPerByte = 16
)

// An input that inflates (hostileInput.inflates > 0) may besides hold what
// the documented limits let a command hold of inflated data: 64 MiB of it in
// memory (offloadbinary.Budget's MaxInflatedMemory) and one decoder's window of at
// most 128 MiB (bundle.Compressed.MaxWindow); and spend
// budgetCPUPerInflated a byte inflating and writing it.
const (
	budgetRSSInflating   = (64 + 128) << 20 // bytes
	budgetCPUPerInflated = 4 * time.Nanosecond
)

// hostileSample is how many commands run each input in the default run
// (tooltest.SampledN): the whole table, every input by every command, runs
// with OFFLOAD_TEST_EXHAUSTIVE=1.
const hostileSample = 1

// maxRunTime is the wall time after which a run counts as hung (and, at
// twice that, is killed).
const maxRunTime = 30 * time.Second

// hostileCommand is a subcommand with IN where the hostile input goes and
// OUT where its output goes.
type hostileCommand struct {
	name   string
	args   []string
	outDir bool // OUT is a folder
	// clang: the command is clang-19 linking IN with goffload as its
	// clang-linker-wrapper (runThroughClang); args is unused.
	clang bool
	// any: whether the command accepts an input is not asked, only that
	// the run keeps the rules and the budget.
	any bool
	// like: the command accepts what that command accepts.
	like string
}

func hostileCommands(good string) []hostileCommand {
	return []hostileCommand{
		{name: "list", args: []string{"list", "IN"}},
		{name: "list-json", args: []string{"list", "IN", "--json"}},
		{name: "list-all", args: []string{"list", "--all", "IN"}, like: "list"},
		// LLVM main after 23: version 3 (compressed) and nested binaries.
		{name: "list-24", args: []string{"list", "--llvm", "24", "IN"}},
		{name: "check", args: []string{"check", "IN"}},
		{name: "check-json", args: []string{"check", "--json", "IN"}},
		{name: "extract", args: []string{"extract", "-o", "OUT", "IN"}, outDir: true},
		{name: "extract-raw", args: []string{"extract", "--raw", "IN", "-o", "OUT"}, outDir: true},
		// LLVM main after 23: nested binaries' images extracted.
		{name: "extract-24", args: []string{"extract", "--llvm", "24", "--raw", "-o", "OUT", "IN"}, outDir: true},
		// --member reads every input, selects the members named k.o.
		{name: "extract-member", args: []string{"extract", "--llvm", "24", "--raw", "--member", "k.o", "-o", "OUT", "IN"}, outDir: true},
		{name: "embed", args: []string{"embed", "-o", "OUT", "IN"}},
		{name: "embed-into", args: []string{"embed", "--into", "IN", "-o", "OUT", good}},
		{name: "strip", args: []string{"strip", "--keep", "x86_64-unknown-linux-gnu", "-o", "OUT", "IN"}},
		{name: "wrap", args: []string{"wrap", "-o", "OUT", "IN"}},
		{name: "wrap-sycl", args: []string{"wrap", "--kind", "sycl", "-o", "OUT", "IN"}},
		{name: "wrap-sycl-24", args: []string{"wrap", "--kind", "sycl", "--llvm", "24", "-o", "OUT", "IN"}},
		// LLVM main after 23: version-3 binaries, compressed ones inflated.
		{name: "wrap-24", args: []string{"wrap", "--llvm", "24", "-o", "OUT", "IN"}},
		{name: "wrap-cuda", args: []string{"wrap", "--kind", "cuda", "-o", "OUT", "IN"}},
		{name: "wrap-hip", args: []string{"wrap", "--kind", "hip", "-o", "OUT", "IN"}},
		{name: "wrap-hip-image", args: []string{"wrap", "--kind", "hip", "-o", "OUT", "--image", "gfx90a=IN"}},
		{name: "wrap-hip-compress", args: []string{"wrap", "--kind", "hip", "--compress", "-o", "OUT", "IN"}},
		{name: "wrap-hip-image-compress", args: []string{"wrap", "--kind", "hip", "--compress", "--compression-format", "zlib", "-o", "OUT", "--image", "gfx90a=IN"}},
		{name: "package", args: []string{"package", "-o", "OUT", "--image", "file=IN,triple=x86_64-unknown-linux-gnu"}},
		{name: "package-compress", args: []string{"package", "--llvm", "24", "--compress", "-o", "OUT", "--image", "file=IN,triple=x86_64-unknown-linux-gnu"}},
		{name: "entries", args: []string{"entries", "--spec", "IN", "-o", "OUT"}},
		{name: "link", args: []string{"link", "--dry-run", "-o", "OUT", "IN"}},
		// The plan of the same link, as a build system takes it.
		{name: "link-plan", args: []string{"link", "--plan=ninja", "-o", "OUT", "IN"}, like: "link"},
		// A plan's own extract step, run alone on the first image of the
		// first object, whatever the input holds.
		{name: "step-extract", args: []string{"step", "extract", "--llvm", "22", "--input", "IN", "0:0=OUT"}, any: true},
		// clang-linker-wrapper, as clang 22 runs it (-m, -L around the input).
		{name: "linker-wrapper", args: []string{"linker-wrapper", "--dry-run", "--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld",
			"-m", "elf_x86_64", "-o", "OUT", "IN", "-L/usr/lib/llvm-22/lib"}},
		// The input as the device image that replaces the device code
		// (LLVM 19+): its ELF header names its target.
		{name: "linker-wrapper-override", args: []string{"linker-wrapper", "--dry-run", "--host-triple=x86_64-pc-linux-gnu", "--linker-path=/usr/bin/ld",
			"--override-image=openmp=IN", "-o", "OUT", good}, any: true},
		// What libomptarget 19 would refuse of the input's device images.
		{name: "check-runtime", args: []string{"check", "--runtime", "19", "IN"}, any: true},
		{name: "wrap-14", args: []string{"wrap", "--llvm", "14", "-o", "OUT", "IN"}},
		{name: "device-archive", args: []string{"device-archive", "--target", "hip-amdgcn-amd-amdhsa--gfx90a", "-o", "OUT", "IN"}},
		{name: "convert", args: []string{"convert", "--llvm", "19", "-o", "OUT", "IN"}},
		{name: "convert-from", args: []string{"convert", "--from", "14", "--llvm", "22", "IN", "-o", "OUT"}},
		// clang-linker-wrapper as clang-19 -B DIR runs it, on the inputs
		// shaped as objects (objectShaped).
		{name: "clang-B", clang: true},
	}
}

// hostileInput is a file to give every command.
type hostileInput struct {
	name string
	path string
	// pass lists the commands that accept the input; the others must refuse
	// it. With any, a command may do either (cut and mutated inputs).
	pass []string
	any  bool
	// says is what the message of a command that refuses it must say.
	says map[string]string
	// inflates is what the input's format legitimately expands to
	// (compressed images, under goffload's documented limits): a command
	// may write that many bytes more than the budget of its size.
	inflates int64
}

// hostileInputSources are more generators of hostile inputs, each writing
// its inputs into dir; hostileInputs appends what they return. A test file
// registers one with
//
//	func init() { hostileInputSources = append(hostileInputSources, hostileXInputs) }
var hostileInputSources []func(t *testing.T, dir string) []hostileInput

// objectShaped reports whether the file at path is a regular file that
// clang passes to its linker as an object: ELF, an archive, or bitcode.
func objectShaped(path string) bool {
	// Not opened unless regular: a FIFO would block.
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	for _, magic := range []string{"\x7fELF", "!<arch>\n", "!<thin>\n", "BC\xc0\xde"} {
		if bytes.HasPrefix(head, []byte(magic)) {
			return true
		}
	}
	return false
}

func TestMain(m *testing.M) {
	// The programs the tests run use no cache of link steps ($GOFFLOAD_CACHE):
	// not the user's, and no test's link is taken from another's. The cache's
	// own tests (cache_test.go) give theirs.
	os.Setenv("GOFFLOAD_CACHE", "off")
	// What the programs the tests run leave in the temporary folder goes
	// with the test binary's own folder.
	removeTemp, err := tooltest.OwnTempDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	shared.Remove()
	removeTemp()
	os.Exit(code)
}

// goffloadExe builds the command once for the tests that run it as a
// process.
func goffloadExe(t *testing.T) string {
	t.Helper()
	return shared.Program(t, "github.com/goffload/goffload/cmd/goffload", "goffload")
}

// thinArchive returns a GNU thin archive naming files of the given sizes.
func thinArchive(names []string, sizes []int64) []byte {
	b := []byte("!<thin>\n")
	for i, n := range names {
		b = append(b, fmt.Sprintf("%-16s%-12d%-6d%-6d%-8o%-10d`\n", n+"/", 0, 0, 0, 0o644, sizes[i])...)
	}
	return b
}

// archiveOf returns a GNU archive of the members.
func archiveOf(t testing.TB, members map[string][]byte) []byte {
	var names []string
	for n := range members {
		names = append(names, n)
	}
	sort.Strings(names)
	var ms []ar.NewMember
	for _, n := range names {
		ms = append(ms, ar.NewMember{Name: n, Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader(members[n]), 0, int64(len(members[n])))})
	}
	var buf bytes.Buffer
	if err := ar.WriteGNU(&buf, ms); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// bombBundle returns a compressed bundle whose header declares 2 TiB and
// whose stream inflates to 64 MiB: a bundle header, then zeros. Its device
// entry of size bytes starts at 1 TiB.
func bombBundle(size uint64) []byte {
	var hdr []byte
	hdr = append(hdr, bundle.Magic...)
	hdr = binary.LittleEndian.AppendUint64(hdr, 2)
	for _, e := range []struct {
		off, size uint64
		id        string
	}{{4096, 1, "host-x86_64-unknown-linux-gnu-"}, {1 << 40, size, "hipv4-amdgcn-amd-amdhsa--gfx90a"}} {
		hdr = binary.LittleEndian.AppendUint64(hdr, e.off)
		hdr = binary.LittleEndian.AppendUint64(hdr, e.size)
		hdr = binary.LittleEndian.AppendUint64(hdr, uint64(len(e.id)))
		hdr = append(hdr, e.id...)
	}
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(hdr)
	zw.Write(make([]byte, 64<<20))
	zw.Close()
	b := []byte(bundle.CompressedMagic)
	b = binary.LittleEndian.AppendUint16(b, 3)
	b = binary.LittleEndian.AppendUint16(b, uint16(bundle.MethodZlib))
	b = binary.LittleEndian.AppendUint64(b, uint64(32+z.Len()))
	b = binary.LittleEndian.AppendUint64(b, 2<<40)
	b = binary.LittleEndian.AppendUint64(b, 0)
	return append(b, z.Bytes()...)
}

// cudaFatbinOf returns a CUDA fat binary of n empty sm_90 cubins, its header
// declaring declared bytes of entries (0: the entries' own size).
func cudaFatbinOf(declared uint64, n int) []byte {
	le := binary.LittleEndian
	var body []byte
	for range n {
		h := make([]byte, 64)
		le.PutUint16(h[0:], 2) // a cubin
		le.PutUint16(h[2:], 0x101)
		le.PutUint32(h[4:], 64)
		le.PutUint32(h[28:], 90)
		le.PutUint64(h[40:], 0x11)
		body = append(body, h...)
	}
	if declared == 0 {
		declared = uint64(len(body))
	}
	b := le.AppendUint32(nil, nvfatbin.Magic)
	b = le.AppendUint16(b, 1)
	b = le.AppendUint16(b, 16)
	b = le.AppendUint64(b, declared)
	return append(b, body...)
}

// xindexWithoutTable returns obj with every defined global symbol's
// st_shndx SHN_XINDEX, the object holding no SHT_SYMTAB_SHNDX.
func xindexWithoutTable(t testing.TB, obj []byte) []byte {
	obj = bytes.Clone(obj)
	f, err := elf.NewFile(bytes.NewReader(obj))
	if err != nil {
		t.Fatal(err)
	}
	tab := f.SectionByType(elf.SHT_SYMTAB)
	if tab == nil {
		t.Fatal("no symbol table")
	}
	for off := tab.Offset + 24; off+24 <= tab.Offset+tab.Size; off += 24 {
		if shndx := binary.LittleEndian.Uint16(obj[off+6:]); elf.ST_BIND(obj[off+4]) == elf.STB_GLOBAL && shndx != 0 && shndx < uint16(elf.SHN_LORESERVE) {
			binary.LittleEndian.PutUint16(obj[off+6:], uint16(elf.SHN_XINDEX))
		}
	}
	return obj
}

// amdgpuBinary returns an OffloadBinary (LLVM 22) of OpenMP for gfx908
// holding the code object amdgpu/testdata/gfx908-v5.co with the
// description of its first note (the metadata's MessagePack) changed by
// mend.
func amdgpuBinary(t testing.TB, mend func(desc []byte)) []byte {
	co, err := os.ReadFile(filepath.Join("..", "..", "amdgpu", "testdata", "gfx908-v5.co"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.NewFile(bytes.NewReader(co))
	if err != nil {
		t.Fatal(err)
	}
	note := f.Section(".note")
	if note == nil {
		t.Fatal("gfx908-v5.co: no .note")
	}
	le := binary.LittleEndian
	at := note.Offset
	namesz, descsz := uint64(le.Uint32(co[at:])), uint64(le.Uint32(co[at+4:]))
	desc := at + 12 + (namesz+3)&^3
	mend(co[desc : desc+descsz])
	im := offloadbinary.Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP,
		Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "amdgcn-amd-amdhsa"}, {Key: "arch", Value: "gfx908:xnack-"}}}
	b, err := offloadbinary.MarshalBinary(release.Default(), &im, co)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// objectWith returns an x86-64 relocatable object holding one section.
func objectWith(t testing.TB, name string, typ elf.SectionType, data []byte) []byte {
	return objectWithSections(t, section{name, typ, data})
}

type section struct {
	name string
	typ  elf.SectionType
	data []byte
}

// objectWithSections returns an x86-64 relocatable object holding sections.
func objectWithSections(t testing.TB, secs ...section) []byte {
	o, err := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range secs {
		o.AddSection(&elfobj.Section{Name: sec.name, Type: sec.typ, Addralign: 8, Data: sec.data}, false)
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// packaged returns what goffload package writes for the image argument.
func packaged(t testing.TB, dir, image string) []byte {
	out := filepath.Join(dir, "packaged.tmp")
	defer os.Remove(out)
	var stderr bytes.Buffer
	if code := run([]string{"package", "-o", out, "--image", image}, io.Discard, &stderr); code != 0 {
		t.Fatalf("package %s: %s", image, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// mutations returns cut and byte-flipped copies of data, the same every
// run.
func mutations(data []byte, seed int64, n int) [][]byte {
	rng := rand.New(rand.NewSource(seed))
	var out [][]byte
	for _, cut := range []int{1, 7, 8, 63, 64, len(data) / 3, len(data) / 2, len(data) - 1} {
		if cut > 0 && cut < len(data) {
			out = append(out, data[:cut])
		}
	}
	for range n {
		m := bytes.Clone(data)
		for range 1 + rng.Intn(8) {
			m[rng.Intn(len(m))] = byte(rng.Intn(256))
		}
		out = append(out, m)
	}
	return out
}

// hostilePass returns the commands that accept the input name at path,
// given those listed in pass: the ones that follow from them added
// (check-json with check, list-24 with list, ...), and package (and wrap-14
// for what is no OffloadBinary) for any regular file when pass is empty.
func hostilePass(name, path string, pass ...string) []string {
	pass = slices.Clone(pass) // appended to: not the caller's array
	// The packager packages any regular file; LLVM 14's wrapper wraps
	// any device image that is not an OffloadBinary.
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		if len(pass) == 0 {
			pass = []string{"package"}
		}
		if head, _ := os.ReadFile(path); len(head) > 0 && !bytes.HasPrefix(head, offloadbinary.Magic[:]) {
			pass = append(pass, "wrap-14")
		}
	}
	if slices.Contains(pass, "check") {
		pass = append(pass, "check-json")
	}
	// Release 24 reads all that 22 reads, and packages it compressed.
	if slices.Contains(pass, "list") {
		pass = append(pass, "list-24")
	}
	if slices.Contains(pass, "extract-raw") {
		pass = append(pass, "extract-24")
	}
	if slices.Contains(pass, "extract-24") {
		pass = append(pass, "extract-member")
	}
	if slices.Contains(pass, "package") {
		pass = append(pass, "package-compress")
	}
	if slices.Contains(pass, "wrap") {
		pass = append(pass, "wrap-24")
	}
	// The same flow; but the wrapper's release is 22 (from its -L),
	// and an old driver's OpenMP bundle or a program of mixed
	// releases is refused as check would find it.
	if slices.Contains(pass, "link") && name != "bundled-openmp-garbage" && name != "linked-mixed-stripped" {
		pass = append(pass, "linker-wrapper")
	}
	return pass
}

// writeInput writes data to dir/name for the table, and returns the path.
func writeInput(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// hostileInputs writes the inputs into dir.
func hostileInputs(t *testing.T, dir string) []hostileInput {
	t.Helper()
	write := func(name string, data []byte) string { return writeInput(t, dir, name, data) }
	read := func(parts ...string) []byte {
		data, err := os.ReadFile(filepath.Join(parts...))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	var ins []hostileInput
	add := func(name, path string, pass ...string) {
		ins = append(ins, hostileInput{name: name, path: path, pass: hostilePass(name, path, pass...)})
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	add("fifo", fifo)
	// An empty file is an empty linker script to ld and lld, which link
	// with one; LLVM's wrapper leaves it to them, and so does link. A text
	// file may be a linker script too (libc.so is one). A dry run does not
	// run the host linker.
	add("empty", write("empty", nil), "package", "link")
	add("text", write("passwd", []byte("root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/:/usr/sbin/nologin\n")), "package", "link")
	add("zeros", write("zeros", make([]byte, 4096)))
	// Objects whose .nv_fatbin (whole-program CUDA) holds a fat binary that
	// declares a terabyte, and one of 8,000 empty cubins (list --all and
	// --json name each).
	// Both are objects every command takes: list --all and --json report
	// the first's fat binary as not read, and name the second's cubins.
	nvPass := []string{"package", "list", "list-json", "check", "extract", "extract-raw", "embed-into", "link", "linker-wrapper", "convert", "convert-from"}
	// extract --raw writes a fat binary's cubins and PTX, and refuses one
	// that does not read (--member selects nothing of an object).
	hugePass := append(slices.DeleteFunc(slices.Clone(nvPass), func(c string) bool { return c == "extract-raw" }), "extract-member")
	add("nv-fatbin-huge", write("nv-huge.o", objectWith(t, ".nv_fatbin", elf.SHT_PROGBITS, cudaFatbinOf(1<<40, 0))), hugePass...)
	// Its 8,000 cubins would be 8,000 files of 512 KB: extract --raw counts
	// each as 4 KiB at least, over its bound (16 times the input plus
	// 1 MiB), and refuses.
	add("nv-fatbin-many", write("nv-many.o", objectWith(t, ".nv_fatbin", elf.SHT_PROGBITS, cudaFatbinOf(0, 8000))), hugePass...)
	// A fat binary file (FormatFatbin) that declares a terabyte: listed
	// as not read, and, in an OffloadBinary, extracted and checked (no
	// entries); extract --raw refuses it; no command takes it as an object.
	add("nv-fatbin-file", write("huge.fatbin", cudaFatbinOf(1<<40, 0)), "package", "list", "list-json", "check", "extract", "extract-member", "link", "link-plan")
	// OffloadBinaries of an AMDGPU code object whose metadata note nests
	// deeper than amdgpu.MaxDepth, and one whose note claims a map of 2^32
	// entries: valid binaries of a linked image, which list --all and
	// --json report as a code object not read (TestListAMDGPUCodeObjects),
	// and which the commands that take binaries take.
	amdPass := []string{"package", "list", "list-json", "extract", "extract-raw", "embed", "wrap", "link", "link-plan"}
	add("amd-note-nested", write("amd-nest.bin", amdgpuBinary(t, func(desc []byte) {
		for i := range desc {
			desc[i] = 0x91 // an array of one value
		}
	})), amdPass...)
	add("amd-note-huge", write("amd-huge.bin", amdgpuBinary(t, func(desc []byte) { copy(desc, []byte{0xdf, 0xff, 0xff, 0xff, 0xff}) })), amdPass...)
	add("device", "/dev/zero")
	os.Mkdir(filepath.Join(dir, "folder"), 0o755)
	add("folder", filepath.Join(dir, "folder"))
	add("missing", filepath.Join(dir, "missing"))
	loop := filepath.Join(dir, "loop")
	os.Symlink(loop, loop)
	add("symlink-loop", loop)

	// Thin archives that name themselves, each other, a FIFO; archives
	// nested deeper than anyone makes them.
	self := thinArchive([]string{"self.a"}, []int64{68})
	add("thin-self", write("self.a", self))
	add("thin-self-twice", write("self2.a", thinArchive([]string{"self2.a", "self2.a"}, []int64{128, 128})))
	write("pong.a", thinArchive([]string{"ping.a"}, []int64{68}))
	add("thin-pair", write("ping.a", thinArchive([]string{"pong.a"}, []int64{68})))
	add("thin-fifo", write("thin-fifo.a", thinArchive([]string{"fifo"}, []int64{0})))
	add("thin-device", write("thin-dev.a", thinArchive([]string{"/dev/zero"}, []int64{0})))
	// A thin archive that names one archive of 600 members 500 times.
	many := map[string][]byte{}
	for i := range 600 {
		many[fmt.Sprintf("m%03d", i)] = []byte("x")
	}
	manyData := archiveOf(t, many)
	write("many.a", manyData)
	ampNames, ampSizes := make([]string, 500), make([]int64, 500)
	for i := range ampNames {
		ampNames[i], ampSizes[i] = "many.a", int64(len(manyData))
	}
	add("thin-amplify", write("amplify.a", thinArchive(ampNames, ampSizes)))
	deep := read("..", "..", "offload", "testdata", "llvm", "packager", "single-llvm22.bin")
	for i := range 40 {
		deep = archiveOf(t, map[string][]byte{fmt.Sprintf("m%d", i): deep})
	}
	// Every command that opens inputs refuses archives nested past the
	// limit (fatobj.MaxArchiveDepth), device-archive too.
	add("nested-40", write("deep.a", deep), "package")

	// Version 3 (read by --llvm 24, and without --llvm, as the release that
	// made it): a compressed binary that
	// declares 1 TiB inflated, one whose 64 MiB of zeros inflate past the
	// 160 bytes it declares, one cut short, and binaries nested 40 deep.
	r24, err := release.Lookup(24)
	if err != nil {
		t.Fatal(err)
	}
	v3im := offloadbinary.Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP, Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "x86_64-unknown-linux-gnu"}, {Key: "arch", Value: "generic"}}}
	var v3 bytes.Buffer
	if _, err := offloadbinary.WriteCompressedBinary(&v3, r24, &v3im, bytes.NewReader(make([]byte, 64<<20)), 64<<20, offloadbinary.Compression{Format: "zstd"}); err != nil {
		t.Fatal(err)
	}
	v3huge := slices.Clone(v3.Bytes())
	binary.LittleEndian.PutUint64(v3huge[32:], 1<<40)
	add("v3-inflate-1tib", write("v3huge.bin", v3huge))
	v3bomb := slices.Clone(v3.Bytes())
	binary.LittleEndian.PutUint64(v3bomb[32:], 160)
	add("v3-inflate-past", write("v3bomb.bin", v3bomb))
	add("v3-cut", write("v3cut.bin", v3.Bytes()[:v3.Len()/2]))
	nested, err := offloadbinary.MarshalBinary(r24, &v3im, []byte("image"))
	if err != nil {
		t.Fatal(err)
	}
	for range 40 {
		if nested, err = offloadbinary.MarshalBinary(r24, &v3im, nested); err != nil {
			t.Fatal(err)
		}
	}
	// The whole binary is extracted and embedded; its nested images, past
	// the limit, are refused.
	add("v3-nested-41", write("v3nested.bin", nested), "package", "wrap-24", "extract", "embed")
	// 64 MiB of zeros compressed: read, listed and extracted in bounded
	// memory as 24 reads it.
	add("v3-zeros-64mib", write("v3zeros.bin", v3.Bytes()), "list", "list-json", "list-24", "extract", "extract-raw", "extract-24", "embed", "package", "wrap-24")
	ins[len(ins)-1].inflates = 64 << 20
	// A binary of LLVM 22 whose image is a bad version-3 binary: 22 sees an
	// image, 24 refuses the nested binary.
	badInner := slices.Clone(v3.Bytes())
	badInner[4] = 4
	r22, err := release.Lookup(22)
	if err != nil {
		t.Fatal(err)
	}
	badOuter, err := offloadbinary.MarshalBinary(r22, &v3im, badInner)
	if err != nil {
		t.Fatal(err)
	}
	add("v3-nested-bad", write("v3badnested.bin", badOuter), "list", "list-json", "extract", "extract-raw", "embed", "package", "link", "wrap")
	ins[len(ins)-1].pass = slices.DeleteFunc(ins[len(ins)-1].pass, func(c string) bool { return c == "list-24" || c == "extract-24" || c == "extract-member" })

	// A compressed bundle that declares 1 TiB, alone and in an object.
	bomb := bombBundle(4096)
	// A bundle file is listed from its header; link has no OpenMP code in it.
	add("bomb-bundle", write("bomb.ccob", bomb), "list", "list-json", "package", "link")
	add("bomb-object", write("bomb.o", objectWith(t, ".hip_fatbin", elf.SHT_PROGBITS, bomb)), "list", "list-json", "check", "embed-into", "package", "link", "convert", "convert-from")
	// One whose device entry is 1 TiB: extract refuses it by the bound on
	// what it writes (16 GiB inflated at most) before the room is checked.
	huge := bombBundle(1 << 40)
	add("bomb-huge-entry", write("huge.o", objectWith(t, ".hip_fatbin", elf.SHT_PROGBITS, huge)), "list", "list-json", "check", "embed-into", "package", "link", "convert", "convert-from")
	ins[len(ins)-1].says = map[string]string{"extract": "over the limit", "extract-raw": "over the limit"}

	img := filepath.Join("..", "..", "offload", "testdata", "llvm", "img1.bin")
	// A SYCL binary (LLVM 22's kind 8): wrapped by wrap --kind sycl.
	add("sycl-binary", write("sycl.bin", packaged(t, dir, "file="+img+",triple=spirv64-unknown-unknown,kind=sycl,symbols=k")),
		"list", "list-json", "embed", "wrap", "wrap-sycl", "wrap-sycl-24", "package", "link", "extract", "extract-raw")

	// Binaries whose strings would lead files out of the output folder.
	// Accepted by whatever reads binaries; refused by extract (the name) and
	// by what wants something else (an object, a fatbin, a spec).
	evilPass := []string{"list", "list-json", "embed", "wrap", "package", "link"}
	for _, e := range []struct{ name, triple, arch string }{
		{"evil-dotdot", "/../../escape/x", "y"},
		{"evil-slash", "x", "a/b"},
		{"evil-long", "x", strings.Repeat("a", 300)},
	} {
		add(e.name, write(e.name+".bin", packaged(t, dir, "file="+img+",triple="+e.triple+",arch="+e.arch+",kind=openmp")), evilPass...)
	}

	// Bundle entry IDs hold any bytes: a '/' or a NUL where the arch goes.
	// Read as the bundler of 22 reads them, that is no target ID: the code
	// object is extracted under a plain name.
	for name, id := range map[string]string{"evil-bundle-slash": "hipv4-amdgcn-amd-amdhsa--../../../escape/x", "evil-bundle-nul": "hipv4-amdgcn-amd-amdhsa--gfx90a\x00x"} {
		var b bytes.Buffer
		code := bytes.NewReader(make([]byte, 64))
		if err := bundle.Write(&b, 4096, []bundle.Input{{ID: "host-x86_64-unknown-linux-gnu-"}, {ID: id, Data: io.NewSectionReader(code, 0, 64)}}); err != nil {
			t.Fatal(err)
		}
		add(name, write(name+".o", objectWith(t, ".hip_fatbin", elf.SHT_PROGBITS, b.Bytes())), "list", "list-json", "check", "embed-into", "package", "link", "convert", "convert-from",
			"extract", "extract-raw", "extract-24")
	}

	// Bundled objects: IDs the bundler of 22 refuses, with a '/', of kinds
	// goffload does not know, twice; entries of no bytes; a bundle file
	// whose ID would lead out of the folder; an archive of them.
	pb := bundle.SectionPrefix
	host := section{pb + "host-x86_64-pc-linux-gnu-", elf.SHT_PROGBITS, []byte{0}}
	code := []byte("neither ELF nor bitcode")
	// convert leaves bundles other than OpenMP ones as they are.
	bundledPass := []string{"list", "list-json", "check", "extract", "extract-raw", "embed-into", "package", "link", "convert", "convert-from"}
	// An ID no release's bundler reads as device code: listed, not
	// extracted.
	add("bundled-bad-id", write("badid.o", objectWithSections(t, section{pb + "bad", elf.SHT_PROGBITS, code}, host)), "embed-into", "package", "link", "convert", "convert-from",
		"list", "list-json", "list-24", "check", "check-json", "extract", "extract-raw", "extract-24", "extract-member")
	add("bundled-slash-id", write("slashid.o", objectWithSections(t, section{pb + "hip-amdgcn-amd-amdhsa--gfx90a/../../escape", elf.SHT_PROGBITS, code}, host)),
		"list", "list-json", "check", "extract", "embed-into", "package", "link", "convert", "convert-from")
	add("bundled-empty", write("emptyb.o", objectWithSections(t, section{pb + "hip-amdgcn-amd-amdhsa--gfx90a", elf.SHT_PROGBITS, nil}, host)), bundledPass...)
	add("bundled-unknown-kind", write("kind.o", objectWithSections(t, section{pb + "foo-x86_64-pc-linux-gnu-", elf.SHT_PROGBITS, code}, host)), bundledPass...)
	dup := objectWithSections(t, section{pb + "hip-amdgcn-amd-amdhsa--gfx90a", elf.SHT_PROGBITS, code}, section{pb + "hip-amdgcn-amd-amdhsa--gfx90a", elf.SHT_PROGBITS, code[:4]}, host)
	add("bundled-dup", write("dup.o", dup), bundledPass...)
	add("bundled-archive", write("bundled.a", archiveOf(t, map[string][]byte{"dup.o": dup, "k.o": read("..", "..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm22.o")})), "list", "list-json", "check", "extract", "extract-raw", "package", "link", "device-archive", "strip", "convert", "convert-from")
	// An OpenMP bundle of neither ELF nor bitcode: convert packages its bytes as they are.
	add("bundled-openmp-garbage", write("ompjunk.o", objectWithSections(t, section{pb + "openmp-x86_64-pc-linux-gnu", elf.SHT_PROGBITS, code}, host)), bundledPass...)
	var evilFB bytes.Buffer
	if err := bundle.Write(&evilFB, 4096, []bundle.Input{{ID: "host-x86_64-unknown-linux-gnu-"}, {ID: "hipv4-amdgcn-amd-amdhsa--gfx90a/../../x", Data: io.NewSectionReader(bytes.NewReader(code), 0, int64(len(code)))}}); err != nil {
		t.Fatal(err)
	}
	add("bundle-file-slash", write("evil.hipfb", evilFB.Bytes()), "list", "list-json", "package", "link", "wrap-hip", "wrap-hip-compress", "extract", "extract-raw", "extract-24")

	// Objects: cut short, of no machine, and a good one for reference.
	fat := read("..", "..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm22.o")
	add("elf-cut", write("cut.o", fat[:100]))
	none := objectWith(t, ".llvm.offloading", elf.SectionType(elfobj.SHT_LLVM_OFFLOADING), read("..", "..", "offload", "testdata", "llvm", "packager", "single-llvm22.bin"))
	binary.LittleEndian.PutUint16(none[18:], uint16(elf.EM_NONE))
	add("elf-em-none", write("none.o", none), "list", "list-json", "extract", "extract-raw", "check", "package", "embed-into", "link", "convert", "convert-from")
	// clang-22's object, every defined global symbol's st_shndx made
	// SHN_XINDEX with no SHT_SYMTAB_SHNDX to extend it: what reads the
	// symbols, every command that opens it, refuses it, naming SHN_XINDEX.
	add("elf-xindex-no-table", write("xindex.o", xindexWithoutTable(t, fat)))
	ins[len(ins)-1].says = map[string]string{"list": "SHN_XINDEX", "check": "SHN_XINDEX"}

	// Linked programs (testdata/mixing of package entries): one clang-19
	// linked, which check passes; one clang-22 linked from a clang-19
	// object and stripped (check finds its wrapper's descriptor by its
	// shape), which check fails, as an archive of objects of LLVM 19 and 22.
	linked := read("..", "..", "entries", "testdata", "mixing", "same19")
	stripped := read("..", "..", "entries", "testdata", "mixing", "m19by22.strip")
	linkedPass := []string{"list", "list-json", "extract", "extract-raw", "package", "link"}
	add("linked", write("same19", linked), append(linkedPass, "check")...)
	add("linked-mixed-stripped", write("m19by22", stripped), linkedPass...)
	ins[len(ins)-1].says = map[string]string{"check": "1 problem", "check-json": "1 problem"}
	mixed := archiveOf(t, map[string][]byte{"a19.o": read("..", "..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm19.o"), "b22.o": fat})
	add("archive-mixed-releases", write("mixed.a", mixed), "list", "list-json", "extract", "extract-raw", "strip", "package", "link", "device-archive", "convert", "convert-from")
	ins[len(ins)-1].says = map[string]string{"check": "mixed.a(b22.o): 1 problem"}

	// LLVM bitcode host objects (clang -flto): read, listed, extracted and
	// checked; goffload does not rewrite them (strip, convert); link leaves
	// them to the host link. Cut, of two modules (llvm-cat -b), listing one
	// object 20000 times in 16 KiB (llvm-offload-binary-22 writes 20000
	// files): refused.
	bc := read("..", "..", "bitcode", "testdata", "embedded.bc")
	bcPass := []string{"list", "list-json", "check", "extract", "extract-raw", "package", "link"}
	add("bitcode-lto", write("lto.o", bc), bcPass...)
	add("bitcode-archive", write("lto.a", archiveOf(t, map[string][]byte{"a.o": bc, "b.o": read("..", "..", "bitcode", "testdata", "darwin.bc"), "k.o": fat})),
		append(bcPass, "device-archive")...)
	ins[len(ins)-1].says = map[string]string{"strip": "goffload does not rewrite bitcode", "convert": "LLVM bitcode with device code"}
	add("bitcode-cut", write("ltocut.o", bc[:len(bc)/2]))
	add("bitcode-two-modules", write("lto2.o", append(slices.Clone(bc), bc[4:]...)))
	ins[len(ins)-1].says = map[string]string{"list": "2 modules"}
	add("bitcode-listed-many", write("many.o", read("..", "..", "bitcode", "testdata", "listed-many.bc")))
	ins[len(ins)-1].says = map[string]string{"list": "over the limit", "extract": "over the limit"}

	// Cut and mutated copies of real inputs: the readers' own fuzz corpora
	// and the shapes fuzzing found.
	bases := map[string][]byte{
		"fat":      fat,
		"binary":   read("..", "..", "offload", "testdata", "llvm", "packager", "multi-llvm19.bin"),
		"bundle":   read("..", "..", "bundle", "testdata", "hip-fatbin-clang-linker-wrapper-llvm22.bundle"),
		"ccob":     read("..", "..", "bundle", "testdata", "hip-fatbin-llvm22-zstd-v3.ccob"),
		"hipwrap":  read("..", "..", "offload", "testdata", "llvm", "wrapper", "hip-wrapper-llvm22.o"),
		"archive":  archiveOf(t, map[string][]byte{"a.o": fat, "b.bin": deep[:0], "c.o": fat}),
		"linked":   linked,
		"stripped": stripped,
		"bitcode":  bc,
		// Mach-O: a HIP -fgpu-rdc object (entries, a version-3 binary)
		// and a HIP registration object (code, unwind tables, a bundle).
		"macho-rdc":     read("..", "..", "fatobj", "testdata", "macho", "hip-rdc-arm64.o"),
		"macho-wrapper": read("..", "..", "fatobj", "testdata", "macho", "hip-wrapper-x86_64.o"),
	}
	var names []string
	for n := range bases {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		for j, m := range mutations(bases[n], int64(i), 6) {
			ins = append(ins, hostileInput{name: fmt.Sprintf("mutated-%s-%d", n, j), path: write(fmt.Sprintf("%s-%d", n, j), m), any: true})
		}
	}
	for _, corpus := range []string{filepath.Join("..", "..", "elfobj", "testdata", "fuzz", "FuzzRead")} {
		ents, _ := os.ReadDir(corpus)
		for _, e := range ents {
			data := read(corpus, e.Name())
			// The corpus files are in Go's fuzz encoding: take the bytes.
			if v, err := unquoteCorpus(data); err == nil {
				data = v
			}
			ins = append(ins, hostileInput{name: "corpus-" + e.Name(), path: write("corpus-"+e.Name(), data), any: true})
		}
	}
	// extract refuses these for the files it would write (a name out of
	// the folder, more bytes than the disk has); --member k.o selects no
	// file of theirs, so it writes nothing and succeeds.
	for i := range ins {
		switch ins[i].name {
		case "bomb-bundle", "bomb-object", "bomb-huge-entry", "evil-dotdot", "evil-slash", "evil-long",
			"evil-bundle-slash", "evil-bundle-nul", "bundled-slash-id", "bundle-file-slash":
			ins[i].pass = append(ins[i].pass, "extract-member")
		}
	}
	for _, source := range hostileInputSources {
		ins = append(ins, source(t, dir)...)
	}
	return ins
}

// unquoteCorpus decodes a one-value fuzz corpus file ("go test fuzz v1"
// then []byte("...")).
func unquoteCorpus(data []byte) ([]byte, error) {
	lines := strings.SplitN(string(data), "\n", 2)
	if len(lines) != 2 || lines[0] != "go test fuzz v1" {
		return nil, fmt.Errorf("not a corpus file")
	}
	v := strings.TrimSpace(lines[1])
	if !strings.HasPrefix(v, "[]byte(") || !strings.HasSuffix(v, ")") {
		return nil, fmt.Errorf("not a []byte")
	}
	var s string
	if _, err := fmt.Sscanf(v[len("[]byte("):len(v)-1], "%q", &s); err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// fileState is what a snapshot keeps of a file: its inode's change time
// too, which a write moves and no process can set back.
type fileState struct {
	mode         fs.FileMode
	size         int64
	ino          uint64
	mtime, ctime time.Time
	sum          [32]byte
}

// hashedSize is the largest file whose bytes a snapshot hashes: a larger
// one (the hostile inputs of a gigabyte) is known by its size, times and
// inode, which a write changes.
const hashedSize = 1 << 20

// snapshot records every file under the roots, without opening anything
// but regular files.
func snapshot(t *testing.T, roots ...string) map[string]fileState {
	t.Helper()
	m := map[string]fileState{}
	for _, root := range roots {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			st := fileState{mode: info.Mode(), size: info.Size(), mtime: info.ModTime()}
			if sys, ok := info.Sys().(*syscall.Stat_t); ok {
				st.ino = sys.Ino
				st.ctime = time.Unix(sys.Ctim.Unix())
			}
			if info.Mode().IsRegular() && info.Size() <= hashedSize {
				// Streamed: the commands' peak memory is measured, and a
				// child starts with this process's (its exec'd copy
				// shares our memory until exec, and Linux keeps the peak).
				if f, err := os.Open(path); err == nil {
					h := sha256.New()
					io.Copy(h, f)
					f.Close()
					h.Sum(st.sum[:0])
				}
			}
			if !info.IsDir() || path != root {
				m[path] = st
			}
			return nil
		})
	}
	return m
}

// changes lists the paths whose state differs between two snapshots.
func changes(before, after map[string]fileState) []string {
	var out []string
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			out = append(out, "removed "+p)
		case a.mode.IsDir() && b.mode.IsDir():
		case a != b:
			out = append(out, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			out = append(out, "created "+p)
		}
	}
	sort.Strings(out)
	return out
}

// runResult is how one run of goffload ended.
type runResult struct {
	code           int
	stdout, stderr string
	rss            int64         // peak, bytes
	cpu            time.Duration // user and system
	took           time.Duration // wall
	written        int64         // bytes of the files created or changed
	printed        int64         // bytes of standard output and error
}

// Measured runs go through a launcher (internal/tooltest/measure/launcher)
// that runs goffload and writes how the run ended and what it cost (a
// measure.Record): goffload's peak memory is measured so, since a child
// started by the test process itself would report the test's peak.

// launcherPath returns the launcher of measured runs, built once.
func launcherPath(t *testing.T) string {
	t.Helper()
	return shared.Program(t, "github.com/goffload/goffload/internal/tooltest/measure/launcher", "launcher")
}

// sizes returns the size of every regular file under dir, by path, inode
// and modification time (a file rewritten in place differs by the time).
func sizes(dir string) map[string]int64 {
	m := map[string]int64{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			var ino uint64
			if sys, ok := info.Sys().(*syscall.Stat_t); ok {
				ino = sys.Ino
			}
			m[fmt.Sprintf("%s\x00%d\x00%d", path, ino, info.ModTime().UnixNano())] = info.Size()
		}
		return nil
	})
	return m
}

// writtenSince returns the bytes of the files in after that are not in
// before (created or rewritten).
func writtenSince(before, after map[string]int64) int64 {
	var n int64
	for k, size := range after {
		if _, ok := before[k]; !ok {
			n += size
		}
	}
	return n
}

// runGoffload runs the command in dir with TMPDIR set to dir/tmp, through
// the launcher that measures it.
func runGoffload(t *testing.T, exe, dir string, args ...string) runResult {
	t.Helper()
	res, rec, err := runMeasured(t, exe, dir, launcherPath(t), "goffload", args)
	if rec == nil {
		t.Errorf("%v: no record of the run (%v): %s", args, err, res.stderr)
	} else if rec.Signal != "" {
		res.stderr += "\n" + rec.Signal
	}
	return res
}

// runThroughClang links in with clang (clang-19 -fopenmp
// -fopenmp-targets=x86_64-pc-linux-gnu -B DIR) in dir, DIR holding the
// launcher as clang-linker-wrapper: clang runs goffload as its wrapper, with
// the arguments it builds around in. -Wl,--dry-run reaches the wrapper as
// its own option (clang 19 mixes the wrapper's options with the linker's),
// so that what a hostile input costs is goffload's reading of it, not a
// host link. The result is the wrapper's run (its exit code, message and
// cost), not clang's.
func runThroughClang(t *testing.T, clang, exe, dir, in, out string) runResult {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(launcherPath(t), filepath.Join(bin, wrapperName)); err != nil {
		t.Fatal(err)
	}
	args := []string{"-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-B", bin, "-Wl,--dry-run", in, "-o", out}
	res, rec, err := runMeasured(t, exe, dir, clang, clang, args)
	if rec == nil {
		t.Fatalf("clang %v ran no wrapper (%v): %s%s", args, err, res.stdout, res.stderr)
	}
	res.stdout, res.stderr = "", rec.StderrText
	if rec.Signal != "" {
		res.stderr += "\n" + rec.Signal
	}
	return res
}

// runMeasured runs program (argv[0] argv0) with args in dir, TMPDIR set to
// dir/tmp, and the environment that makes the launcher run exe and record
// it. It returns the program's output and the files it wrote, with the cost
// of goffload's run from the launcher's record; rec is nil if the launcher
// left none.
func runMeasured(t *testing.T, exe, dir, program, argv0 string, args []string) (res runResult, rec *measure.Record, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*maxRunTime)
	defer cancel()
	record := filepath.Join(t.TempDir(), "record.json")
	cmd := exec.CommandContext(ctx, program, args...)
	cmd.Args[0] = argv0
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(dir, "tmp"), measure.RecordEnv+"="+record, measure.ExeEnv+"="+exe)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	before := sizes(dir)
	start := time.Now()
	err = cmd.Run()
	res = runResult{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start), code: -1}
	res.written = writtenSince(before, sizes(dir))
	data, rerr := os.ReadFile(record)
	if rerr != nil {
		return res, nil, err
	}
	rec = new(measure.Record)
	if err := json.Unmarshal(data, rec); err != nil {
		t.Fatalf("launcher record: %v", err)
	}
	res.code, res.rss, res.cpu, res.printed = rec.Code, rec.RSS, rec.CPU, rec.Stdout+rec.Stderr
	return res, rec, err
}

// inputSize returns the size of the regular file at path, 0 for anything
// else.
func inputSize(path string) int64 {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		return st.Size()
	}
	return 0
}

// checkRun checks what every run must do: no panic, exit 0 or 1, one line
// naming path on failure, and the budget of path's size.
func checkRun(t *testing.T, res runResult, path string) {
	t.Helper()
	checkRunBudget(t, res, path, inputSize(path), 0)
}

// checkRunBudget is checkRun for an input of size bytes that legitimately
// inflates to inflates bytes.
// runCPUBudget is the CPU time a run on an input of size bytes that
// inflates bytes may take.
func runCPUBudget(size, inflates int64) time.Duration {
	cpu := budgetCPU + time.Duration(size)*budgetCPUPerByte
	if inflates > 0 {
		cpu += time.Duration(inflates) * budgetCPUPerInflated
	}
	return cpu
}

func checkRunBudget(t *testing.T, res runResult, path string, size, inflates int64) {
	t.Helper()
	if res.code != 0 && res.code != 1 {
		t.Errorf("exit %d:\n%s", res.code, res.stderr)
	}
	if strings.Contains(res.stderr, "panic") || strings.Contains(res.stderr, "goroutine ") {
		t.Errorf("panicked:\n%s", res.stderr)
	}
	if res.code == 1 {
		msg := strings.TrimSuffix(res.stderr, "\n")
		if msg == "" || strings.Contains(msg, "\n") || !strings.HasSuffix(res.stderr, "\n") {
			t.Errorf("message is not one line: %q", res.stderr)
		}
		if !strings.Contains(msg, path) {
			t.Errorf("message does not name %s: %q", path, msg)
		}
		if strings.Contains(msg, ".goffload-tmp-") || strings.Contains(msg, "goffload-scratch") {
			t.Errorf("message names a temporary file: %q", msg)
		}
	}
	logCost(t.Name(), res, size)
	if res.took > maxRunTime {
		t.Errorf("took %v (wall)", res.took)
	}
	cpu, rss := runCPUBudget(size, inflates), budgetRSS+size*budgetRSSPerByte
	if inflates > 0 {
		rss += budgetRSSInflating
	}
	if limit := cpu; res.cpu > limit {
		t.Errorf("CPU time %v, over the budget %v of %d input bytes", res.cpu, limit, size)
	}
	if limit := rss; res.rss > limit {
		t.Errorf("peak memory %.1f MiB, over the budget %.1f MiB of %d input bytes", float64(res.rss)/(1<<20), float64(limit)/(1<<20), size)
	}
	out := res.printed + res.written
	if limit := budgetOutput + size*budgetOutputPerByte + inflates; out > limit {
		t.Errorf("output %d bytes (%d written to files), over the budget %d of %d input bytes", out, res.written, limit, size)
	}
}

// statsEnv names a file to which every checked run appends its cost, as
// tab-separated fields (test, input size, exit code, peak RSS, CPU time,
// wall time, output bytes): how the budget's constants were chosen.
const statsEnv = "GOFFLOAD_HOSTILE_STATS"

var statsMu sync.Mutex

func logCost(name string, res runResult, size int64) {
	stats := os.Getenv(statsEnv)
	if stats == "" {
		return
	}
	statsMu.Lock()
	defer statsMu.Unlock()
	f, err := os.OpenFile(stats, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s\t%d\t%d\t%d\t%d\t%d\t%d\n", name, size, res.code, res.rss, res.cpu.Microseconds(), res.took.Microseconds(), res.printed+res.written)
}

// TestHostileInputs runs every subcommand on every hostile input.
func TestHostileInputs(t *testing.T) {
	exe := goffloadExe(t)
	in := t.TempDir()
	ins := hostileInputs(t, in)
	if m := os.Getenv("OFFLOAD_HOSTILE_INPUTS"); m != "" {
		// Only the inputs whose name holds m (a debugging aid).
		ins = slices.DeleteFunc(ins, func(hi hostileInput) bool { return !strings.Contains(hi.name, m) })
	}
	good := filepath.Join(in, "good.bin")
	os.WriteFile(good, packaged(t, in, "file="+filepath.Join("..", "..", "offload", "testdata", "llvm", "img1.bin")+",triple=x86_64-unknown-linux-gnu,kind=openmp"), 0o644)
	before := snapshot(t, in)
	clang := tooltest.Find("clang", 19)
	cmds := hostileCommands(good)
	for ci, c := range cmds {
		t.Run(c.name, func(t *testing.T) {
			if c.clang && clang == "" {
				tooltest.Missing(t, "clang of LLVM 19 not found: the wrapper is not run through clang -B")
			}
			t.Parallel()
			for ii, hi := range ins {
				if c.clang && !objectShaped(hi.path) {
					continue
				}
				// By default each input is run by hostileSample commands,
				// and each command runs a share of the inputs; with
				// OFFLOAD_TEST_EXHAUSTIVE=1, every input by every command.
				if !tooltest.SampledN(ii, ci, len(ins), len(cmds), hostileSample) {
					continue
				}
				var work, out string
				var args []string
				var pre map[string]fileState
				var res runResult
				// A run over its CPU budget runs once more, in a folder
				// of its own, and the second counts: this VM's CPU time
				// grows with the host's load (it reports no steal time),
				// and a cost that is the input's is over it both times.
				for try := 0; try < 2; try++ {
					work = t.TempDir()
					os.Mkdir(filepath.Join(work, "tmp"), 0o755)
					out = filepath.Join(work, "out")
					args = make([]string, len(c.args))
					for i, a := range c.args {
						a = strings.ReplaceAll(a, "IN", hi.path)
						args[i] = strings.ReplaceAll(a, "OUT", out)
					}
					pre = snapshot(t, work)
					if c.clang {
						args = []string{"clang-19", "-B", "DIR", hi.path}
						res = runThroughClang(t, clang, exe, work, hi.path, out)
					} else {
						res = runGoffload(t, exe, work, args...)
					}
					if res.cpu <= runCPUBudget(inputSize(hi.path), hi.inflates) {
						break
					}
				}
				t.Run(hi.name, func(t *testing.T) {
					checkRunBudget(t, res, hi.path, inputSize(hi.path), hi.inflates)
					if c.clang || c.any {
						// For clang, the release is clang's (19), not the
						// table's linker-wrapper's (22): whether the
						// input is accepted is not asked here, only that
						// the run keeps the rules and the budget.
						hi.any = true
					}
					wantPass := false
					for _, p := range hi.pass {
						wantPass = wantPass || p == c.name || p == c.like
					}
					if !hi.any && wantPass != (res.code == 0) {
						t.Errorf("%v: exit %d, want success %v:\n%s", args, res.code, wantPass, res.stderr)
					}
					if want, ok := hi.says[c.name]; ok && !strings.Contains(res.stderr, want) {
						t.Errorf("%v: message %q does not say %q", args, res.stderr, want)
					}
					var unexpected []string
					for _, ch := range changes(pre, snapshot(t, work)) {
						p := ch[strings.IndexByte(ch, ' ')+1:]
						mayWrite := res.code == 0 && (p == out || c.outDir && strings.HasPrefix(p, out+string(filepath.Separator)))
						if !mayWrite {
							unexpected = append(unexpected, ch)
						}
					}
					if len(unexpected) > 0 {
						t.Errorf("%v (exit %d): %s", args, res.code, strings.Join(unexpected, ", "))
					}
				})
			}
		})
	}
	t.Cleanup(func() {
		if ch := changes(before, snapshot(t, in)); len(ch) > 0 {
			t.Errorf("inputs changed: %s", strings.Join(ch, ", "))
		}
	})
}
