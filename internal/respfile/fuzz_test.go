package respfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/goffload/goffload"
	"github.com/goffload/goffload/internal/infile"
	"github.com/goffload/goffload/internal/tooltest"
)

// The allocation budget of FuzzExpand, per byte of input and fixed: within
// its bound (Factor times the input plus Allowance) an expansion may make
// an argument of every byte it goes through, 16 bytes of string header
// each, in a slice that grows by doubling.
const (
	fuzzBytesPerByte = 1024
	fuzzFixedBytes   = 64 << 20
)

// FuzzExpand: three response files a.rsp, b.rsp and c.rsp, which may name
// each other (or themselves, or folders, or missing files), expanded from
// "@a.rsp": a result or an error naming a file, never a panic; what it
// allocates is bounded by the files' size; and a result expands to itself
// (every @file argument left names no file).
func FuzzExpand(f *testing.F) {
	for _, c := range expandCases {
		f.Add(c.files["a.rsp"], c.files["b.rsp"], c.files["c.rsp"])
	}
	f.Add(strings.Repeat("@b.rsp ", 10), strings.Repeat("@c.rsp ", 10), strings.Repeat("lol ", 10))
	// Past the bound: 10^6 expansions of c.rsp, of an argument or of none.
	f.Add(strings.Repeat("@b.rsp ", 1000), strings.Repeat("@c.rsp ", 1000), "lol")
	f.Add(strings.Repeat("@b.rsp ", 1000), strings.Repeat("@c.rsp ", 1000), "")
	f.Add(strings.Repeat("@b.rsp @a.rsp ", 3), "@c.rsp @c.rsp", "\x00 \"\" '' \\\n")
	f.Add("@ @. @..", "\xFF\xFEa\x00", "\xFE\xFF\x00@\x00c\x00.\x00r\x00s\x00p")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if strings.Contains(a+b+c, "/") {
			t.Skip("names files outside the test's folder")
		}
		for name, data := range map[string]string{"a.rsp": a, "b.rsp": b, "c.rsp": c} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := ExpandIn(dir, []string{"@a.rsp"})
		runtime.ReadMemStats(&after)
		in := uint64(len(a) + len(b) + len(c) + len("@a.rsp") + 1)
		if n, bound := after.TotalAlloc-before.TotalAlloc, fuzzBytesPerByte*in+fuzzFixedBytes; n > bound {
			t.Errorf("%d bytes of input allocated %d bytes, more than %d", in, n, bound)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "response file "+dir) {
				t.Errorf("error does not name a file: %v", err)
			}
			var errno syscall.Errno // opening: a name too long
			if !errors.Is(err, goffload.ErrInvalid) && !errors.Is(err, goffload.ErrLimit) && !errors.Is(err, infile.ErrNotRegular) && !errors.As(err, &errno) {
				t.Errorf("an error neither of the input (ErrInvalid), a bound (ErrLimit), a folder nor the system's: %v", err)
			}
			return
		}
		work := 0
		for _, s := range got {
			work += len(s) + 1
		}
		if bound := Factor*int(in) + Allowance; work > bound {
			t.Errorf("expanded to %d bytes, more than %d", work, bound)
		}
		again, err := ExpandIn(dir, got)
		if err != nil || !slices.Equal(again, got) {
			t.Errorf("the result %q expands to %q, %v", got, again, err)
		}
	})
}

// FuzzWriteTokenize: what Write writes, Tokenize reads back as the
// arguments written (split at NUL bytes; those Write refuses are left out),
// and tokenizing allocates at most 1 KiB per byte read, plus 1 MiB.
func FuzzWriteTokenize(f *testing.F) {
	f.Add(strings.Join(roundTrip, "\x00"))
	f.Add("a\x00\x00b\\\x00\"\x00'")
	f.Fuzz(func(t *testing.T, s string) {
		args := slices.DeleteFunc(strings.Split(s, "\x00"), func(a string) bool { return a == "" })
		var b strings.Builder
		if err := Write(&b, args); err != nil {
			t.Fatal(err)
		}
		var got []string
		if n, bound := tooltest.Allocated(func() { got = Tokenize(b.String()) }), 1024*uint64(b.Len())+1<<20; n > bound {
			t.Errorf("%d bytes allocated %d bytes, more than %d", b.Len(), n, bound)
		}
		if !slices.Equal(got, args) {
			t.Errorf("wrote %q as %q, read back %q", args, b.String(), got)
		}
	})
}
