package tooltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// OldDriverLink is the OpenMP link of clang 13 or 14 (the old driver), as
// `clang-N --target=T -fopenmp -fopenmp-targets=T x.o -o prog -###` prints
// it: each step an argv whose file names the methods below replace.
type OldDriverLink struct {
	// Unbundle is clang-offload-bundler -unbundle of the input object into
	// its host and device parts.
	Unbundle []string
	// DeviceLink links the device part into the device image (ld -shared).
	DeviceLink []string
	// Wrap is clang-offload-wrapper, writing the registration module (bitcode).
	Wrap []string
	// Compile is `clang -cc1 -emit-obj` of that module.
	Compile []string
	// HostLink links the host part and the registration object.
	HostLink []string

	host, dev string // the temporary files of the unbundled parts
}

// OldDriverCommands returns the commands with which clang of release major
// (13 or 14) links an OpenMP program for host and offload target triple,
// as the driver prints them with -###, or ends the test as for a missing
// tool.
func OldDriverCommands(t testing.TB, major int, triple string) *OldDriverLink {
	t.Helper()
	clang := Tool(t, "clang", major)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.o")
	if err := os.WriteFile(in, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(clang, "--target="+triple, "-fopenmp", "-fopenmp-targets="+triple, in, "-o", filepath.Join(dir, "prog"), "-###")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	var l OldDriverLink
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, " \"") {
			continue
		}
		argv, err := splitQuoted(line)
		if err != nil {
			t.Fatalf("%s -###: %v in %q", clang, err, line)
		}
		switch base := filepath.Base(argv[0]); {
		case strings.HasPrefix(base, "clang-offload-bundler"):
			l.Unbundle = argv
		case strings.HasPrefix(base, "clang-offload-wrapper"):
			l.Wrap = argv
		case len(argv) > 1 && argv[1] == "-cc1":
			l.Compile = argv
		case l.DeviceLink == nil:
			l.DeviceLink = argv
		default:
			l.HostLink = argv
		}
	}
	if l.Unbundle == nil || l.DeviceLink == nil || l.Wrap == nil || l.Compile == nil || l.HostLink == nil {
		t.Fatalf("%s -### printed no old-driver OpenMP link:\n%s", clang, out)
	}
	for _, a := range l.Unbundle {
		if outs, ok := strings.CutPrefix(a, "-outputs="); ok {
			l.host, l.dev, _ = strings.Cut(outs, ",")
		}
	}
	if indexOf(l.DeviceLink, l.dev) < 0 {
		t.Fatalf("%s -###: the device link does not link the unbundled %q:\n%s", clang, l.dev, out)
	}
	return &l
}

// WrapArgs returns the clang-offload-wrapper command that writes the module
// of images to bc.
func (l *OldDriverLink) WrapArgs(bc string, images ...string) []string {
	argv := withOutput(l.Wrap, bc)
	i := indexOf(argv, "-o")
	return append(argv[:i+2:i+2], images...)
}

// CompileArgs returns the clang -cc1 command that compiles the module bc to
// the object obj.
func (l *OldDriverLink) CompileArgs(bc, obj string) []string {
	argv := withOutput(l.Compile, obj)
	argv[len(argv)-1] = bc
	return argv
}

// UnbundleArgs returns the clang-offload-bundler command that splits the
// bundled object in into host and dev.
func (l *OldDriverLink) UnbundleArgs(in, host, dev string) []string {
	argv := append([]string(nil), l.Unbundle...)
	for i, a := range argv {
		switch {
		case strings.HasPrefix(a, "-inputs="):
			argv[i] = "-inputs=" + in
		case strings.HasPrefix(a, "-outputs="):
			argv[i] = "-outputs=" + host + "," + dev
		}
	}
	return argv
}

// DeviceLinkArgs returns the device link of the device object dev into the
// image out, with extra arguments (such as -L of a runtime) before the
// libraries.
func (l *OldDriverLink) DeviceLinkArgs(dev, out string, extra ...string) []string {
	argv := withOutput(l.DeviceLink, out)
	argv[indexOf(argv, l.dev)] = dev
	i := indexOf(argv, "-lomp")
	if i < 0 {
		i = len(argv)
	}
	return append(argv[:i:i], append(extra, argv[i:]...)...)
}

func withOutput(argv []string, out string) []string {
	argv = append([]string(nil), argv...)
	if i := indexOf(argv, "-o"); i >= 0 && i+1 < len(argv) {
		argv[i+1] = out
	}
	return argv
}

func indexOf(argv []string, s string) int {
	for i, a := range argv {
		if a == s {
			return i
		}
	}
	return -1
}

// splitQuoted splits a command line that clang -### prints: arguments in
// double quotes, with backslash escapes, separated by spaces.
func splitQuoted(line string) ([]string, error) {
	var out []string
	for rest := strings.TrimSpace(line); rest != ""; rest = strings.TrimSpace(rest) {
		if rest[0] != '"' {
			return nil, fmt.Errorf("unquoted argument at %q", rest)
		}
		end := 1
		for ; end < len(rest) && rest[end] != '"'; end++ {
			if rest[end] == '\\' {
				end++
			}
		}
		if end >= len(rest) {
			return nil, fmt.Errorf("unterminated argument")
		}
		arg, err := strconv.Unquote(rest[:end+1])
		if err != nil {
			// clang escapes only \, ", $ and `: not all are Go escapes.
			arg = strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\$`, `$`, "\\`", "`").Replace(rest[1:end])
		}
		out = append(out, arg)
		rest = rest[end+1:]
	}
	return out, nil
}
