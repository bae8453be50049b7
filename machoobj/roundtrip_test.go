package machoobj_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/goffload/goffload/internal/tooltest"
	"github.com/goffload/goffload/machoobj"
)

// Triples of the Mach-O hosts the tests compile for.
var hosts = []string{"x86_64-apple-macosx10.15.0", "arm64-apple-macos11"}

// sources exercise what clang puts in a Mach-O object: code and data,
// zero-fill and common symbols, C strings, static constructors,
// thread-local variables, jump tables (data in code on x86-64), linker
// optimization hints (arm64), exception tables and debug information.
var sources = []struct{ name, lang, src string }{
	{"c", "c", `
int printf(const char *, ...);
int g = 3; static int s[100]; const char *msg = "hello";
int common_var;
extern int ext(int);
static int helper(int x) { return x * s[x % 100]; }
int main(int argc, char **argv) { s[argc] = g; printf("%s %d\n", msg, helper(argc) + ext(argc)); return 0; }
`},
	{"switch", "c", `
int f(int);
int sw(int x) {
	switch (x) { case 0: return f(1); case 1: return f(7); case 2: return f(3)+1; case 3: return f(9); case 4: return 42; case 5: return f(11); default: return 0; }
}
__thread int tls = 5;
int get(void) { return tls; }
`},
	{"cxx", "c++", `
struct S { S(); ~S(); int v; };
S s;
int thrower(int x) { if (x) throw x; return 1; }
int catcher(int x) { try { return thrower(x); } catch (int e) { return e; } }
`},
}

func compile(t *testing.T, triple string, src struct{ name, lang, src string }, args ...string) []byte {
	t.Helper()
	clang := tooltest.Tool(t, "clang", 22)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in."+src.lang), filepath.Join(dir, "out.o")
	if err := os.WriteFile(in, []byte(src.src), 0o644); err != nil {
		t.Fatal(err)
	}
	argv := append([]string{"-target", triple, "-x", src.lang, "-c", in, "-o", out}, args...)
	if msg, err := exec.Command(clang, argv...).CombinedOutput(); err != nil {
		t.Fatalf("clang %v: %v\n%s", argv, err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// roundTrip loads b and writes it back.
func roundTrip(t *testing.T, b []byte) []byte {
	t.Helper()
	f, err := machoobj.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	o, err := f.Object()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n, err := machoobj.Write(&out, o)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(out.Len()) {
		t.Fatalf("Write reports %d bytes, wrote %d", n, out.Len())
	}
	return out.Bytes()
}

// TestRoundTripClang loads objects clang-22 made and writes them back:
// the bytes must be clang's, every one.
func TestRoundTripClang(t *testing.T) {
	for _, h := range hosts {
		for _, src := range sources {
			for _, opt := range [][]string{{"-O0"}, {"-O2"}, {"-O1", "-g"}} {
				t.Run(h+"/"+src.name+opt[len(opt)-1], func(t *testing.T) {
					b := compile(t, h, src, opt...)
					got := roundTrip(t, b)
					if !bytes.Equal(got, b) {
						i := tooltest.FirstDiff(got, b)
						t.Fatalf("written back: %d bytes, clang's %d; first difference at %#x", len(got), len(b), i)
					}
				})
			}
		}
	}
}
