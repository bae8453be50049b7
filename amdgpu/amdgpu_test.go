package amdgpu

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/google/go-cmp/cmp"
)

// readelfFlags renders what the code object says of its target as
// llvm-readelf -h prints e_flags: the value, the processor, the features
// (xnack or sramecc for "any", with + or - for on or off) and a generic
// processor's version.
func readelfFlags(c *CodeObject) string {
	s := fmt.Sprintf("%#x, %s", c.Flags, c.Processor)
	for _, f := range []struct {
		name string
		set  Feature
	}{{"xnack", c.XNACK}, {"sramecc", c.SRAMECC}} {
		switch f.set {
		case FeatureAny:
			s += ", " + f.name
		case FeatureOn:
			s += ", " + f.name + "+"
		case FeatureOff:
			s += ", " + f.name + "-"
		}
	}
	if c.GenericVersion != 0 {
		s += fmt.Sprintf(", generic_v%d", c.GenericVersion)
	}
	return s
}

// kernelFields are the scalars of each kernel that the metadata notes
// dump of llvm-readelf --notes and Kernel both hold.
var kernelFields = []string{".name", ".symbol", ".sgpr_count", ".vgpr_count", ".agpr_count", ".sgpr_spill_count", ".vgpr_spill_count",
	".group_segment_fixed_size", ".private_segment_fixed_size", ".kernarg_segment_size", ".kernarg_segment_align",
	".wavefront_size", ".max_flat_workgroup_size", ".uses_dynamic_stack"}

// ours renders the notes as kernelLines reads llvm-readelf's.
func ours(c *CodeObject) []string {
	var out []string
	for _, m := range c.Metadata {
		for _, k := range m.Kernels {
			vals := map[string]string{".name": k.Name, ".symbol": k.Symbol, ".sgpr_count": fmt.Sprint(k.SGPRCount), ".vgpr_count": fmt.Sprint(k.VGPRCount),
				".agpr_count": fmt.Sprint(k.AGPRCount), ".sgpr_spill_count": fmt.Sprint(k.SGPRSpillCount), ".vgpr_spill_count": fmt.Sprint(k.VGPRSpillCount),
				".group_segment_fixed_size": fmt.Sprint(k.GroupSegmentFixedSize), ".private_segment_fixed_size": fmt.Sprint(k.PrivateSegmentFixedSize),
				".kernarg_segment_size": fmt.Sprint(k.KernargSegmentSize), ".kernarg_segment_align": fmt.Sprint(k.KernargSegmentAlign),
				".wavefront_size": fmt.Sprint(k.WavefrontSize), ".max_flat_workgroup_size": fmt.Sprint(k.MaxFlatWorkgroupSize),
				".uses_dynamic_stack": fmt.Sprint(k.UsesDynamicStack)}
			var line []string
			for _, f := range kernelFields {
				line = append(line, f+"="+vals[f])
			}
			out = append(out, strings.Join(line, " "))
		}
		out = append(out, fmt.Sprintf("target=%s version=%v args=%d", m.Target, m.Version, argsOf(m)))
	}
	return out
}

func argsOf(m *Metadata) []int {
	var n []int
	for _, k := range m.Kernels {
		n = append(n, k.Args)
	}
	return n
}

