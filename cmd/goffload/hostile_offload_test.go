package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/entries"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

func init() { hostileInputSources = append(hostileInputSources, hostileOffloadInputs) }

// hostileOffloadInputs builds into dir the OffloadBinaries of issue 24
// built to multiply rather than to break: nested binaries sharing their
// images, string entries sharing one long string, compressed binaries
// repeated, and a version-3 binary of no entries. Every command that
// reads them must stay within the table's time and memory bounds; those
// that list or extract say "over the limit" where the read budget refuses.
func hostileOffloadInputs(t *testing.T, dir string) []hostileInput {
	t.Helper()
	le := binary.LittleEndian
	write := func(name string, data []byte) string { return writeInput(t, dir, name, data) }
	align := func(n int) int { return (n + 7) &^ 7 }
	// shared: a version-3 binary of k entries all pointing at inner.
	shared := func(inner []byte, k int) []byte {
		img := align(offloadbinary.HeaderSizeV3 + offloadbinary.ImageEntrySize*k)
		size := align(img + len(inner))
		b := make([]byte, size)
		copy(b, offloadbinary.Magic[:])
		le.PutUint32(b[4:], 3)
		le.PutUint64(b[8:], uint64(size))
		le.PutUint64(b[16:], offloadbinary.HeaderSizeV3)
		le.PutUint64(b[24:], uint64(k))
		for i := 0; i < k; i++ {
			e := b[offloadbinary.HeaderSizeV3+offloadbinary.ImageEntrySize*i:]
			le.PutUint16(e[0:], uint16(offload.ImageObject))
			le.PutUint16(e[2:], 1)
			le.PutUint64(e[8:], uint64(offloadbinary.HeaderSizeV3+offloadbinary.ImageEntrySize*k))
			le.PutUint64(e[24:], uint64(img))
			le.PutUint64(e[32:], uint64(len(inner)))
		}
		copy(b[img:], inner)
		return b
	}
	nested := func(k, d int) []byte {
		b := shared(make([]byte, 8), 1)
		for i := 0; i < d; i++ {
			b = shared(b, k)
		}
		return b
	}
	// strings: a version-1 binary of n string entries, keys and values all
	// pointing at one string of l bytes.
	strs := func(n, l int) []byte {
		str := 72 + 16*n
		size := align(str + l + 1)
		b := make([]byte, size)
		copy(b, offloadbinary.Magic[:])
		le.PutUint32(b[4:], 1)
		le.PutUint64(b[8:], uint64(size))
		le.PutUint64(b[16:], offloadbinary.HeaderSize)
		le.PutUint64(b[24:], offloadbinary.ImageEntrySize)
		e := b[offloadbinary.HeaderSize:]
		le.PutUint16(e[0:], uint16(offload.ImageObject))
		le.PutUint16(e[2:], 1)
		le.PutUint64(e[8:], 72)
		le.PutUint64(e[16:], uint64(n))
		le.PutUint64(e[24:], uint64(size))
		for i := 0; i < n; i++ {
			le.PutUint64(b[72+16*i:], uint64(str))
			le.PutUint64(b[72+16*i+8:], uint64(str))
		}
		copy(b[str:], bytes.Repeat([]byte{'a'}, l))
		return b
	}
	r24, err := release.Lookup(24)
	if err != nil {
		t.Fatal(err)
	}
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "x86_64-unknown-linux-gnu", "generic")
	var one bytes.Buffer
	const big = 63 << 20
	if _, err := offloadbinary.WriteCompressedBinary(&one, r24, &im, bytes.NewReader(make([]byte, big)), big, offloadbinary.Compression{Level: 19}); err != nil {
		t.Fatal(err)
	}
	// elfOne: the same beginning as an ELF file does.
	var elfOne bytes.Buffer
	elfZeros := make([]byte, big)
	copy(elfZeros, elf.ELFMAG)
	if _, err := offloadbinary.WriteCompressedBinary(&elfOne, r24, &im, bytes.NewReader(elfZeros), big, offloadbinary.Compression{Level: 19}); err != nil {
		t.Fatal(err)
	}
	// short: a compressed binary whose InflatedSize is 64 bytes more than
	// its stream gives, past the entries and strings that reading inflates.
	var short bytes.Buffer
	if _, err := offloadbinary.WriteCompressedBinary(&short, r24, &im, bytes.NewReader(bytes.Repeat([]byte("0123456789abcdef"), 1<<16)), 1<<20, offloadbinary.Compression{}); err != nil {
		t.Fatal(err)
	}
	le.PutUint64(short.Bytes()[32:], le.Uint64(short.Bytes()[32:])+64)
	empty := shared(nil, 0)[:offloadbinary.HeaderSizeV3]
	le.PutUint64(empty[8:], offloadbinary.HeaderSizeV3)
	over := "over the limit"
	return []hostileInput{
		// 8 entries a level, 7 levels, one inner binary: 8^7 images.
		{name: "offload-nested-8x7", path: write("nested-8x7.bin", nested(8, 7)), any: true,
			says: map[string]string{"list": over, "list-24": over, "extract-24": over}},
		// 4 x 7: extract --raw wrote 16,384 files.
		{name: "offload-nested-4x7", path: write("nested-4x7.bin", nested(4, 7)), any: true,
			says: map[string]string{"list": over, "list-24": over, "extract-24": over}},
		// 4,000 string entries on one 128 KiB string.
		{name: "offload-strings-4000x128k", path: write("strings-4000x128k.bin", strs(4000, 128<<10)), any: true,
			says: map[string]string{"list": over, "list-24": over, "extract": over, "wrap": over}},
		// 20 binaries inflating to 63 MiB each (44 KB): read, within the
		// memory bound (each inflated as far as read, 64 MiB in memory in all).
		{name: "offload-compressed-20x63M", path: write("compressed-20x63M.bin", bytes.Repeat(one.Bytes(), 20)),
			pass: []string{"package", "list", "list-json", "list-24", "extract", "extract-raw", "extract-24", "wrap-24"}, any: true,
			inflates: 20 * 63 << 20},
		// A stream that ends before its InflatedSize, after the entries:
		// list reads the start only and takes it; check inflates every
		// stream whole, as LLVM main's reader does, and refuses it.
		{name: "offload-v3-stream-short", path: write("v3-stream-short.o", objectWith(t, ".llvm.offloading", elf.SectionType(elfobj.SHT_LLVM_OFFLOADING), short.Bytes())),
			any: true, says: map[string]string{"check": "InflatedSize", "check-json": "InflatedSize"}, inflates: 1 << 20},
		// Objects holding binaries inflating to 63 MiB: convert (to 22)
		// writes each as version 1, inflating it as it writes. Images that
		// begin as ELF objects are read whole to be converted: one within
		// the 64 MiB a conversion may hold, two over it.
		{name: "offload-v3-object-2x63M", path: write("v3-object-2x63M.o", objectWith(t, ".llvm.offloading", elf.SectionType(elfobj.SHT_LLVM_OFFLOADING), bytes.Repeat(one.Bytes(), 2))),
			any: true, inflates: 2 * 63 << 20},
		{name: "offload-v3-object-elf-63M", path: write("v3-object-elf-63M.o", objectWith(t, ".llvm.offloading", elf.SectionType(elfobj.SHT_LLVM_OFFLOADING), elfOne.Bytes())),
			any: true, inflates: 63 << 20},
		{name: "offload-v3-object-elf-2x63M", path: write("v3-object-elf-2x63M.o", objectWith(t, ".llvm.offloading", elf.SectionType(elfobj.SHT_LLVM_OFFLOADING), bytes.Repeat(elfOne.Bytes(), 2))),
			any: true, inflates: 2 * 63 << 20, says: map[string]string{"convert": over}},
		// A version-3 binary of no entries: wrap --llvm 24 indexed Images[0].
		{name: "offload-v3-no-entries", path: write("v3-no-entries.bin", empty), any: true,
			says: map[string]string{"wrap-24": "no entries"}},
		// 400 entries none of 400 images defines (313 KB): check listed
		// each of the 160,000 pairs, 816 MB for --json at 600 x 600. It
		// counts them all and lists as many as the budget allows.
		{name: "entries-x-images-400", path: write("entries-x-images-400.o", entriesTimesImages(t, 400, 400)), any: true,
			says: map[string]string{"check": "160000 problems", "check-json": "160000 problems"}},
	}
}

