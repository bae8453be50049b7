// Command link links fat objects as clang-linker-wrapper does, with the
// goffload library: it plans the link, prints its steps, and runs it twice
// with a cache of device links held in memory (a link.Cache of its own): the
// second run takes every device link from the cache.
//
//	go run ./examples/link [-llvm N] [-libdir DIR] -- -o PROGRAM OBJECT... [-lNAME] [-LDIR]
//
// The arguments after -- are a compiler driver's link arguments (cc's);
// -libdir is the folder of the OpenMP runtime (libomp, libomptarget).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"strings"
	"sync"

	"github.com/goffload/goffload/link"
	"github.com/goffload/goffload/release"
)

func main() {
	llvm := flag.Int("llvm", 0, "the LLVM release of the link (0: from the inputs)")
	libdir := flag.String("libdir", "", "the folder of the OpenMP runtime")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: link [-llvm N] [-libdir DIR] -- -o PROGRAM OBJECT... [-lNAME] [-LDIR]")
	}
	if err := run(*llvm, *libdir, flag.Args()); err != nil {
		log.Fatal(err)
	}
}

// memCache is a link.Cache in memory: each key's outputs, and how many
// lookups it answered.
type memCache struct {
	mu   sync.Mutex
	m    map[string][][]byte
	hits int
}

func (c *memCache) Get(_ context.Context, key string) ([]io.ReadCloser, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	outs, ok := c.m[key]
	if !ok {
		return nil, fs.ErrNotExist
	}
	c.hits++
	var rs []io.ReadCloser
	for _, b := range outs {
		rs = append(rs, io.NopCloser(bytes.NewReader(b)))
	}
	return rs, nil
}

func (c *memCache) Put(_ context.Context, key string, outputs []io.Reader) error {
	var outs [][]byte
	for _, r := range outputs {
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		outs = append(outs, b)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = outs
	return nil
}

func run(llvm int, libdir string, args []string) error {
	cache := &memCache{m: map[string][][]byte{}}
	for i := 1; i <= 2; i++ {
		opt := &link.Options{Driver: true, LinkerArgs: link.LibrariesLast(args), RuntimeDir: libdir, Cache: cache, Stderr: os.Stderr}
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
		if i == 1 {
			fmt.Printf("LLVM %d link of %s\n", l.LLVM, l.Output)
			for _, s := range l.Steps {
				fmt.Printf("  %s %s: %s %s\n", s.Kind, s.Target, s.Tool, strings.Join(s.Args, " "))
			}
		}
		before := cache.hits
		err = l.Run(context.Background())
		l.Close()
		if err != nil {
			return err
		}
		fmt.Printf("run %d: %d device links from the cache, %d entries in it\n", i, cache.hits-before, len(cache.m))
	}
	return nil
}
