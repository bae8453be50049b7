package fatobj

import (
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

func llvmTestdata(parts ...string) string {
	return filepath.Join(append([]string{"..", "offload", "testdata", "llvm"}, parts...)...)
}

func openFile(t *testing.T, path string, opt *offloadbinary.ReadOptions) *File {
	t.Helper()
	f, err := Open(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func mustRelease(t testing.TB, n int) *release.Release {
	t.Helper()
	r, err := release.Lookup(n)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOpenFatObjectsOfEachRelease: a host object of clang 15, 16, 19 and 22
// holds one OpenMP image for x86-64 and its entries, and is read as a
// release that made it.
func TestOpenFatObjectsOfEachRelease(t *testing.T) {
	for _, n := range []int{15, 16, 19, 22} {
		f := openFile(t, llvmTestdata("host-objects", "openmp-x86-llvm"+itoa(n)+".o"), nil)
		if f.Format != FormatELF || len(f.Objects) != 1 {
			t.Fatalf("%d: %v, %d objects", n, f.Format, len(f.Objects))
		}
		o := f.Objects[0]
		made, err := o.Made()
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Images) != 1 || o.Images[0].Source != SourceBinary || o.Images[0].OffloadKind != offload.OffloadOpenMP ||
			len(o.Entries) == 0 || !made.Has(n) || !made.Has(o.Release.Major) {
			t.Errorf("%d: %d images, %d entries, made by %v, read as %v", n, len(o.Images), len(o.Entries), made, o.Release)
		}
		im := o.Images[0]
		r, err := im.Open()
		if err != nil {
			t.Fatal(err)
		}
		// The image's bytes are where Offset says, in the file.
		data, _ := os.ReadFile(f.Name)
		got := make([]byte, r.Size())
		r.ReadAt(got, 0)
		if im.Offset < 0 || !bytes.Equal(data[im.Offset:im.Offset+im.Size], got) {
			t.Errorf("%d: image at %d of %d bytes is not the file's bytes there", n, im.Offset, im.Size)
		}
	}
}

func itoa(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }

// TestImagesOfWrappers: the device code of the CUDA and HIP wrappers counts
// as images of their kind: the code object of the HIP fatbin (in place) and
// the CUDA fatbinary.
func TestImagesOfWrappers(t *testing.T) {
	for _, c := range []struct {
		file   string
		kind   offload.OffloadKind
		source Source
	}{
		{"hip-wrapper-llvm19.o", offload.OffloadHIP, SourceBundle},
		{"hip-wrapper-llvm22.o", offload.OffloadHIP, SourceBundle},
		{"cuda-wrapper-llvm19.o", offload.OffloadCUDA, SourceFatbinary},
		{"cuda-wrapper-llvm22.o", offload.OffloadCUDA, SourceFatbinary},
	} {
		f := openFile(t, llvmTestdata("wrapper", c.file), nil)
		ims := f.Images()
		if len(ims) != 1 || ims[0].OffloadKind != c.kind || ims[0].Source != c.source {
			t.Fatalf("%s: images %v", c.file, ims)
		}
		if c.source == SourceBundle && (ims[0].Arch() != "gfx90a" || ims[0].Triple() != "amdgcn-amd-amdhsa" || len(f.Objects[0].Bundles) != 1) {
			t.Errorf("%s: %v in %d bundles", c.file, ims[0], len(f.Objects[0].Bundles))
		}
		if _, err := ims[0].Open(); err != nil {
			t.Errorf("%s: %v", c.file, err)
		}
	}
}

// TestOpenArchive: the members of an archive are objects named
// "lib.a(member)", a nested archive's members in turn, a member of no
// format left out; a thin archive's members are opened from its folder.
func TestOpenArchive(t *testing.T) {
	dir := t.TempDir()
	fat, _ := os.ReadFile(llvmTestdata("host-objects", "openmp-x86-llvm22.o"))
	bin, _ := os.ReadFile(llvmTestdata("packager", "multi-llvm22.bin"))
	inner := archive(t, ar.NewMember{Name: "b.bin", Data: io.NewSectionReader(bytes.NewReader(bin), 0, int64(len(bin)))})
	lib := archive(t,
		ar.NewMember{Name: "k.o", Data: io.NewSectionReader(bytes.NewReader(fat), 0, int64(len(fat)))},
		ar.NewMember{Name: "notes.txt", Data: io.NewSectionReader(bytes.NewReader([]byte("hello\n")), 0, 6)},
		ar.NewMember{Name: "inner.a", Data: io.NewSectionReader(bytes.NewReader(inner), 0, int64(len(inner)))})
	path := filepath.Join(dir, "lib.a")
	if err := os.WriteFile(path, lib, 0o644); err != nil {
		t.Fatal(err)
	}
	f := openFile(t, path, nil)
	if f.Format != FormatArchive || len(f.Objects) != 2 {
		t.Fatalf("%v with %d objects", f.Format, len(f.Objects))
	}
	k, b := f.Objects[0], f.Objects[1]
	if k.Name != path+"(k.o)" || k.Member != "k.o" || k.Format != FormatELF || len(k.Images) != 1 {
		t.Errorf("first member: %q (%q) %v, %d images", k.Name, k.Member, k.Format, len(k.Images))
	}
	if b.Name != path+"(inner.a)(b.bin)" || b.Member != "b.bin" || b.Format != FormatBinary || len(b.Images) != 2 {
		t.Errorf("nested member: %q (%q) %v, %d images", b.Name, b.Member, b.Format, len(b.Images))
	}
	// Offsets count from the start of the archive.
	r, _ := b.Images[1].Open()
	got := make([]byte, r.Size())
	r.ReadAt(got, 0)
	if !bytes.Equal(lib[b.Images[1].Offset:b.Images[1].Offset+r.Size()], got) {
		t.Errorf("image of a nested member at %d is not there in the archive", b.Images[1].Offset)
	}
	// NewFile reads the same, from bytes.
	g, err := NewFile("lib.a", bytes.NewReader(lib), int64(len(lib)), nil)
	if err != nil || len(g.Images()) != 3 || g.Objects[1].Name != "lib.a(inner.a)(b.bin)" {
		t.Errorf("NewFile: %v, %v", g, err)
	}
}

func archive(t *testing.T, members ...ar.NewMember) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := ar.WriteGNU(&buf, members); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadFindsTheRelease: a HIP image packaged for LLVM 19 (offload kind
// numbered 3) reads as hip, from a file made by LLVM 15 to 20, where a
// reader strict as 22 sees no kind; a version-3 binary reads as 24 (23 refuses it).
func TestReadFindsTheRelease(t *testing.T) {
	r19 := mustRelease(t, 19)
	im := offloadbinary.LinkedImage(offload.OffloadHIP, "amdgcn-amd-amdhsa", "gfx90a")
	bin, err := offloadbinary.MarshalBinary(r19, &im, []byte("code"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFile("hip19.bin", bytes.NewReader(bin), int64(len(bin)), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := f.Objects[0]
	made, _ := o.Made()
	if o.Images[0].OffloadKind != offload.OffloadHIP || made.String() != "LLVM 15-20" || o.Release.Major != 19 {
		t.Errorf("default: %v, made by %v, read as %v", o.Images[0].OffloadKind, made, o.Release)
	}
	g, err := NewFile("hip19.bin", bytes.NewReader(bin), int64(len(bin)), &offloadbinary.ReadOptions{Release: mustRelease(t, 22)})
	if err != nil {
		t.Fatal(err)
	}
	if g.Objects[0].Images[0].OffloadKind != offload.OffloadNone || g.Objects[0].Release.Major != 22 {
		t.Errorf("--llvm 22: %v as %v", g.Objects[0].Images[0].OffloadKind, g.Objects[0].Release)
	}

	r24 := mustRelease(t, 24)
	var v3 bytes.Buffer
	if _, err := offloadbinary.WriteCompressedBinary(&v3, r24, &im, bytes.NewReader([]byte("code")), 4, offloadbinary.Compression{Format: "zstd"}); err != nil {
		t.Fatal(err)
	}
	h, err := NewFile("v3.bin", bytes.NewReader(v3.Bytes()), int64(v3.Len()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if o := h.Objects[0]; o.Release.Major != 24 || o.Images[0].Offset != -1 || o.Images[0].Size != 4 {
		t.Errorf("version 3: read as %v, image at %d of %d bytes", o.Release, o.Images[0].Offset, o.Images[0].Size)
	}
	for _, r := range []int{22, 23} {
		if _, err := NewFile("v3.bin", bytes.NewReader(v3.Bytes()), int64(v3.Len()), &offloadbinary.ReadOptions{Release: mustRelease(t, r)}); !errors.Is(err, goffload.ErrInvalid) {
			t.Errorf("--llvm %d reads version 3: %v", r, err)
		}
	}
}

// TestErrorOffsetsAreInTheFile: a bad binary in .llvm.offloading of an
// archive member is reported at its offset in the archive.
func TestErrorOffsetsAreInTheFile(t *testing.T) {
	fat, _ := os.ReadFile(llvmTestdata("host-objects", "openmp-x86-llvm22.o"))
	ef, err := elfobj.Read(bytes.NewReader(fat), int64(len(fat)))
	if err != nil {
		t.Fatal(err)
	}
	sec := ef.Section(".llvm.offloading")
	bad := bytes.Clone(fat)
	bad[sec.Offset+4] = 7 // the first binary's version
	lib := archive(t, ar.NewMember{Name: "pad.txt", Data: io.NewSectionReader(bytes.NewReader(make([]byte, 10)), 0, 10)},
		ar.NewMember{Name: "k.o", Data: io.NewSectionReader(bytes.NewReader(bad), 0, int64(len(bad)))})
	_, err = NewFile("lib.a", bytes.NewReader(lib), int64(len(lib)), nil)
	var fe *goffload.FormatError
	if !errors.As(err, &fe) || fe.Field != "Version" {
		t.Fatalf("%v: not a FormatError of Version", err)
	}
	if fe.Offset < 0 || lib[fe.Offset] != 7 || int64(bytes.Index(lib, bad))+int64(sec.Offset)+4 != fe.Offset {
		t.Errorf("%v: offset %#x is not the version's in the archive", err, fe.Offset)
	}
}

// TestOpenRefuses: what is none of the formats, an empty file, archives
// nested too deep and a thin archive given as bytes are refused with
// errors matching the sentinels.
func TestOpenRefuses(t *testing.T) {
	deep, _ := os.ReadFile(llvmTestdata("packager", "single-llvm22.bin"))
	for range MaxArchiveDepth + 1 {
		deep = archive(t, ar.NewMember{Name: "m", Data: io.NewSectionReader(bytes.NewReader(deep), 0, int64(len(deep)))})
	}
	thin := []byte(ar.ThinMagic + "k.o/            0           0     0     644     8         `\n")
	for _, c := range []struct {
		name string
		data []byte
		is   error
	}{
		{"empty", nil, goffload.ErrInvalid},
		{"text", []byte("hello"), goffload.ErrInvalid},
		{"deep", deep, goffload.ErrLimit},
		{"thin", thin, goffload.ErrUnsupported},
	} {
		_, err := NewFile(c.name, bytes.NewReader(c.data), int64(len(c.data)), nil)
		if !errors.Is(err, c.is) {
			t.Errorf("%s: %v, want %v", c.name, err, c.is)
		}
	}
}

// TestEMNoneImage: an EM_NONE object with an .llvm.offloading section and
// no entries section holds its image, as llvm-objdump --offloading lists
// it.
func TestEMNoneImage(t *testing.T) {
	im := offloadbinary.LinkedImage(offload.OffloadOpenMP, "nvptx64-nvidia-cuda", "sm_70")
	bin, err := offloadbinary.MarshalBinary(release.Default(), &im, []byte("device code"))
	if err != nil {
		t.Fatal(err)
	}
	o := &elfobj.Object{Data: elf.ELFDATA2LSB, Machine: elf.EM_NONE}
	o.AddSection(&elfobj.Section{Name: ".llvm.offloading", Type: elfobj.SHT_LLVM_OFFLOADING, Flags: elfobj.SHF_EXCLUDE, Addralign: 8, Data: bin}, false)
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	f, err := NewFile("none.o", bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := Check(f.Objects)
	if err != nil || len(reps) != 1 || len(reps[0].Images) != 1 || reps[0].Images[0].Arch() != "sm_70" || len(f.Objects[0].Entries) != 0 {
		t.Errorf("Check: %+v, %v; want the one image", reps, err)
	}
}

// TestImageReaderStreams: Reader gives the bytes Open does, for an image in
// place.
func TestImageReaderStreams(t *testing.T) {
	f := openFile(t, llvmTestdata("wrapper", "hip-wrapper-llvm22.o"), nil)
	im := f.Images()[0]
	r, err := im.Reader()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := io.ReadAll(r)
	sr, _ := im.Open()
	b, _ := io.ReadAll(sr)
	if len(a) == 0 || !bytes.Equal(a, b) || int64(len(a)) != im.Size {
		t.Errorf("Reader %d bytes, Open %d, Size %d", len(a), len(b), im.Size)
	}
}
