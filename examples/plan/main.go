// Command plan prints the steps of an offload link as clang-linker-wrapper
// would run them, without running any, with the goffload library:
//
//	go run ./examples/plan [-llvm N] -- -o PROGRAM OBJECT... [-lNAME] [-LDIR]
//
// The arguments after -- are a compiler driver's link arguments
// (cc's). Each step is a command a build system can run as an action of its
// own: its tool, its arguments, the files it reads and writes.
package main

import (
	"flag"
	"fmt"
	"log"
	"strings"

	"github.com/goffload/goffload/link"
	"github.com/goffload/goffload/release"
)

func main() {
	llvm := flag.Int("llvm", 0, "the LLVM release of the link (0: from the inputs)")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: plan [-llvm N] -- -o PROGRAM OBJECT... [-lNAME] [-LDIR]")
	}
	if err := run(*llvm, flag.Args()); err != nil {
		log.Fatal(err)
	}
}

func run(llvm int, args []string) error {
	opt := &link.Options{Driver: true, DryRun: true, LinkerArgs: link.LibrariesLast(args)}
	if llvm != 0 {
		r, err := release.Lookup(llvm)
		if err != nil {
			return err
		}
		opt.Release = r
	}
	l, err := link.Plan(opt)
	if err != nil {
		return err
	}
	defer l.Close()
	fmt.Printf("LLVM %d link of %s\n", l.LLVM, l.Output)
	for i, s := range l.Steps {
		fmt.Printf("%d. %s %s\n", i+1, s.Kind, s.Target)
		fmt.Printf("   %s %s\n", s.Tool, strings.Join(s.Args, " "))
		fmt.Printf("   reads %s; writes %s\n", strings.Join(s.Inputs, " "), strings.Join(s.Outputs, " "))
	}
	return nil
}
