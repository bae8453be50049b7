package release

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/goffload/goffload"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]int{"14": 14, "13.0.1": 13, "19": 19, "llvm19": 19, "LLVM 22": 22, "19.1.7": 19, "23.1.0": 23, "24": 24, " 15 ": 15, "llvm-16": 16} {
		r, err := Parse(in)
		if err != nil || r.Major != want {
			t.Errorf("Parse(%q) = %v, %v; want %d", in, r, err, want)
		}
	}
	for _, in := range []string{"12", "25", "", "x", "1e9"} {
		if _, err := Parse(in); !errors.Is(err, goffload.ErrUnknownRelease) {
			t.Errorf("Parse(%q): %v, want goffload.ErrUnknownRelease", in, err)
		}
	}
}

// TestReleaseRowsAreTheCallers: a caller that changes every field of a row it
// was given (slice elements too) changes nothing for the next caller.
func TestReleaseRowsAreTheCallers(t *testing.T) {
	for _, c := range []struct {
		name string
		get  func() *Release
	}{
		{"Lookup", func() *Release { r, _ := Lookup(19); return r }},
		{"Parse", func() *Release { r, _ := Parse("llvm 19"); return r }},
		{"All", func() *Release { return All()[6] }}, // 19
		{"Default", Default},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := fmt.Sprintf("%#v", *c.get())
			scribble(t, reflect.ValueOf(c.get()).Elem())
			if after := fmt.Sprintf("%#v", *c.get()); after != before {
				t.Errorf("a caller changed the table:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// scribble changes every field of v, recursing into structs and slices.
func scribble(t *testing.T, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			scribble(t, v.Field(i))
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(t, v.Index(i))
		}
	case reflect.String:
		v.SetString(v.String() + "!")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 7)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(v.Uint() + 7)
	default:
		t.Fatalf("scribble: a field of kind %v", v.Kind())
	}
}

// TestAMDGPUTriple: the triples of LLVM main after 23 for AMDGPU processors
// (clang's test Driver/amdgpu-mcpu.cl), and amdgcn-amd-amdhsa before (23's
// driver too: llvm-project #206482 came after its branch).
func TestAMDGPUTriple(t *testing.T) {
	r24, r23, r22 := mustLookup(t, 24), mustLookup(t, 23), mustLookup(t, 22)
	for id, want := range map[string]string{
		"gfx90a": "amdgpu9.0a", "gfx90a:xnack+": "amdgpu9.0a", "gfx900": "amdgpu9.00", "gfx942": "amdgpu9.42",
		"gfx705": "amdgpu7.05", "gfx1030": "amdgpu10.30", "gfx1201": "amdgpu12.01", "gfx1310": "amdgpu13.10",
		"gfx9-generic": "amdgpu9", "gfx10-3-generic": "amdgpu10.3", "gfx12-5-generic": "amdgpu12.5",
		"": "amdgpu", "sm_70": "amdgpu", "gfx9": "amdgpu", "gfxzz1": "amdgpu", "gfx1x-generic": "amdgpu",
	} {
		if got := r24.AMDGPUTriple(id); got != want+"-amd-amdhsa" {
			t.Errorf("24: AMDGPUTriple(%q) = %q, want %q", id, got, want+"-amd-amdhsa")
		}
		for _, r := range []*Release{r22, r23} {
			if got := r.AMDGPUTriple(id); got != "amdgcn-amd-amdhsa" {
				t.Errorf("%v: AMDGPUTriple(%q) = %q", r, id, got)
			}
		}
	}
	// SHF_GNU_RETAIN came with llvm-project #212614, after the 23 branch.
	if r22.EntriesFlags() != 0 || r23.EntriesFlags() != 0 || r24.EntriesFlags() != 0x200000 {
		t.Errorf("EntriesFlags: 22 %#x, 23 %#x, 24 %#x", r22.EntriesFlags(), r23.EntriesFlags(), r24.EntriesFlags())
	}
}

func TestRuntimeReleases(t *testing.T) {
	for name, want := range map[string]string{
		"libomptarget.so":        "[LLVM 13 LLVM 14]",
		"libomptarget.so.15":     "[LLVM 15]",
		"libomptarget.so.19.1":   "[LLVM 19]",
		"libomptarget.so.22.1":   "[LLVM 22]",
		"libomptarget.so.21.1.3": "[LLVM 21]",
		"libomptarget.so.12":     "[]",
		"libomptarget.so.019":    "[]",
		"libomptarget.so.x":      "[]",
		"libomp.so.5":            "[]",
		"libomptarget.so.18":     "[LLVM 18]",
	} {
		if got := fmt.Sprint(ByRuntimeLibrary(name)); got != want {
			t.Errorf("ByRuntimeLibrary(%q) = %s, want %s", name, got, want)
		}
	}
}

func mustLookup(t *testing.T, major int) *Release {
	t.Helper()
	r, err := Lookup(major)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRange(t *testing.T) {
	for _, c := range []struct {
		lo, hi int
		want   string
	}{{19, 22, "[LLVM 19 LLVM 20 LLVM 21 LLVM 22]"}, {0, 14, "[LLVM 13 LLVM 14]"}, {24, 99, "[LLVM 24]"}, {22, 19, "[]"}, {25, 30, "[]"}} {
		if got := fmt.Sprint(Range(c.lo, c.hi)); got != c.want {
			t.Errorf("Range(%d, %d) = %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}
