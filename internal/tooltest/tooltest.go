// Package tooltest finds the LLVM tools that tests compare against, and applies
// the project's rule for a missing tool: the test is skipped with the reason,
// or, when OFFLOAD_REQUIRE_TOOLS=1 (as in CI), it fails. It also holds what
// several packages' tests share, such as [SameBytes].
//
// A test binary that imports it runs its LLVM tools with
// LLVM_DISABLE_SYMBOLIZATION=1: a tool that crashes (llvm-objdump-19 on
// some of the differential tests' inputs) prints its stack unsymbolized
// instead of starting llvm-symbolizer, which costs a second of CPU a crash.
package tooltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func init() {
	if _, set := os.LookupEnv("LLVM_DISABLE_SYMBOLIZATION"); !set {
		os.Setenv("LLVM_DISABLE_SYMBOLIZATION", "1")
	}
}

// RequireEnv is the environment variable that turns a missing tool into a
// test failure.
const RequireEnv = "OFFLOAD_REQUIRE_TOOLS"

// Required reports whether missing tools fail tests.
func Required() bool {
	v := os.Getenv(RequireEnv)
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// Dirs returns the folders searched for the tools of LLVM release major, after
// $PATH: $OFFLOAD_LLVM_<major>/bin (an unpacked package, e.g. from
// `dpkg -x`), then /usr/lib/llvm-<major>/bin.
func Dirs(major int) []string {
	var dirs []string
	if root := os.Getenv("OFFLOAD_LLVM_" + strconv.Itoa(major)); root != "" {
		dirs = append(dirs, filepath.Join(root, "bin"), root)
	}
	return append(dirs, fmt.Sprintf("/usr/lib/llvm-%d/bin", major))
}

// Find returns the path of tool name of LLVM release major (for example
// "clang-offload-packager", 19 finds clang-offload-packager-19 or
// /usr/lib/llvm-19/bin/clang-offload-packager), and "" if there is none.
func Find(name string, major int) string {
	if p, err := exec.LookPath(name + "-" + strconv.Itoa(major)); err == nil {
		return p
	}
	for _, d := range Dirs(major) {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// Tool returns the path of tool name of release major, or ends the test: it is
// skipped with the reason, or fails when tools are required.
func Tool(t testing.TB, name string, major int) string {
	t.Helper()
	if p := Find(name, major); p != "" {
		return p
	}
	Missing(t, fmt.Sprintf("%s of LLVM %d not found (looked for %s-%d in $PATH and in %v)", name, major, name, major, Dirs(major)))
	return ""
}

// Program returns the path of a program that is no LLVM tool (ninja, say)
// on $PATH, or ends the test as Tool does.
func Program(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	Missing(t, name+" not found in $PATH")
	return ""
}

// Missing ends the test for a missing prerequisite described by reason.
func Missing(t testing.TB, reason string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s; %s=1 makes this a failure", reason, RequireEnv)
	}
	t.Skip(reason)
}

// OpenMPRuntime returns a folder holding libomp and the libomptarget of LLVM
// release major (with its x86-64 host plugin, a library of its own up to LLVM
// 16), under the names a program links and the runtime loads (libomp.so,
// libomptarget.so, libomptarget.rtl.x86_64.so),
// or ends the test as for a missing tool. The libraries are found in
// /usr/lib/llvm-<major>/lib (Debian libomp-<major>-dev, libomp5-<major>) or
// in $OFFLOAD_LLVM_<major>/usr/lib/llvm-<major>/lib (the libomp5-<major>
// package unpacked with dpkg -x, since the -dev packages of two releases
// conflict; for 14, libomp-14-dev too, which holds its libomptarget); the
// folder is made in the test's temporary folder, of links. A release that
// ships libomptarget alone, under its versioned name only (22: Debian's
// liboffload-22, libomptarget.so.22.1), takes the libomp its package
// depends on, the system's libomp.so.5.
func OpenMPRuntime(t testing.TB, major int) string {
	t.Helper()
	n := strconv.Itoa(major)
	var roots []string
	if root := os.Getenv("OFFLOAD_LLVM_" + n); root != "" {
		roots = append(roots, filepath.Join(root, "usr", "lib", "llvm-"+n, "lib"))
	}
	roots = append(roots, "/usr/lib/llvm-"+n+"/lib")
	for _, lib := range roots {
		versioned, _ := filepath.Glob(filepath.Join(lib, "libomptarget.so."+n+".*"))
		target := firstExisting(append([]string{filepath.Join(lib, "libomptarget.so"), filepath.Join(lib, "libomptarget.so."+n)}, versioned...)...)
		plugin := firstExisting(filepath.Join(lib, "libomptarget.rtl.x86_64.so"), filepath.Join(lib, "libomptarget.rtl.x86_64.so."+n))
		omp := firstExisting(filepath.Join(lib, "libomp.so.5"), filepath.Join(lib, "libomp.so"))
		if omp == "" && target != "" {
			system, _ := filepath.Glob("/usr/lib/*-linux-gnu*/libomp.so.5")
			omp = firstExisting(system...)
		}
		if target == "" || omp == "" {
			continue
		}
		links := map[string]string{"libomptarget.so": target, "libomp.so": omp, "libomp.so.5": omp}
		if plugin != "" { // from LLVM 17 the plugins are inside libomptarget
			links["libomptarget.rtl.x86_64.so"] = plugin
		}
		// The versioned names that programs record (libomptarget.so.19.1).
		versioned, _ = filepath.Glob(filepath.Join(lib, "libomptarget.so.*"))
		for _, v := range versioned {
			links[filepath.Base(v)] = v
		}
		dir := t.TempDir()
		for name, to := range links {
			if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	Missing(t, fmt.Sprintf("libomptarget of LLVM %d with its x86-64 plugin not found in %v", major, roots))
	return ""
}

func firstExisting(paths ...string) string {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// AllowShlibUndefined is the flag the tests give the host links of OpenMP
// programs (clang's, and goffload link's): without it GNU ld reads the
// libraries that libomptarget needs, libLLVM's 100,000 dynamic symbols
// among them, to check that they define what libomptarget uses (0.5 s of
// CPU a link here, ten times the rest of the link). ld still checks the
// program's own objects; the program's bytes are the same, and the loader
// resolves libomptarget's symbols when it runs.
const AllowShlibUndefined = "-Wl,--allow-shlib-undefined"
