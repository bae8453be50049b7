package goffload_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload"
)

// layers are the module's packages, bottom up: a package imports only
// packages of lower layers (its non-test files; tests may reach anywhere).
// A new package takes its place here, or the test fails. The plumbing of
// internal/ imports nothing of the module but the root's error vocabulary
// and other plumbing below it; domain code with one user lives under that
// user (wrap/internal/stubs, link/internal/ldsym).
var layers = [][]string{
	{""}, // the root: the error vocabulary and Version
	{"internal/budget", "internal/concat", "internal/digest", "internal/infile", "internal/iocount",
		"internal/objfmt", "internal/strtab", "internal/zstddec", "internal/ferr", "internal/tooltest", "internal/tooltest/measure"},
	{"internal/tooltest/measure/launcher"},
	{"internal/atomicfile", "internal/respfile"},
	{"release", "ar", "bitcode", "elfobj", "coffobj", "machoobj", "nvfatbin", "linkcache"},
	{"offload", "elfobj/ehframe", "link/internal/ldsym", "amdgpu"},
	{"offloadbinary"},
	{"bundle"},
	{"entries"},
	{"fatobj", "wrap/internal/stubs"},
	{"wrap"},
	{"link"},
	{"cmd/goffload", "cmd/goffload/wrappertest", "examples/check", "examples/embed", "examples/link", "examples/list", "examples/plan",
		"examples/wrap", "bench/codeobj", "bench/streamobj", "bench/testtimes"},
}

// TestImportLayers walks the module's Go files and checks every import of
// the module's packages against layers.
func TestImportLayers(t *testing.T) {
	layer := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layer[p] = i
		}
	}
	imports := map[string]map[string]bool{} // package → the module's packages it imports
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		if imports[pkg] == nil {
			imports[pkg] = map[string]bool{}
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == goffload.Path {
				imports[pkg][""] = true
			} else if rest, ok := strings.CutPrefix(p, goffload.Path+"/"); ok {
				imports[pkg][rest] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 30 {
		t.Fatalf("%d packages found, want the module's 30 or more", len(imports))
	}
	name := func(p string) string {
		if p == "" {
			return "the root"
		}
		return p
	}
	var pkgs []string
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		lp, ok := layer[p]
		if !ok {
			t.Errorf("package %s is in no layer: give it its place in layers", name(p))
			continue
		}
		for im := range imports[p] {
			li, ok := layer[im]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which is in no layer", name(p), name(im))
			case li >= lp:
				t.Errorf("%s (layer %d) imports %s (layer %d): imports go down the layers", name(p), lp, name(im), li)
			case strings.HasPrefix(p, "internal/") && im != "" && !strings.HasPrefix(im, "internal/"):
				t.Errorf("%s imports the public package %s: internal/ is plumbing, below every public package but the root", p, im)
			}
		}
	}
	for p := range layer {
		if _, err := os.Stat(filepath.FromSlash(p + "/")); p != "" && err != nil {
			t.Errorf("layers names %s, which is no folder of the module", p)
		}
	}
}
