package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/goffload/goffload/internal/atomicfile"
	"github.com/goffload/goffload/link"
	"github.com/goffload/goffload/offload"
	"github.com/goffload/goffload/offloadbinary"
	"github.com/goffload/goffload/release"
)

// The built-in example: an OpenMP program compiled by clang-19, and its
// device image as goffload link would link it (see sample/vadd.c).
var (
	//go:embed sample/vadd-llvm19.o
	sampleObject []byte
	//go:embed sample/vadd-device-llvm19.so
	sampleDeviceImage []byte
)

// runDemo runs the OpenMP link flow on the built-in example: with clang-19 it
// links the device code itself, else it uses the image linked in advance; it
// wraps the image and, where libomptarget 19 is installed, links the program
// with cc and runs it.
func runDemo(args []string, stdout io.Writer) error {
	var llvm string
	fs := newFlags("demo", &llvm)
	libdir := fs.String("libdir", "/usr/lib/llvm-19/lib", "the `dir` of libomp and libomptarget 19")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rel, err := release.Lookup(19)
	if err != nil {
		return err
	}
	tmp, remove, err := atomicfile.TempDir("", "goffload-demo")
	if err != nil {
		return err
	}
	defer remove()
	obj := filepath.Join(tmp, "vadd.o")
	if err := os.WriteFile(obj, sampleObject, 0o644); err != nil {
		return err
	}
	out := filepath.Join(tmp, "vadd")
	opt := &link.Options{Release: rel, Driver: true, RuntimeDir: *libdir, HostTriple: "x86_64-unknown-linux-gnu",
		LinkerArgs: []string{"-o", out, obj}, Stdout: stdout, Stderr: os.Stderr, Print: true, TempDir: tmp}
	if opt.DeviceClang, err = exec.LookPath("clang-19"); err != nil {
		dev := filepath.Join(tmp, "vadd-device.so")
		opt.OverrideImages = []link.OverrideImage{{Kind: offload.OffloadOpenMP, File: dev}}
		if err := os.WriteFile(dev, sampleDeviceImage, 0o755); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "# goffload: clang-19 is not installed: the device image linked in advance stands in for the device link")
	}
	if _, err := os.Stat(filepath.Join(*libdir, "libomptarget.so")); err != nil {
		opt.NoHostLink = true
		fmt.Fprintf(stdout, "# goffload: libomptarget 19 is not in %s (Debian: libomp-19-dev): the registration object is made, the program is not linked\n", *libdir)
	}
	l, err := link.Plan(opt)
	if err != nil {
		return err
	}
	defer l.Close()
	if err := l.Run(context.Background()); err != nil {
		return err
	}
	if opt.NoHostLink {
		return listFile(stdout, l.Wrapper, &offloadbinary.ReadOptions{Release: rel}, listMode{all: true})
	}
	cmd := exec.Command(out)
	cmd.Env = append(os.Environ(), "LIBOMPTARGET_INFO=1")
	var info strings.Builder
	cmd.Stdout, cmd.Stderr = stdout, &info
	fmt.Fprintln(stdout, "# goffload: run the program with LIBOMPTARGET_INFO=1")
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %v: %s", out, err, info.String())
	}
	for _, line := range strings.Split(info.String(), "\n") {
		if strings.Contains(line, "Entering OpenMP kernel") {
			fmt.Fprintln(stdout, line)
		}
	}
	return nil
}
