package main

import (
	"fmt"
	"io"

	"github.com/goffload/goffload/bundle"
	"github.com/goffload/goffload/fatobj"
)

// runDeviceArchive writes the device archive of a static library of bundled
// objects for one target, as clang-offload-bundler -unbundle -type=a
// -allow-missing-bundles does for the HIP -fgpu-rdc link.
func runDeviceArchive(args []string, stdout io.Writer) error {
	var llvm, target, out string
	var hipOpenMP bool
	fs := newFlags("device-archive", &llvm)
	fs.StringVar(&target, "target", "", "the bundle entry `ID` to extract, e.g. hip-amdgcn-amd-amdhsa--gfx90a")
	fs.StringVar(&out, "o", "", "write the device archive to `OUT.a`")
	fs.BoolVar(&hipOpenMP, "hip-openmp-compatible", false, "HIP code objects serve OpenMP targets and the other way")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if target == "" || out == "" || fs.NArg() != 1 {
		return fmt.Errorf("--target ID, -o OUT.a and one archive are required")
	}
	dest := newOutput(out, stdout)
	if err := dest.check(); err != nil {
		return err
	}
	rel, err := parseRelease(llvm)
	if err != nil {
		return err
	}
	in := fs.Arg(0)
	f, err := fatobj.Open(in, nil)
	if err != nil {
		return err
	}
	defer f.Close()
	d, err := fatobj.DeviceArchive(f, target, bundle.ArchiveOptions{Release: rel, HIPOpenMPCompatible: hipOpenMP})
	if err != nil {
		return err
	}
	if err := dest.write(d.Write); err != nil {
		return err
	}
	fmt.Fprintf(dest.report(), "%s: %d code object(s) for %s\n", in, len(d.Members), target)
	return nil
}
