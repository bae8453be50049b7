package linkcache

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

var (
	// ErrMiss: the cache holds no entry for the key. It matches
	// fs.ErrNotExist, the miss of any link.Cache.
	ErrMiss error = missError{}
	// ErrCorrupt: an entry does not match its manifest (a file cut short,
	// changed, missing, or not a regular file; a manifest that does not
	// parse). The entry is removed.
	ErrCorrupt = errors.New("cache entry does not match its manifest")
)

// The environment variables that [FromEnv] reads.
const (
	// EnvDir moves the cache to another folder; "off" turns it off.
	EnvDir = "GOFFLOAD_CACHE"
	// EnvMax bounds its size: bytes, or a number with K, M, G or T
	// (powers of 1024).
	EnvMax = "GOFFLOAD_CACHE_MAX"
)

// DefaultMax is the bound of a cache's size unless told otherwise: 10 GiB.
const DefaultMax int64 = 10 << 30

// The folders inside the cache folder.
const (
	entriesDir = "link-v1"
	tmpDir     = "tmp" // inside entriesDir: the writers' folders
	manifest   = "manifest"
	staleTmp   = time.Hour // a writer's folder older than this is left over
)

// Cache is a cache folder. Its methods are safe for use by several
// goroutines, and by several programs sharing the folder.
type Cache struct {
	// MaxBytes bounds the bytes of the entries: after each Put, the entries
	// used least recently are removed until they fit. 0 or less: no bound.
	MaxBytes int64
	dir      string
}

// DefaultDir is the cache folder when $GOFFLOAD_CACHE does not name one:
// goffload in [os.UserCacheDir].
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "goffload"), nil
}