// entriesTimesImages returns an x86-64 object of n OpenMP entries and m
// x86-64 images (LLVM 19's formats), none of which defines an entry's name:
// n times m pairs for check.
func entriesTimesImages(t *testing.T, n, m int) []byte {
	dev, err := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	text := &elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addralign: 1, Data: []byte{0xc3}}
	dev.AddSection(text, false)
	dev.Symbols = append(dev.Symbols, &elfobj.Symbol{Name: "other", Type: elf.STT_FUNC, Bind: elf.STB_GLOBAL, Section: text})
	var img bytes.Buffer
	if _, err := elfobj.Write(&img, dev); err != nil {
		t.Fatal(err)
	}
	r, err := release.Lookup(19)
	if err != nil {
		t.Fatal(err)
	}
	var bins bytes.Buffer
	im := &offloadbinary.Image{Kind: offload.ImageObject, OffloadKind: offload.OffloadOpenMP,
		Strings: []offloadbinary.KeyValue{{Key: "triple", Value: "x86_64-unknown-linux-gnu"}, {Key: "arch", Value: ""}}}
	for range m {
		if _, err := offloadbinary.WriteBinary(&bins, r, im, bytes.NewReader(img.Bytes()), int64(img.Len())); err != nil {
			t.Fatal(err)
		}
		for bins.Len()%8 != 0 {
			bins.WriteByte(0)
		}
	}
	host, err := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	host.AddSection(&elfobj.Section{Name: ".llvm.offloading", Type: elf.SectionType(elfobj.SHT_LLVM_OFFLOADING), Addralign: 8, Data: bins.Bytes()}, false)
	ents := make([]offload.Entry, n)
	for i := range ents {
		ents[i] = offload.Entry{Kind: offload.OffloadOpenMP, Name: fmt.Sprintf("k%d", i)}
	}
	if err := entries.Write(host, r, ents); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := elfobj.Write(&out, host); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
