package entries

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

var releasesWithClang = []int{13, 14, 15, 16, 19, 22}

func lookupRelease(t testing.TB, major int) *release.Release {
	t.Helper()
	r, err := release.Lookup(major)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// openMPFlags are the flags that compile the OpenMP sources with clang major.
func openMPFlags(major int) []string {
	args := []string{"-O0", "-fopenmp", "-fopenmp-targets=x86_64-unknown-linux-gnu"}
	if major == 13 {
		// clang-13 compiles without PIC by default, which leaves the
		// entries section read-only ("a", not "aw"): the tables of
		// clang-14 and later, which Write makes, need PIC.
		args = append(args, "-fPIE")
	}
	if major < 15 {
		return append(args, "-fopenmp-version=51", "-DNO_INDIRECT")
	}
	if major == 15 {
		return append(args, "-fopenmp-version=51")
	}
	return append(args, "-fopenmp-version=52", "-DUSE_ENTER")
}

// hipFlags compile a HIP source for the host with the new driver.
var hipFlags = []string{"-x", "hip", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-fgpu-rdc", "--offload-new-driver"}

func readFile(t *testing.T, path string) *elfobj.File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := elfobj.Read(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func readEntries(t *testing.T, path string, r *release.Release) []FileEntry {
	t.Helper()
	ents, err := Read(readFile(t, path), r)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return ents
}

// readelfView is what llvm-readelf -r -x -p shows of a file.
type readelfView struct {
	data    map[string][]byte               // -x: section: its bytes
	relocs  map[string]map[uint64][2]string // -r: relocation section: offset: symbol, addend (hex, signed)
	strings map[string]map[uint64]string    // -p: section: offset: string
}

var (
	hexLine   = regexp.MustCompile(`^0x[0-9a-f]+ ((?:[0-9a-f]{2,8} ?)+)`)
	relocLine = regexp.MustCompile(`^([0-9a-f]{16})\s+[0-9a-f]{16}\s+\S+\s+[0-9a-f]{16}\s+(\S+)\s+([+-])\s+([0-9a-f]+)$`)
	strLine   = regexp.MustCompile(`^\[\s*([0-9a-f]+)\]\s(.*)$`)
)

// parse adds to v what llvm-readelf printed of one file: hex dumps
// (-x), relocations (-r --wide) and string dumps (-p), each under the
// section of the heading it follows.
func (v *readelfView) parse(out string) {
	if v.data == nil {
		v.data, v.relocs, v.strings = map[string][]byte{}, map[string]map[uint64][2]string{}, map[string]map[uint64]string{}
	}
	var hexSec, relSec, strSec string // the section of the part being read: one at most
	for _, line := range strings.Split(out, "\n") {
		l := strings.TrimSpace(line)
		if name, ok := heading(l); ok {
			hexSec, relSec, strSec = "", "", ""
			switch {
			case strings.HasPrefix(l, "Hex dump of section "):
				hexSec = name
			case strings.HasPrefix(l, "Relocation section "):
				relSec = name
				if v.relocs[name] == nil {
					v.relocs[name] = map[uint64][2]string{}
				}
			case strings.HasPrefix(l, "String dump of section "):
				strSec = name
				if v.strings[name] == nil {
					v.strings[name] = map[uint64]string{}
				}
			}
			continue
		}
		switch {
		case hexSec != "":
			if m := hexLine.FindStringSubmatch(l); m != nil {
				for _, g := range strings.Fields(m[1]) {
					b, _ := hex.DecodeString(g)
					v.data[hexSec] = append(v.data[hexSec], b...)
				}
			}
		case relSec != "":
			if m := relocLine.FindStringSubmatch(l); m != nil {
				off, _ := strconv.ParseUint(m[1], 16, 64)
				v.relocs[relSec][off] = [2]string{m[2], m[3] + m[4]}
			}
		case strSec != "":
			if m := strLine.FindStringSubmatch(l); m != nil {
				o, _ := strconv.ParseUint(m[1], 16, 64)
				v.strings[strSec][o] = m[2]
			}
		}
	}
}

// heading returns the section that a heading of llvm-readelf's output
// names ("Hex dump of section 'x':", "Relocation section '.relax' at ...").
func heading(l string) (string, bool) {
	for _, p := range []string{"Hex dump of section '", "Relocation section '", "String dump of section '"} {
		if rest, ok := strings.CutPrefix(l, p); ok {
			name, _, ok := strings.Cut(rest, "'")
			return name, ok
		}
	}
	return "", false
}

// stringAt returns the string at off of section sec as llvm-readelf -p shows it.
func (v *readelfView) stringAt(sec string, off uint64) string {
	strs := v.strings[sec]
	if s, ok := strs[off]; ok {
		return s
	}
	for o, s := range strs { // a string that shares the tail of another
		if off > o && off < o+uint64(len(s)) {
			return s[off-o:]
		}
	}
	return ""
}

// TestReadMatchesReadelf: every entry read from objects that clang 13, 14,
// 15, 16, 19 and 22 make (and from the fixture objects) equals what llvm-readelf shows of
// its section bytes, relocations and strings. llvm-readelf runs twice for all
// the objects at once: -r -x of the entries sections, then -p of the
// sections that the names point into.
func TestReadMatchesReadelf(t *testing.T) {
	t.Parallel()
	tool := tooltest.Tool(t, "llvm-readelf", 19)
	objs := testObjects(t)
	ents := make([][]FileEntry, len(objs))
	var paths []string
	args := []string{"-r", "--wide"}
	secs := map[string]bool{}
	for i, obj := range objs {
		paths = append(paths, obj.path)
		ents[i] = readEntries(t, obj.path, lookupRelease(t, obj.major))
		for _, e := range ents[i] {
			if !secs[e.Section] {
				secs[e.Section] = true
				args = append(args, "-x", e.Section)
			}
		}
	}
	views := map[string]*readelfView{}
	for path, out := range readelfFiles(t, tool, args, paths) {
		views[path] = &readelfView{}
		views[path].parse(out)
	}
	args, secs = nil, map[string]bool{}
	for i, obj := range objs {
		for _, e := range ents[i] {
			if sec, _, ok := namePlace(t, obj.path, lookupRelease(t, obj.major), views[obj.path], e); ok && !secs[sec] {
				secs[sec] = true
				args = append(args, "-p", sec)
			}
		}
	}
	if len(args) > 0 {
		for path, out := range readelfFiles(t, tool, args, paths) {
			views[path].parse(out)
		}
	}
	for i, obj := range objs {
		t.Run(obj.name, func(t *testing.T) {
			if len(ents[i]) == 0 {
				t.Errorf("%s: no entries", obj.path)
			}
			for _, e := range ents[i] {
				checkAgainstReadelf(t, obj.path, lookupRelease(t, obj.major), views[obj.path], e)
			}
		})
	}
	skipUnsampled(t)
}

// namePlace returns the section and offset of the name of e as llvm-readelf
// shows its relocation in v, and false if it shows none.
func namePlace(t *testing.T, path string, r *release.Release, v *readelfView, e FileEntry) (string, uint64, bool) {
	t.Helper()
	base := uint64(e.Index * e.Layout.Size())
	name, ok := v.relocs[".rela"+e.Section][base+uint64(e.Layout.NameOffset())]
	if !ok {
		return "", 0, false
	}
	off, _ := strconv.ParseUint(strings.TrimPrefix(name[1], "+"), 16, 64)
	sec := name[0]
	if strings.HasPrefix(sec, r.Entries.NameSymbol) {
		// Relocated against the string's own symbol (riscv64): find it
		// with debug/elf.
		sec, off = symbolPlace(t, path, sec, off)
	}
	return sec, off, true
}

func checkAgainstReadelf(t *testing.T, path string, r *release.Release, v *readelfView, e FileEntry) {
	t.Helper()
	where := fmt.Sprintf("%s %s[%d]", filepath.Base(path), e.Section, e.Index)
	size := e.Layout.Size()
	data := v.data[e.Section]
	if len(data) < (e.Index+1)*size {
		t.Fatalf("%s: llvm-readelf shows %d bytes of the section", where, len(data))
	}
	b := data[e.Index*size : (e.Index+1)*size]
	le := binary.LittleEndian
	var wantSize, wantData uint64
	var wantFlags uint32
	wantKind, _ := offload.EntrySectionKind(e.Section)
	if e.Layout == offload.EntryV1 {
		wantKind = offload.OffloadKindOf(r, le.Uint16(b[10:]))
		wantFlags, wantSize, wantData = le.Uint32(b[12:]), le.Uint64(b[32:]), le.Uint64(b[40:])
	} else {
		wantSize, wantFlags, wantData = le.Uint64(b[16:]), le.Uint32(b[24:]), uint64(le.Uint32(b[28:]))
	}
	if e.Kind != wantKind || e.Size != wantSize || e.Flags != wantFlags || e.Data != wantData {
		t.Errorf("%s: kind %v size %d flags %#x data %d; readelf: %v %d %#x %d", where, e.Kind, e.Size, e.Flags, e.Data, wantKind, wantSize, wantFlags, wantData)
	}
	base := uint64(e.Index * size)
	addr, ok := v.relocs[".rela"+e.Section][base+uint64(e.Layout.AddrOffset())]
	want := offload.SymbolRef{}
	if ok {
		n, _ := strconv.ParseInt(addr[1], 16, 64)
		want = offload.SymbolRef{Symbol: addr[0], Addend: n}
	}
	if e.Address != want {
		t.Errorf("%s: address %v; readelf %v", where, e.Address, want)
	}
	sec, off, ok := namePlace(t, path, r, v, e)
	if !ok {
		t.Fatalf("%s: readelf shows no name relocation", where)
	}
	if s := v.stringAt(sec, off); s != e.Name {
		t.Errorf("%s: name %q; readelf %q at %s+%#x", where, e.Name, s, sec, off)
	}
}

// symbolPlace returns the section and offset of symbol name plus off, as
// debug/elf reads them.
func symbolPlace(t *testing.T, path, name string, off uint64) (string, uint64) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && int(s.Section) < len(f.Sections) {
			return f.Sections[s.Section].Name, s.Value + off
		}
	}
	t.Fatalf("%s: no symbol %s", path, name)
	return "", 0
}

// symbolView is what the comparison keeps of a symbol.
type symbolView struct {
	name       string
	bind       elf.SymBind
	vis        elf.SymVis
	size, val  uint64
	typ        elf.SymType
	sectionNam string
}

// TestWriteMatchesClang writes the entries read from clang-N's objects with
// release N and compares the entries sections, their relocations and the
// entry symbols with clang's.
func TestWriteMatchesClang(t *testing.T) {
	t.Parallel()
	for _, obj := range testObjects(t) {
		t.Run(obj.name, func(t *testing.T) {
			path := obj.path
			r := lookupRelease(t, obj.major)
			ents := readEntries(t, path, r)
			o, err := elfobj.ForTriple(obj.triple)
			if err != nil {
				t.Fatal(err)
			}
			plain := make([]offload.Entry, len(ents))
			for i, e := range ents {
				plain[i] = e.Entry
			}
			if err := Write(o, r, plain); err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if _, err := elfobj.Write(&buf, o); err != nil {
				t.Fatal(err)
			}
			ours, err := elfobj.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatal(err)
			}
			compareTables(t, readFile(t, path), ours, r)
		})
	}
	skipUnsampled(t)
}

