package fatobj

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/machoobj"
)

// machoHosts are the Mach-O hosts of the tests.
var machoHosts = []string{"x86_64-apple-macosx10.15.0", "arm64-apple-macos11"}

// writeMachO writes o and returns the bytes.
func writeMachO(t *testing.T, o *machoobj.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := machoobj.Write(&b, o); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// loadMachO reads b as an Object.
func loadMachO(t *testing.T, b []byte) *machoobj.Object {
	t.Helper()
	f, err := machoobj.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.Object()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// llcMachO compiles the IR ll with llc-22 for triple in dir.
func llcMachO(t *testing.T, dir, name, triple, ll string) []byte {
	t.Helper()
	llc := tooltest.Tool(t, "llc", 22)
	in, out := filepath.Join(dir, name+".ll"), filepath.Join(dir, name+".o")
	if err := os.WriteFile(in, []byte(ll), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(llc, "-mtriple="+triple, "-filetype=obj", in, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("llc-22: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// irBytes is b as an LLVM IR string constant.
func irBytes(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		fmt.Fprintf(&s, "\\%02X", c)
	}
	return s.String()
}

// withEmbedded is the module ll with the globals main's clang adds for
// -fembed-offload-object (llvm::embedBufferInModule), one per binary, in
// section __LLVM,__offloading: what clang would emit for a Mach-O host if
// the section's name were one (the !exclude metadata and the
// llvm.embedded.objects list change nothing in a Mach-O object, and are
// left out).
func withEmbedded(t *testing.T, ll string, bins ...[]byte) string {
	t.Helper()
	if strings.Contains(ll, "@llvm.compiler.used") {
		t.Fatal("the module has llvm.compiler.used already")
	}
	var b strings.Builder
	var refs []string
	for i, bin := range bins {
		name := "@llvm.embedded.object"
		if i > 0 {
			name += fmt.Sprintf(".%d", i)
		}
		fmt.Fprintf(&b, "%s = private constant [%d x i8] c\"%s\", section \"%s,%s\", align 8\n", name, len(bin), irBytes(bin), MachOSegment, MachOSection)
		refs = append(refs, "ptr "+name)
	}
	fmt.Fprintf(&b, "@llvm.compiler.used = appending global [%d x ptr] [%s], section \"llvm.metadata\"\n", len(bins), strings.Join(refs, ", "))
	// After the module's last global, before its first function.
	at := strings.Index(ll, "\ndefine ")
	if at < 0 {
		t.Fatal("no function in the module")
	}
	return ll[:at+1] + b.String() + ll[at+1:]
}

// TestEmbedMachOAsLLC: embedding into what llc-22 compiles of clang-22's
// module for a macOS host gives, byte for byte, what llc-22 compiles of
// the module with the embedded globals, for x86-64 and arm64, with and
// without DWARF, one binary and two: the new section among the others,
// its symbols and arm64's renumbered ltmp symbols, and every section that
// moved with what points into it (DWARF, compact unwind and the
// pc-relative pointers of x86-64's __eh_frame). The default sample
// compiles each host and each kind of debug information once.
func TestEmbedMachOAsLLC(t *testing.T) {
	t.Parallel()
	clang := tooltest.Tool(t, "clang", 22)
	src, err := filepath.Abs(filepath.Join("testdata", "macho", "host.cpp"))
	if err != nil {
		t.Fatal(err)
	}
	one, two := binary(t, "amdgcn-amd-amdhsa", "gfx90a"), binary(t, "nvptx64-nvidia-cuda", "sm_90")
	debug := []string{"-g0", "-g"}
	for i, triple := range machoHosts {
		for j, g := range debug {
			t.Run(triple+g, func(t *testing.T) {
				tooltest.Sample(t, i, j, len(machoHosts), len(debug))
				t.Parallel()
				dir := t.TempDir()
				ll := filepath.Join(dir, "h.ll")
				if err := runTool(dir, clang, "--target="+triple, g, "-O1", "-fdebug-compilation-dir=.", "-S", "-emit-llvm", src, "-o", ll); err != nil {
					t.Fatal(err)
				}
				text, err := os.ReadFile(ll)
				if err != nil {
					t.Fatal(err)
				}
				plain := llcMachO(t, dir, "plain", triple, string(text))
				for _, bins := range [][][]byte{{one}, {one, two}} {
					want := llcMachO(t, dir, "embed", triple, withEmbedded(t, string(text), bins...))
					o := loadMachO(t, plain)
					var readers []*io.SectionReader
					for _, b := range bins {
						readers = append(readers, io.NewSectionReader(bytes.NewReader(b), 0, int64(len(b))))
					}
					if err := EmbedMachO(o, readers...); err != nil {
						t.Fatal(err)
					}
					got := writeMachO(t, o)
					if !bytes.Equal(got, want) {
						gotPath := filepath.Join(dir, "got.o")
						os.WriteFile(gotPath, got, 0o644)
						t.Fatalf("%d binaries: embedded object differs from llc's (%d bytes, llc's %d; first difference at %#x)%s", len(bins), len(got), len(want),
							tooltest.FirstDiff(got, want), readobjDiff(t, gotPath, filepath.Join(dir, "embed.o")))
					}
				}
			})
		}
	}
}

// TestNewMachOHostObject: an empty host object is what llc-22 makes of an
// empty module, for each deployment target's kind of load command.
func TestNewMachOHostObject(t *testing.T) {
	dir := t.TempDir()
	for _, triple := range []string{"x86_64-apple-macosx10.15.0", "x86_64-apple-macosx10.13", "x86_64-apple-macosx", "arm64-apple-macos",
		"arm64-apple-macos10.15", "arm64-apple-macos14.2", "arm64-apple-ios15", "x86_64-apple-ios12", "arm64-apple-tvos11"} {
		o, err := NewMachOHostObject(triple)
		if err != nil {
			t.Fatalf("%s: %v", triple, err)
		}
		got, want := writeMachO(t, o), llcMachO(t, dir, "empty", triple, "")
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, llc-22's %d; first difference at %#x", triple, len(got), len(want), tooltest.FirstDiff(got, want))
		}
	}
}
