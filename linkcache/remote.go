package linkcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The environment variables of a cache server ([RemoteFromEnv]).
const (
	// EnvLocalDir is the local folder in front of a server named by
	// $GOFFLOAD_CACHE (default: [DefaultDir]).
	EnvLocalDir = "GOFFLOAD_CACHE_DIR"
	// EnvHeader is a header sent with every request, "Name: value" (such
	// as "Authorization: Bearer TOKEN"); never printed.
	EnvHeader = "GOFFLOAD_CACHE_HEADER"
	// EnvTimeout bounds each request to the server, as Go's
	// time.ParseDuration reads it (default 10s): a server that takes
	// longer is a miss, or an upload not made.
	EnvTimeout = "GOFFLOAD_CACHE_TIMEOUT"
)

// DefaultTimeout bounds each request to a cache server unless told
// otherwise.
const DefaultTimeout = 10 * time.Second

// Remote is a cache server that speaks the HTTP protocol of Bazel's remote
// cache: an entry is an ActionResult at URL/ac/KEY naming its outputs, whose
// bytes are at URL/cas/SHA256 (bazel-remote, nginx with WebDAV, and the
// hosted services serve it). Get checks every byte it returns against the
// SHA-256 and size the entry gives; it downloads nothing larger than
// MaxBytes. Every request ends within Timeout. Its methods are safe for use
// by several goroutines.
type Remote struct {
	// URL is the server's base: http or https, with a path prefix if any.
	// Credentials in it (user:password@) are sent, never printed.
	URL *url.URL
	// Header is sent with every request (credentials: never printed).
	Header http.Header
	// Client makes the requests; nil is http.DefaultClient.
	Client *http.Client
	// Timeout bounds each request (0: DefaultTimeout); MaxBytes what one
	// output may be (0: DefaultMax).
	Timeout  time.Duration
	MaxBytes int64
	// TempDir is where downloads are written before they are checked ("":
	// os.TempDir()).
	TempDir string

	mu  sync.Mutex
	bad map[string]bool // keys whose entry on the server was found wrong
}

// NewRemote returns the server at rawURL (http:// or https://).
func NewRemote(rawURL string) (*Remote, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("linkcache: server URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("linkcache: server %s: want http://HOST[:PORT][/PREFIX] or https", u.Redacted())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("linkcache: server %s: a query or fragment is not a cache's", u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return &Remote{URL: u, Header: http.Header{}}, nil
}

// IsRemote reports whether a $GOFFLOAD_CACHE value names a server.
func IsRemote(v string) bool {
	return strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://")
}

// RemoteFromEnv returns the server that $GOFFLOAD_CACHE names, with the
// header of $GOFFLOAD_CACHE_HEADER, else the login of the server's machine
// in ~/.netrc ($NETRC), and the timeout of $GOFFLOAD_CACHE_TIMEOUT; nil if
// it names none.
func RemoteFromEnv() (*Remote, error) {
	v := os.Getenv(EnvDir)
	if !IsRemote(v) {
		return nil, nil
	}
	r, err := NewRemote(v)
	if err != nil {
		return nil, err
	}
	if h := os.Getenv(EnvHeader); h != "" {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("$%s: want \"Name: value\"", EnvHeader)
		}
		r.Header.Set(textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(name)), strings.TrimSpace(value))
	} else if r.URL.User == nil {
		if login, password, ok := netrcLogin(r.URL.Hostname()); ok {
			r.URL.User = url.UserPassword(login, password)
		}
	}
	if t := os.Getenv(EnvTimeout); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("$%s: %q: want a duration such as 10s", EnvTimeout, t)
		}
		r.Timeout = d
	}
	return r, nil
}