// Open opens the cache in dir, making the folder if it does not exist, with
// the bound [DefaultMax]. The folder may be reached through symbolic links
// (resolved once, here); it, and every folder inside it that the cache
// uses, must be a folder owned by the user running (or root) that no other
// user may write to, sticky bit or not: Open refuses one that is not, and
// the cache follows no symbolic link inside it (see the package's Security).
func Open(dir string) (*Cache, error) {
	if dir == "" {
		return nil, fmt.Errorf("linkcache: no folder")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("linkcache: %w", err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("linkcache: %w", err)
	}
	if err := safeDir(abs); err != nil {
		return nil, err
	}
	entries, err := subdir(abs, entriesDir)
	if err != nil {
		return nil, err
	}
	if _, err := subdir(entries, tmpDir); err != nil {
		return nil, err
	}
	if _, err := subdir(abs, hashesDir); err != nil {
		return nil, err
	}
	tag := filepath.Join(abs, "CACHEDIR.TAG")
	if _, err := os.Lstat(tag); errors.Is(err, fs.ErrNotExist) {
		// The tag that backup programs skip caches by (bford.info/cachedir).
		os.WriteFile(tag, []byte("Signature: 8a477f597d28d172789f06886806bc55\n# goffload's cache of link steps (goffload cache --help)\n"), 0o644)
	}
	return &Cache{MaxBytes: DefaultMax, dir: abs}, nil
}

// FromEnv opens the cache that the environment names: $GOFFLOAD_CACHE, or
// [DefaultDir] if it is empty, bounded by $GOFFLOAD_CACHE_MAX, or
// [DefaultMax]. It returns nil and no error if $GOFFLOAD_CACHE is "off".
// Where $GOFFLOAD_CACHE names a server (http:// or https://: see
// [RemoteFromEnv]), it opens the local folder in front of it,
// $GOFFLOAD_CACHE_DIR or [DefaultDir].
func FromEnv() (*Cache, error) {
	dir := os.Getenv(EnvDir)
	if dir == "off" {
		return nil, nil
	}
	if IsRemote(dir) {
		// A server ([RemoteFromEnv]): the local folder in front of it.
		dir = os.Getenv(EnvLocalDir)
	}
	if dir == "" {
		var err error
		if dir, err = DefaultDir(); err != nil {
			return nil, fmt.Errorf("linkcache: %w (set $%s)", err, EnvDir)
		}
	}
	c, err := Open(dir)
	if err != nil {
		return nil, err
	}
	if v := os.Getenv(EnvMax); v != "" {
		if c.MaxBytes, err = ParseSize(v); err != nil {
			return nil, fmt.Errorf("$%s: %w", EnvMax, err)
		}
	}
	return c, nil
}

// ParseSize reads a size: decimal bytes, or with the suffix K, M, G or T
// (KiB, MiB, GiB, TiB; "10G", "512M"), optionally followed by "iB" or "B".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(s), "B"), "I")
	shift := 0
	if t != "" {
		if i := strings.IndexByte("KMGT", t[len(t)-1]); i >= 0 {
			shift = 10 * (i + 1)
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("size %q: want bytes, or a number with K, M, G or T", s)
	}
	return n << shift, nil
}

// Dir is the cache's folder.
func (c *Cache) Dir() string { return c.dir }

func (c *Cache) entry(key string) string {
	return filepath.Join(c.dir, entriesDir, key[:2], key)
}

// Get returns readers of the outputs stored under key, in the order Put
// stored them; the caller closes them. It returns an error matching [ErrMiss]
// if there is no entry, and one matching [ErrCorrupt] if the entry is not as
// its manifest says (and removes it). A reader returns ErrCorrupt, not
// io.EOF, at the end of a file whose bytes are not the manifest's: use
// nothing read from it unless it ended with io.EOF. Get marks the entry used,
// for [Cache.Trim].
func (c *Cache) Get(ctx context.Context, key string) ([]io.ReadCloser, error) {
	rs, err := c.get(ctx, key)
	switch {
	case err == nil:
		c.count(func(n *Counts) { n.LocalHits++ })
	case errors.Is(err, ErrMiss) || errors.Is(err, ErrCorrupt):
		c.count(func(n *Counts) { n.Misses++ })
	}
	return rs, err
}

// get is Get, not counted.
func (c *Cache) get(ctx context.Context, key string) ([]io.ReadCloser, error) {
	if !ValidKey(key) {
		return nil, fmt.Errorf("linkcache: key %q: want 64 lowercase hexadecimal digits", key)
	}
	dir := c.entry(key)
	if err := safeDir(filepath.Dir(dir)); err != nil {
		return nil, missOr(err)
	}
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrMiss
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, c.corrupt(key, "not a folder")
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, missOr(err)
	}
	defer root.Close()
	m, _, err := openRegular(root, manifest, maxManifest+1)
	if err != nil {
		return nil, c.corruptOrMiss(key, err)
	}
	b, err := io.ReadAll(io.LimitReader(m, maxManifest+1))
	m.Close()
	if err != nil {
		return nil, err
	}
	files, err := parseManifest(b, key)
	if err != nil {
		return nil, c.corrupt(key, err.Error())
	}
	var out []io.ReadCloser
	fail := func(err error) ([]io.ReadCloser, error) {
		for _, r := range out {
			r.Close()
		}
		return nil, err
	}
	for i, fsum := range files {
		f, size, err := openRegular(root, strconv.Itoa(i), -1)
		if err != nil {
			return fail(c.corruptOrMiss(key, err))
		}
		if size != fsum.size {
			f.Close()
			return fail(c.corrupt(key, fmt.Sprintf("file %d: %d bytes, the manifest says %d", i, size, fsum.size)))
		}
		out = append(out, &checked{f: f, want: fsum, h: sha256.New(), c: c, key: key, i: i})
	}
	now := time.Now()
	root.Chtimes(manifest, now, now) // used now: the last to go when trimming
	return out, nil
}

// openRegular opens name in root if it is a regular file (not a symbolic
// link, a folder, a device...) of at most limit bytes (no limit if
// negative), and returns it with its size.
func openRegular(root *os.Root, name string, limit int64) (*os.File, int64, error) {
	st, err := root.Lstat(name)
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, errNotRegular
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscallNoFollow, 0)
	if err != nil {
		return nil, 0, err
	}
	st2, err := f.Stat()
	if err != nil || !os.SameFile(st, st2) || limit >= 0 && st2.Size() > limit {
		f.Close()
		return nil, 0, errNotRegular
	}
	return f, st2.Size(), nil
}

var errNotRegular = errors.New("not a regular file, or changed while opened")

func missOr(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return ErrMiss
	}
	return err
}

// corruptOrMiss is the error of a file of an entry that could not be opened:
// a miss if the entry is gone (another program trimmed it), else corruption.
func (c *Cache) corruptOrMiss(key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(c.entry(key)); errors.Is(serr, fs.ErrNotExist) {
			return ErrMiss
		}
	}
	return c.corrupt(key, err.Error())
}

