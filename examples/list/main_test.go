package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/fatobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// The formats of the lines list prints, as its package comment has them.
const (
	imageFormat = "IMAGE %q %s %s %q %q %q %d %d"
	entryFormat = "ENTRY %q %q %s %q"
)

// image and entry are what list prints of an image and an entry.
type image struct {
	Object, Source, OffloadKind, ImageKind, Triple, Arch string
	Offset, Size                                         int64
}

type entry struct{ Object, Section, Kind, Name string }

func (im image) String() string {
	return fmt.Sprintf(imageFormat, im.Object, im.Source, im.OffloadKind, im.ImageKind, im.Triple, im.Arch, im.Offset, im.Size)
}

func (e entry) String() string {
	return fmt.Sprintf(entryFormat, e.Object, e.Section, e.Kind, e.Name)
}

// tmpRoot holds what the tests share: the goffload command.
var tmpRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "goffload-examples-list-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var built struct {
	once sync.Once
	path string
	err  error
}

// goffload returns the path of the goffload command, built once: the
// executable that go run caches (go run -exec echo prints its path; from
// Go 1.24 it stays in the build cache), which a run whose cache holds it
// only looks up, or else one that go build links into the tests' folder.
func goffload(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		// go test puts its own go first in $PATH.
		goTool, err := exec.LookPath("go")
		if err != nil {
			built.err = err
			return
		}
		echo, err := exec.LookPath("echo")
		if err == nil && runtime.GOOS != "windows" {
			out, err := exec.Command(goTool, "run", "-exec", echo, "../../cmd/goffload").Output()
			path := strings.TrimSpace(string(out))
			if st, statErr := os.Stat(path); err == nil && statErr == nil && st.Mode().IsRegular() && filepath.IsAbs(path) {
				built.path = path
				return
			}
		}
		path := filepath.Join(tmpRoot, "goffload")
		if runtime.GOOS == "windows" {
			path += ".exe"
		}
		out, err := exec.Command(goTool, "build", "-o", path, "../../cmd/goffload").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build ../../cmd/goffload: %v\n%s", err, out)
			return
		}
		built.path = path
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// parseList reads the lines list printed; every line must be one of the two
// formats exactly.
func parseList(t *testing.T, out string) (ims []image, ents []entry) {
	t.Helper()
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "IMAGE "):
			var im image
			n, err := fmt.Sscanf(line, imageFormat, &im.Object, &im.Source, &im.OffloadKind, &im.ImageKind, &im.Triple, &im.Arch, &im.Offset, &im.Size)
			if err != nil || n != 8 || im.String() != line {
				t.Fatalf("list printed %q, not an IMAGE line (%d fields, %v)", line, n, err)
			}
			ims = append(ims, im)
		case strings.HasPrefix(line, "ENTRY "):
			var e entry
			n, err := fmt.Sscanf(line, entryFormat, &e.Object, &e.Section, &e.Kind, &e.Name)
			if err != nil || n != 4 || e.String() != line {
				t.Fatalf("list printed %q, not an ENTRY line (%d fields, %v)", line, n, err)
			}
			ents = append(ents, e)
		default:
			t.Fatalf("list printed %q, neither an IMAGE nor an ENTRY line", line)
		}
	}
	return ims, ents
}

// jsonObject is what the test reads of an object that goffload list --json
// prints.
type jsonObject struct {
	File   string `json:"file"`
	Images []struct {
		Source      string `json:"source"`
		OffloadKind string `json:"offload_kind"`
		ImageKind   string `json:"image_kind"`
		Triple      string `json:"triple"`
		Arch        string `json:"arch"`
		DataOffset  int64  `json:"data_offset"`
		ImageSize   int64  `json:"image_size"`
	} `json:"images"`
	Entries []struct {
		Section string `json:"section"`
		Kind    string `json:"kind"`
		Name    string `json:"name"`
	} `json:"entries"`
}

// goffloadList returns the images and entries goffload list --json prints
// for the file at path, as list would print them.
func goffloadList(t *testing.T, path string) (ims []image, ents []entry) {
	t.Helper()
	cmd := exec.Command(goffload(t), "list", "--json", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("goffload list --json %s: %v\n%s", path, err, stderr.Bytes())
	}
	objs, err := decodeList(out)
	if err != nil {
		t.Fatalf("goffload list --json %s: %v", path, err)
	}
	l := listingOf(objs)
	return l.ims, l.ents
}