// netrcLogin returns the login and password that the netrc file ($NETRC,
// else ~/.netrc) gives host (or its default), as curl reads it.
func netrcLogin(host string) (login, password string, ok bool) {
	path := os.Getenv("NETRC")
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", false
		}
		path = filepath.Join(home, ".netrc")
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 1<<20 {
		return "", "", false
	}
	f := strings.Fields(string(b))
	in := false // in the entry of host or the default
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case "machine":
			if in {
				return login, password, ok
			}
			in = i+1 < len(f) && f[i+1] == host
			i++
		case "default":
			if in {
				return login, password, ok
			}
			in = true
		case "login", "password", "account":
			if i+1 < len(f) && in {
				if f[i] == "login" {
					login, ok = f[i+1], true
				} else if f[i] == "password" {
					password, ok = f[i+1], true
				}
			}
			i++
		case "macdef":
			return login, password, ok && in
		}
	}
	return login, password, ok && in
}

func (r *Remote) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultTimeout
}

func (r *Remote) maxBytes() int64 {
	if r.MaxBytes > 0 {
		return r.MaxBytes
	}
	return DefaultMax
}

// String is the server's URL without its password.
func (r *Remote) String() string { return r.URL.Redacted() }

// request makes one request of the server, within the timeout; the caller
// closes the body.
func (r *Remote) request(ctx context.Context, method, path string, body io.Reader, size int64) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	u := *r.URL
	u.Path += path
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	if body != nil {
		req.ContentLength = size
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	c := r.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		// The error names the URL, which may hold a password.
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, nil, fmt.Errorf("linkcache: %s %s%s: %w", method, r, path, err)
	}
	return resp, cancel, nil
}

// statusError is the error of a response other than the one wanted.
func (r *Remote) statusError(method, path string, resp *http.Response) error {
	return fmt.Errorf("linkcache: %s %s%s: %s", method, r, path, resp.Status)
}

// Get returns readers of the outputs the server holds under key, each
// downloaded whole and checked against the entry's SHA-256 and size first;
// the caller closes them. A key the server does not hold is an error
// matching [ErrMiss]; an entry that does not parse, or bytes that are not
// those it names, one matching [ErrCorrupt] (and the next Put of the key
// uploads the outputs again).
func (r *Remote) Get(ctx context.Context, key string) ([]io.ReadCloser, error) {
	if !ValidKey(key) {
		return nil, fmt.Errorf("linkcache: key %q: want 64 lowercase hexadecimal digits", key)
	}
	b, err := r.getBytes(ctx, "/ac/"+key, maxActionResult)
	if err != nil {
		return nil, err
	}
	files, err := unmarshalActionResult(b)
	if err != nil {
		r.markBad(key)
		return nil, fmt.Errorf("linkcache: %s/ac/%s: %w: %w", r, key, err, ErrCorrupt)
	}
	var out []io.ReadCloser
	for _, f := range files {
		if f.size > r.maxBytes() {
			closeAll(out)
			return nil, fmt.Errorf("linkcache: %s/ac/%s: an output of %d bytes, more than %d", r, key, f.size, r.maxBytes())
		}
		sum := hex.EncodeToString(f.sum[:])
		rc, err := r.getFile(ctx, "/cas/"+sum, f)
		if err != nil {
			closeAll(out)
			if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrMiss) {
				// An entry naming bytes the server lacks or changed.
				r.markBad(key)
				err = fmt.Errorf("%w (entry %s)", err, key)
			}
			return nil, err
		}
		out = append(out, rc)
	}
	return out, nil
}