func compareTables(t *testing.T, clang, ours *elfobj.File, r *release.Release) {
	t.Helper()
	for _, sec := range []string{r.Entries.OpenMP, r.Entries.CUDA, r.Entries.HIP} {
		cs, os := clang.Section(sec), ours.Section(sec)
		if cs == nil && os == nil {
			continue
		}
		if cs == nil || os == nil {
			t.Errorf("section %s: in clang's object %v, in ours %v", sec, cs != nil, os != nil)
			continue
		}
		cd, _ := cs.Data()
		od, _ := os.Data()
		if !bytes.Equal(cd, od) || cs.Flags != os.Flags || cs.Addralign != os.Addralign || cs.Entsize != os.Entsize {
			t.Errorf("section %s: flags %v/%v align %d/%d entsize %d/%d bytes equal %v", sec, cs.Flags, os.Flags, cs.Addralign, os.Addralign, cs.Entsize, os.Entsize, bytes.Equal(cd, od))
		}
		cr, or := relocsView(t, clang, cs, r.Entries.NameSymbol), relocsView(t, ours, os, r.Entries.NameSymbol)
		if fmt.Sprint(cr) != fmt.Sprint(or) {
			t.Errorf("section %s relocations:\nclang %v\nours  %v", sec, cr, or)
		}
	}
	cs, os := entrySymbols(t, clang, r), entrySymbols(t, ours, r)
	if fmt.Sprint(cs) != fmt.Sprint(os) {
		t.Errorf("entry symbols:\nclang %v\nours  %v", cs, os)
	}
}

