package link

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// hostObject returns the bytes of a clang-made host object of testdata.
func hostObject(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "offload", "testdata", "llvm", "host-objects", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPlanInputsReadsNothing: what Open read is all PlanInputs needs. A
// link of an object, a static library -l finds in a -L folder and a
// linker script, planned with Plan, is planned again by PlanInputs from
// what Open read after every file of it is gone, step for step the same.
func TestPlanInputsReadsNothing(t *testing.T) {
	for _, major := range []int{16, 19, 22} {
		t.Run(strconv.Itoa(major), func(t *testing.T) {
			objName := "openmp-x86-llvm" + strconv.Itoa(major) + ".o"
			dir := t.TempDir()
			obj := filepath.Join(dir, "main.o")
			if err := os.WriteFile(obj, hostObject(t, objName), 0o644); err != nil {
				t.Fatal(err)
			}
			lib := filepath.Join(dir, "lib")
			if err := os.Mkdir(lib, 0o755); err != nil {
				t.Fatal(err)
			}
			var a bytes.Buffer
			member := hostObject(t, objName)
			if err := ar.WriteGNU(&a, []ar.NewMember{{Name: "k.o", Data: io.NewSectionReader(bytes.NewReader(member), 0, int64(len(member)))}}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(lib, "libk.a"), a.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(dir, "libc.so")
			if err := os.WriteFile(script, []byte("GROUP ( /lib/libc.so.6 )\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			r, _ := release.Lookup(major)
			o := &Options{Release: r, Driver: true, TempDir: "tmp",
				LinkerArgs: []string{"-o", filepath.Join(dir, "prog"), obj, "-L" + lib, "-lk", script}}
			if r.Wrapper.BitcodeLibrary {
				// A bitcode library for the in-process LTO (15 to 19).
				bc, err := os.ReadFile(filepath.Join("..", "bitcode", "testdata", "x86_64-clang19.bc"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "lib.bc"), bc, 0o644); err != nil {
					t.Fatal(err)
				}
				o.BitcodeLibraries = []string{"openmp-x86_64-unknown-linux-gnu-=" + filepath.Join(dir, "lib.bc")}
			}
			want, err := Plan(o)
			if err != nil {
				t.Fatal(err)
			}
			in, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			got, err := PlanInputs(o, in)
			if err != nil {
				t.Fatalf("PlanInputs after the files are gone: %v", err)
			}
			if !reflect.DeepEqual(got.Steps, want.Steps) {
				t.Errorf("PlanInputs:\n%v\nPlan:\n%v", got.Steps, want.Steps)
			}
			if r.Wrapper.OverrideImage {
				// --override-image: the image's ELF header names its target.
				ov := *o
				ov.OverrideImages = []OverrideImage{{Kind: offload.OffloadOpenMP, File: obj}}
				ov.BitcodeLibraries = nil
				if _, err := PlanInputs(&ov, in); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("an override image Open did not read: %v, want fs.ErrNotExist", err)
				}
			}
			// Plan itself reads the world: the files are gone.
			if _, err := Plan(o); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Plan after the files are gone: %v, want fs.ErrNotExist", err)
			}
		})
	}
}

// TestPlanInputsOfTheCallers: the files and tools an Inputs is given are
// all a plan sees: a path not given does not exist, a tool not named is not
// found (its name stays the command), a library -l searches for is found
// where it was given.
func TestPlanInputsOfTheCallers(t *testing.T) {
	obj := hostObject(t, "openmp-x86-llvm22.o")
	in := NewInputs()
	defer in.Close()
	in.AddFile("in/main.o", bytes.NewReader(obj), int64(len(obj)))
	var a bytes.Buffer
	if err := ar.WriteGNU(&a, []ar.NewMember{{Name: "k.o", Data: io.NewSectionReader(bytes.NewReader(obj), 0, int64(len(obj)))}}); err != nil {
		t.Fatal(err)
	}
	in.AddFile("libs/libk.a", bytes.NewReader(a.Bytes()), int64(a.Len()))
	r, _ := release.Lookup(22)
	o := &Options{Release: r, Driver: true, TempDir: "tmp", LinkerArgs: []string{"-o", "prog", "in/main.o", "-Llibs", "-lk"}}
	l, err := PlanInputs(o, in)
	if err != nil {
		t.Fatal(err)
	}
	var tools, extracted []string
	for _, s := range l.Steps {
		tools = append(tools, s.Tool)
		if s.Kind == StepExtract {
			extracted = append(extracted, s.Inputs...)
		}
	}
	if !reflect.DeepEqual(extracted, []string{"in/main.o", "libs/libk.a"}) {
		t.Errorf("extracted from %q", extracted)
	}
	if tools[len(tools)-3] != "clang-22" {
		t.Errorf("device link by %q, want clang-22 (no clang given)", tools)
	}
	in.AddTool("clang-22", "/opt/clang-22")
	if l, err = PlanInputs(o, in); err != nil {
		t.Fatal(err)
	}
	if got := l.Steps[len(l.Steps)-3].Tool; got != "/opt/clang-22" {
		t.Errorf("device link by %q, want /opt/clang-22", got)
	}
	o.LinkerArgs = append(o.LinkerArgs, "gone.o")
	if _, err := PlanInputs(o, in); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an input not given: %v, want fs.ErrNotExist", err)
	}
	if _, err := PlanInputs(o, nil); !errors.Is(err, ErrUsage) {
		t.Errorf("no Inputs: %v", err)
	}
}
