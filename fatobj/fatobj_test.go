package fatobj

import (
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

func binary(t *testing.T, triple, arch string) []byte {
	t.Helper()
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, triple, arch)
	b, err := offloadbinary.MarshalBinary(release.Default(), &im, []byte("image for "+triple+arch))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func section(t *testing.T, o *elfobj.Object) []*offloadbinary.Binary {
	t.Helper()
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	f, err := elfobj.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section(Section)
	if s == nil {
		return nil
	}
	if s.Type != elfobj.SHT_LLVM_OFFLOADING || s.Flags != elfobj.SHF_EXCLUDE || s.Addralign != 8 {
		t.Errorf("section %v %v align %d", s.Type, s.Flags, s.Addralign)
	}
	sr := s.Open()
	bins, err := offloadbinary.ReadAll(sr, sr.Size(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return bins
}

func triples(bins []*offloadbinary.Binary) []string {
	var out []string
	for _, b := range bins {
		out = append(out, b.Images[0].Triple()+":"+b.Images[0].Arch())
	}
	return out
}

func TestEmbedAppendsAndStripKeeps(t *testing.T) {
	o, _ := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	o.AddSection(&elfobj.Section{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Data: []byte{0xc3}}, true)
	x86, amd, nv := binary(t, "x86_64-pc-linux-gnu", ""), binary(t, "amdgcn-amd-amdhsa", "gfx90a"), binary(t, "nvptx64-nvidia-cuda", "sm_70")
	if err := Embed(o, io.NewSectionReader(bytes.NewReader(x86), 0, int64(len(x86)))); err != nil {
		t.Fatal(err)
	}
	if err := Embed(o, io.NewSectionReader(bytes.NewReader(amd), 0, int64(len(amd))), io.NewSectionReader(bytes.NewReader(nv), 0, int64(len(nv)))); err != nil {
		t.Fatal(err)
	}
	if got := triples(section(t, o)); len(got) != 3 || got[0] != "x86_64-pc-linux-gnu:" || got[2] != "nvptx64-nvidia-cuda:sm_70" {
		t.Fatalf("embedded %v", got)
	}
	// Strip a loaded object, whose section streams from the file.
	var buf bytes.Buffer
	elfobj.Write(&buf, o)
	f, _ := elfobj.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	loaded, _ := f.Object()
	st, err := Strip(loaded, release.Default(), []Target{{"amdgcn-amd-amdhsa", "gfx90a"}, {"nvptx64-nvidia-cuda", ""}, {"nvptx64-nvidia-cuda", "sm_80"}})
	if err != nil || st.Kept != 2 || st.Dropped != 1 || !st.Matched[0] || !st.Matched[1] || st.Matched[2] {
		t.Fatalf("%+v: %v", st, err)
	}
	if got := triples(section(t, loaded)); len(got) != 2 || got[0] != "amdgcn-amd-amdhsa:gfx90a" {
		t.Fatalf("after strip %v", got)
	}
	st, err = Strip(loaded, release.Default(), []Target{{"spirv64", ""}})
	if err != nil || st.Kept != 0 || st.Dropped != 2 || st.Matched[0] || loaded.Section(Section) != nil {
		t.Fatalf("strip to nothing: %+v %v, section left %v", st, err, loaded.Section(Section) != nil)
	}
	if _, err := Strip(loaded, release.Default(), nil); err != ErrNoOffloading {
		t.Errorf("strip without device code: %v", err)
	}
	if err := Embed(loaded, io.NewSectionReader(bytes.NewReader(x86[:13]), 0, 13)); err == nil {
		t.Error("a source that is not a whole binary was embedded")
	}
}

func TestFilterAndNames(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "offload", "testdata", "llvm", "packager", "multi-llvm19.bin"))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := release.Lookup(19)
	bins, err := offloadbinary.ReadAllBytes(data, &offloadbinary.ReadOptions{Release: r})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    Filter
		want []bool
	}{
		{Filter{Kind: "hip"}, []bool{false, true}},
		{Filter{Strings: map[string]string{"arch": "sm_70"}}, []bool{true, false}},
		{Filter{Strings: map[string]string{"feature": "+ptx63", "zeta": "1"}}, []bool{true, false}},
		{Filter{}, []bool{true, true}},
	} {
		for i, b := range bins {
			if got := c.f.Match(r, &b.Images[0].Image); got != c.want[i] {
				t.Errorf("%+v on image %d: %v", c.f, i, got)
			}
		}
	}
	if got, err := PackagerName("two", &bins[0].Images[0].Image, 3); err != nil || got != "two-nvptx64-nvidia-cuda-sm_70.3." {
		t.Errorf("PackagerName = %q, %v", got, err)
	}
	// Names made from data stay one plain file name.
	for _, kv := range [][2]string{
		{"/../../../../tmp/pwned/x", "y"}, {"x", "a/b"}, {"x\x00y", ""}, {"x", strings.Repeat("a", 250)},
	} {
		im := offloadbinary.Image{Kind: offload.ImageObject, Strings: []offloadbinary.KeyValue{{Key: "triple", Value: kv[0]}, {Key: "arch", Value: kv[1]}}}
		if name, err := PackagerName("k", &im, 0); !errors.Is(err, ErrUnsafeName) {
			t.Errorf("triple %q arch %q: %q, %v", kv[0], kv[1], name, err)
		}
	}
	if tg, err := ParseTarget("amdgcn-amd-amdhsa:gfx90a:xnack+"); err != nil || tg.Arch != "gfx90a:xnack+" {
		t.Errorf("ParseTarget = %+v, %v", tg, err)
	}
	_ = io.EOF
}

// valueReader is an io.ReaderAt whose values cannot be compared (a map
// key of one panics).
type valueReader struct{ b []byte }

func (v valueReader) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(v.b).ReadAt(p, off)
}

// TestNewFileArchiveOfAnyReader: an archive read through NewFile from a
// reader of the caller's, of any type, is read.
func TestNewFileArchiveOfAnyReader(t *testing.T) {
	var buf bytes.Buffer
	if err := ar.WriteGNU(&buf, []ar.NewMember{{Name: "x.o", Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader([]byte("x")), 0, 1)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := NewFile("a.a", valueReader{buf.Bytes()}, int64(buf.Len()), nil); err != nil {
		t.Fatal(err)
	}
}
