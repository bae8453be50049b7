package tooltest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// NginxEnv names the nginx program where it is not installed ($PATH, then
// /usr/sbin): .ci/run unpacks Debian's nginx-light there, so that installing
// it starts no service.
const NginxEnv = "OFFLOAD_NGINX"

// Nginx is a cache server the tests start: Debian's nginx with its WebDAV
// module, serving what it is given to PUT (the HTTP protocol of Bazel's
// remote cache is GET and PUT of /ac/KEY and /cas/SHA256).
type Nginx struct {
	URL  string // http://127.0.0.1:PORT
	Data string // the folder it serves: URL/x is Data/x
}

// NginxLocation is a location block of the server besides its root: its
// path and directives, such as {"/slow/", "limit_rate 100;"}.
type NginxLocation struct{ Path, Directives string }

// StartNginx starts nginx on a free port of 127.0.0.1, serving a new folder
// with PUT allowed, every location given with its own directives added to
// the root's, and stops it when the test ends. Without nginx the test ends as
// for a missing tool.
func StartNginx(t testing.TB, locations ...NginxLocation) *Nginx {
	t.Helper()
	prog := os.Getenv(NginxEnv)
	if prog == "" {
		if p, err := exec.LookPath("nginx"); err == nil {
			prog = p
		} else if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
			prog = "/usr/sbin/nginx"
		}
	}
	if prog == "" {
		Missing(t, "nginx not found ($"+NginxEnv+", $PATH, /usr/sbin; Debian: nginx-light): no cache server to test against")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	const put = "dav_methods PUT; create_full_put_path on; dav_access user:rw;"
	var locs strings.Builder
	for _, loc := range locations {
		fmt.Fprintf(&locs, "    location %s { %s %s }\n", loc.Path, put, loc.Directives)
	}
	conf := fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  server {
    listen 127.0.0.1:%[2]d;
    root %[3]s;
    client_max_body_size 0;
    location / { %[4]s }
%[5]s  }
}
`, dir, port, data, put, locs.String())
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog, "-c", confPath, "-p", dir, "-e", filepath.Join(dir, "error.log"))
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	n := &Nginx{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Data: data}
	for deadline := time.Now().Add(10 * time.Second); ; {
		select {
		case err := <-done:
			done <- err // for the cleanup
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %v\n%s%s", err, out, log)
		default:
		}
		if resp, err := http.Get(n.URL + "/"); err == nil {
			resp.Body.Close()
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not answer on %s after 10 s\n%s", n.URL, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
