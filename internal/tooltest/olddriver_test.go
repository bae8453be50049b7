package tooltest

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplitQuoted(t *testing.T) {
	got, err := splitQuoted(` "/usr/bin/ld" "-o" "a b" "x\\y" "q\"r" "\$HOME"`)
	want := []string{"/usr/bin/ld", "-o", "a b", `x\y`, `q"r`, "$HOME"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("splitQuoted = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{` "unterminated`, ` bare`} {
		if _, err := splitQuoted(bad); err == nil {
			t.Errorf("splitQuoted(%q): no error", bad)
		}
	}
}

// TestOldDriverCommands reads the link of clang-14 and checks the commands
// that the tests of the LLVM 14 wrapper run.
func TestOldDriverCommands(t *testing.T) {
	l := OldDriverCommands(t, 14, "x86_64-pc-linux-gnu")
	if w := l.WrapArgs("w.bc", "a.out", "b.out"); !strings.HasSuffix(w[0], "clang-offload-wrapper") ||
		!reflect.DeepEqual(w[1:], []string{"-target", "x86_64-pc-linux-gnu", "-o", "w.bc", "a.out", "b.out"}) {
		t.Errorf("wrapper: %q", w)
	}
	c := l.CompileArgs("w.bc", "w.o")
	if c[1] != "-cc1" || c[len(c)-1] != "w.bc" || c[indexOf(c, "-o")+1] != "w.o" || indexOf(c, "-emit-obj") < 0 {
		t.Errorf("compile: %q", c)
	}
	u := l.UnbundleArgs("in.o", "h.o", "d.o")
	if indexOf(u, "-inputs=in.o") < 0 || indexOf(u, "-outputs=h.o,d.o") < 0 || indexOf(u, "-unbundle") < 0 {
		t.Errorf("unbundle: %q", u)
	}
	d := l.DeviceLinkArgs("d.o", "dev.out", "-Lrt")
	if indexOf(d, "d.o") < 0 || d[indexOf(d, "-o")+1] != "dev.out" || indexOf(d, "-shared") < 0 || indexOf(d, "-Lrt") != indexOf(d, "-lomp")-1 {
		t.Errorf("device link: %q", d)
	}
}
