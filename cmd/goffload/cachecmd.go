package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/goffload/goffload/link"
	"github.com/goffload/goffload/linkcache"
)

// runCache is `goffload cache stats|clear|trim`: the cache of link steps
// that link and linker-wrapper use ($GOFFLOAD_CACHE, by default goffload in
// the user's cache folder).
func runCache(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("want stats, clear or trim")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("goffload cache "+sub, flag.ContinueOnError)
	var asJSON bool
	var max string
	switch sub {
	case "stats":
		fs.BoolVar(&asJSON, "json", false, "print a JSON object")
	case "trim":
		fs.StringVar(&max, "max", "", "the bound: bytes, or with K, M, G or T (default $GOFFLOAD_CACHE_MAX, else 10G)")
	case "clear":
	default:
		return fmt.Errorf("%q: want stats, clear or trim", sub)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected argument %q", sub, fs.Arg(0))
	}
	c, err := linkcache.FromEnv()
	if err != nil {
		return err
	}
	if c == nil {
		return fmt.Errorf("$%s is off", linkcache.EnvDir)
	}
	switch sub {
	case "stats":
		s, err := c.Stats()
		if err != nil {
			return err
		}
		r, err := linkcache.RemoteFromEnv()
		if err != nil {
			return err
		}
		server := ""
		if r != nil {
			server = r.String() // no password
		}
		if asJSON {
			e := json.NewEncoder(stdout)
			e.SetIndent("", "  ")
			return e.Encode(struct {
				linkcache.Stats
				Server string `json:"server,omitempty"`
			}{s, server})
		}
		fmt.Fprintf(stdout, "cache:   %s\nentries: %d\nbytes:   %d (%.1f MiB)\nbound:   %d (%.1f MiB)\n", quoteName(s.Dir), s.Entries, s.Bytes, float64(s.Bytes)/(1<<20), s.MaxBytes, float64(s.MaxBytes)/(1<<20))
		if server != "" {
			fmt.Fprintf(stdout, "server:  %s (in front of it: the folder above)\n", quoteName(server))
		}
		n := s.Counts
		fmt.Fprintf(stdout, "lookups: %d hits in the folder, %d hits on a server, %d misses\n", n.LocalHits, n.RemoteHits, n.Misses)
		if n.Uploads+n.UploadErrors+n.RemoteErrors > 0 || server != "" {
			fmt.Fprintf(stdout, "uploads: %d entries, %d failed; %d failures of the server\n", n.Uploads, n.UploadErrors, n.RemoteErrors)
		}
	case "clear":
		n, err := c.Clear()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %d entries from %s\n", n, quoteName(c.Dir()))
	case "trim":
		bound := c.MaxBytes
		if max != "" {
			if bound, err = linkcache.ParseSize(max); err != nil {
				return fmt.Errorf("--max: %w", err)
			}
		}
		n, err := c.Trim(bound)
		if err != nil {
			return err
		}
		s, err := c.Stats()
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %d entries; %d left, %d bytes (bound %d)\n", n, s.Entries, s.Bytes, bound)
	}
	return nil
}

// useCache gives a link the cache of the environment, unless off; a cache
// that cannot be opened is reported on stderr and the link runs without.
func useCache(opt *link.Options, off bool) {
	if off {
		return
	}
	c, err := linkcache.FromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "goffload: no cache: %s\n", oneLine(err))
		return
	}
	if c == nil {
		return
	}
	opt.Cache = c
	// A server ($GOFFLOAD_CACHE=http://...): behind the local folder.
	r, err := linkcache.RemoteFromEnv()
	if err != nil {
		fmt.Fprintf(os.Stderr, "goffload: no cache server: %s\n", oneLine(err))
		return
	}
	if r != nil {
		r.MaxBytes = c.MaxBytes
		opt.Cache = &linkcache.Tiered{Local: c, Remote: r, Warn: os.Stderr}
	}
}
