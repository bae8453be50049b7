package linkcache_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/goffload/goffload/link"
	"github.com/goffload/goffload/linkcache"
)

// Store the outputs of a step under its key, and read them back: what
// package link does with a device link's code object. A build system gives
// the cache to link.Options (or its own link.Cache: a remote one).
func Example() {
	dir, _ := os.MkdirTemp("", "cache-example-")
	defer os.RemoveAll(dir)
	c, err := linkcache.Open(dir)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	key := strings.Repeat("ab", 32) // link.(*Link).StepKey makes them
	if _, err := c.Get(ctx, key); errors.Is(err, fs.ErrNotExist) {
		fmt.Println("miss")
	}
	if err := c.Put(ctx, key, []io.Reader{strings.NewReader("code object")}); err != nil {
		panic(err)
	}
	rs, err := c.Get(ctx, key)
	if err != nil {
		panic(err)
	}
	b, err := io.ReadAll(rs[0]) // an error, not io.EOF, if the bytes are not what was stored
	rs[0].Close()
	fmt.Printf("hit: %q %v\n", b, err)
	var _ link.Cache = c
	s, _ := c.Stats()
	fmt.Println(s.Entries, "entry,", s.Bytes > 0)
	// Output:
	// miss
	// hit: "code object" <nil>
	// 1 entry, true
}
