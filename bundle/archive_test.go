package bundle

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/release"
)

// hipSource is a HIP translation unit that needs no HIP headers.
const hipSource = `#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
typedef struct { unsigned x, y, z; } dim3;
typedef struct ihipStream_t *hipStream_t;
extern "C" int hipLaunchKernel(const void *, dim3, dim3, void **, unsigned long, hipStream_t);
__device__ int dvar = 1;
__device__ int helper(int x) { return x + dvar; }
__global__ void %s(int *p) { *p = helper(%d); }
`

// compileStore holds what clang compiled for the package's tests, which
// the default run takes instead of compiling (tooltest.Store).
var compileStore = tooltest.Store{Dir: filepath.Join("testdata", "compiled")}

// TestStoredCompilesAreCurrent: every compile in the store was made of the
// sources as they are.
func TestStoredCompilesAreCurrent(t *testing.T) {
	compileStore.CheckCurrent(t)
}

// rdcLibrary compiles HIP sources with clang-N -fgpu-rdc for the arches and
// archives them, with a host object without device code, into lib.a.
func rdcLibrary(t *testing.T, major int, dir string, archSets ...[]string) string {
	t.Helper()
	clang := tooltest.Tool(t, "clang", major)
	var objs []string
	for i, archs := range archSets {
		src := filepath.Join(dir, fmt.Sprintf("k%d.hip", i))
		os.WriteFile(src, []byte(fmt.Sprintf(hipSource, fmt.Sprintf("kern%d", i), i)), 0o644)
		obj := fmt.Sprintf("kernels%d.o", i)
		args := []string{"-x", "hip", "-nogpulib", "-nogpuinc", "-fgpu-rdc", "-c", "-o", obj, filepath.Base(src)}
		for _, a := range archs {
			args = append(args, "--offload-arch="+a)
		}
		if err := compileStore.Compile(t, fmt.Sprintf("clang-%d", major), clang, dir, args, obj); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, filepath.Join(dir, obj))
	}
	host := filepath.Join(dir, "host.o")
	if out, err := exec.Command(clang, "-x", "c", "-c", "-o", host, "/dev/null").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lib := filepath.Join(dir, "lib.a")
	if out, err := exec.Command("ar", tooltest.ArArgs(append([]string{"rcs", lib, host}, objs...)...)...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return lib
}

