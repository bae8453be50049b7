package link

import (
	"os/exec"
	"strings"
	"testing"
)

// A triple or an arch from an input may hold ESC, CR, BEL and newlines:
// FormatCommand prints such an argument in ANSI-C quotes, so that no
// control character reaches the terminal and no line is forged, and the
// shell reads back the argument it was.
func TestFormatCommandEscapesControl(t *testing.T) {
	args := []string{"--target=x86_64-unknown-linux-gnu\x1b[2J\rX", "-march=gen\x1b]0;pwn\x07\nZ", "it's \\ \xff\u202e\U0001F600", "-O2", "a b"}
	s := &Step{Tool: "clang", Args: args}
	got := FormatCommand(s)
	want := ` "clang" $'--target=x86_64-unknown-linux-gnu\x1b[2J\x0dX' $'-march=gen\x1b]0;pwn\x07\x0aZ' $'it\'s \\ \xff\u202e` + "\U0001F600" + `' -O2 "a b"`
	if got != want {
		t.Errorf("FormatCommand:\n got %s\nwant %s", got, want)
	}
	if strings.ContainsAny(got, "\x1b\r\n\x07") {
		t.Errorf("control characters printed: %q", got)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	out, err := exec.Command(bash, "-c", `printf '%s\0' `+strings.TrimPrefix(got, ` "clang"`)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if back := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00"); strings.Join(back, "|") != strings.Join(args, "|") {
		t.Errorf("bash reads %q, want %q", back, args)
	}
}