// relocsView lists the relocations of sec as offset, type, and either the
// symbol and addend, or the string a section symbol plus addend points to.
func relocsView(t *testing.T, f *elfobj.File, sec *elfobj.FileSection, nameSym string) []string {
	t.Helper()
	var out []string
	for _, rs := range f.SectionsByType(elf.SHT_RELA) {
		if int(rs.Info) != sec.Index {
			continue
		}
		rels, err := f.Relocations(rs)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rels {
			target := fmt.Sprintf("%s%+d", r.Symbol.Name, r.Addend)
			// A name pointer: compare the string, whether through the
			// section symbol or the string's own (numbered) symbol.
			if r.Symbol.Type() == elf.STT_SECTION || strings.HasPrefix(r.Symbol.Name, nameSym) {
				data, _ := f.Sections[r.Symbol.Section].Data()
				s := data[r.Symbol.Value+uint64(r.Addend):]
				kind := "section"
				if r.Symbol.Type() != elf.STT_SECTION {
					kind = "symbol"
				}
				target = fmt.Sprintf("%s string %q", kind, s[:bytes.IndexByte(s, 0)])
			}
			out = append(out, fmt.Sprintf("%#x %v %s", r.Offset, elfobj.RelocTypeOf(f.Machine, r.Type), target))
		}
	}
	return out
}

