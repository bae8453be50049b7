package link

import (
	"path/filepath"
	"testing"
)

// Temporary names are made from archive member names: one that begins with
// '-' ("-T.o", "-o.o") must reach the device link as a path, not as an
// option (clang read -T-x86_64-...o as a linker script, and with
// -save-temps -o.o made it write the device image elsewhere).
func TestTempNameIsNoOption(t *testing.T) {
	for _, c := range []struct{ dir, base, ext, want string }{
		{"", "-T-x86_64-unknown-linux-gnu-generic", ".o", "./-T-x86_64-unknown-linux-gnu-generic.o"},
		{"", "-o-x86_64-unknown-linux-gnu-", ".o", "./-o-x86_64-unknown-linux-gnu-.o"},
		{"", "k-x86_64-unknown-linux-gnu-", ".o", "k-x86_64-unknown-linux-gnu-.o"},
		{"-tmp", "k", ".o", "./" + filepath.Join("-tmp", "k.o")},
		{filepath.Join("t", "d"), "-T", ".o", filepath.Join("t", "d", "-T.o")},
	} {
		p := &planner{l: &Link{TempDir: c.dir}, names: map[string]bool{}}
		got, err := p.tempName(c.base, c.ext)
		if err != nil || got != c.want {
			t.Errorf("tempName(%q, %q) in %q = %q, %v; want %q", c.base, c.ext, c.dir, got, err, c.want)
		}
	}
}
