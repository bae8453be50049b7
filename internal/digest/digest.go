// Package digest hashes files' bytes: the keys of the device-link cache
// (package link) and the hashes it remembers of the tools' files (package
// linkcache).
package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
)

// File returns the SHA-256 of the bytes of the file at path, in
// hexadecimal.
func File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
