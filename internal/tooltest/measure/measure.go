// Package measure runs a program and records how its run ended and what it
// cost: the launcher of cmd/goffload's hostile-input tests (its command is
// measure/launcher), and the record the tests read. With
// GOFFLOAD_HOSTILE_MEASURE naming a file and GOFFLOAD_HOSTILE_EXE a
// program, it runs that program with its own arguments (its argv[0] too,
// so that a launcher named clang-linker-wrapper runs goffload as the
// wrapper), passes its input and output through, and writes to the file, as
// JSON, the exit code (or the signal), the peak resident memory, the CPU
// time and the bytes printed.
//
// The peak memory is why a launcher runs goffload: a child started by the
// test process itself would report the test's peak (Linux keeps the peak of
// the memory a child shares with its parent until exec), the launcher's is
// small. It is a program of its own, not the test binary run again, because
// a run of this small program costs a few milliseconds of CPU where the test
// binary's start cost 20, for each of hundreds of runs.
package measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The environment variables of the launcher: the file of the record, and
// the program it runs.
const (
	RecordEnv = "GOFFLOAD_HOSTILE_MEASURE"
	ExeEnv    = "GOFFLOAD_HOSTILE_EXE"
)

// Record is what the launcher writes of a run.
type Record struct {
	Code           int
	Signal         string
	RSS            int64
	CPU            time.Duration
	Stdout, Stderr int64
	StderrText     string
}

// Run runs exe with args (args[0] its argv[0]), writes the record to the
// file record and returns the exit code for the launcher.
func Run(record, exe string, args []string) int {
	cmd := exec.Command(exe, args[1:]...)
	cmd.Args[0] = args[0]
	cmd.Env = slices.DeleteFunc(os.Environ(), func(e string) bool {
		return strings.HasPrefix(e, RecordEnv+"=") || strings.HasPrefix(e, ExeEnv+"=")
	})
	var stdout, stderr countingWriter
	var errText bytes.Buffer
	stdout.w, stderr.w = os.Stdout, io.MultiWriter(os.Stderr, &errText)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, &stdout, &stderr
	err := cmd.Run()
	code := -1
	var rec Record
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rec.RSS = ru.Maxrss << 10
		}
		rec.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	if code == -1 && cmd.ProcessState != nil {
		rec.Signal = cmd.ProcessState.String()
	}
	rec.Code, rec.Stdout, rec.Stderr, rec.StderrText = code, stdout.n, stderr.n, errText.String()
	data, _ := json.Marshal(rec)
	if err := os.WriteFile(record, data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if code < 0 {
		return 2
	}
	return code
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}