// corrupt removes the entry of key and returns the error that says why.
func (c *Cache) corrupt(key, why string) error {
	c.remove(c.entry(key))
	return fmt.Errorf("linkcache: entry %s: %s: %w", key, why, ErrCorrupt)
}

// remove removes an entry's folder: renamed out of the way first, so that no
// reader finds a part of it.
func (c *Cache) remove(dir string) {
	if safeDir(filepath.Dir(dir)) != nil || safeDir(filepath.Join(c.dir, entriesDir, tmpDir)) != nil {
		return // never through a link, nor into one
	}
	var b [8]byte
	rand.Read(b[:])
	gone := filepath.Join(c.dir, entriesDir, tmpDir, "rm-"+hex.EncodeToString(b[:]))
	if os.Rename(dir, gone) == nil {
		dir = gone
	}
	os.RemoveAll(dir)
}

// checked reads an output of an entry, checking it against the manifest.
type checked struct {
	f    *os.File
	want fileSum
	h    hash.Hash
	n    int64
	c    *Cache
	key  string
	i    int
	bad  bool
}

func (r *checked) Read(p []byte) (int, error) {
	if r.bad {
		return 0, r.fail("read past a bad end")
	}
	if left := r.want.size + 1 - r.n; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := r.f.Read(p)
	r.n += int64(n)
	r.h.Write(p[:n])
	if r.n > r.want.size {
		return 0, r.fail("longer than the manifest says")
	}
	if err == io.EOF {
		if r.n != r.want.size {
			return n, r.fail("shorter than the manifest says")
		}
		if !slices.Equal(r.h.Sum(nil), r.want.sum[:]) {
			return n, r.fail("its SHA-256 is not the manifest's")
		}
	}
	return n, err
}

func (r *checked) fail(why string) error {
	r.bad = true
	return r.c.corrupt(r.key, fmt.Sprintf("file %d: %s", r.i, why))
}

func (r *checked) Close() error { return r.f.Close() }

// Put stores outputs under key, read to their ends: written in a folder of
// the cache's own, then renamed into place whole. If the key is stored
// already (another program was first), Put keeps that entry. Then it trims
// the cache to MaxBytes.
func (c *Cache) Put(ctx context.Context, key string, outputs []io.Reader) (err error) {
	if !ValidKey(key) {
		return fmt.Errorf("linkcache: key %q: want 64 lowercase hexadecimal digits", key)
	}
	if len(outputs) > maxFiles {
		return fmt.Errorf("linkcache: %d outputs, more than %d", len(outputs), maxFiles)
	}
	entries := filepath.Join(c.dir, entriesDir)
	if err := safeDir(entries); err != nil {
		return err
	}
	kk, err := subdir(entries, key[:2])
	if err != nil {
		return err
	}
	dest := filepath.Join(kk, key)
	if _, err := os.Lstat(dest); err == nil {
		return nil
	}
	tmpRoot, err := subdir(entries, tmpDir)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(tmpRoot, "put-"+key[:16]+"-")
	if err != nil {
		return err
	}
	defer func() {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}()
	var files []fileSum
	for i, r := range outputs {
		if err := context.Cause(ctx); err != nil {
			return err
		}
		fsum, err := writeFile(filepath.Join(tmp, strconv.Itoa(i)), r)
		if err != nil {
			return err
		}
		files = append(files, fsum)
	}
	if _, err := writeFile(filepath.Join(tmp, manifest), strings.NewReader(string(formatManifest(key, files)))); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		if _, serr := os.Lstat(dest); serr == nil {
			return nil // another program stored it first
		}
		return err
	}
	tmp = ""
	syncDir(filepath.Dir(dest))
	if c.MaxBytes > 0 {
		_, err = c.Trim(c.MaxBytes)
	}
	return err
}

// writeFile writes r to a new file at path, synced, and returns its size
// and SHA-256.
func writeFile(path string, r io.Reader) (fileSum, error) {
	var fsum fileSum
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fsum, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), r)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	fsum.size = n
	h.Sum(fsum.sum[:0])
	return fsum, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Stats is what a cache holds.
