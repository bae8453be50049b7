package link_test

import (
	"bytes"
	"fmt"
	"os"
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

// Plan from a file the caller holds in memory and a tool it has resolved:
// PlanInputs reads nothing else (the object's path need not exist).
func ExamplePlanInputs() {
	data, err := os.ReadFile(filepath.Join("..", "offload", "testdata", "llvm", "host-objects", "openmp-x86-llvm22.o"))
	if err != nil {
		panic(err)
	}
	in := link.NewInputs()
	defer in.Close()
	in.AddFile("k.o", bytes.NewReader(data), int64(len(data)))
	in.AddTool("clang-22", "/opt/llvm-22/bin/clang")
	r, _ := release.Lookup(22)
	l, err := link.PlanInputs(&link.Options{Release: r, Driver: true, TempDir: "tmp", LinkerArgs: []string{"-o", "prog", "k.o"}}, in)
	if err != nil {
		panic(err)
	}
	for _, s := range l.Steps {
		fmt.Println(s.Kind, s.Tool, s.Inputs)
	}
	// Output:
	// extract goffload [k.o]
	// device-link /opt/llvm-22/bin/clang [tmp/k-x86_64-unknown-linux-gnu-generic.o]
	// wrap goffload [tmp/prog.x86_64..img]
	// host-link cc [tmp/prog.openmp.image.wrapper.o k.o]
}
