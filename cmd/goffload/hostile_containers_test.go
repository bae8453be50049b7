package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
)

func init() { hostileInputSources = append(hostileInputSources, hostileContainerInputs) }

// hostileContainerInputs builds into dir the inputs built to multiply
// through the containers (issue 24): a compressed bundle's own header
// inflating (an ID of 1 GiB, 4 million entries, in a file and in a
// .hip_fatbin section), a compressed bundle whose FileSize ends inside its
// header, and many records naming one long string (GNU archive long names,
// ELF symbol names). Each is refused with the bound's
// message by the commands that read the part built to multiply.
func hostileContainerInputs(t *testing.T, dir string) []hostileInput {
	t.Helper()
	write := func(name string, data []byte) string { return writeInput(t, dir, name, data) }
	le := binary.LittleEndian
	// A bundle header of count entries, then body.
	header := func(count uint64, body ...[]byte) []byte {
		b := le.AppendUint64([]byte(bundle.Magic), count)
		for _, p := range body {
			b = append(b, p...)
		}
		return b
	}
	entry := func(idLen uint64) []byte {
		return le.AppendUint64(le.AppendUint64(le.AppendUint64(nil, 1), 0), idLen)
	}
	compress := func(plain io.ReaderAt, size int64) []byte {
		var buf bytes.Buffer
		if _, err := bundle.WriteCompressed(&buf, plain, size, bundle.CompressOptions{Version: 3, Method: bundle.MethodZstd, Level: 1}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	var ins []hostileInput
	limit := map[string]string{}
	for _, c := range []string{"list", "list-json", "list-24", "check", "check-json", "extract", "extract-raw", "extract-24", "extract-member", "strip", "link"} {
		limit[c] = "over the limit"
	}

	// wrap --kind hip reads a compressed bundle's header (ceeaf2b inflated
	// the 1 GiB ID: 27 s, 5.3 GB).
	fileLimit := map[string]string{"wrap-hip": "over the limit"}
	for c, m := range limit {
		fileLimit[c] = m
	}

	// One ID of 1 GiB: 33 KB of zstd.
	const gib = 1 << 30
	head := header(1, entry(gib))
	idBomb := compress(&prefixed{head: head, fill: bytes.Repeat([]byte{'a'}, 1<<16), size: int64(len(head)) + gib}, int64(len(head))+gib)
	ins = append(ins, hostileInput{name: "ccob-id-1gib", path: write("ccob-id-1gib.hipfb", idBomb), any: true, says: fileLimit})
	// 4 million empty entries: 96 MiB of entry headers, made as they are
	// compressed (the commands the table runs count the test's own peak
	// memory in theirs, as they start from it).
	head = header(4 << 20)
	manySize := int64(len(head)) + 4<<20*int64(len(entry(0)))
	ins = append(ins, hostileInput{name: "ccob-4m-entries", path: write("ccob-4m-entries.hipfb", compress(&prefixed{head: head, fill: bytes.Repeat(entry(0), 1<<16/len(entry(0))), size: manySize}, manySize)), any: true, says: fileLimit})
	// The same in a .hip_fatbin section.
	ins = append(ins, hostileInput{name: "hip-fatbin-ccob-id-1gib", path: write("hip-fatbin-ccob-id-1gib.o", objectWith(t, ".hip_fatbin", elf.SHT_PROGBITS, idBomb)), any: true, says: limit})

	// A version-2 compressed bundle whose FileSize, 10, ends inside its
	// 24-byte header.
	small := compress(bytes.NewReader(header(0)), int64(len(header(0))))
	v2 := append([]byte(bundle.CompressedMagic), 2, 0, 1, 0)
	v2 = le.AppendUint32(v2, 10)
	v2 = le.AppendUint32(v2, uint32(len(header(0))))
	v2 = le.AppendUint64(v2, 0)
	v2 = append(v2, small[bundle.HeaderSize(3):]...)
	says := map[string]string{}
	for _, c := range []string{"list", "list-json", "list-24", "check", "check-json", "extract", "extract-raw", "extract-24"} {
		says[c] = "smaller than its header"
	}
	ins = append(ins, hostileInput{name: "ccob-filesize-in-header", path: write("ccob-filesize-in-header.hipfb", v2), any: true, says: says})

	// A GNU archive of 3,400 members all named by one 64 KiB long name:
	// 220 KB.
	long := strings.Repeat("n", 64<<10)
	var arch bytes.Buffer
	arch.WriteString("!<arch>\n")
	fmt.Fprintf(&arch, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", "//", "0", "0", "0", "0", len(long)+2)
	arch.WriteString(long + "/\n")
	for range 3400 {
		fmt.Fprintf(&arch, "%-16s%-12s%-6s%-6s%-8s%-10d`\n", "/0", "0", "0", "0", "644", 0)
	}
	ins = append(ins, hostileInput{name: "ar-long-names-one-name", path: write("ar-long-names-one-name.a", arch.Bytes()), any: true, says: map[string]string{"list": "over the limit", "convert": "over the limit"}})

	// 4,000 symbols named by one 256 KiB string: 350 KB.
	o, err := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	text := &elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 16, Data: []byte{0xc3}}
	o.AddSection(text, false)
	sym := strings.Repeat("s", 256<<10)
	for range 4000 {
		o.Symbols = append(o.Symbols, &elfobj.Symbol{Name: sym, Type: elf.STT_FUNC, Bind: elf.STB_LOCAL, Section: text})
	}
	var syms bytes.Buffer
	if _, err := elfobj.Write(&syms, o); err != nil {
		t.Fatal(err)
	}
	ins = append(ins, hostileInput{name: "elf-symbols-one-name", path: write("elf-symbols-one-name.o", syms.Bytes()), any: true, says: map[string]string{"check": "over the limit"}})

	// An executable of 14,000 entries, each named by its own string in a
	// section after 6,000 one-byte sections: 0.95 MB. A scan of every
	// section for every name (ceeaf2b) took 0.24 s here, 10 s at 40,000 of
	// each (4.4 MB) and 52 s at 200,000 and 60,000 (12 MB).
	var strs []byte
	var offs []uint64
	for i := range 14000 {
		offs = append(offs, uint64(len(strs)))
		strs = fmt.Appendf(strs, "e%d\x00", i)
	}
	// check refuses it, as no image goes with the entries.
	ins = append(ins, hostileInput{name: "exe-entries-many-sections", path: write("exe-entries-many-sections", linkedEntries(14000, 6000, strs, func(i int) uint64 { return offs[i] })),
		pass: []string{"list", "list-json", "list-24", "extract", "extract-raw", "extract-24", "extract-member", "package", "package-compress", "link", "wrap-14"},
		says: map[string]string{"check": "14001 problems", "check-json": "14001 problems"}})

	// An executable of 1,000 entries whose names all point at one 64 KiB
	// string: 98 KB.
	one := append(bytes.Repeat([]byte{'n'}, 64<<10), 0)
	says = map[string]string{}
	for _, c := range []string{"list", "list-json", "list-24", "check", "check-json", "extract", "extract-raw", "extract-24", "extract-member", "strip", "link", "linker-wrapper", "device-archive", "convert", "convert-from"} {
		says[c] = "over the limit"
	}
	ins = append(ins, hostileInput{name: "exe-entries-one-name", path: write("exe-entries-one-name", linkedEntries(1000, 0, one, func(int) uint64 { return 0 })),
		pass: []string{"package", "package-compress", "wrap-14"}, says: says})

	// An executable of 8,000 sections all named by one 64 KiB string:
	// 590 KB, whose names debug/elf copied for each section (512 MiB).
	secName := strings.Repeat("s", 64<<10)
	secs := make([]linkedSection, 8000)
	for i := range secs {
		secs[i] = linkedSection{name: secName, typ: elf.SHT_PROGBITS}
	}
	says = map[string]string{}
	for _, c := range []string{"list", "list-json", "list-24", "check", "check-json", "extract", "extract-raw", "extract-24", "extract-member", "embed-into", "strip", "link", "linker-wrapper", "device-archive", "convert", "convert-from"} {
		says[c] = "over the limit"
	}
	ins = append(ins, hostileInput{name: "elf-sections-one-name", path: write("elf-sections-one-name", linkedELF(secs)),
		pass: []string{"package", "package-compress", "wrap-14"}, says: says})

	// The bounds are figured on inputs of at most 1 MiB.
	for _, in := range ins {
		if st, err := os.Stat(in.path); err != nil {
			t.Error(err)
		} else if st.Size() > 1<<20 {
			t.Errorf("hostile input %s: %d bytes, more than 1 MiB", in.name, st.Size())
		}
	}
	return ins
}

// prefixed is an io.ReaderAt of head followed by fill repeated up to size
// bytes. A fill of many bytes (its pattern repeated) makes each ReadAt a
// few copies: a fill of one byte took 8 s to read 1 GiB.
type prefixed struct {
	head, fill []byte
	size       int64
}

func (p *prefixed) ReadAt(b []byte, off int64) (int, error) {
	if off >= p.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) && off < p.size {
		var c int
		if off < int64(len(p.head)) {
			c = copy(b[n:], p.head[off:])
		} else {
			c = copy(b[n:], p.fill[(off-int64(len(p.head)))%int64(len(p.fill)):])
		}
		c = int(min(int64(c), p.size-off))
		n, off = n+c, off+int64(c)
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// linkedSection is a section of an executable that linkedELF writes: its
// bytes are written once and the section header gives them at addr.
type linkedSection struct {
	name  string
	typ   elf.SectionType
	flags elf.SectionFlag
	addr  uint64
	data  []byte
}

// linkedELF writes an x86-64 ELF executable (ET_EXEC) of the sections,
// which elfobj.Write cannot (it writes relocatable objects): the ELF
// header, the sections' bytes, the section names and the section headers,
// nothing else (no program headers, symbols or relocations; an entry's
// pointers are the addresses stored in it). Sections of one name share
// its bytes in the names' table.
func linkedELF(secs []linkedSection) []byte {
	le := binary.LittleEndian
	shstr := []byte{0}
	nameOff := map[string]uint32{}
	nameOf := func(s string) uint32 {
		if off, ok := nameOff[s]; ok {
			return off
		}
		nameOff[s] = uint32(len(shstr))
		shstr = append(append(shstr, s...), 0)
		return nameOff[s]
	}
	out := make([]byte, 64)
	type placed struct {
		linkedSection
		off uint64
	}
	all := make([]placed, 0, len(secs)+1)
	for _, s := range secs {
		nameOf(s.name)
		for len(out)%8 != 0 {
			out = append(out, 0)
		}
		all = append(all, placed{s, uint64(len(out))})
		out = append(out, s.data...)
	}
	shstrndx := len(all) + 1
	all = append(all, placed{linkedSection{name: ".shstrtab", typ: elf.SHT_STRTAB}, 0})
	nameOf(".shstrtab")
	all[len(all)-1].off, all[len(all)-1].data = uint64(len(out)), shstr
	out = append(out, shstr...)
	for len(out)%8 != 0 {
		out = append(out, 0)
	}
	shoff := len(out)
	out = append(out, make([]byte, 64)...) // the null section
	for _, s := range all {
		out = le.AppendUint32(out, nameOf(s.name))
		out = le.AppendUint32(out, uint32(s.typ))
		out = le.AppendUint64(out, uint64(s.flags))
		out = le.AppendUint64(out, s.addr)
		out = le.AppendUint64(out, s.off)
		out = le.AppendUint64(out, uint64(len(s.data)))
		out = le.AppendUint32(out, 0) // link
		out = le.AppendUint32(out, 0) // info
		out = le.AppendUint64(out, 1) // addralign
		out = le.AppendUint64(out, 0) // entsize
	}
	h := out[:0:64]
	h = append(h, 0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT))
	h = append(h, make([]byte, 9)...)
	h = le.AppendUint16(h, uint16(elf.ET_EXEC))
	h = le.AppendUint16(h, uint16(elf.EM_X86_64))
	h = le.AppendUint32(h, uint32(elf.EV_CURRENT))
	h = le.AppendUint64(h, 0)             // entry
	h = le.AppendUint64(h, 0)             // phoff
	h = le.AppendUint64(h, uint64(shoff)) // shoff
	h = le.AppendUint32(h, 0)             // flags
	h = le.AppendUint16(h, 64)            // ehsize
	h = le.AppendUint16(h, 56)            // phentsize
	h = le.AppendUint16(h, 0)             // phnum
	h = le.AppendUint16(h, 64)            // shentsize
	h = le.AppendUint16(h, uint16(len(all)+1))
	h = le.AppendUint16(h, uint16(shstrndx))
	_ = h
	return out
}

// linkedEntries returns an executable of n OpenMP offload entries (the
// legacy 32-byte layout of omp_offloading_entries) and extra one-byte
// sections after them, then the entries' names in .rodata, after the
// extra sections: each entry i is named by the address name(i) returns, an
// offset in strs.
func linkedEntries(n, extra int, strs []byte, name func(i int) uint64) []byte {
	le := binary.LittleEndian
	const entriesAt, extraAt, strsAt = 0x200000, 0x400000, 0x100000
	var ents []byte
	for i := range n {
		ents = le.AppendUint64(ents, 0)                     // addr
		ents = le.AppendUint64(ents, strsAt+name(i))        // name
		ents = le.AppendUint64(ents, 0)                     // size
		ents = le.AppendUint32(le.AppendUint32(ents, 0), 0) // flags, reserved
	}
	secs := []linkedSection{{name: "omp_offloading_entries", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_WRITE, addr: entriesAt, data: ents}}
	for i := range extra {
		secs = append(secs, linkedSection{name: ".x", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC, addr: extraAt + 16*uint64(i), data: []byte{0}})
	}
	secs = append(secs, linkedSection{name: ".rodata", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC, addr: strsAt, data: strs})
	return linkedELF(secs)
}
