// Command testtimes reads `go test -json` from standard input and prints, as
// Markdown, each package's time and result, then the slowest top-level
// tests. bench/tests.sh runs it.
//
//	go test -json ./... | go run ./bench/testtimes [-n 20]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strings"
)

// event is one line of go test -json (test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// result is one package's or test's end.
type result struct {
	pkg, test string
	action    string
	elapsed   float64
}

func main() {
	n := flag.Int("n", 20, "how many of the slowest tests to print")
	module := flag.String("module", "github.com/goffload/goffload", "the module path to strip from package names")
	flag.Parse()
	pkgs, tests, err := read(os.Stdin)
	if err != nil {
		log.Fatal(err)
	}
	print(os.Stdout, pkgs, tests, *n, *module)
}

// read returns the packages' and the tests' results of a go test -json
// stream, in the order they ended.
func read(r io.Reader) (pkgs, tests []result, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // go test's own messages (build failures) between the events
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, nil, fmt.Errorf("%q: %v", line, err)
		}
		switch e.Action {
		case "pass", "fail", "skip":
		default:
			continue
		}
		res := result{pkg: e.Package, test: e.Test, action: e.Action, elapsed: e.Elapsed}
		if e.Test == "" {
			pkgs = append(pkgs, res)
		} else {
			tests = append(tests, res)
		}
	}
	return pkgs, tests, sc.Err()
}

func print(w io.Writer, pkgs, tests []result, n int, module string) {
	short := func(p string) string {
		if s := strings.TrimPrefix(strings.TrimPrefix(p, module), "/"); s != "" {
			return s
		}
		return "(root)"
	}
	sort.SliceStable(pkgs, func(i, j int) bool { return pkgs[i].elapsed > pkgs[j].elapsed })
	var total float64
	fmt.Fprintln(w, "| package | s | result |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, p := range pkgs {
		total += p.elapsed
		fmt.Fprintf(w, "| %s | %.1f | %s |\n", short(p.pkg), p.elapsed, p.action)
	}
	fmt.Fprintf(w, "\n%d packages, %.1f s in all\n\n", len(pkgs), total)
	var slow []result
	for _, t := range tests {
		if !strings.Contains(t.test, "/") {
			slow = append(slow, t)
		}
	}
	sort.SliceStable(slow, func(i, j int) bool { return slow[i].elapsed > slow[j].elapsed })
	if len(slow) > n {
		slow = slow[:n]
	}
	fmt.Fprintf(w, "| the %d slowest tests | package | s | result |\n", len(slow))
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, t := range slow {
		fmt.Fprintf(w, "| %s | %s | %.1f | %s |\n", t.test, short(t.pkg), t.elapsed, t.action)
	}
}
