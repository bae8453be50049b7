package link

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Cache keeps the outputs of a link's slow steps (the device links, and the
// device LTO and code generation of LLVM 17 to 21) under a key that covers
// everything they depend on (see [Link.StepKey]), so that a link whose
// device inputs did not change copies them instead of running the step.
// [*linkcache.Cache] is the local one, in a folder on disk; a build system
// can give its own, a remote cache for one.
//
// Get returns readers of the outputs stored under key, in the order Put was
// given them, or an error matching [fs.ErrNotExist] if there are none (as
// [linkcache.ErrMiss] does). Every
// byte a reader returns must be the stored bytes: a reader that finds
// otherwise (a checksum that does not match at the end) must return an
// error other than io.EOF; the link then discards what it read and runs the
// step. Any other error of Get is a miss too, and is reported with
// Verbose. Put stores the outputs, read to their ends, under key; an error
// of Put is reported with Verbose and does not fail the link. Both may be
// called from several goroutines at once.
type Cache interface {
	Get(ctx context.Context, key string) ([]io.ReadCloser, error)
	Put(ctx context.Context, key string, outputs []io.Reader) error
}

// FileHasher is what a Cache may do besides: return the SHA-256 of a file,
// in hexadecimal, remembering it across programs ([*linkcache.Cache] does,
// by the file's identity on disk). The key of a step asks it for the
// tools' own files (clang, lld, their shared libraries, crt files), which
// are hundreds of MiB and rarely change; never for the step's inputs.
type FileHasher interface {
	HashFile(path string) (string, error)
}

// cached reports whether the link takes s from its cache, or stores it
// there: a device link, device LTO or code generation, with a cache, and
// not with SaveTemps (whose tools write intermediate files of their own,
// which a hit would not make).
func (l *Link) cached(s *Step) bool {
	if l.opt.Cache == nil || l.opt.SaveTemps || len(s.Outputs) == 0 || s.Goffload {
		return false
	}
	return s.Kind == StepDeviceLink || s.Kind == StepDeviceLTO || s.Kind == StepCodegen
}

// runCached runs s through the cache: a hit copies the stored outputs into
// place, a miss runs the step (run) and stores its outputs. A step whose key
// cannot be made (see [Link.StepKey]) just runs.
func (l *Link) runCached(ctx context.Context, s *Step, run func() error) error {
	c := l.opt.Cache
	key, err := l.StepKey(ctx, s)
	if err != nil {
		l.note("# goffload: cache off for %s %s: %v", s.Kind, quoteArg(s.Target), err)
		return run()
	}
	if l.hit(ctx, c, s, key) {
		l.note("# goffload: cache hit %s %s %s", s.Kind, quoteArg(s.Target), key)
		return nil
	}
	l.note("# goffload: cache miss %s %s %s", s.Kind, quoteArg(s.Target), key)
	if err := run(); err != nil {
		return err
	}
	var rs []io.Reader
	for _, out := range s.Outputs {
		f, err := os.Open(out)
		if err != nil {
			return err
		}
		defer f.Close()
		rs = append(rs, f)
	}
	if err := c.Put(ctx, key, rs); err != nil {
		l.note("# goffload: cache: not stored: %s", quoteArg(err.Error()))
	}
	return nil
}

// hit copies the outputs stored under key into place, and reports whether
// it could: each is written whole, from bytes the cache checked, or the
// step runs.
func (l *Link) hit(ctx context.Context, c Cache, s *Step, key string) bool {
	rs, err := c.Get(ctx, key)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.note("# goffload: cache: %s", quoteArg(err.Error()))
		}
		return false
	}
	defer func() {
		for _, r := range rs {
			r.Close()
		}
	}()
	if len(rs) != len(s.Outputs) {
		l.note("# goffload: cache: entry %s holds %d files, the step makes %d", key, len(rs), len(s.Outputs))
		return false
	}
	for i, out := range s.Outputs {
		if dir := filepath.Dir(out); dir != "." {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return false
			}
		}
		if err := copyTo(out, rs[i]); err != nil {
			l.note("# goffload: cache: %s", quoteArg(err.Error()))
			return false
		}
	}
	return true
}

// wouldHit is the dry run's forecast for s: whether the cache holds its key,
// which it can tell when the step's inputs are there (not those that the
// plan's earlier steps write).
func (l *Link) wouldHit(ctx context.Context, s *Step) {
	for _, in := range s.Inputs {
		if _, err := os.Stat(in); err != nil {
			return
		}
	}
	key, err := l.StepKey(ctx, s)
	if err != nil {
		return
	}
	rs, err := l.opt.Cache.Get(ctx, key)
	for _, r := range rs {
		r.Close()
	}
	what := "would miss"
	if err == nil {
		what = "would hit"
	}
	l.note("# goffload: cache %s %s %s %s", what, s.Kind, quoteArg(s.Target), key)
}

// note prints a line of the cache's with Verbose, Print or DryRun.
func (l *Link) note(format string, args ...any) {
	opt := l.opt
	if !opt.Verbose && !opt.Print && !opt.DryRun {
		return
	}
	printMu.Lock()
	fmt.Fprintf(writer(opt.Stdout), format+"\n", args...)
	printMu.Unlock()
}
