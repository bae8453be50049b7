package linkcache

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
)

// manifestMagic is the first line of an entry's manifest.
const manifestMagic = "goffload link cache 1"

// maxManifest bounds the manifest read; maxFiles the outputs of an entry.
const (
	maxManifest = 64 << 10
	maxFiles    = 1024
)

// fileSum is one output of an entry: its size and SHA-256.
type fileSum struct {
	size int64
	sum  [32]byte
}

// formatManifest writes the manifest of an entry:
//
//	goffload link cache 1
//	key KEY
//	file 0 SIZE SHA256
//	...
func formatManifest(key string, files []fileSum) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nkey %s\n", manifestMagic, key)
	for i, f := range files {
		fmt.Fprintf(&b, "file %d %d %x\n", i, f.size, f.sum)
	}
	return b.Bytes()
}

// parseManifest reads a manifest that formatManifest wrote for key: exactly
// its lines, files numbered from 0 in order, sizes in decimal without sign or
// leading zero. Anything else is an error.
func parseManifest(b []byte, key string) ([]fileSum, error) {
	if len(b) > maxManifest {
		return nil, fmt.Errorf("manifest of %d bytes, more than %d", len(b), maxManifest)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return nil, fmt.Errorf("manifest does not end with a newline")
	}
	lines := bytes.Split(b[:len(b)-1], []byte("\n"))
	if len(lines) < 2 || string(lines[0]) != manifestMagic {
		return nil, fmt.Errorf("manifest does not start with %q", manifestMagic)
	}
	if string(lines[1]) != "key "+key {
		return nil, fmt.Errorf("manifest of another key")
	}
	lines = lines[2:]
	if len(lines) > maxFiles {
		return nil, fmt.Errorf("manifest of %d files, more than %d", len(lines), maxFiles)
	}
	files := make([]fileSum, 0, len(lines))
	for i, l := range lines {
		f := bytes.Fields(l)
		if len(f) != 4 || string(f[0]) != "file" || string(f[1]) != strconv.Itoa(i) {
			return nil, fmt.Errorf("manifest line %d: not \"file %d SIZE SHA256\"", i+3, i)
		}
		size, err := strconv.ParseInt(string(f[2]), 10, 64)
		if err != nil || size < 0 || strconv.FormatInt(size, 10) != string(f[2]) {
			return nil, fmt.Errorf("manifest line %d: bad size", i+3)
		}
		var fs fileSum
		fs.size = size
		if len(f[3]) != 64 || !lowerHex(string(f[3])) {
			return nil, fmt.Errorf("manifest line %d: bad SHA-256", i+3)
		}
		hex.Decode(fs.sum[:], f[3])
		if string(bytes.Join(f, []byte(" "))) != string(l) {
			return nil, fmt.Errorf("manifest line %d: not \"file %d SIZE SHA256\"", i+3, i)
		}
		files = append(files, fs)
	}
	return files, nil
}

// lowerHex reports whether s is lowercase hexadecimal digits only.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ValidKey reports whether key names an entry: 64 lowercase hexadecimal
// digits (a SHA-256), as package link makes them.
func ValidKey(key string) bool { return len(key) == 64 && lowerHex(key) }