func entrySymbols(t *testing.T, f *elfobj.File, r *release.Release) []symbolView {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var out []symbolView
	for _, s := range syms {
		if strings.HasPrefix(s.Name, r.Entries.SymbolPrefix) || strings.HasSuffix(s.Name, ".region_id") {
			out = append(out, symbolView{s.Name, s.Bind(), elf.SymVis(s.Other & 3), s.Size, s.Value, s.Type(), f.Sections[s.Section].Name})
		}
	}
	// The order in the symbol table means nothing here.
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func ExampleWrite() {
	o, _ := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	r, _ := release.Lookup(19)
	req, _ := RequiresEntry(r, offload.RequiresUnifiedSharedMemory)
	if err := Write(o, r, []offload.Entry{KernelEntry("__omp_offloading_10_20_main_l5"), req}); err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		panic(err)
	}
	f, _ := elfobj.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	ents, _ := Read(f, r)
	for _, e := range ents {
		fmt.Printf("%s[%d] %q -> %v flags=%v data=%d\n", e.Section, e.Index, e.Name, e.Address, offload.OpenMPFlags(e.Flags), e.Data)
	}
	// Output:
	// omp_offloading_entries[0] "__omp_offloading_10_20_main_l5" -> .__omp_offloading_10_20_main_l5.region_id flags=0 data=0
	// omp_offloading_entries[1] "" -> null flags=requires data=8
}