// deviceArchive makes the device archive of the library data for target
// with NewDeviceArchive, as fatobj.DeviceArchive feeds it (the
// command's device-archive is compared with the bundler through fatobj in
// cmd/goffload): each member's bundled-object sections, or its bundle
// file's entries, a compressed bundle decompressed in memory.
func deviceArchive(data []byte, target string, opt ArchiveOptions) (*DeviceArchive, error) {
	d, err := NewDeviceArchive(target, opt)
	if err != nil {
		return nil, err
	}
	a, err := ar.Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	for _, m := range a.Members() {
		sr, err := a.Open(m)
		if err != nil {
			return nil, err
		}
		if err := addMember(d, m.Name, sr); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// addMember adds the bundles of the archive member name, held in sr.
func addMember(d *DeviceArchive, name string, sr *io.SectionReader) error {
	switch Classify(sr, sr.Size()) {
	case ContentsELF:
		f, err := elfobj.Read(sr, sr.Size())
		if err != nil {
			return err
		}
		es, err := ObjectEntries(f)
		if err != nil {
			return err
		}
		var sections []Input
		for i := range es {
			sections = append(sections, Input{ID: es[i].ID, Data: es[i].Open()})
		}
		return d.AddObject(name, sections)
	case ContentsBundle:
		r := io.Reader(sr)
		if c, err := ReadCompressed(sr, sr.Size()); err == nil {
			r = c.Open()
		}
		raw, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		b, err := Read(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			return err
		}
		return d.AddBundle(name, b, bytes.NewReader(raw))
	}
	return nil
}

// unbundleArchive makes the device archive and writes it.
func unbundleArchive(t *testing.T, lib, target string, major int, hipOpenMP bool) []byte {
	t.Helper()
	data, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := release.Lookup(major)
	if err != nil {
		t.Fatal(err)
	}
	d, err := deviceArchive(data, target, ArchiveOptions{Release: rel, HIPOpenMPCompatible: hipOpenMP})
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDeviceArchiveMatchesBundler makes device archives of HIP -fgpu-rdc
// static libraries of clang 19 and 22 (one and two arches, xnack and sramecc
// target IDs) for targets written as the drivers write them and otherwise,
// and compares them byte for byte with clang-offload-bundler -unbundle
// -type=a of the same release. The targets × (release,
// -hip-openmp-compatible) are sampled (tooltest.Sampled).
func TestDeviceArchiveMatchesBundler(t *testing.T) {
	targets := []string{
		"hip-amdgcn-amd-amdhsa-gfx90a", "hip-amdgcn-amd-amdhsa--gfx90a", "hip-amdgcn-amd-amdhsa-unknown-gfx90a",
		"hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "hip-amdgcn-amd-amdhsa--gfx90a:xnack-", "hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+",
		"hip-amdgcn-amd-amdhsa--gfx908", "hip-amdgcn-amd-amdhsa--gfx908:sramecc-:xnack-", "hipv4-amdgcn-amd-amdhsa--gfx90a",
		"openmp-amdgcn-amd-amdhsa--gfx90a", "hip-amdgcn-amd-amdhsa--gfx1030", "hip-x86_64-unknown-linux-gnu--gfx90a",
	}
	for ri, major := range bundlerReleases {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			dir := t.TempDir()
			lib := rdcLibrary(t, major, dir, []string{"gfx90a"}, []string{"gfx90a:xnack+", "gfx908:sramecc-:xnack-"}, []string{"gfx90a:xnack-"})
			nonEmpty, compared := 0, 0
			for ti, target := range targets {
				for hi, hipOpenMP := range []bool{false, true} {
					if !tooltest.Sampled(ti, ri*2+hi, len(targets), 2*len(bundlerReleases)) {
						continue
					}
					compared++
					out := filepath.Join(dir, "out.a")
					os.Remove(out)
					args := []string{"-unbundle", "-type=a", "-input=" + lib, "-targets=" + target, "-output=" + out, "-allow-missing-bundles"}
					if hipOpenMP {
						args = append(args, "-hip-openmp-compatible")
					}
					msg, ok := bundler(t, tool, nil, args...)
					if !ok {
						t.Fatalf("%s %v: %s", target, hipOpenMP, msg)
					}
					want, _ := os.ReadFile(out)
					got := unbundleArchive(t, lib, target, major, hipOpenMP)
					if !bytes.Equal(got, want) {
						t.Errorf("%s (hip-openmp-compatible %v): ours %d bytes %s, the bundler's %d bytes %s", target, hipOpenMP,
							len(got), memberNames(t, got), len(want), memberNames(t, want))
					}
					if len(want) > 8 {
						nonEmpty++
					}
				}
			}
			t.Logf("%d of %d targets × -hip-openmp-compatible compared (%s=1: all), %d device archives with members", compared, 2*len(targets), tooltest.ExhaustiveEnv, nonEmpty)
			// At least 10 of the 24 (as many of those compared).
			if nonEmpty*2*len(targets) < 10*compared {
				t.Errorf("only %d of %d device archives have members", nonEmpty, compared)
			}
		})
	}
}

func memberNames(t *testing.T, data []byte) string {
	a, err := ar.Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return err.Error()
	}
	var names []string
	for _, m := range a.Members() {
		names = append(names, m.Name)
	}
	syms, _ := a.Symbols()
	return fmt.Sprintf("%v (%d symbols)", names, len(syms))
}

