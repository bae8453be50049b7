package linkcache

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goffload/goffload/internal/tooltest"
)

// tiered returns a Tiered cache with a new local folder in front of the
// server at url, and what it warns.
func tiered(t *testing.T, url string) (*Tiered, *strings.Builder) {
	t.Helper()
	local, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRemote(url)
	if err != nil {
		t.Fatal(err)
	}
	r.Timeout = 2 * time.Second
	var warn strings.Builder
	return &Tiered{Local: local, Remote: r, Warn: &syncWriter{w: &warn}}, &warn
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestRemoteOnNginx: against a real server (nginx with WebDAV, as a Bazel
// HTTP cache), a link's outputs stored by one machine are a hit on another
// whose local folder is empty, then a local hit there; the entry on the
// server is an ActionResult at /ac/KEY naming the blobs at /cas/SHA256.
func TestRemoteOnNginx(t *testing.T) {
	srv := tooltest.StartNginx(t)
	ctx := context.Background()
	key := keyOf("device link")
	first, warn1 := tiered(t, srv.URL+"/team/cache")
	if _, err := get(first, key); !errors.Is(err, ErrMiss) {
		t.Fatalf("an empty server: %v, want a miss", err)
	}
	put(t, first, key, "image for gfx90a", "", "image for gfx1100")
	for _, p := range []string{"ac/" + key, "cas/" + keyOf("image for gfx90a"), "cas/" + keyOf("")} {
		if _, err := os.Stat(filepath.Join(srv.Data, "team", "cache", p)); err != nil {
			t.Errorf("the server holds no %s: %v", p, err)
		}
	}
	ac, err := os.ReadFile(filepath.Join(srv.Data, "team", "cache", "ac", key))
	if err != nil {
		t.Fatal(err)
	}
	if files, err := unmarshalActionResult(ac); err != nil || len(files) != 3 || hex.EncodeToString(files[2].sum[:]) != keyOf("image for gfx1100") {
		t.Errorf("the ActionResult on the server: %v %v", files, err)
	}
	second, warn2 := tiered(t, srv.URL+"/team/cache/")
	got, err := get(second, key)
	if err != nil || strings.Join(got, "|") != "image for gfx90a||image for gfx1100" {
		t.Fatalf("a second machine: %q %v", got, err)
	}
	if _, err := get(second, key); err != nil {
		t.Fatal(err)
	}
	if c := second.Counts(); c.RemoteHits != 1 || c.LocalHits != 1 || c.Misses != 0 {
		t.Errorf("counts %+v, want one hit on the server then one in the folder", c)
	}
	if c := second.Local.Counts(); c != second.Counts() {
		t.Errorf("the folder's counts %+v, not the process's %+v", c, second.Counts())
	}
	if c := first.Counts(); c.Uploads != 1 || c.Misses != 1 {
		t.Errorf("counts %+v, want one miss and one upload", c)
	}
	if warn1.Len()+warn2.Len() > 0 {
		t.Errorf("warnings: %s%s", warn1, warn2)
	}
	// Two machines uploading the same entry at once.
	var wg sync.WaitGroup
	key2 := keyOf("both at once")
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _ := tiered(t, srv.URL)
			if err := c.Put(ctx, key2, []io.Reader{strings.NewReader(strings.Repeat("x", 1<<20))}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	third, warn3 := tiered(t, srv.URL)
	if got, err := get(third, key2); err != nil || len(got) != 1 || len(got[0]) != 1<<20 {
		t.Errorf("after four uploads at once: %d outputs, %v", len(got), err)
	}
	if warn3.Len() > 0 {
		t.Errorf("warnings: %s", warn3)
	}
}

// TestRemoteServerWrongBytes: a server whose blob is not what the entry
// names (changed on the server) is a miss and a warning, never the bytes;
// the next Put uploads the outputs again, and then they are served.
func TestRemoteServerWrongBytes(t *testing.T) {
	srv := tooltest.StartNginx(t)
	key := keyOf("device link")
	first, _ := tiered(t, srv.URL)
	put(t, first, key, "the right image")
	blob := filepath.Join(srv.Data, "cas", keyOf("the right image"))
	if err := os.WriteFile(blob, []byte("the wrong image"), 0o600); err != nil {
		t.Fatal(err)
	}
	second, warn := tiered(t, srv.URL)
	if got, err := get(second, key); !errors.Is(err, ErrMiss) {
		t.Fatalf("wrong bytes on the server: %q %v, want a miss", got, err)
	}
	if !strings.Contains(warn.String(), "not the 15 bytes the entry names") || strings.Count(warn.String(), "\n") != 1 {
		t.Errorf("the warning: %q", warn)
	}
	put(t, second, key, "the right image") // the step ran: stored again
	third, _ := tiered(t, srv.URL)
	if got, err := get(third, key); err != nil || got[0] != "the right image" {
		t.Errorf("after the entry was uploaded again: %q %v", got, err)
	}
	// An entry that is not an ActionResult.
	os.WriteFile(filepath.Join(srv.Data, "ac", key), []byte("\xff\xff\xff"), 0o600)
	fourth, warn4 := tiered(t, srv.URL)
	if _, err := get(fourth, key); !errors.Is(err, ErrMiss) || !strings.Contains(warn4.String(), "not an ActionResult") {
		t.Errorf("a garbled entry: %v, warning %q", err, warn4)
	}
}

// TestRemoteServerDownOrSlow: a server that is not there, or too slow, is a
// miss and one line of warning, within the timeout; Put stores in the
// folder all the same and warns.
func TestRemoteServerDownOrSlow(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	key := keyOf("device link")
	c, warn := tiered(t, down)
	if _, err := get(c, key); !errors.Is(err, ErrMiss) || !strings.Contains(warn.String(), "connection refused") {
		t.Errorf("no server: %v, warning %q", err, warn)
	}
	put(t, c, key, "image")
	if got, err := get(c, key); err != nil || got[0] != "image" {
		t.Errorf("the folder in front of no server: %q %v", got, err)
	}
	if n := strings.Count(warn.String(), "\n"); n != 1 || c.Counts().RemoteErrors != 2 || c.Counts().UploadErrors != 1 {
		t.Errorf("%d warnings, counts %+v: want one line, for two failures (the get, the upload):\n%s", n, c.Counts(), warn)
	}

	srv := tooltest.StartNginx(t, tooltest.NginxLocation{Path: "/slow/", Directives: "limit_rate 2k;"})
	fast, _ := tiered(t, srv.URL+"/slow")
	fast.Remote.Timeout = time.Minute
	put(t, fast, key, strings.Repeat("x", 256<<10)) // 128 s at 2 KiB/s
	slow, warn := tiered(t, srv.URL+"/slow")
	slow.Remote.Timeout = time.Second
	start := time.Now()
	if _, err := get(slow, key); !errors.Is(err, ErrMiss) || !strings.Contains(warn.String(), "deadline exceeded") {
		t.Errorf("a slow server: %v, warning %q", err, warn)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("a slow server held the link %v with a timeout of 1 s", took)
	}
}

// TestRemoteCredentials: a header from $GOFFLOAD_CACHE_HEADER, or a login
// from the netrc file, reaches the server and is never printed; the URL's
// password neither.
func TestRemoteCredentials(t *testing.T) {
	srv := tooltest.StartNginx(t,
		tooltest.NginxLocation{Path: "/token/", Directives: `if ($http_authorization != "Bearer s3cret") { return 401; }`},
		tooltest.NginxLocation{Path: "/basic/", Directives: `if ($http_authorization != "Basic dXNlcjpwYXNzdzByZA==") { return 401; }`})
	key := keyOf("device link")
	t.Setenv(EnvDir, srv.URL+"/token")
	t.Setenv(EnvHeader, "")
	r, err := RemoteFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	local, _ := Open(t.TempDir())
	var warn strings.Builder
	c := &Tiered{Local: local, Remote: r, Warn: &warn}
	put(t, c, key, "image")
	if !strings.Contains(warn.String(), "401") {
		t.Errorf("no credentials: the server's 401 is not reported: %q", warn.String())
	}
	t.Setenv(EnvHeader, "Authorization: Bearer s3cret")
	if r, err = RemoteFromEnv(); err != nil {
		t.Fatal(err)
	}
	warn.Reset()
	c = &Tiered{Local: local, Remote: r, Warn: &warn}
	local.Clear()
	put(t, c, key, "image")
	if warn.Len() > 0 {
		t.Errorf("with the header: %s", warn.String())
	}
	netrc := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(netrc, []byte("machine example.org login other password x\nmachine 127.0.0.1\n  login user\n  password passw0rd\n"), 0o600)
	t.Setenv("NETRC", netrc)
	t.Setenv(EnvHeader, "")
	t.Setenv(EnvDir, srv.URL+"/basic")
	if r, err = RemoteFromEnv(); err != nil {
		t.Fatal(err)
	}
	warn.Reset()
	local.Clear()
	c = &Tiered{Local: local, Remote: r, Warn: &warn}
	put(t, c, key, "image")
	if warn.Len() > 0 {
		t.Errorf("with the netrc login: %s", warn.String())
	}
	for _, s := range []string{r.String(), warn.String()} {
		if strings.Contains(s, "passw0rd") || strings.Contains(s, "s3cret") {
			t.Errorf("a credential printed: %s", s)
		}
	}
	// A password in the URL, and a server down: the warning names the
	// server without it.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	r, err = NewRemote("http://user:passw0rd@" + addr + "/x")
	if err != nil {
		t.Fatal(err)
	}
	warn.Reset()
	local.Clear()
	c = &Tiered{Local: local, Remote: r, Warn: &warn}
	put(t, c, key, "image")
	if !strings.Contains(warn.String(), "user:xxxxx@") || strings.Contains(warn.String(), "passw0rd") {
		t.Errorf("the warning: %q", warn.String())
	}
	for _, bad := range []string{"ftp://h/x", "http://", "http://h/x?q=1", "Authorization"} {
		if _, err := NewRemote(bad); err == nil && bad != "Authorization" {
			t.Errorf("NewRemote(%q): no error", bad)
		}
	}
	t.Setenv(EnvHeader, "no colon")
	if _, err := RemoteFromEnv(); err == nil {
		t.Errorf("$%s without a colon: no error", EnvHeader)
	}
}

// TestActionResult: what marshalActionResult writes reads back; fields of
// other ActionResults (stdout, exit code) are skipped; outputs out of
// order, a digest that is not hexadecimal, and cut messages are errors.
func TestActionResult(t *testing.T) {
	files := []fileSum{{size: 5}, {size: 1 << 40}}
	files[0].sum[0], files[1].sum[31] = 1, 0xff
	b := marshalActionResult(files)
	got, err := unmarshalActionResult(b)
	if err != nil || len(got) != 2 || got[0] != files[0] || got[1] != files[1] {
		t.Fatalf("%v %v", got, err)
	}
	// exit_code (4: varint) and stdout_raw (5: bytes) before.
	more := append([]byte{4 << 3, 0, 5<<3 | 2, 2, 'h', 'i'}, b...)
	if got, err := unmarshalActionResult(more); err != nil || len(got) != 2 {
		t.Errorf("with other fields: %v %v", got, err)
	}
	for i := range b {
		if _, err := unmarshalActionResult(b[:i]); err == nil && i > 0 {
			// A prefix that ends between outputs is a valid message
			// of fewer outputs; others are errors.
			if g, _ := unmarshalActionResult(b[:i]); len(g) != 1 {
				t.Errorf("cut at %d: no error", i)
			}
		}
	}
	swapped := marshalActionResult([]fileSum{files[1]})
	swapped = append(swapped, swapped...)
	if _, err := unmarshalActionResult(swapped); err == nil {
		t.Errorf("two outputs named 0: no error")
	}
}

func FuzzActionResult(f *testing.F) {
	f.Add(marshalActionResult([]fileSum{{size: 3}, {size: 9}}))
	f.Add([]byte{2<<3 | 2, 0x80, 0x80, 0x80, 0x80, 0x08})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxActionResult {
			return
		}
		// The cost: one pass, and no more outputs than the bytes allow
		// (each is a field of 70 bytes or more).
		files, err := unmarshalActionResult(b)
		if err == nil && len(files) > len(b)/70 {
			t.Errorf("%d outputs from %d bytes", len(files), len(b))
		}
	})
}
