package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
)

// hostileContainerInputs builds into dir the inputs built to multiply
// through the containers (issue 24): a compressed bundle's own header
// inflating (an ID of 1 GiB, 4 million entries, in a file and in a
// .hip_fatbin section), a compressed bundle whose FileSize ends inside its
// header, and many records naming one long string (GNU archive long names,
// ELF symbol names). Each is refused with the bound's
// message by the commands that read the part built to multiply.
func hostileContainerInputs(t *testing.T, dir string) []hostileInput {
	t.Helper()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
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
	for _, c := range []string{"list", "list-json", "list-23", "check", "check-json", "extract", "extract-raw", "extract-23", "extract-member", "strip", "link"} {
		limit[c] = "over the limit"
	}

	// One ID of 1 GiB: 33 KB of zstd.
	const gib = 1 << 30
	head := header(1, entry(gib))
	idBomb := compress(&prefixed{head: head, fill: 'a', size: int64(len(head)) + gib}, int64(len(head))+gib)
	ins = append(ins, hostileInput{name: "ccob-id-1gib", path: write("ccob-id-1gib.hipfb", idBomb), any: true, says: limit})
	// 4 million empty entries: 96 MiB of entry headers.
	many := header(4<<20, bytes.Repeat(entry(0), 4<<20))
	ins = append(ins, hostileInput{name: "ccob-4m-entries", path: write("ccob-4m-entries.hipfb", compress(bytes.NewReader(many), int64(len(many)))), any: true, says: limit})
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
	for _, c := range []string{"list", "list-json", "list-23", "check", "check-json", "extract", "extract-raw", "extract-23"} {
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

	return ins
}

// prefixed is an io.ReaderAt of head followed by fill up to size bytes.
type prefixed struct {
	head []byte
	fill byte
	size int64
}

func (p *prefixed) ReadAt(b []byte, off int64) (int, error) {
	if off >= p.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) && off < p.size {
		if off < int64(len(p.head)) {
			b[n] = p.head[off]
		} else {
			b[n] = p.fill
		}
		n, off = n+1, off+1
	}
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// TestHostileContainerInputsAreBuilt builds the inputs and checks their
// sizes, which the bounds are figured on.
func TestHostileContainerInputsAreBuilt(t *testing.T) {
	ins := hostileContainerInputs(t, t.TempDir())
	for _, in := range ins {
		st, err := os.Stat(in.path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1<<20 {
			t.Errorf("%s: %d bytes, more than 1 MiB", in.name, st.Size())
		}
		t.Logf("%s: %d bytes", in.name, st.Size())
	}
}