// get GETs path and returns its response, checked to be 200 and of at
// most limit bytes declared: a 404 is ErrMiss. The caller closes the body
// and calls done.
func (r *Remote) get(ctx context.Context, path string, limit int64) (resp *http.Response, done context.CancelFunc, err error) {
	resp, cancel, err := r.request(ctx, http.MethodGet, path, nil, 0)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		err = ErrMiss
	case resp.StatusCode != http.StatusOK:
		err = r.statusError(http.MethodGet, path, resp)
	case resp.ContentLength > limit:
		err = fmt.Errorf("linkcache: GET %s%s: %d bytes, more than %d: %w", r, path, resp.ContentLength, limit, ErrCorrupt)
	}
	if err != nil {
		resp.Body.Close()
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

// getBytes GETs path into memory: at most limit bytes.
func (r *Remote) getBytes(ctx context.Context, path string, limit int64) ([]byte, error) {
	resp, done, err := r.get(ctx, path, limit)
	if err != nil {
		return nil, err
	}
	defer done()
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("linkcache: GET %s%s: %w", r, path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("linkcache: GET %s%s: more than %d bytes: %w", r, path, limit, ErrCorrupt)
	}
	return b, nil
}

// getFile GETs path into a temporary file (removed once closed, or at once
// where the system allows) whose size and SHA-256 must be want's, and
// returns it read from its start.
func (r *Remote) getFile(ctx context.Context, path string, want fileSum) (io.ReadCloser, error) {
	resp, done, err := r.get(ctx, path, want.size)
	if err != nil {
		return nil, err
	}
	defer done()
	defer resp.Body.Close()
	f, err := os.CreateTemp(r.TempDir, "goffload-cache-get-*")
	if err != nil {
		return nil, err
	}
	removed := os.Remove(f.Name()) == nil // gone once closed
	fail := func(err error) (io.ReadCloser, error) {
		f.Close()
		if !removed {
			os.Remove(f.Name())
		}
		return nil, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, want.size+1))
	if err != nil {
		return fail(fmt.Errorf("linkcache: GET %s%s: %w", r, path, err))
	}
	var sum [32]byte
	h.Sum(sum[:0])
	if n != want.size || sum != want.sum {
		return fail(fmt.Errorf("linkcache: GET %s%s: %d bytes of SHA-256 %x, not the %d bytes the entry names: %w", r, path, n, sum[:8], want.size, ErrCorrupt))
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fail(err)
	}
	if removed {
		return f, nil
	}
	return &removeOnClose{File: f}, nil
}

// removeOnClose removes its file when closed.
type removeOnClose struct{ *os.File }

func (r *removeOnClose) Close() error {
	err := r.File.Close()
	os.Remove(r.Name())
	return err
}

func closeAll(rs []io.ReadCloser) {
	for _, r := range rs {
		r.Close()
	}
}

func (r *Remote) markBad(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bad == nil {
		r.bad = map[string]bool{}
	}
	r.bad[key] = true
}

func (r *Remote) wasBad(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bad[key]
}

// Put uploads outputs under key: each output's bytes to URL/cas/SHA256
// (unless the server has them, which a HEAD tells, and the key's entry was
// not found wrong), then the entry to URL/ac/KEY. Each request ends within
// the timeout.
func (r *Remote) Put(ctx context.Context, key string, outputs []io.Reader) error {
	if !ValidKey(key) {
		return fmt.Errorf("linkcache: key %q: want 64 lowercase hexadecimal digits", key)
	}
	if len(outputs) > maxFiles {
		return fmt.Errorf("linkcache: %d outputs, more than %d", len(outputs), maxFiles)
	}
	again := r.wasBad(key)
	var files []fileSum
	for _, out := range outputs {
		f, err := os.CreateTemp(r.TempDir, "goffload-cache-put-*")
		if err != nil {
			return err
		}
		os.Remove(f.Name())
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(f, h), out)
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			f.Close()
			return err
		}
		fsum := fileSum{size: n}
		h.Sum(fsum.sum[:0])
		files = append(files, fsum)
		path := "/cas/" + hex.EncodeToString(fsum.sum[:])
		if !again && r.has(ctx, path, n) {
			f.Close()
			continue
		}
		err = r.upload(ctx, path, f, n)
		f.Close()
		if err != nil {
			return err
		}
	}
	ar := marshalActionResult(files)
	if err := r.upload(ctx, "/ac/"+key, bytes.NewReader(ar), int64(len(ar))); err != nil {
		return err
	}
	if again {
		r.mu.Lock()
		delete(r.bad, key)
		r.mu.Unlock()
	}
	return nil
}

// has reports whether the server answers a HEAD of path with the size.
func (r *Remote) has(ctx context.Context, path string, size int64) bool {
	resp, cancel, err := r.request(ctx, http.MethodHead, path, nil, 0)
	if err != nil {
		return false
	}
	defer cancel()
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK && resp.ContentLength == size
}

