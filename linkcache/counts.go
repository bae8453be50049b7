package linkcache

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// countsFile holds what the links that used the cache did.
const countsFile = "counts-v1"

// Counts are what the links that used a cache did since it was made or
// cleared: lookups that were hits in the local folder, hits on a server
// ([Tiered]), and misses; entries uploaded to a server, uploads that failed,
// and the failures of the server (down, slow, wrong bytes; failed uploads
// too).
type Counts struct {
	LocalHits    int64 `json:"local_hits"`
	RemoteHits   int64 `json:"remote_hits"`
	Misses       int64 `json:"misses"`
	Uploads      int64 `json:"uploads"`
	UploadErrors int64 `json:"upload_errors"`
	RemoteErrors int64 `json:"remote_errors"`
}

func (n *Counts) fields() []*int64 {
	return []*int64{&n.LocalHits, &n.RemoteHits, &n.Misses, &n.Uploads, &n.UploadErrors, &n.RemoteErrors}
}

var countNames = []string{"local-hits", "remote-hits", "misses", "uploads", "upload-errors", "remote-errors"}

// parseCounts reads the counts file; what does not parse counts nothing.
func parseCounts(b []byte) Counts {
	var n Counts
	fs := n.fields()
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		for i, cn := range countNames {
			if name == cn {
				if x, err := strconv.ParseInt(v, 10, 64); err == nil && x >= 0 {
					*fs[i] = x
				}
			}
		}
	}
	return n
}

func (n Counts) format() []byte {
	var b strings.Builder
	for i, f := range n.fields() {
		fmt.Fprintf(&b, "%s %d\n", countNames[i], *f)
	}
	return []byte(b.String())
}

// Counts returns what the links that used the cache did.
func (c *Cache) Counts() Counts {
	f, err := os.OpenFile(filepath.Join(c.dir, countsFile), os.O_RDONLY|syscallNoFollow, 0)
	if err != nil {
		return Counts{}
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	return parseCounts(b)
}

// count adds to the cache's counts, under a lock of the file: links that
// share the cache count at once.
func (c *Cache) count(add func(n *Counts)) {
	f, err := os.OpenFile(filepath.Join(c.dir, countsFile), os.O_RDWR|os.O_CREATE|syscallNoFollow, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > 4096 {
		return
	}
	unlock := lockFile(f)
	defer unlock()
	b, _ := io.ReadAll(io.LimitReader(f, 4096))
	n := parseCounts(b)
	add(&n)
	out := n.format()
	if _, err := f.WriteAt(out, 0); err == nil {
		f.Truncate(int64(len(out)))
	}
}
