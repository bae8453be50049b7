package main

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/goffload/goffload/internal/strtab"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
)

// Hostile inputs of the command line's own: names from files printed to a
// terminal or made into file names, bytes that are not UTF-8 in JSON, and
// images many entries share (issue 24, items 8 to 10). The generators are
// the functions below.

// v2Entry is one entry of an OffloadBinary of version 2: its strings, and
// the image its ImageOffset and ImageSize point at (entries may share one).
type v2Entry struct {
	strs  []offloadbinary.KeyValue
	image int
}

// v2Binary returns an OffloadBinary of version 2 (LLVM 20 to 22) with the
// entries, laid out as LLVM's OffloadBinary::write lays it out (the header,
// the entries, the string entries, the string table, the images, each
// image once however many entries point at it): OpenMP object images.
func v2Binary(entries []v2Entry, images ...[]byte) []byte {
	var strs []string
	nstr := 0
	for _, e := range entries {
		for _, kv := range e.strs {
			strs = append(strs, kv.Key, kv.Value)
		}
		nstr += len(e.strs)
	}
	st := strtab.Build(strs)
	strEntries := uint64(offloadbinary.HeaderSize) + uint64(len(entries))*offloadbinary.ImageEntrySize
	strTab := strEntries + uint64(nstr)*offloadbinary.StringEntrySizeV2
	imageAt := (strTab + uint64(len(st.Data)) + 7) &^ 7
	at := make([]uint64, len(images))
	end := imageAt
	for i, im := range images {
		at[i] = end
		end += uint64(len(im))
	}
	size := (end + 7) &^ 7
	le := lmLE
	b := append([]byte{}, offloadbinary.Magic[:]...)
	b = le.AppendUint32(b, 2)
	b = le.AppendUint64(b, size)
	b = le.AppendUint64(b, offloadbinary.HeaderSize)
	b = le.AppendUint64(b, uint64(len(entries)))
	so := strEntries
	for _, e := range entries {
		b = le.AppendUint16(b, uint16(offload.ImageObject))
		b = le.AppendUint16(b, 1) // OpenMP
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, so)
		b = le.AppendUint64(b, uint64(len(e.strs)))
		b = le.AppendUint64(b, at[e.image])
		b = le.AppendUint64(b, uint64(len(images[e.image])))
		so += uint64(len(e.strs)) * offloadbinary.StringEntrySizeV2
	}
	for _, e := range entries {
		for _, kv := range e.strs {
			b = le.AppendUint64(b, strTab+st.Offset(kv.Key))
			b = le.AppendUint64(b, strTab+st.Offset(kv.Value))
			b = le.AppendUint64(b, uint64(len(kv.Value)))
		}
	}
	b = append(b, st.Data...)
	b = append(b, make([]byte, imageAt-uint64(len(b)))...)
	for _, im := range images {
		b = append(b, im...)
	}
	return append(b, make([]byte, size-uint64(len(b)))...)
}

// bsdArchive returns a BSD archive whose members are named in the "#1/N"
// form, the name before the data: any byte may be in a name, newlines too.
func bsdArchive(members ...[2]string) []byte {
	b := []byte("!<arch>\n")
	for _, m := range members {
		name, data := m[0], m[1]
		b = fmt.Appendf(b, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", fmt.Sprintf("#1/%d", len(name)), 0, 0, 0, 0o644, len(name)+len(data))
		b = append(b, name...)
		b = append(b, data...)
		if len(b)%2 == 1 {
			b = append(b, '\n')
		}
	}
	return b
}

// forged is what a member name of injectArchive would make list print
// were names printed as they are: a whole image block of its own.
const forged = "\n\nOFFLOADING IMAGE [7]:\nkind            elf\narch            sm_90\ntriple          nvptx64-nvidia-cuda\nproducer        openmp\n"

// injectBinary is a binary whose triple and arch hold terminal control:
// ESC sequences (clear the screen, set the window title), CR, a newline.
func injectBinary() []byte {
	return v2Binary([]v2Entry{{strs: lmStrings("triple", "x86_64-unknown-linux-gnu\x1b[2J\r", "arch", "gfx90a\x1b]0;pwned\x07\nproducer        cuda")}},
		[]byte("\x7fELF image"))
}

// injectArchive is a BSD archive whose one member, a binary, has a name
// that forges list's output and sends ESC sequences to the terminal.
func injectArchive() []byte {
	plain := v2Binary([]v2Entry{{strs: lmStrings("triple", "x86_64-unknown-linux-gnu", "arch", "generic")}}, []byte("\x7fELF image"))
	return bsdArchive([2]string{"k.o" + forged + "\x1b[31m", string(plain)})
}

// notUTF8Binary is a binary whose one entry has two keys that are not
// UTF-8 (\xff and \xfe): JSON must tell them apart.
func notUTF8Binary() []byte {
	return v2Binary([]v2Entry{{strs: lmStrings("triple", "x86_64-unknown-linux-gnu", "arch", "generic", "\xff", "a", "\xfe", "b", "k\xc3", "v\xff")}},
		[]byte("\x7fELF image"))
}

// aliasedBinary is a binary of n entries for n arches that all point at the
// one image of size bytes: n × size bytes extracted from a file of about
// size + 100 × n bytes.
func aliasedBinary(n, size int) []byte {
	entries := make([]v2Entry, n)
	for i := range entries {
		entries[i] = v2Entry{strs: lmStrings("triple", "x86_64-unknown-linux-gnu", "arch", fmt.Sprintf("cpu%d", i))}
	}
	return v2Binary(entries, bytes.Repeat([]byte{0x90}, size))
}

func init() { hostileInputSources = append(hostileInputSources, hostileCLIInputs) }

// hostileCLIInputs are the inputs above, for the hostile table: the
// commands that must accept each, what the others must say.
func hostileCLIInputs(t *testing.T, dir string) []hostileInput {
	t.Helper()
	write := func(name string, data []byte) string { return writeInput(t, dir, name, data) }
	return []hostileInput{
		// extract refuses the names its triple and arch make.
		{name: "inject-triple", path: write("inject-triple.bin", injectBinary()), any: true,
			says: map[string]string{"extract": "not a safe file name", "extract-raw": "not a safe file name", "extract-24": "not a safe file name"}},
		{name: "inject-member", path: write("inject-member.a", injectArchive()), any: true},
		{name: "json-not-utf8", path: write("json-not-utf8.bin", notUTF8Binary()), any: true},
		// 4,000 entries sharing one 50 KB image: 204 MB of files from 434 KB.
		{name: "aliased-images", path: write("aliased-images.bin", aliasedBinary(4000, 50<<10)), any: true,
			says: map[string]string{"extract": "over the limit", "extract-raw": "over the limit", "extract-24": "over the limit"}},
	}
}
