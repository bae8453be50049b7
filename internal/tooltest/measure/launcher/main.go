// Command launcher is the launcher of cmd/goffload's hostile-input tests:
// it runs the program that $GOFFLOAD_HOSTILE_EXE names with its own
// arguments and writes the record of the run to the file that
// $GOFFLOAD_HOSTILE_MEASURE names (package measure).
package main

import (
	"fmt"
	"os"

	"github.com/goffload/goffload/internal/tooltest/measure"
)

func main() {
	record, exe := os.Getenv(measure.RecordEnv), os.Getenv(measure.ExeEnv)
	if record == "" || exe == "" {
		fmt.Fprintf(os.Stderr, "launcher: %s and %s must be set\n", measure.RecordEnv, measure.ExeEnv)
		os.Exit(2)
	}
	os.Exit(measure.Run(record, exe, os.Args))
}
