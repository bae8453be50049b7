package stubs

import (
	"debug/elf"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateGPUGolden = flag.Bool("gpu.update", false, "rewrite gpu_decode.golden")

// gpuGoldenFile holds the code of every machine, kind and wrapper module as
// golang.org/x/arch decodes it (GNU syntax), with function names and
// relocations, checked by eye against `llvm-objdump -d -r` of llc's
// objects. Regenerate with `go test -run TestGPUDecodeMatchesGolden -gpu.update`.
const gpuGoldenFile = "gpu_decode.golden"

// gpuModuleReleases are a release of each wrapper module form.
var gpuModuleReleases = []int{17, 19, 22}

func TestGPUDecodeMatchesGolden(t *testing.T) {
	var b strings.Builder
	for _, m := range gpuMachines {
		for _, kind := range gpuKinds {
			for _, llvm := range gpuModuleReleases {
				c := gpuCode(t, m.machine, GPUOptions{LLVM: llvm, Kind: kind})
				fmt.Fprintf(&b, "## %s %v LLVM %d\n", m.name, kind, llvm)
				listing, err := gpuListing(m.machine, c)
				if err != nil {
					t.Errorf("%s %v %d: %v", m.name, kind, llvm, err)
				}
				b.WriteString(listing)
				b.WriteString("\n")
			}
		}
	}
	got := b.String()
	if *updateGPUGolden {
		if err := os.WriteFile(gpuGoldenFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(gpuGoldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("%s (-want +got):\n%s", gpuGoldenFile, diff)
	}
}

// gpuListing is c decoded, one instruction a line, with the functions'
// names before their first instruction and the relocations after theirs;
// the jump table follows.
func gpuListing(m elf.Machine, c *GPUCode) (string, error) {
	var b strings.Builder
	relocs := c.Relocs
	for pc := 0; pc < len(c.Text); {
		text, n, err := decodeOne(m, c.Text[pc:], uint64(pc))
		if err != nil {
			return b.String(), fmt.Errorf("%v at %#x: % x: %w", m, pc, c.Text[pc:min(pc+4, len(c.Text))], err)
		}
		for _, f := range c.Funcs {
			if f.Offset == uint64(pc) {
				fmt.Fprintf(&b, "%s:\n", f.Name)
			}
		}
		fmt.Fprintf(&b, "%#04x: %s", pc, text)
		for len(relocs) > 0 && relocs[0].Offset < uint64(pc+n) {
			r := relocs[0]
			fmt.Fprintf(&b, "  [%v %s%+d]", r.Type, GPUTargetName(r.Target), r.Addend)
			relocs = relocs[1:]
		}
		b.WriteString("\n")
		pc += n
	}
	if jt := c.JumpTable; jt != nil {
		fmt.Fprintf(&b, ".rodata (align %d, %d bytes):\n", jt.Align, len(jt.Data))
		for _, r := range jt.Relocs {
			fmt.Fprintf(&b, "%#04x: [%v %s%+#x]\n", r.Offset, r.Type, GPUTargetName(r.Target), r.Addend)
		}
	}
	return b.String(), nil
}
