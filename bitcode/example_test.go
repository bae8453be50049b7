package bitcode_test

import (
	"fmt"
	"os"

	"github.com/goffload/goffload/bitcode"
)

// List the symbols that an archive's index would list for a bitcode file
// clang-19 made, as llvm-ar reads them from its IR symbol table.
func ExampleSymbols() {
	f, err := os.Open("testdata/x86_64-clang19.bc")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	syms, err := bitcode.Symbols(f, st.Size())
	if err != nil {
		panic(err)
	}
	for _, s := range syms {
		if s.ArchiveSymbol() {
			fmt.Println(s.Name)
		}
	}
	// Output:
	// exported
	// defined_global
	// weak_global
}
