package bitcode

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/ar"
	"github.com/goffload/goffload/internal/tooltest"
	"github.com/google/go-cmp/cmp"
)

const source = `
int defined_global = 1;
static int local_static = 2;
extern int undefined_global;
__attribute__((weak)) int weak_global;
int common_global;
static int helper(int x) { return x + local_static; }
int exported(int x) { return helper(x) + undefined_global; }
__attribute__((visibility("hidden"))) int hidden_fn(void) { return 3; }
__attribute__((visibility("protected"))) int protected_global = 4;
__attribute__((section("my_section"))) int placed = 5;
__attribute__((weak, section("other.section"))) int weak_placed(void) { return 6; }
inline int omittable(void) { return 7; }
int use_omittable(void) { return omittable(); }
`

// sourceTargets are the targets the tests compile source for.
var sourceTargets = []string{"x86_64-unknown-linux-gnu", "amdgcn-amd-amdhsa"}

// compileSource compiles source to bitcode for target with clang in dir,
// and returns the file.
func compileSource(t *testing.T, clang, dir, target string) string {
	t.Helper()
	src := filepath.Join(dir, "s.c")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	bc := filepath.Join(dir, target+".bc")
	args := []string{"-target", target, "-O1", "-fcommon", "-c", "-emit-llvm", "-o", bc, src}
	if target == "amdgcn-amd-amdhsa" {
		args = append(args, "-mcpu=gfx90a", "-nogpulib")
	}
	if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return bc
}

// TestArchiveSymbolsMatchLLVMAr compiles C to bitcode with clang of 19 and
// 22, archives it with the same release's llvm-ar, and compares the
// archive's symbol index with the symbols Symbols marks as archive symbols.
func TestArchiveSymbolsMatchLLVMAr(t *testing.T) {
	for _, major := range []int{19, 22} {
		t.Run(filepath.Base(tooltest.Tool(t, "clang", major)), func(t *testing.T) {
			clang, llvmAr := tooltest.Tool(t, "clang", major), tooltest.Tool(t, "llvm-ar", major)
			dir := t.TempDir()
			for _, target := range sourceTargets {
				bc := compileSource(t, clang, dir, target)
				lib := filepath.Join(dir, target+".a")
				if out, err := exec.Command(llvmAr, "rcs", lib, bc).CombinedOutput(); err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				data, _ := os.ReadFile(lib)
				a, err := ar.Open(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				index, err := a.Symbols()
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, s := range index {
					want = append(want, s.Name)
				}
				bcData, _ := os.ReadFile(bc)
				syms, err := Symbols(bytes.NewReader(bcData), int64(len(bcData)))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, s := range syms {
					if s.ArchiveSymbol() {
						got = append(got, s.Name)
					}
				}
				if diff := cmp.Diff(want, got); diff != "" || len(want) < 4 {
					t.Errorf("%s: llvm-ar's index (-) and ours (+):\n%s", target, diff)
				}
			}
		})
	}
}

// TestSymbolsMatchLLVMLTO2 compiles the source to bitcode with clang of 19
// and 22 for x86-64 and AMDGPU and compares every symbol's name, visibility,
// flags and section with what the release's llvm-lto2 dump-symtab prints
// of the file (LLVM's own reader of the table).
func TestSymbolsMatchLLVMLTO2(t *testing.T) {
	for _, major := range []int{19, 22} {
		t.Run(strconv.Itoa(major), func(t *testing.T) {
			clang, lto2 := tooltest.Tool(t, "clang", major), tooltest.Tool(t, "llvm-lto2", major)
			dir := t.TempDir()
			for _, target := range sourceTargets {
				bc := compileSource(t, clang, dir, target)
				out, err := exec.Command(lto2, "dump-symtab", bc).Output()
				if err != nil {
					t.Fatal(err)
				}
				// dump-symtab: a line "VUCWIOTX name" (visibility D, H or
				// P, then each flag's letter or '-': undefined, common,
				// weak, indirect, may be omitted, TLS, executable), then
				// an indented
				// "section NAME" line for a symbol placed in one.
				var want []string
				for _, line := range strings.Split(string(out), "\n") {
					if name, ok := strings.CutPrefix(strings.TrimSpace(line), "section "); ok && strings.HasPrefix(line, " ") {
						want[len(want)-1] += " section=" + name
					} else if len(line) > 9 && line[8] == ' ' && strings.ContainsRune("DHP", rune(line[0])) {
						want = append(want, line[:2]+line[3:4]+line[2:3]+line[5:6]+" "+line[9:])
					}
				}
				data, _ := os.ReadFile(bc)
				syms, err := Symbols(bytes.NewReader(data), int64(len(data)))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, s := range syms {
					vis := "D"
					switch {
					case s.Hidden():
						vis = "H"
					case s.Protected():
						vis = "P"
					}
					flag := func(set bool, c string) string {
						if set {
							return c
						}
						return "-"
					}
					g := vis + flag(s.Undefined(), "U") + flag(s.Weak(), "W") + flag(s.Common(), "C") + flag(s.MayOmit(), "O") + " " + s.Name
					if s.Section != "" {
						g += " section=" + s.Section
					}
					got = append(got, g)
				}
				if diff := cmp.Diff(want, got); diff != "" || len(want) < 8 || !strings.Contains(strings.Join(got, "\n"), "section=my_section") {
					t.Errorf("%s: llvm-lto2's table (-) and ours (+):\n%s", target, diff)
				}
			}
		})
	}
}

func TestSymbolsRefusesWhatIsNotBitcode(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty": nil, "elf": []byte("\x7fELF\x02\x01\x01"), "magic only": []byte("BC\xc0\xde"),
		"bad wrapper": append([]byte{0xde, 0xc0, 0x17, 0x0b}, make([]byte, 16)...),
		"bad block":   []byte("BC\xc0\xde\xff\xff\xff\xff\xff\xff\xff\xff"),
	} {
		_, err := Symbols(bytes.NewReader(data), int64(len(data)))
		if err == nil || !(errors.Is(err, goffload.ErrInvalid) || errors.Is(err, ErrNoSymtab)) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := Symbols(nil, 10); err == nil {
		t.Error("a nil reader")
	}
}

// FuzzSymbols: symbols or an error, never a panic, from any input, and
// what reading allocates is bounded by the input's size (the budget of
// FuzzEmbeddedObjects).
func FuzzSymbols(f *testing.F) {
	f.Add([]byte("BC\xc0\xde"))
	f.Add([]byte("BC\xc0\xde\x35\x14\x00\x00\x05\x00\x00\x00\x62\x0c\x30\x24"))
	if files, _ := filepath.Glob("testdata/*.bc"); len(files) > 0 {
		for _, name := range files {
			if data, err := os.ReadFile(name); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var syms []Symbol
		var err error
		got := tooltest.Allocated(func() { syms, err = Symbols(bytes.NewReader(data), int64(len(data))) })
		if bound := bytesPerByte*uint64(len(data)) + fixedBytes; got > bound {
			t.Errorf("%d bytes of input allocated %d bytes, more than %d", len(data), got, bound)
		}
		if err != nil && syms != nil {
			t.Fatal("symbols and an error")
		}
		if !errors.Is(err, goffload.ErrInvalid) && !errors.Is(err, ErrNoSymtab) && err != nil {
			t.Fatalf("error %v matches neither goffload.ErrInvalid nor ErrNoSymtab", err)
		}
	})
}
