package link_test

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/goffload/goffload/link"
	"github.com/goffload/goffload/release"
)

// Plan the link of a fat object made by clang-22 as clang-linker-wrapper 22
// runs it, without running it: the steps are commands a build system can run
// as actions of its own, goffload's own steps (extract, wrap) included.
func ExamplePlan() {
	r, _ := release.Lookup(22)
	obj := filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm22.o")
	l, err := link.Plan(&link.Options{Release: r, Driver: true, DryRun: true, DeviceClang: "clang-22", TempDir: "tmp",
		LinkerArgs: []string{"-o", "prog", obj, "-lm"}})
	if err != nil {
		panic(err)
	}
	defer l.Close()
	for _, s := range l.Steps {
		fmt.Println(s.Kind, s.Target, s.Tool, s.Outputs)
	}
	fmt.Println(l.Steps[0].Tool, strings.Join(l.Steps[0].Args, " "))
	// Output:
	// extract  goffload [tmp/openmp-x86-llvm22-x86_64-unknown-linux-gnu-generic.o]
	// device-link x86_64-unknown-linux-gnu:generic clang-22 [tmp/prog.x86_64..img]
	// wrap openmp goffload [tmp/prog.openmp.image.wrapper.o]
	// host-link  cc [prog]
	// goffload step extract --llvm 22 --input ../offload/testdata/llvm/host-objects/openmp-x86-llvm22.o 0:0=tmp/openmp-x86-llvm22-x86_64-unknown-linux-gnu-generic.o
}