// decodeList reads the JSON objects goffload list --json prints.
func decodeList(out []byte) ([]jsonObject, error) {
	var objs []jsonObject
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var o jsonObject
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
}

// listing is what goffload list --json prints of a file, as list would
// print it.
type listing struct {
	ims  []image
	ents []entry
}

func listingOf(objs []jsonObject) (l listing) {
	for _, o := range objs {
		for _, im := range o.Images {
			l.ims = append(l.ims, image{o.File, im.Source, im.OffloadKind, im.ImageKind, im.Triple, im.Arch, im.DataOffset, im.ImageSize})
		}
		for _, e := range o.Entries {
			l.ents = append(l.ents, entry{o.File, e.Section, e.Kind, e.Name})
		}
	}
	return l
}

// goffloadLists runs one goffload list --json for the files at paths and
// returns what it prints of each, by path: the objects it prints in turn,
// named by the path or, for an archive's members, by the path and
// "(MEMBER)". If the command fails, or its objects do not follow the
// paths, it returns nil, and each file is listed by a command of its own
// ([goffloadList]), which names the one at fault.
func goffloadLists(t *testing.T, paths []string) map[string]listing {
	t.Helper()
	cmd := exec.Command(goffload(t), append([]string{"list", "--json"}, paths...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Logf("goffload list --json of %d files: %v\n%s", len(paths), err, stderr.Bytes())
		return nil
	}
	objs, err := decodeList(out)
	if err != nil {
		t.Logf("goffload list --json of %d files: %v", len(paths), err)
		return nil
	}
	byPath := map[string][]jsonObject{}
	k := 0
	for _, o := range objs {
		for k < len(paths) && o.File != paths[k] && !strings.HasPrefix(o.File, paths[k]+"(") {
			k++
		}
		if k == len(paths) {
			t.Logf("goffload list --json of %d files printed %q out of their order", len(paths), o.File)
			return nil
		}
		byPath[paths[k]] = append(byPath[paths[k]], o)
	}
	lists := map[string]listing{}
	for _, p := range paths {
		lists[p] = listingOf(byPath[p])
	}
	return lists
}

// TestSameAsGoffloadList lists every kind of input file the project has
// fixtures of, and some made here, with list and with goffload list --json,
// and compares their images and entries.
func TestSameAsGoffloadList(t *testing.T) {
	var paths []string
	for _, pattern := range []string{
		"../../offload/testdata/llvm/host-objects/*.o", // fat objects of clang 15-22
		"../../offload/testdata/llvm/wrapper/*.o",      // registration objects: OpenMP, CUDA, HIP
		"../../offload/testdata/llvm/packager/*.bin",   // raw OffloadBinaries
		"../../offload/testdata/llvm/packager/*.out",   // every image kind
		"../../bundle/testdata/*.bundle",               // HIP fatbins of the real bundler
		"../../bundle/testdata/*.ccob",                 // compressed ones
		"../../fatobj/testdata/convert/*.o",            // bundled objects (LLVM 14, HIP -fgpu-rdc)
		"../../entries/testdata/mixing/m14by19",        // linked programs
		"../../entries/testdata/mixing/m19by22.strip",  // stripped
		"../../entries/testdata/mixing/p22w22rt19",
		"../../entries/testdata/mixing/same19",
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		if len(m) == 0 {
			t.Fatalf("no fixture matches %s: update the patterns of this test", pattern)
		}
		paths = append(paths, m...)
	}
	paths = append(paths, madeFiles(t, t.TempDir())...)
	seen := map[string]bool{}
	compressed := false
	lists := goffloadLists(t, paths)
	for _, path := range paths {
		for _, im := range compare(t, path, lists) {
			seen[im.Source] = true
			compressed = compressed || im.Offset == -1
		}
	}
	// The inputs must show every place device code is found in files that
	// LLVM's tools of 13 to 22 and main make, bar what no fixture holds (the
	// raw images of an LLVM 13/14 wrapper, clang 14's image sections).
	for _, s := range []fatobj.Source{fatobj.SourceBinary, fatobj.SourceNested, fatobj.SourceBundle, fatobj.SourceBundled, fatobj.SourceFatbinary} {
		if !seen[s.String()] {
			t.Errorf("no input has an image of source %s", s)
		}
	}
	if !compressed {
		t.Error("no input has an image stored compressed")
	}
}

// TestArchivesSameAsGoffloadList does the same for archives that the
// system's ar makes of such files: a plain one with members of every kind
// and a text file that is none, a thin one, and one nesting another.
func TestArchivesSameAsGoffloadList(t *testing.T) {
	ar, err := exec.LookPath("ar")
	if err != nil {
		tooltest.Missing(t, "ar not found in $PATH: the test makes its archives with it")
	}
	dir := t.TempDir()
	madeFiles(t, dir)
	copyFile := func(name, from string) {
		t.Helper()
		data, err := os.ReadFile(from)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	copyFile("host.o", "../../offload/testdata/llvm/host-objects/openmp-x86-llvm19.o")
	copyFile("wrapper.o", "../../offload/testdata/llvm/wrapper/hip-wrapper-llvm22.o")
	copyFile("bundled.o", "../../fatobj/testdata/convert/omp-llvm14.o")
	copyFile("multi.bin", "../../offload/testdata/llvm/packager/multi-llvm22.bin")
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("no device code here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runAr := func(args ...string) {
		t.Helper()
		cmd := exec.Command(ar, append(tooltest.BinutilsPlugin(), args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ar %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	runAr("rcs", "lib.a", "host.o", "wrapper.o", "bundled.o", "fat.o", "multi.bin", "hip22-zstd.hipfb", "notes.txt")
	runAr("rcsT", "thin.a", "host.o", "fat.o", "main-nested.bin")
	runAr("rcs", "nested.a", "lib.a", "bundled.o")
	archives := []string{filepath.Join(dir, "lib.a"), filepath.Join(dir, "thin.a"), filepath.Join(dir, "nested.a")}
	lists := goffloadLists(t, archives)
	for _, a := range archives {
		if ims := compare(t, a, lists); len(ims) == 0 {
			t.Errorf("no image listed in %s", a)
		}
	}
}

// compare lists the file at path with list and with goffload list --json
// (what lists has of path, from one command for many files, or else a
// command of its own), in a subtest, compares the images and entries they
// print, and returns the images.
func compare(t *testing.T, path string, lists map[string]listing) (ims []image) {
	t.Helper()
	name, ok := strings.CutPrefix(filepath.ToSlash(path), "../../")
	if !ok {
		name = filepath.Base(path)
	}
	t.Run(name, func(t *testing.T) {
		var out bytes.Buffer
		if err := run(&out, []string{path}); err != nil {
			t.Fatalf("list %s: %v", path, err)
		}
		t.Logf("list %s:\n%s", path, out.String())
		var ents []entry
		ims, ents = parseList(t, out.String())
		want, ok := lists[path]
		if !ok {
			want.ims, want.ents = goffloadList(t, path)
		}
		wantIms, wantEnts := want.ims, want.ents
		if !slices.Equal(ims, wantIms) {
			t.Errorf("list %s printed the images\n%s\ngoffload list --json has\n%s", path, lines(ims), lines(wantIms))
		}
		if !slices.Equal(ents, wantEnts) {
			t.Errorf("list %s printed the entries\n%s\ngoffload list --json has\n%s", path, lines(ents), lines(wantEnts))
		}
	})
	return ims
}

func lines[T fmt.Stringer](xs []T) string {
	if len(xs) == 0 {
		return "\t(none)"
	}
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("\t" + x.String())
	}
	return b.String()
}

// madeFiles writes into dir the inputs that no fixture holds as a file: HIP
// bundle files (uncompressed, zstd and zlib) written with package bundle,
// OffloadBinaries of LLVM main (a compressed one, and one whose image is
// itself a binary), and a fat object made with fatobj.Embed. It returns
// their paths.
func madeFiles(t *testing.T, dir string) []string {
	t.Helper()
	write := func(name string, data []byte) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	writeWith := func(name string, w func(io.Writer) error) string {
		t.Helper()
		var b bytes.Buffer
		if err := w(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return write(name, b.Bytes())
	}
	read := func(path string) []byte {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}

	// The gfx90a code object of a HIP fatbin of clang-linker-wrapper 22, in
	// bundles of two target IDs.
	fatbin := read("../../bundle/testdata/hip-fatbin-clang-linker-wrapper-llvm22.bundle")
	b, err := bundle.Read(bytes.NewReader(fatbin), int64(len(fatbin)))
	if err != nil {
		t.Fatal(err)
	}
	var code *io.SectionReader
	for i, e := range b.Entries {
		if e.Size > 0 {
			code = b.Open(i)
		}
	}
	if code == nil {
		t.Fatal("no code object in hip-fatbin-clang-linker-wrapper-llvm22.bundle")
	}
	images := []bundle.CodeObject{{TargetID: "gfx90a", Data: code}, {TargetID: "gfx1030", Data: code}}
	r19, _ := release.Lookup(19)
	r22, _ := release.Lookup(22)
	var paths []string
	paths = append(paths,
		writeWith("hip19.hipfb", func(w io.Writer) error { return bundle.WriteHIPFatbin(w, r19, images) }),
		writeWith("hip22-zstd.hipfb", func(w io.Writer) error {
			_, err := bundle.WriteCompressedHIPFatbin(w, r22, images, bundle.CompressDefaults(r22))
			return err
		}),
		writeWith("hip19-zlib.hipfb", func(w io.Writer) error {
			_, err := bundle.WriteCompressedHIPFatbin(w, r19, images, bundle.CompressOptions{Version: 2, Method: bundle.MethodZlib})
			return err
		}))

	// OffloadBinaries of LLVM main: one compressed, one nesting a binary.
	llvmMain, err := release.Lookup(24)
	if err != nil {
		t.Fatal(err)
	}
	multi := read("../../offload/testdata/llvm/packager/multi-llvm22.bin")
	img := read("../../offload/testdata/llvm/img1.bin")
	data := func(triple, arch string, kind offload.ImageKind, b []byte) offloadbinary.ImageData {
		im := offloadbinary.Image{Kind: kind, OffloadKind: offload.OffloadOpenMP}
		im.Set("triple", triple)
		im.Set("arch", arch)
		return offloadbinary.ImageData{Image: im, Data: bytes.NewReader(b), Size: int64(len(b))}
	}
	compressedBin := writeWith("main-zstd.bin", func(w io.Writer) error {
		_, err := offloadbinary.WriteCompressedBinaries(w, llvmMain, []offloadbinary.ImageData{
			data("nvptx64-nvidia-cuda", "sm_90", offload.ImageCubin, img),
			data("amdgcn-amd-amdhsa", "gfx942", offload.ImageObject, img)}, offloadbinary.Compression{Format: "zstd"})
		return err
	})
	nestedBin := writeWith("main-nested.bin", func(w io.Writer) error {
		_, err := offloadbinary.WriteBinaries(w, llvmMain, []offloadbinary.ImageData{data("spirv64-intel", "", offload.ImageNone, multi)})
		return err
	})
	paths = append(paths, compressedBin, nestedBin)

	// A fat object of binaries of LLVM 15, 22 and main.
	o, err := elfobj.ForTriple("aarch64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	for _, bin := range [][]byte{read("../../offload/testdata/llvm/packager/single-llvm15.bin"), multi, read(compressedBin)} {
		if err := fatobj.Embed(o, io.NewSectionReader(bytes.NewReader(bin), 0, int64(len(bin)))); err != nil {
			t.Fatal(err)
		}
	}
	fat := writeWith("fat.o", func(w io.Writer) error {
		_, err := elfobj.Write(w, o)
		return err
	})
	return append(paths, fat)
}

// TestOldDriverSameAsGoffloadList does the same for what the old OpenMP
// driver leaves, made by clang 14: a bundled object, an object of
// -fopenmp-new-driver (clang 14's image sections), and a program it links,
// whose clang-offload-wrapper registers the raw device image.
func TestOldDriverSameAsGoffloadList(t *testing.T) {
	clang := tooltest.Tool(t, "clang", 14)
	dir := t.TempDir()
	src := filepath.Join("..", "..", "cmd", "goffload", "testdata", "prog.c")
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
			t.Fatalf("clang-14 %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	omp := []string{"-O1", "-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu"}
	bundled := filepath.Join(dir, "bundled.o")
	run(append(omp, "-c", "-o", bundled, src)...)
	newDriver := filepath.Join(dir, "newdriver.o")
	run(append(omp, "-fopenmp-new-driver", "-c", "-o", newDriver, src)...)
	prog := filepath.Join(dir, "prog")
	run(append(omp, "-o", prog, bundled, "-L"+tooltest.OpenMPRuntime(t, 14), tooltest.AllowShlibUndefined)...)
	want := map[string]string{bundled: "bundled-object", newDriver: "image-section", prog: "registered"}
	paths := []string{bundled, newDriver, prog}
	lists := goffloadLists(t, paths)
	for _, path := range paths {
		ims := compare(t, path, lists)
		found := false
		for _, im := range ims {
			found = found || im.Source == want[path]
		}
		if !found {
			t.Errorf("%s: no %s image in %v", filepath.Base(path), want[path], ims)
		}
	}
}
