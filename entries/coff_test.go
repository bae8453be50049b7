package entries

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/goffload/goffload/coffobj"
	"github.com/goffload/goffload/elfobj"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// coffSources compile without headers: HIP kernels (one a template), a
// device variable, a managed variable; an OpenMP target region and a
// declare-target variable.
var coffSources = map[string]string{
	"k.hip": `#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __managed__ __attribute__((managed))
typedef struct { unsigned x, y, z; } dim3;
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long long, void*);
extern "C" int hipConfigureCall(dim3, dim3, unsigned long long, void*);
__global__ void kern(int *p) { *p = 1; }
template <typename T> __global__ void tkern(T *p) { *p = 2; }
template __global__ void tkern<float>(float *);
__device__ int devvar[64];
__managed__ int managed;
`,
	"o.c": `int f(int *a) {
#pragma omp target map(tofrom: a[0:4])
	a[0] = 1;
	return a[0];
}
int g = 5;
#pragma omp declare target to(g)
`,
}

// TestReadCOFFMatchesELF: the entries clang-22 writes into the COFF object
// of a Windows host are, read by ReadCOFF, the entries it writes into the
// ELF object of a Linux host from the same source, read by Read: names,
// kinds, flags, sizes, data and the symbols they point to.
func TestReadCOFFMatchesELF(t *testing.T) {
	t.Parallel()
	clang := tooltest.Tool(t, "clang", 22)
	dir := t.TempDir()
	for name, src := range coffSources {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hip := []string{"-x", "hip", "--offload-new-driver", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-fgpu-rdc", "-c", "k.hip"}
	cases := map[string]struct {
		args      []string
		coffHosts []string
	}{
		"hip":    {hip, []string{"x86_64-pc-windows-msvc", "x86_64-w64-windows-gnu"}},
		"openmp": {[]string{"-fopenmp", "--offload-arch=gfx90a", "-nogpulib", "-nogpuinc", "-c", "o.c"}, []string{"x86_64-pc-windows-msvc"}},
	}
	// Every object first, clang running in parallel.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for name, c := range cases {
		for _, triple := range append([]string{"x86_64-unknown-linux-gnu"}, c.coffHosts...) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				release := tooltest.Slot()
				defer release()
				cmd := exec.Command(clang, append([]string{"--target=" + triple, "-o", name + "-" + triple + ".o"}, c.args...)...)
				cmd.Dir = dir
				if b, err := cmd.CombinedOutput(); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s for %s: %v\n%s", name, triple, err, b))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	r := release.Default()
	for name, c := range cases {
		compile := func(triple string) string { return filepath.Join(dir, name+"-"+triple+".o") }
		ef, err := elfobj.Read(readerOf(t, compile("x86_64-unknown-linux-gnu")))
		if err != nil {
			t.Fatal(err)
		}
		want, err := Read(ef, r)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) == 0 {
			t.Fatalf("%s: no entries in the ELF object", name)
		}
		for _, host := range c.coffHosts {
			cf, err := coffobj.Read(readerOf(t, compile(host)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadCOFF(cf, r)
			if err != nil {
				t.Fatalf("%s for %s: %v", name, host, err)
			}
			w, g := entriesOnly(want), entriesOnly(got)
			if name == "hip" && strings.HasSuffix(host, "-msvc") {
				// The host symbols of C++ have Microsoft's names there
				// (?kern@@YAXPEAH@Z); the entries name the device's.
				for i := 0; i < len(g) && i < len(w); i++ {
					if g[i].Address.Symbol == "" || (g[i].Aux.Symbol == "") != (w[i].Aux.Symbol == "") {
						t.Errorf("%s for %s: entry %q points to %v, aux %v", name, host, g[i].Name, g[i].Address, g[i].Aux)
					}
					g[i].Address.Symbol, g[i].Aux.Symbol, w[i].Address.Symbol, w[i].Aux.Symbol = "", "", "", ""
				}
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("%s for %s: entries differ from the ELF object's (-elf +coff):\n%s", name, host, diff)
			}
			for _, e := range got {
				if e.Section != "llvm_offload_entries$OE" {
					t.Errorf("%s for %s: entry %q in section %q", name, host, e.Name, e.Section)
				}
			}
		}
	}
}

// entriesOnly drops what the formats place differently (sections, symbols
// of the name strings, which COFF names .offloading.entry_name.N).
func entriesOnly(fes []FileEntry) []offload.Entry {
	var out []offload.Entry
	for _, fe := range fes {
		out = append(out, fe.Entry)
	}
	return out
}

func readerOf(t *testing.T, path string) (*bytes.Reader, int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b), int64(len(b))
}
