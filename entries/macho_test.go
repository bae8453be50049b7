package entries

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/machoobj"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/release"
)

// machoEntriesIR is a HIP host module of a macOS host with a kernel's and a
// variable's entries in __LLVM,offload_entries, as LLVM main's
// emitOffloadingEntry writes them (56 bytes, version 1, kind 4), their
// names private strings: in __TEXT,__cstring, which x86-64 objects point
// into with section-relative relocations and arm64 ones through ltmp
// symbols.
const machoEntriesIR = `
%struct.__tgt_offload_entry = type { i64, i16, i16, i32, ptr, ptr, i64, i64, ptr }
@var = global i32 7, align 4
@.name.k = private unnamed_addr constant [2 x i8] c"k\00"
@.name.var = private unnamed_addr constant [4 x i8] c"var\00"
@.offloading.entry.k = weak constant %struct.__tgt_offload_entry { i64 0, i16 1, i16 4, i32 0, ptr @k, ptr @.name.k, i64 0, i64 0, ptr null }, section "__LLVM,offload_entries", align 8
@.offloading.entry.var = weak constant %struct.__tgt_offload_entry { i64 0, i16 1, i16 4, i32 0, ptr @var, ptr @.name.var, i64 4, i64 0, ptr null }, section "__LLVM,offload_entries", align 8
define void @k(ptr %p) { ret void }
`

// TestReadMachOEntries reads the entries of what llc-22 makes of
// machoEntriesIR for x86-64 and arm64.
func TestReadMachOEntries(t *testing.T) {
	llc := tooltest.Tool(t, "llc", 22)
	r, err := release.Lookup(24)
	if err != nil {
		t.Fatal(err)
	}
	for _, triple := range []string{"x86_64-apple-macosx10.15.0", "arm64-apple-macos11"} {
		t.Run(triple, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "h.ll"), filepath.Join(dir, "h.o")
			if err := os.WriteFile(in, []byte(machoEntriesIR), 0o644); err != nil {
				t.Fatal(err)
			}
			if msg, err := exec.Command(llc, "-mtriple="+triple, "-filetype=obj", in, "-o", out).CombinedOutput(); err != nil {
				t.Fatalf("llc-22: %v\n%s", err, msg)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			f, err := machoobj.Read(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			ents, err := ReadMachO(f, r)
			if err != nil {
				t.Fatal(err)
			}
			want := []struct {
				name, addr string
				size       uint64
				role       offload.EntryRole
			}{{"k", "_k", 0, offload.RoleKernel}, {"var", "_var", 4, offload.RoleGlobal}}
			if len(ents) != len(want) {
				t.Fatalf("%d entries, want %d: %+v", len(ents), len(want), ents)
			}
			for i, w := range want {
				e := ents[i]
				if e.Name != w.name || e.Address.Symbol != w.addr || e.Address.Addend != 0 || e.Size != w.size || e.Kind != offload.OffloadHIP || e.Role() != w.role ||
					e.Aux != (offload.SymbolRef{}) {
					t.Errorf("entry %d: %q at %v, size %d, kind %v, role %v, aux %v; want %q at %s, size %d, hip, %v, no aux", i, e.Name, e.Address, e.Size, e.Kind, e.Role(), e.Aux, w.name, w.addr, w.size, w.role)
				}
			}
		})
	}
}