// upload PUTs size bytes of body at path.
func (r *Remote) upload(ctx context.Context, path string, body io.Reader, size int64) error {
	resp, cancel, err := r.request(ctx, http.MethodPut, path, body, size)
	if err != nil {
		return err
	}
	defer cancel()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return r.statusError(http.MethodPut, path, resp)
	}
	return nil
}

// Tiered is a local cache in front of a server: Get looks in Local, then
// on the server, whose entry it stores in Local before returning it; Put
// stores in Local, then uploads. A server that fails (down, slow, wrong
// bytes) is a miss and a one-line warning on Warn (the first failure; the
// others are counted), never an error of the link: the step runs, and its
// outputs are uploaded again.
type Tiered struct {
	Local  *Cache
	Remote *Remote
	// Warn receives one line for each thing the server did wrong (nil:
	// nothing is written).
	Warn io.Writer

	mu     sync.Mutex
	counts Counts
	warned bool
}

// Counts returns what t did in this process (the cache's [Cache.Counts]
// are those of every link that used it).
func (t *Tiered) Counts() Counts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts
}

func (t *Tiered) count(f func(c *Counts)) {
	t.mu.Lock()
	f(&t.counts)
	t.mu.Unlock()
	t.Local.count(f)
}

// warn counts a failure of the server, and writes the first one to Warn:
// one line for a link, however many of its steps the server fails.
func (t *Tiered) warn(err error) {
	t.count(func(c *Counts) { c.RemoteErrors++ })
	t.mu.Lock()
	first := !t.warned
	t.warned = true
	t.mu.Unlock()
	if t.Warn != nil && first {
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		fmt.Fprintf(t.Warn, "goffload: warning: cache server %s: %s (its later failures are counted, not shown: goffload cache stats)\n", t.Remote, msg)
	}
}

// Get returns the outputs of key from Local, else from the server (then
// stored in Local).
func (t *Tiered) Get(ctx context.Context, key string) ([]io.ReadCloser, error) {
	rs, err := t.Local.get(ctx, key)
	if err == nil {
		t.count(func(c *Counts) { c.LocalHits++ })
		return rs, nil
	}
	if !errors.Is(err, ErrMiss) && !errors.Is(err, ErrCorrupt) {
		return nil, err
	}
	remote, rerr := t.Remote.Get(ctx, key)
	if rerr != nil {
		if !errors.Is(rerr, ErrMiss) {
			t.warn(rerr)
		}
		t.count(func(c *Counts) { c.Misses++ })
		return nil, ErrMiss
	}
	readers := make([]io.Reader, len(remote))
	for i, r := range remote {
		readers[i] = r
	}
	perr := t.Local.Put(ctx, key, readers)
	closeAll(remote)
	if perr != nil {
		return nil, perr
	}
	rs, err = t.Local.get(ctx, key)
	if err == nil {
		t.count(func(c *Counts) { c.RemoteHits++ })
	}
	return rs, err
}

// Put stores outputs in Local, then uploads them from there; an upload
// that fails is a warning.
func (t *Tiered) Put(ctx context.Context, key string, outputs []io.Reader) error {
	if err := t.Local.Put(ctx, key, outputs); err != nil {
		return err
	}
	rs, err := t.Local.get(ctx, key)
	if err != nil {
		return nil // trimmed at once, or taken by another program: nothing to upload
	}
	defer closeAll(rs)
	readers := make([]io.Reader, len(rs))
	for i, r := range rs {
		readers[i] = r
	}
	if err := t.Remote.Put(ctx, key, readers); err != nil {
		t.count(func(c *Counts) { c.UploadErrors++ })
		t.warn(err)
		return nil
	}
	t.count(func(c *Counts) { c.Uploads++ })
	return nil
}

// HashFile is Local's (link.FileHasher).
func (t *Tiered) HashFile(path string) (string, error) { return t.Local.HashFile(path) }