// kernelLines reads llvm-readelf --notes: for each metadata note, a line of
// each kernel's scalars and one of the note's target, version and the
// number of each kernel's arguments.
func kernelLines(notes string) []string {
	var out []string
	for _, note := range strings.Split(notes, "NT_AMDGPU_METADATA")[1:] {
		var args []int
		// The kernels: the list under amdhsa.kernels, up to the next key.
		list := note
		if i := strings.Index(list, "\namdhsa.kernels:"); i >= 0 {
			list = list[i+1:]
			if j := strings.Index(list, "\namdhsa."); j >= 0 {
				list = list[:j]
			}
		}
		kernels := regexp.MustCompile(`(?m)^  - `).Split(list, -1)
		for _, k := range kernels[1:] {
			vals := map[string]string{}
			for _, m := range regexp.MustCompile(`(?m)^    (\.[a-z_]+):\s+(\S+)$`).FindAllStringSubmatch(k, -1) {
				vals[m[1]] = yamlScalar(m[2])
			}
			for _, f := range kernelFields {
				if _, ok := vals[f]; !ok {
					vals[f] = "0"
					if f == ".uses_dynamic_stack" {
						vals[f] = "false"
					}
				}
			}
			var line []string
			for _, f := range kernelFields {
				line = append(line, f+"="+vals[f])
			}
			out = append(out, strings.Join(line, " "))
			args = append(args, len(regexp.MustCompile(`(?m)^      - `).FindAllString(k, -1)))
		}
		target := regexp.MustCompile(`(?m)^amdhsa\.target:\s+(\S+)$`).FindStringSubmatch(note)
		version := regexp.MustCompile(`(?m)^amdhsa\.version:\n  - (\d+)\n  - (\d+)$`).FindStringSubmatch(note)
		if target == nil || version == nil {
			out = append(out, "no target or version in:\n"+note)
			continue
		}
		out = append(out, fmt.Sprintf("target=%s version=[%s %s] args=%v", yamlScalar(target[1]), version[1], version[2], args))
	}
	return out
}

// yamlScalar is a plain or single-quoted YAML scalar's text (LLVM's YAML
// writer quotes a string holding ':').
func yamlScalar(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}

// compileStore holds the code objects clang-22 made for the default run.
var compileStore = tooltest.Store{Dir: filepath.Join("testdata", "compiled")}

// TestStoredCompilesAreCurrent: every compile in the store was made of the
// sources as they are.
func TestStoredCompilesAreCurrent(t *testing.T) {
	compileStore.CheckCurrent(t)
}