// TestCompatibleAgreesWithBundler asks each release's bundler which of many
// crafted code-object IDs it extracts for each of many targets, with and
// without -hip-openmp-compatible, and compares with Compatible. The
// targets × (release, -hip-openmp-compatible) are sampled
// (tooltest.Sampled).
func TestCompatibleAgreesWithBundler(t *testing.T) {
	haves := []string{
		"hip-amdgcn-amd-amdhsa--gfx90a", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "hip-amdgcn-amd-amdhsa--gfx90a:xnack-",
		"hip-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+", "hipv4-amdgcn-amd-amdhsa--gfx908", "hip-amdgcn-amd-amdhsa-gfx90a",
		"openmp-amdgcn-amd-amdhsa--gfx90a", "openmp-x86_64-pc-linux-gnu", "openmp-x86_64-unknown-linux-gnu--",
		"hip-amdgcn-amd-amdhsa-unknown-gfx90a", "hip-amdgcn-amd-amdhsa--gfx1030", "openmp-nvptx64-nvidia-cuda--sm_70",
		"openmp-x86_64-pc-linux-gnu-", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+:sramecc-",
	}
	wants := append(append([]string{}, haves...), "hip-amdgcn-amd-amdhsa-gfx908", "openmp-nvptx64-nvidia-cuda-sm_70",
		"openmp-x86_64-pc-linux", "hip-amdgcn-amd-amdhsa--gfx90a:sramecc-", "openmp-amdgcn-amd-amdhsa-unknown-gfx90a:xnack+")
	for ri, major := range bundlerReleases {
		t.Run(fmt.Sprintf("llvm%d", major), func(t *testing.T) {
			tool := tooltest.Tool(t, "clang-offload-bundler", major)
			rel, _ := release.Lookup(major)
			dir := t.TempDir()
			// One member per ID: an object with one bundle section holding
			// the ID, so the output's members say which IDs matched.
			var members []ar.NewMember
			for i, id := range haves {
				if _, err := ParseID(id, rel); err != nil {
					continue // refused by this release: tested below
				}
				data := objectWithSection(t, SectionPrefix+id, []byte(fmt.Sprintf("code %d", i)))
				members = append(members, ar.NewMember{Name: fmt.Sprintf("m%02d.o", i), Mode: 0o644, Data: io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))})
			}
			lib := filepath.Join(dir, "lib.a")
			var buf bytes.Buffer
			if err := ar.WriteGNU(&buf, members); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(lib, buf.Bytes(), 0o644)
			compared := 0
			for wi, want := range wants {
				if _, err := ParseID(want, rel); err != nil {
					continue
				}
				for hi, hipOpenMP := range []bool{false, true} {
					if !tooltest.Sampled(wi, ri*2+hi, len(wants), 2*len(bundlerReleases)) {
						continue
					}
					compared++
					out := filepath.Join(dir, "out.a")
					os.Remove(out)
					args := []string{"-unbundle", "-type=a", "-input=" + lib, "-targets=" + want, "-output=" + out, "-allow-missing-bundles"}
					if hipOpenMP {
						args = append(args, "-hip-openmp-compatible")
					}
					if msg, ok := bundler(t, tool, nil, args...); !ok {
						t.Errorf("%s: %s", want, firstLine(msg))
						continue
					}
					theirs, _ := os.ReadFile(out)
					ours := unbundleArchive(t, lib, want, major, hipOpenMP)
					if !bytes.Equal(ours, theirs) {
						t.Errorf("target %s (hip-openmp-compatible %v):\n  bundler  %s\n  goffload %s", want, hipOpenMP, memberNames(t, theirs), memberNames(t, ours))
					}
				}
			}
			t.Logf("%d targets × -hip-openmp-compatible compared (%s=1: all)", compared, tooltest.ExhaustiveEnv)
		})
	}
}

// objectWithSection returns an x86-64 object holding one SHF_EXCLUDE
// section.
func objectWithSection(t testing.TB, name string, data []byte) []byte {
	o, err := elfobj.ForTriple("x86_64-unknown-linux-gnu")
	if err != nil {
		t.Fatal(err)
	}
	o.AddSection(&elfobj.Section{Name: name, Type: elf.SHT_PROGBITS, Flags: elfobj.SHF_EXCLUDE, Addralign: 1, Data: data}, false)
	var buf bytes.Buffer
	if _, err := elfobj.Write(&buf, o); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDeviceMemberName(t *testing.T) {
	for _, c := range []struct{ member, id, tid, want string }{
		{"rdc19.o", "hip-amdgcn-amd-amdhsa--gfx90a", "gfx90a", "rdc19-hip-amdgcn-amd-amdhsa--gfx90ardc19.bc"},
		{"dir/k.o", "hip-amdgcn-amd-amdhsa--gfx90a:xnack+", "gfx90a:xnack+", "k-hip-amdgcn-amd-amdhsa--gfx90a_xnack+k.bc"},
		{"v.o", "openmp-nvptx64-nvidia-cuda--sm_70", "sm_70", "v-openmp-nvptx64-nvidia-cuda--sm_70v.cubin"},
		{"v.o", "openmp-x86_64-pc-linux-gnu", "", "v-openmp-x86_64-pc-linux-gnuv.o"},
		{"noext", "openmp-x86_64-pc-linux-gnu", "", "noext-openmp-x86_64-pc-linux-gnunoext"},
	} {
		if got := DeviceMemberName(c.member, c.id, c.tid); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.member, c.id, got, c.want)
		}
	}
	var names []string
	for n := range offloadArchs {
		names = append(names, n)
	}
	sort.Strings(names)
	if !strings.Contains(strings.Join(names, " "), "gfx90a") {
		t.Error("gfx90a is not an offload arch")
	}
}