type Stats struct {
	Dir      string `json:"dir"`
	Entries  int    `json:"entries"`
	Bytes    int64  `json:"bytes"`
	MaxBytes int64  `json:"max_bytes"`
	// Counts are what the links that used it did ([Cache.Counts]).
	Counts Counts `json:"counts"`
}

// entryInfo is an entry as Trim sees it.
type entryInfo struct {
	dir   string
	bytes int64
	used  time.Time
}

// entries lists the entries: every folder link-v1/KK/KEY with a valid key,
// with the bytes of its files and the time it was last used. Writers'
// folders older than an hour are removed (a writer that died).
func (c *Cache) entries() ([]entryInfo, error) {
	base := filepath.Join(c.dir, entriesDir)
	if err := safeDir(base); err != nil {
		return nil, err
	}
	tops, err := os.ReadDir(base)
	if err != nil {
		return nil, missOr(err)
	}
	var out []entryInfo
	for _, t := range tops {
		if t.Name() == tmpDir {
			c.removeStale(filepath.Join(base, tmpDir))
			continue
		}
		if len(t.Name()) != 2 || !lowerHex(t.Name()) || safeDir(filepath.Join(base, t.Name())) != nil {
			continue
		}
		keys, err := os.ReadDir(filepath.Join(base, t.Name()))
		if err != nil {
			continue
		}
		for _, k := range keys {
			if !ValidKey(k.Name()) || k.Name()[:2] != t.Name() {
				continue
			}
			e := entryInfo{dir: filepath.Join(base, t.Name(), k.Name())}
			if st, err := os.Lstat(e.dir); err != nil || !st.IsDir() {
				continue
			} else {
				e.used = st.ModTime()
			}
			if st, err := os.Lstat(filepath.Join(e.dir, manifest)); err == nil {
				e.used = st.ModTime()
			}
			files, _ := os.ReadDir(e.dir)
			for _, f := range files {
				if info, err := f.Info(); err == nil {
					e.bytes += info.Size()
				}
			}
			out = append(out, e)
		}
	}
	return out, nil
}

func (c *Cache) removeStale(dir string) {
	if safeDir(dir) != nil {
		return
	}
	ds, _ := os.ReadDir(dir)
	for _, d := range ds {
		if info, err := d.Info(); err == nil && time.Since(info.ModTime()) > staleTmp {
			os.RemoveAll(filepath.Join(dir, d.Name()))
		}
	}
}

// Stats counts the entries and their bytes.
func (c *Cache) Stats() (Stats, error) {
	s := Stats{Dir: c.dir, MaxBytes: c.MaxBytes, Counts: c.Counts()}
	es, err := c.entries()
	if err != nil && !errors.Is(err, ErrMiss) {
		return s, err
	}
	for _, e := range es {
		s.Entries++
		s.Bytes += e.bytes
	}
	return s, nil
}

// Trim removes the entries used least recently until the others hold at
// most maxBytes, and returns how many it removed.
func (c *Cache) Trim(maxBytes int64) (int, error) {
	es, err := c.entries()
	if err != nil {
		if errors.Is(err, ErrMiss) {
			return 0, nil
		}
		return 0, err
	}
	var total int64
	for _, e := range es {
		total += e.bytes
	}
	c.trimHashes()
	// Oldest first; of entries used at the same time (the clock's step may
	// be milliseconds), by name: links trimming at once remove the same.
	slices.SortFunc(es, func(a, b entryInfo) int {
		if c := a.used.Compare(b.used); c != 0 {
			return c
		}
		return strings.Compare(a.dir, b.dir)
	})
	n := 0
	for _, e := range es {
		if total <= maxBytes {
			break
		}
		c.remove(e.dir)
		total -= e.bytes
		n++
	}
	return n, nil
}

// Clear removes every entry, every remembered hash ([Cache.HashFile]) and
// the counts, and returns how many entries there were.
func (c *Cache) Clear() (int, error) {
	es, err := c.entries()
	if err != nil && !errors.Is(err, ErrMiss) {
		return 0, err
	}
	for _, e := range es {
		c.remove(e.dir)
	}
	c.clearHashes()
	os.Remove(filepath.Join(c.dir, countsFile))
	return len(es), nil
}

// missError is ErrMiss: a miss, which matches fs.ErrNotExist.
type missError struct{}

func (missError) Error() string        { return "not in the cache" }
func (missError) Is(target error) bool { return target == fs.ErrNotExist }