// TestReadMatchesReadelf compiles testdata/k.hip with clang-22 for
// processors with and without features, generic, and code object versions
// 4, 5 and 6, and compares what Read says with llvm-readelf-22: the ABI
// version, e_flags as it names them (-h), and every kernel's name, symbol,
// register counts, segment sizes and wavefront size, each note's target and
// version and how many arguments each kernel has (--notes).
func TestReadMatchesReadelf(t *testing.T) {
	readelf := tooltest.Tool(t, "llvm-readelf", 22)
	clang := tooltest.Tool(t, "clang", 22)
	for _, c := range []struct {
		arch    string
		version int
	}{{"gfx90a:xnack+:sramecc-", 4}, {"gfx908:xnack-", 5}, {"gfx1100", 6}, {"gfx9-generic", 6}, {"gfx90a", 5}} {
		name := fmt.Sprintf("%s-v%d", strings.ReplaceAll(c.arch, ":", "_"), c.version)
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "k.hip"), mustRead(t, filepath.Join("testdata", "k.hip")), 0o644); err != nil {
				t.Fatal(err)
			}
			out := name + ".co"
			args := []string{"-x", "hip", "--offload-arch=" + c.arch, "-nogpulib", "-nogpuinc", "--offload-device-only", "--no-gpu-bundle-output",
				fmt.Sprintf("-mcode-object-version=%d", c.version), "-O1", "k.hip", "-o", out}
			if err := compileStore.Compile(t, "clang-22", clang, dir, args, out); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, out)
			data := mustRead(t, path)
			co, err := Read(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			head, err := exec.Command(readelf, "-h", path).Output()
			if err != nil {
				t.Fatal(err)
			}
			flags := regexp.MustCompile(`(?m)^\s+Flags:\s+(.*)$`).FindSubmatch(head)
			abi := regexp.MustCompile(`(?m)^\s+ABI Version:\s+(\d+)$`).FindSubmatch(head)
			if flags == nil || abi == nil || string(flags[1]) != readelfFlags(co) || string(abi[1]) != fmt.Sprint(co.ABIVersion) || co.Version != c.version {
				t.Errorf("llvm-readelf: flags %q, ABI version %q; ours %q, %d (code object v%d, want v%d)", flags, abi, readelfFlags(co), co.ABIVersion, co.Version, c.version)
			}
			notes, err := exec.Command(readelf, "--notes", path).Output()
			if err != nil {
				t.Fatal(err)
			}
			want := kernelLines(string(notes))
			if diff := cmp.Diff(want, ours(co)); diff != "" || len(co.Kernels()) < 2 {
				t.Errorf("llvm-readelf --notes (-) and ours (+):\n%s", diff)
			}
			if id := strings.TrimSuffix(c.arch, ":xnack+:sramecc-") + map[bool]string{true: ":sramecc-:xnack+"}[strings.HasSuffix(c.arch, ":xnack+:sramecc-")]; co.TargetID() != id {
				t.Errorf("target ID %q, want %q (clang's order: sramecc, then xnack)", co.TargetID(), id)
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadFixtures reads the code objects of testdata (no tools needed):
// their versions, target IDs and kernels as llvm-readelf-22 prints them.
func TestReadFixtures(t *testing.T) {
	for _, c := range []struct {
		file, id string
		version  int
		generic  int
	}{{"gfx908-v5.co", "gfx908:xnack-", 5, 0}, {"gfx9-generic-v6.co", "gfx9-generic", 6, 1}} {
		data := mustRead(t, filepath.Join("testdata", c.file))
		co, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		ks := co.Kernels()
		if co.TargetID() != c.id || co.Version != c.version || co.GenericVersion != c.generic || len(ks) != 2 ||
			ks[0].Name != "_Z2k1Pi" || ks[1].Symbol != "_Z2kkPi.kd" || ks[1].GroupSegmentFixedSize != 256 || ks[0].WavefrontSize != 64 {
			t.Errorf("%s: %s v%d generic %d, kernels %+v", c.file, co.TargetID(), co.Version, co.GenericVersion, ks)
		}
	}
}

// TestReadRefuses: what is no code object, and broken notes, as errors of
// the vocabulary.
func TestReadRefuses(t *testing.T) {
	data := mustRead(t, filepath.Join("testdata", "gfx908-v5.co"))
	if _, err := Read(bytes.NewReader(data[:100]), 100); !errors.Is(err, goffload.ErrInvalid) {
		t.Errorf("a cut header: %v", err)
	}
	host, err := os.ReadFile("/proc/self/exe")
	if err == nil && runtime.GOOS == "linux" {
		if _, err := Read(bytes.NewReader(host), int64(len(host))); !errors.Is(err, goffload.ErrUnsupported) {
			t.Errorf("a host program: %v, want ErrUnsupported", err)
		}
	}
	// The metadata note's MessagePack cut short, and made to claim more
	// than it holds: each a FormatError, never a panic.
	i := bytes.Index(data, []byte("amdhsa.kernels"))
	if i < 0 {
		t.Fatal("no amdhsa.kernels in the fixture")
	}
	for _, mend := range []func(b []byte){
		func(b []byte) { b[i-2] = 0xdf }, // a map32 whose length runs past the note
		func(b []byte) { copy(b[i:], bytes.Repeat([]byte{0x91}, 14)) },
		func(b []byte) { b[i-1] = 0xc1 }, // never used
	} {
		b := bytes.Clone(data)
		mend(b)
		if _, err := Read(bytes.NewReader(b), int64(len(b))); err != nil && !errors.Is(err, goffload.ErrInvalid) {
			t.Errorf("a broken note: %v, want nil or an ErrInvalid", err)
		}
	}
}

// FuzzRead: any input reads or fails with an error of the vocabulary, and
// allocates no more than the module's budget (tooltest.CheckAllocs).
func FuzzRead(f *testing.F) {
	for _, name := range []string{"gfx908-v5.co", "gfx9-generic-v6.co"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tooltest.CheckAllocs(t, len(b), tooltest.AllocsPerByte, tooltest.AllocsFixed, func() {
			co, err := Read(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				if !errors.Is(err, goffload.ErrInvalid) && !errors.Is(err, goffload.ErrUnsupported) && !errors.Is(err, goffload.ErrLimit) {
					t.Fatalf("an error outside the vocabulary: %v", err)
				}
				return
			}
			if n := len(co.Kernels()); n > len(b) {
				t.Fatalf("%d kernels in %d bytes", n, len(b))
			}
		})
	})
}
